#ifndef STATS_H
#define STATS_H

#include <stddef.h>

typedef struct {
    size_t count;
    double mean;
    double stddev; /* population standard deviation */
    double min;
    double max;
} summary_t;

/* Fill *out from xs[0..n-1]. Returns 0 on success, -1 when n == 0. */
int summarize(const double *xs, size_t n, summary_t *out);

#endif
