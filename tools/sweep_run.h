/* tools/sweep_run.h - run every point of a sweep (experiments/sweep.h) into its own directory,
 * in local worker processes or over MPI ranks, and summarise them.
 *
 * Layout of the output directory DIR:
 *   DIR/points/cC-rR/     one run (the files the scenario's outputs.files names) per
 *                         combination C and replication R, plus point.json (its axis values,
 *                         seed and figures; written last: a point is done exactly when its
 *                         point.json exists) and point_info.json (wall seconds, rank)
 *   DIR/summary.csv       one row per combination: the axis values, the replications, then for
 *   DIR/summary.json      each figure of tools/runstats.h its mean over the replications and
 *                         the half-width of its 95 % confidence interval (Student t, n - 1
 *                         degrees of freedom; empty/null with fewer than 2 replications)
 *   DIR/report.html       the summary as a page with the frontier of GPUs against the p95
 *                         wait and the mean JCT (tools/sweep_report.h)
 *   DIR/inputs.json       what the points are computed from: SHA-256 digests of the scenario
 *                         file, of every combination's resolved scenario and of every file they
 *                         refer to, the --set values, the seed, replications and axes
 *   DIR/.lock             the directory's lock (tools/out.h): one sweep or plan at a time
 * Resuming: points whose point.json exists are not run again; the summary is rebuilt from every
 * point.json, so an interrupted sweep started again ends with the same files as an
 * uninterrupted one (run_info.json and point_info.json aside, which record the wall clock).
 * Only points of the same inputs are resumed: a directory whose inputs.json differs (a rate, the
 * seed, a --set value or a referenced file changed) is refused, naming what changed, exit 2;
 * with --force every point runs again (the earlier point.json files and results are removed
 * first). A directory holding points but no inputs.json is refused the same way.
 * Parallelism: -j N runs up to N points at once in forked worker processes. Under mpirun the
 * points still to run are dealt round-robin to the ranks (point k of that list to rank
 * k mod size), each rank runs its share (with its own -j), and rank 0 writes the summary. A
 * point's files depend only on the scenario, the axis values and its seed, never on which
 * process ran it, so -j 1, -j N and any number of ranks give byte-identical point files (all but
 * run_info.json and point_info.json).
 * Before anything runs, every combination is loaded and validated (errors point at the sweep
 * value's line); on bad input nothing is written.
 * Ownership: options are borrowed.
 */
#ifndef SIMPROJ_TOOLS_SWEEP_RUN_H
#define SIMPROJ_TOOLS_SWEEP_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "experiments/sweep.h"
#include "tools/sweep_mpi.h"

typedef struct sweep_run_opts {
    const char *scenario;    /* scenario file with a sweep: section */
    const sweep_spec *sw;    /* the points to run; NULL: the file's sweep: section (a plan
                              * passes its own, experiments/plan.h); borrowed */
    const char *out_dir;     /* NULL: the scenario's outputs.dir */
    unsigned jobs;           /* worker processes per rank, >= 1 */
    const char *const *sets; /* --set overrides for every point; borrowed */
    size_t n_sets;
    const char *command_line; /* recorded in each run_info.json */
    bool progress;            /* draw a progress line on stderr (rank 0) */
    const sweep_mpi *mpi;     /* ranks; borrowed */
    FILE *out;                /* where the closing lines go (rank 0); NULL: none */
    bool force;               /* --force: run every point again when DIR/inputs.json records
                               * other inputs (otherwise such a directory is refused) */
    bool dir_locked;          /* the caller (plan) holds DIR's lock (tools/out.h) */
    unsigned need_files;      /* plan: SCN_OUT_* outputs each point must write (--fail-on reads
                               * run.json and jobs.csv back); refused before anything runs when
                               * the scenario's outputs.files lacks one; 0: none */
} sweep_run_opts;

/* Run the sweep. Returns 0; SIM_EINPUT (bad input: errors printed, nothing written);
 * SIM_ENOENT / SIM_EIO (a file could not be read or written, or a point failed). */
int sweep_run(const sweep_run_opts *o);

/* Most combinations `slicesim check` loads one by one; a larger sweep is checked on a cover of
 * its axis values (tools/sweep_run.c check_combos). 256 loads take ~0.5-1.3 s. */
#define SWEEP_CHECK_ALL 256

/* Which combinations `check` loaded. */
typedef enum sweep_cover {
    SWEEP_COVER_ALL,    /* every one */
    SWEEP_COVER_VALUES, /* a cover in which every axis value appears at least once */
    SWEEP_COVER_SPACED, /* SWEEP_CHECK_ALL evenly spaced entries of that cover */
} sweep_cover;

/* What `check` saw of a sweep and what the whole sweep will cost (experiments/estimate.h's figures of
 * each checked combination; the checked combinations' mean stands for every combination, and
 * every replication costs what its combination does). Units: counts, s, bytes. */
typedef struct sweep_check_info {
    size_t n_points, n_combos; /* 0 when the scenario has no sweep (or plan) section */
    size_t checked;            /* combinations loaded and checked */
    sweep_cover cover;
    double events, cpu_s, output_bytes; /* the sweep in all */
    double memory_bytes;                /* the largest checked point's peak */
} sweep_check_info;

/* Validate the combinations of the sweep in `scenario` (as `slicesim check` does for one
 * scenario; all of them up to SWEEP_CHECK_ALL, else a cover of every axis value) and print
 * errors to err. Returns 0, SIM_EINPUT, or SIM_ENOENT / SIM_EIO; *ci gets what was checked and
 * the sweep's estimate (zero when the file has no sweep section or on error). */
int sweep_check(const char *scenario, const char *const *sets, size_t n_sets, FILE *err,
                sweep_check_info *ci);
/* Two lines: what was checked and the sweep's estimate in all; nothing without a sweep. */
void sweep_check_print(FILE *f, const char *scenario, const sweep_check_info *ci);

#endif
