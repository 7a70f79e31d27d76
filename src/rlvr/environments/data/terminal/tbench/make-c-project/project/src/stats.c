#include <math.h>

#include "stats.h"

int summarize(const double *xs, size_t n, summary_t *out)
{
    if (n == 0)
        return -1;
    double sum = 0.0, min = xs[0], max = xs[0];
    for (size_t i = 0; i < n; i++) {
        sum += xs[i];
        if (xs[i] < min)
            min = xs[i];
        if (xs[i] > max)
            max = xs[i];
    }
    double mean = sum / (double)n, sq = 0.0;
    for (size_t i = 0; i < n; i++)
        sq += (xs[i] - mean) * (xs[i] - mean);
    out->count = n;
    out->mean = mean;
    out->stddev = sqrt(sq / (double)n);
    out->min = min;
    out->max = max;
    return 0;
}
