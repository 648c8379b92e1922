/* tools/run.h - one simulation run from a scenario file to its output directory.
 *
 * Data flow: scenario YAML (experiments/scenario.h, with --set overrides) + the embedded GPU
 * catalog + the referenced mig-parted and device-plugin configs -> experiments/build_run.h builds
 * the cluster config (model/cluster/cluster.h), jobs (workloads/synth.h, a trace), a policy
 * (model/policy/policy.h), the rate context and the world, checking every input -> model/cluster/
 * world.h runs it on the engine -> tools/out.h writes run.json, run_info.json, jobs.csv,
 * timeseries.csv (those the scenario asks for) and prints a short summary.
 * All input is validated before anything is written (by the loader and the builder): on bad
 * input every error is printed (file:line:col: error: field: ...), nothing is written, and the
 * status is SIM_EINPUT.
 * Ownership: everything a run allocates is freed before run_scenario returns.
 */
#ifndef SIMPROJ_TOOLS_RUN_H
#define SIMPROJ_TOOLS_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "experiments/scenario.h"
#include "tools/runstats.h"

/* What a run did, for benchmarks (`slicesim bench run`). */
typedef struct run_stats {
    size_t n_jobs;     /* jobs in the run */
    uint64_t n_events; /* engine events executed */
    double out_cpu_s;  /* CPU seconds (user + system) spent writing the output files */
    size_t n_spilled;  /* pages of ended jobs the run moved out of memory (model/cluster/job.h) */
} run_stats;

typedef struct run_opts {
    const char *scenario; /* path of the scenario file */
    const char *out_dir;  /* output directory; NULL: the scenario's outputs.dir */
    bool has_seed;        /* --seed given: replaces the scenario's seed */
    uint64_t seed;
    const char *const *sets; /* --set PATH=VALUE overrides, n_sets of them; borrowed */
    size_t n_sets;
    const char *command_line; /* recorded in run_info.json; may be NULL */
    FILE *summary;            /* where the text summary goes (NULL: none) */
    FILE *errors;             /* where input errors go (stderr normally) */
    uint64_t verify_every;    /* check the model's invariants every N events (tests); 0 = never */
    bool force;               /* --force: replace an earlier run's files in out_dir (and remove
                               * those this run does not write); otherwise such a directory is
                               * refused before the run */
    bool check_only;          /* load and check everything a run loads, build the world, stop
                               * before running it (`slicesim check`); nothing is written */
    struct run_estimate *estimate; /* when not NULL, receives the cost estimate (experiments/estimate.h) */
    const scenario_edit *edit;     /* applied to the scenario's tree after the --set overrides (a
                                    * sweep point's axis values); NULL: none; borrowed */
    runstats *result;              /* when not NULL, receives the run's headline figures */
    run_stats *stats;              /* when not NULL, receives the run's counts */
    char *dir_used;                /* when not NULL, receives the output directory (the caller's
                                    * buffer of dir_used_len bytes; --fail-on reads the run back) */
    size_t dir_used_len;
    bool dir_locked;               /* the caller holds out_dir's parent lock (a sweep point):
                                    * no lock of its own (tools/out.h out_lock_take) */
    void (*on_spec)(void *ctx, const scenario_spec *s); /* when set, called with the loaded and
                                                         * checked scenario (a sweep's record of
                                                         * its inputs); borrowed for the call */
    void *on_spec_ctx;
    /* For a fuzz target (tests/fuzz/fuzz_run.c): */
    const char *text;     /* when not NULL, the scenario's text (text_len bytes), `scenario`
                           * its display name and text_dir the directory its references
                           * resolve against; borrowed */
    size_t text_len;
    const char *text_dir;
    uint64_t max_events;  /* stop the run after this many engine events (0: none) */
    bool outputs_in_memory; /* write every output to memory and drop it: nothing on disk */
} run_opts;

/* Run the scenario. The output directory is locked (tools/out.h out_lock_take: a second run
 * into it at the same time is refused, exit 1) unless o->dir_locked. An output directory holding
 * files a run writes (run.json, run_info.json, jobs.csv, ...) is refused unless o->force. Before any job is generated, the run's cost is estimated and compared with
 * the scenario's limits (experiments/estimate.h): a run beyond them is bad input. Returns 0; SIM_EINPUT (bad input, errors printed to o->errors, nothing
 * written); SIM_ENOENT / SIM_EIO (a file could not be read or written; message printed). */
int run_scenario(const run_opts *o);

#endif
