/* tools/bench_heap.c - the reference for `bench heap`: the hold model on a bare binary
 * min-heap of doubles (textbook pop: move the last leaf to the root and sift down; push: sift
 * up). No handles, no payload, no callbacks: the floor an event queue is measured against. */
#include "tools/bench.h"

#include "sim/rng.h"
#include "sim/xalloc.h"

#include <stdlib.h>
#include <time.h>

double bench_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double bench_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void heap_push(double *h, size_t *n, double v)
{
    size_t i = (*n)++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h[p] <= v) {
            break;
        }
        h[i] = h[p];
        i = p;
    }
    h[i] = v;
}

static double heap_pop(double *h, size_t *n)
{
    double top = h[0];
    double v = h[--*n];
    size_t i = 0, m = *n;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= m) {
            break;
        }
        if (c + 1 < m && h[c + 1] < h[c]) {
            c++;
        }
        if (v <= h[c]) {
            break;
        }
        h[i] = h[c];
        i = c;
    }
    if (m > 0) {
        h[i] = v;
    }
    return top;
}

bench_result bench_hold_heap(uint64_t pending, uint64_t events, uint64_t seed)
{
    rng_root root = rng_root_make(seed);
    rng_stream *s = rng_stream_open(&root, "bench.hold", 0);
    double *h = xcalloc((size_t)pending, sizeof *h, "bench heap");
    size_t n = 0;
    for (uint64_t i = 0; i < pending; i++) {
        heap_push(h, &n, rng_exponential(s, 1.0));
    }
    double t = 0;
    double t0 = bench_now_s(), c0 = bench_cpu_s();
    for (uint64_t i = 0; i < events; i++) {
        t = heap_pop(h, &n);
        heap_push(h, &n, t + rng_exponential(s, 1.0));
    }
    double t1 = bench_now_s(), c1 = bench_cpu_s();
    free(h);
    rng_stream_close(s);
    return (bench_result){t1 - t0, c1 - c0, events, t, 0, 0};
}
