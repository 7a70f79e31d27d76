#include <stdio.h>
#include <stdlib.h>

#include "stats.h"

/* Read whitespace-separated numbers from stdin and print their summary. */
int main(int argc, char **argv)
{
    size_t n = 0, cap = 16;
    double *xs = malloc(cap * sizeof *xs);
    double x;
    int status;

    if (xs == NULL)
        return 2;
    while (scanf("%lf", &x) == 1) {
        if (n == cap) {
            cap *= 2;
            double *grown = realloc(xs, cap * sizeof *xs);
            if (grown == NULL)
                return 2;
            xs = grown;
        }
        xs[n++] = x;
    }
    summary_t s;
    if (summarize(xs, n, &s) != 0) {
        fprintf(stderr, "no data\n");
        free(xs);
        return 1;
    }
    printf("count=%zu mean=%.2f stddev=%.2f min=%.2f max=%.2f\n", s.count, s.mean, s.stddev, s.min, s.max);
    free(xs);
    return 0;
}
