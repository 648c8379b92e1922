/* tools/runfig.h - the figures of a finished run, per job class and per pool, read back from its
 * output directory (jobs.csv and run.json), for `slicesim diff` and the --fail-on gates.
 *
 * Scopes: "all" (every job), one per job class (jobs.csv `class`), one per pool (the node group
 * a job's first unit ran on: the placement's node name less its "-K" suffix). Figures of a scope:
 *   jobs, done, oom             counts (outcome done, failed_oom)
 *   wait_mean, wait_p95         seconds from submission to start (a job that never started
 *                               counts its wait to the horizon, as run.json does)
 *   jct_mean, jct_p95           seconds from submission to end, done jobs
 *   slowdown_mean               JCT over solo run time, done jobs
 *   alloc                       "all": units in use over units advertised, time-weighted to the
 *                               horizon (run.json metrics.allocation.units_mean); a pool: the
 *                               unit-seconds its jobs' last runs held over its units x horizon
 *   slo_attainment              share of jobs that started within the SLO wait given (absent
 *                               without one)
 * Quantiles are GSL's (sim/stats.h), as in run.json. Figures a scope has no data for are NaN.
 * Ownership: a runfig_set owns its scopes (runfig_free). Units: seconds, fractions.
 */
#ifndef SIMPROJ_TOOLS_RUNFIG_H
#define SIMPROJ_TOOLS_RUNFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/diag.h"

enum {
    RF_JOBS,
    RF_DONE,
    RF_OOM,
    RF_WAIT_MEAN,
    RF_WAIT_P95,
    RF_JCT_MEAN,
    RF_JCT_P95,
    RF_SLOWDOWN_MEAN,
    RF_ALLOC,
    RF_SLO,
    RF_COUNT
};

/* Name of figure i ("wait_p95"), and whether it is a time in seconds. */
extern const char *const runfig_names[RF_COUNT];
extern const bool runfig_time[RF_COUNT];

typedef struct runfig_scope {
    char kind[8];   /* "all", "class", "pool" */
    char name[128]; /* class or pool name ("" for all) */
    double v[RF_COUNT];
} runfig_scope;

typedef struct runfig_set {
    size_t n;
    runfig_scope *s; /* "all" first, then classes, then pools, each in name order */
} runfig_set;

/* Read the run in directory `dir` (jobs.csv and run.json). slo_wait_s > 0 defines
 * slo_attainment. Returns 0; SIM_EINPUT after reporting a malformed file to d; SIM_ENOENT /
 * SIM_EIO when a file cannot be read (errno holds the cause; nothing reported). */
int runfig_load(const char *dir, double slo_wait_s, diag *d, runfig_set *out);
/* The scope of that kind and name, or NULL. Borrowed. */
const runfig_scope *runfig_get(const runfig_set *f, const char *kind, const char *name);
void runfig_free(runfig_set *f);

#endif
