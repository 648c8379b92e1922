/* experiments/build_run.c - resolved scenario -> the run's cluster, policy, job table, rate
 * context, world, services, faults and re-partitioner, with the checks on the empty cluster and
 * the estimate (see build_run.h). */
#include "experiments/build_run.h"

#include <inttypes.h>
#include <stdio.h>

#include "experiments/build.h"
#include "experiments/build_ddp.h"
#include "experiments/build_dyn.h"
#include "experiments/build_service.h"
#include "experiments/build_trace.h"
#include "experiments/cfg.h"
#include "model/cluster/job.h"
#include "sim/err.h"
#include "sim/rng.h"
#include "sim/xalloc.h"

/* Every class's request must be satisfiable on the empty cluster: under FIFO one job that can
 * never start would block every later job forever. Also the services' batch times (for the
 * estimate), while the cluster exists. */
void build_run_check_requests(built_run *b, const synth_class *cls)
{
    char why[256];
    cluster *c = NULL;
    if (cluster_create(&b->cc, &c, why, sizeof why) != 0) {
        diag_error(b->d, b->spec->cluster.at, "cluster", "%s", why);
        return;
    }
    b->svc_batch_s = arena_calloc(b->a, b->spec->n_services + 1, sizeof *b->svc_batch_s);
    for (size_t i = 0; i < b->spec->n_services; i++) {
        b->svc_batch_s[i] = build_service_batch_s(b, c, i);
    }
    for (size_t i = 0; i < b->spec->workload.n_jobs; i++) {
        const scenario_job_class *jc = &b->spec->workload.jobs[i];
        char path[128];
        snprintf(path, sizeof path, "workload.jobs[%zu].request", i);
        /* where its node_selector and tolerations admit it (its `nodes` groups were checked
         * at load) */
        job_pod pod = {.place = cls[i].place};
        if (!job_any_slice(&(job_spec){.req = cls[i].req}) &&
            !build_request_fits(c, &cls[i].req, &pod)) {
            char have[512];
            diag_error(b->d, jc->request.at, path,
                       "no node%s can hold it; expected at most the units one node advertises "
                       "(%s), got %" PRIu32 " x '%s'",
                       cls[i].place ? " its node_selector and tolerations admit" : "",
                       build_advertised(c, have, sizeof have), cls[i].req.per_worker,
                       jc->request.resource);
        }
    }
    cluster_destroy(c);
}

int build_run(built_run *b, const build_run_opts *o, run_estimate *est)
{
    int rc = 0;
    b->res = b->spec->resolved;
    SIM_ASSERT(b->res != NULL); /* scenario_load_* resolved it (experiments/resolve.h) */
    const synth_class *cls = b->res->classes;
    est_trace traced = {0};
    bool has_trace = cfg_present(b->spec->workload.trace.at);
    if (diag_error_count(b->d) == 0) { /* before the cluster is built */
        if (has_trace) {
            build_trace_estimate(b, &traced);
        }
        est_scenario(b->spec, &b->res->cat, has_trace ? &traced : NULL, NULL, est);
        est_check_limits(b->spec, est, b->d);
    }
    if (diag_error_count(b->d) == 0) {
        if (o->has_seed) {
            b->spec->seed = o->seed;
        }
        build_cluster(b->a, b->spec, &b->res->cat, &b->cc);
        b->pol = build_policy(b->spec, b->a, &b->params);
        b->node_topo = build_ddp_topologies(b->spec, b->res->group_topo, b->a, &b->n_node_topo);
        build_run_check_requests(b, cls);
    }
    if (diag_error_count(b->d) == 0) { /* with the services' capacities */
        est_scenario(b->spec, &b->res->cat, has_trace ? &traced : NULL, b->svc_batch_s, est);
        est_check_limits(b->spec, est, b->d);
    }
    if (diag_error_count(b->d) == 0) {
        job_table *jobs = job_table_create();
        rng_root root = rng_root_make(b->spec->seed);
        build_service_replicas(b, jobs); /* at t = 0: before every generated job */
        size_t n_synth = 0;
        if (!o->check_only) { /* check runs nothing: the jobs are counted, not generated */
            b->synth = synth_stream_create(cls, b->spec->workload.n_jobs, &root,
                                           b->spec->horizon_ns, &n_synth);
        }
        b->has_trace = cfg_present(b->spec->workload.trace.at);
        if (b->has_trace) {
            char why[256];
            cluster *c = NULL;
            rc = cluster_create(&b->cc, &c, why, sizeof why);
            if (rc != 0) {
                diag_error(b->d, b->spec->cluster.at, "cluster", "%s", why);
            } else {
                rc = build_trace_load(b, c);
            }
            cluster_destroy(c);
        }
        if (b->tload) {
            build_trace_source(b, jobs, n_synth);
        } else if (b->synth) {
            job_table_set_source(jobs, n_synth, synth_stream_next, b->synth);
        }
        const comm_net *net = b->res->net;
        b->rate = (jobrate_ctx){.phys = &b->res->phys,
                                .comm = &b->res->comm,
                                .nic_bytes_per_s = net ? net->line_bytes_per_s : 0,
                                .nics = net ? net->nics : 1,
                                .node_topo = b->node_topo,
                                .n_node_topo = b->n_node_topo,
                                .ts_class = 0,
                                .n_profiles = b->res->n_profiles,
                                .profiles = b->res->profiles};
        build_service_spares(b, jobs); /* after every other job: submitted by the autoscaler */
        if (o->job_spill) {
            job_table_set_spill(jobs, o->job_spill, o->job_spill_ctx);
        }
        world_cfg wc = {.cluster = &b->cc,
                        .policy = b->pol,
                        .params = &b->params,
                        .rate = jobrate_rate,
                        .rate_alone = jobrate_alone,
                        .rate_ctx = &b->rate,
                        .slice_speed = jobrate_slice_speed,
                        .slice_ctx = &b->rate,
                        .until = b->spec->horizon_ns,
                        .seed = b->spec->seed,
                        .verify_every = o->verify_every,
                        .checkpoint_s = sim_time_to_s(b->spec->faults.checkpoint_ns)};
        rc = world_create(&wc, jobs, b->d, b->spec->cluster.at, &b->w);
        if (rc == 0 && o->sample_spill) {
            world_set_sample_spill(b->w, o->sample_spill, o->sample_spill_ctx);
        }
        if (rc == 0 && b->tfailed) { /* the trace changed while the builder read it */
            world_stop(b->w);
        }
        if (rc == 0) {
            build_faults(b, o->check_only);
            build_services(b);
            build_repartition(b);
        }
    }
    return rc;
}

void built_run_fini(built_run *b)
{
    reconf_destroy(b->reconf);
    for (size_t i = 0; b->svcs && i < b->spec->n_services; i++) {
        service_destroy(b->svcs[i]);
    }
    fault_injector_destroy(b->faults);
    world_destroy(b->w);
    synth_stream_destroy(b->synth); /* and the streams it feeds */
    traceload_destroy(b->tload);
    trace_close(b->treader);
    if (b->tfile) {
        fclose(b->tfile);
    }
}
