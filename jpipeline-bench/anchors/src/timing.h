/* Shared timing statistics for the anchor benchmarks (C and C++). */
#ifndef ANCHOR_TIMING_H
#define ANCHOR_TIMING_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double anchor_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int anchor_cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

/* nearest-rank percentile of a sorted array */
static inline double anchor_pct(const double* s, int n, double p) {
    int k = (int)(p * (n - 1) + 0.5);
    if (k < 0) k = 0;
    if (k >= n) k = n - 1;
    return s[k];
}

typedef struct { double median, p10, p90; } anchor_stats;

/* statistics over the last half of the n launch times */
static inline anchor_stats anchor_last_half(const double* t, int n) {
    int start = n / 2, m = n - start;
    double* s = (double*)malloc(sizeof(double) * (size_t)m);
    memcpy(s, t + start, sizeof(double) * (size_t)m);
    qsort(s, (size_t)m, sizeof(double), anchor_cmp_double);
    anchor_stats r;
    r.median = (m % 2) ? s[m / 2] : 0.5 * (s[m / 2 - 1] + s[m / 2]);
    r.p10 = anchor_pct(s, m, 0.10);
    r.p90 = anchor_pct(s, m, 0.90);
    free(s);
    return r;
}

static inline void anchor_print(const char* tag, const char* name, int round,
                                anchor_stats st, int n, const char* extra) {
    printf("[%s] round %d %s: median %.3f ms (p10 %.3f, p90 %.3f) of the last %d of %d launches%s\n",
           tag, round, name, st.median, st.p10, st.p90, n - n / 2, n, extra ? extra : "");
    fflush(stdout);
}

/* median of the round medians, printed as the summary line */
static inline double anchor_median_of(double* v, int n) {
    qsort(v, (size_t)n, sizeof(double), anchor_cmp_double);
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}
#endif
