/* experiments/build_run.h - what a run is built from and into: the loaded scenario, the
 * embedded data it runs with, and the cluster config, workload profiles, policy, job table,
 * world, services, faults and re-partitioner the builder makes of them (experiments/build.h:
 * the cluster, profiles, policy and job classes; build_service.h: the services;
 * build_trace.h: the traced workload; build_dyn.h: the faults and the re-partitioner). `run`,
 * `check`, `sweep`, `plan` and `bench run` all build through build_run (tools/run.c).
 *
 * Every check a run makes of its input is made while building, each an input error at the
 * field that caused it (file:line:col, the field path, what was expected), so `slicesim check`
 * and `slicesim run` give the same messages.
 * Ownership: everything built is allocated in the arena `a` (borrowed, as is the diag `d`),
 * except the world, services, faults, re-partitioner and synthetic stream, which
 * built_run_fini destroys.
 */
#ifndef SIMPROJ_EXPERIMENTS_BUILD_RUN_H
#define SIMPROJ_EXPERIMENTS_BUILD_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "experiments/estimate.h"
#include "experiments/scenario.h"
#include "model/cluster/cluster.h"
#include "model/cluster/fault.h"
#include "model/cluster/job.h"
#include "model/cluster/jobrate.h"
#include "model/cluster/reconf.h"
#include "model/cluster/service.h"
#include "model/cluster/world.h"
#include "model/hw/catalog.h"
#include "model/physics/comm.h"
#include "model/policy/policy.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "workloads/synth.h"
#include "workloads/traceload.h"

/* Everything one run is built into. */
typedef struct built_run {
    arena *a; /* borrowed */
    diag *d;  /* borrowed */
    scenario_spec *spec;
    gpu_catalog cat; /* the embedded catalog with the scenario's calibrated types */
    phys_params phys;
    comm_params comm;
    const comm_topo **node_topo; /* per node id (arena): its wiring, NULL = the GPU type's */
    uint32_t n_node_topo;
    jobrate_ctx rate;
    jobrate_profile *profiles; /* one per distinct profile name; arena */
    size_t n_profiles;
    cluster_cfg cc;
    param_set params;
    const policy_ops *pol;
    world *w;
    fault_injector *faults;           /* NULL when the scenario has no faults section */
    const jobrate_profile **svc_prof; /* per service: the model it serves */
    job_id *svc_first;                /* per service: its first replica job */
    job_id **svc_ids;                 /* per service: its replica jobs (spares last) */
    uint32_t *svc_pool;               /* per service: how many */
    service **svcs;                   /* per service, once the world exists */
    bool has_trace;                   /* workload.trace given */
    traceload_stats tstats;           /* what reading it did */
    uint64_t n_unplaceable;           /* traced jobs no node of the empty cluster could ever hold,
                                       * dropped */
    double *svc_batch_s;              /* per service: a batch of its largest size alone on its
                                       * partition, s (0: unknown), for the estimate */
    reconf *reconf;                   /* NULL without a repartition section */
    const traceload_rule *trules;     /* the trace's rules with their work factors (arena) */
    double fallback_factor;           /* work factor of jobs no rule maps */
    synth_stream *synth;              /* the synthetic jobs, generated as the run reaches them */
} built_run;

/* The workload profile `name`, loaded once per run (experiments/build.h build_load_profile). */
const jobrate_profile *build_run_profile(built_run *b, const char *name, src_loc at,
                                         const char *path);

/* Every class's request must be satisfiable on the empty cluster: under FIFO one job that can
 * never start would block every later job forever (an input error at the class's request).
 * Also the services' batch times (b->svc_batch_s, for the estimate), while the cluster exists. */
void build_run_check_requests(built_run *b, const synth_class *cls);

/* How the run is built. */
typedef struct build_run_opts {
    bool has_seed; /* --seed given: replaces the scenario's seed */
    uint64_t seed;
    bool check_only;       /* `slicesim check`: the synthetic jobs are counted, not generated, and
                            * no random fault is drawn (the listed ones are resolved) */
    uint64_t verify_every; /* check the model's invariants every N events (tests); 0 = never */
    const job_spill_ops *job_spill; /* where the job table spills ended pages (NULL: kept) */
    void *job_spill_ctx;
    const job_spill_ops *sample_spill; /* where the world spills full sample blocks (NULL: kept) */
    void *sample_spill_ctx;
} build_run_opts;

/* Build the run of b->spec (loaded and validated; b->a and b->d set): load the embedded catalog
 * (with the scenario's calibrated types), physics and communication model; estimate the run and
 * check it against the scenario's limits (experiments/estimate.h, into *est), first from the
 * scenario and the trace's record count, then with the services' batch times; build the cluster,
 * policy, job classes, services' profiles and DDP wiring; check every request on the empty
 * cluster; make the job table (replica pods, the synthetic stream unless check_only, the trace
 * read with its work factors and merged, spare pods), the rate context and the world; resolve the
 * faults, start the services and the re-partitioner. Every problem is an input error in b->d at
 * its field. Returns 0 (check b->d's error count: a step after an error may be skipped) or
 * SIM_EINPUT. Whatever was built
 * is b's, for built_run_fini, in every case. */
int build_run(built_run *b, const build_run_opts *o, run_estimate *est);

/* Destroy what b owns (the re-partitioner, services, faults, world, synthetic stream); the
 * arena, diag and spill stores stay the caller's (a spill store outlives the world). */
void built_run_fini(built_run *b);

#endif
