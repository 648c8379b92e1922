/* experiments/build_run.h - what a run is built into: the loaded and resolved scenario
 * (experiments/resolve.h: the calibrated catalog, physics, communication model, workload
 * profiles, job classes, network and the trace's rules with their work factors, all made by
 * scenario_load_*) becomes the cluster, policy, job table, rate context, world, services,
 * faults and re-partitioner (experiments/build.h: the cluster and policy; build_service.h: the
 * services; build_trace.h: the traced workload; build_dyn.h: the faults and the
 * re-partitioner). `run`, `check`, `sweep`, `plan` and `bench run` all build through build_run
 * (tools/run.c).
 *
 * The builder raises only the input errors that need the run's cluster or world (each at the
 * field that caused it: file:line:col, the field path, what was expected): a request no node of
 * the empty cluster can hold; the estimate against limits: (the services' batch times are taken
 * on their partitions of the cluster, and no cluster of many nodes is built before the estimate
 * has checked it); a service's resource no node advertises, a model that cannot serve its batch
 * there, an inconsistent autoscale, a traced arrival with no instance of its app; a listed fault
 * on a node, GPU or instance the cluster lacks; the re-partitioner's; the trace's rows as they
 * are read (with the cluster's capacity), and a trace gone since the loader opened it (the
 * loader's message). Every other input error is the loader's, so `slicesim check` and
 * `slicesim run` give the same messages.
 * Ownership: everything built is allocated in the arena `a` (borrowed, as is the diag `d`, and
 * the resolved scenario, which lives in the loader's arena), except the world, services,
 * faults, re-partitioner and the synthetic and traced streams, which built_run_fini destroys.
 */
#ifndef SIMPROJ_EXPERIMENTS_BUILD_RUN_H
#define SIMPROJ_EXPERIMENTS_BUILD_RUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "experiments/estimate.h"
#include "experiments/resolve.h"
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
    const scenario_resolved *res; /* spec->resolved: the catalog, physics, communication model,
                                   * profiles, job classes and trace rules the run is built from */
    const comm_topo **node_topo; /* per node id (arena): its wiring, NULL = the GPU type's */
    uint32_t n_node_topo;
    jobrate_ctx rate;
    cluster_cfg cc;
    param_set params;
    const policy_ops *pol;
    world *w;
    fault_injector *faults;           /* NULL when the scenario has no faults section */
    job_id *svc_first;                /* per service: its first replica job */
    job_id **svc_ids;                 /* per service: its replica jobs (spares last) */
    uint32_t *svc_pool;               /* per service: how many */
    service **svcs;                   /* per service, once the world exists */
    bool has_trace;                   /* workload.trace given */
    traceload_stats tstats;           /* what reading it did (tstats.unplaceable: traced jobs no
                                       * node of the empty cluster could ever hold, dropped) */
    double *svc_batch_s;              /* per service: a batch of its largest size alone on its
                                       * partition, s (0: unknown), for the estimate */
    reconf *reconf;                   /* NULL without a repartition section */
    synth_stream *synth;              /* the synthetic jobs, generated as the run reaches them */
    traceload_stream *tload;          /* the traced jobs, given as the run reaches them */
    FILE *tfile;                      /* the trace, read again as the run reaches its rows */
    trace_reader *treader;
    bool tfailed;                     /* a row could not be read again (build_trace_failed) */
} built_run;

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

/* Build the run of b->spec (loaded and resolved by scenario_load_*; b->a and b->d set): estimate
 * the run and check it against the scenario's limits (experiments/estimate.h, into *est), first
 * from the scenario and the trace's record count, then with the services' batch times; build
 * the cluster, policy and the nodes' wiring; check every request on the empty cluster; make the
 * job table (replica pods; the synthetic stream unless check_only and the trace's stream, read
 * and checked now with its rules' work factors, merged by time as the run reaches them; spare
 * pods), the rate context and the world; resolve the
 * faults, start the services and the re-partitioner. Every problem is an input error in b->d at
 * its field (the header says which). Returns 0 (check b->d's error count: a step after an error
 * may be skipped) or SIM_EINPUT. Whatever was built is b's, for built_run_fini, in every case. */
int build_run(built_run *b, const build_run_opts *o, run_estimate *est);

/* Destroy what b owns (the re-partitioner, services, faults, world, job streams); the
 * arena, diag and spill stores stay the caller's (a spill store outlives the world). */
void built_run_fini(built_run *b);

#endif
