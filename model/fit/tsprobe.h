/* model/fit/tsprobe.h - the time-slice scheduler's quantum, switch gap and return wait, from the
 * timelines that calib/tslice.cu records (loaded by experiments/calib_json.h, schema
 * "slicesim-tslice" v1, calib/README.md).
 *
 * Slices: P contexts each spin one kernel; a context's timeline is [first, last] with the gaps
 * in which it was off the GPU. Its runs between two gaps are whole time slices (the first and
 * last run of a timeline are cut by the start and the end and are left out). A gap of one
 * context holds the runs of the others that lie inside it; what is left of the gap is switch
 * time, shared equally by the switches in it (one more than the runs inside).
 * Returns: a process that sleeps on the host and then launches one tiny kernel; its
 * launch-to-synchronisation latency alone and beside a busy context. The wait that the busy
 * context adds is the difference of the means.
 * Units: ms (relative to the group's first timer reading). Ownership: tsp_data owns its arrays
 * (tsp_free); tsp_result is a plain value. No I/O; deterministic.
 */
#ifndef SIMPROJ_MODEL_TSPROBE_H
#define SIMPROJ_MODEL_TSPROBE_H

#define TSP_MAX_PROCS 16
#define TSP_MAX_GROUPS 32
#define TSP_MAX_RETURNS 8

/* One context's timeline. */
typedef struct tsp_timeline {
    double first_ms, last_ms;
    int n_gaps;
    double *gap_ms; /* 2 n_gaps: start, end of each gap, ascending; owned */
} tsp_timeline;

/* Contexts that ran together. */
typedef struct tsp_group {
    int n;
    tsp_timeline tl[TSP_MAX_PROCS];
} tsp_group;

/* One return series: the host sleep before each launch and the launch's latency. */
typedef struct tsp_returns {
    char beside[16]; /* "none", "slice" (one spinning kernel), "stream" (back-to-back kernels) */
    int n;
    double *sleep_ms, *latency_ms; /* n each; owned */
} tsp_returns;

typedef struct tsp_data {
    char device[96], driver[32], date_utc[32];
    int n_groups;
    tsp_group g[TSP_MAX_GROUPS];
    int n_ret;
    tsp_returns ret[TSP_MAX_RETURNS];
} tsp_data;

typedef struct tsp_result {
    int n_slices;        /* whole slices of the groups of >= 2 contexts */
    double slice_median_ms, slice_p10_ms, slice_p90_ms;
    int n_switches;
    double switch_median_ms; /* switch time per switch, median over the gaps */
    int solo_gaps;       /* gaps a context had alone (groups of 1) */
    double solo_gap_max_ms;
    double ret_alone_ms; /* mean latency alone (beside "none"); NAN without that series */
    double ret_busy_ms;  /* mean latency beside "slice"; NAN without */
    double ret_stream_ms; /* mean latency beside "stream"; NAN without */
} tsp_result;

/* Analyse d (see the top). Returns 0, or -1 when no group of >= 2 contexts has a whole slice. */
int tsp_analyse(const tsp_data *d, tsp_result *out);

/* Free the arrays of d (the struct itself is the caller's). */
void tsp_free(tsp_data *d);

#endif
