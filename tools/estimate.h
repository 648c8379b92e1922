/* tools/estimate.h - what a scenario's run will cost, estimated before anything is generated,
 * and the check of that estimate against the scenario's `limits:` (experiments/scenario.h).
 *
 * Jobs: each synthetic class submits min(count, arrivals before the horizon) jobs, arrivals being
 * rate x (horizon - start) for poisson classes (the expected number) and
 * floor((horizon - start) / interval) + 1 for fixed ones. Timeseries rows (samples, written to
 * timeseries.csv and metrics.om): horizon / interval + 2 when either file is written (an upper
 * bound: a run whose jobs all finish stops earlier). report.html is not counted (its plots have a
 * bounded number of points). Output bytes and memory are these
 * counts times per-item sizes measured on the opt build (see estimate.c); they are meant to tell
 * a run that fits from one that needs orders of magnitude more, not to predict a file's size.
 * Ownership: nothing is allocated; the spec is borrowed. Units: bytes, counts.
 */
#ifndef SIMPROJ_TOOLS_ESTIMATE_H
#define SIMPROJ_TOOLS_ESTIMATE_H

#include <stddef.h>
#include <stdio.h>

#include "experiments/scenario.h"
#include "sim/diag.h"

typedef struct run_estimate {
    double jobs;            /* jobs submitted over the horizon */
    double timeseries_rows; /* rows of timeseries.csv (0 when not written) */
    double output_bytes;    /* all output files */
    double memory_bytes;    /* what the run holds at its peak */
    size_t top_class;       /* the job class that submits the most jobs (n_jobs when none) */
} run_estimate;

/* Estimate the run of s; `extra_jobs` are jobs not generated from s's classes (e.g. read from a
 * trace), counted like the others. */
void est_scenario(const scenario_spec *s, double extra_jobs, run_estimate *e);
/* When the estimate exceeds any limit of s->limits, report one error to d naming every limit
 * exceeded with its estimate, at the field that drives it (the busiest class's rate or interval,
 * or outputs.sample_interval). Returns the number of errors reported (0 or 1). */
int est_check_limits(const scenario_spec *s, const run_estimate *e, diag *d);
/* One line: "estimate: about N jobs, R timeseries rows, B output, M memory". */
void est_print(FILE *f, const run_estimate *e);

#endif
