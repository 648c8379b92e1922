/* experiments/build_dyn.c - the scenario's faults and re-partitioner on the run's world (see
 * build_dyn.h). */
#include "experiments/build_dyn.h"

#include <stdio.h>
#include <stdlib.h>

#include "experiments/cfg.h"
#include "model/policy/repart.h"
#include "sim/err.h"
#include "sim/rng.h"
#include "sim/xalloc.h"

/* The scenario's faults: the seeded process (unless `listed_only`: check draws none) and the
 * listed events, resolved on the built cluster (a listed node, GPU or instance that does not
 * exist is reported at its field). */
void build_faults(built_run *b, bool listed_only)
{
    const scenario_faults *sf = &b->spec->faults;
    if (!cfg_present(sf->at)) {
        return;
    }
    const cluster *c = world_cluster(b->w);
    const scenario_fault_rate *rates[FAULT_N_KINDS] = {&sf->process.gpu, &sf->process.instance,
                                                       &sf->process.node, &sf->process.nvlink};
    fault_process p = {0};
    for (int k = 0; k < FAULT_N_KINDS; k++) {
        if (cfg_present(rates[k]->at)) {
            p.mtbf_s[k] = sim_time_to_s(rates[k]->mtbf_ns);
            p.repair_s[k] = sim_time_to_s(rates[k]->repair_ns);
        }
    }
    rng_root root = rng_root_make(b->spec->seed);
    fault_event *ev = NULL;
    size_t n = 0;
    if (!listed_only) {
        fault_generate(c, &p, &root, b->spec->horizon_ns, &ev, &n);
    }
    ev = xrealloc(ev, (n + sf->n_events + 1) * sizeof *ev, "fault events");
    for (size_t i = 0; i < sf->n_events; i++) {
        const scenario_fault_event *se = &sf->events[i];
        fault_kind k = FAULT_GPU;
        SIM_ASSERT(fault_kind_find(se->kind, &k)); /* the schema admits only these names */
        char why[256], path[64];
        if (!fault_resolve(c, k, se->node, se->gpu, se->instance, &ev[n], why, sizeof why)) {
            snprintf(path, sizeof path, "faults.events[%zu].node", i);
            diag_error(b->d, se->node_at, path,
                       "%s; expected a node, GPU and instance of the cluster, got '%s/%u/%u'", why,
                       se->node, (unsigned)se->gpu, (unsigned)se->instance);
            continue;
        }
        ev[n].at = se->at_ns;
        ev[n].repair_ns = se->repair_ns;
        n++;
    }
    b->faults = fault_injector_create(b->w, ev, n);
    free(ev);
}

/* Dynamic re-partitioning: the reconfiguration component and its layout policy. */
void build_repartition(built_run *b)
{
    const scenario_repartition *rp = &b->spec->repartition;
    if (!cfg_present(rp->at) || !rp->enabled) {
        return;
    }
    static const char *const keys[] = {"min_gain", "hold_s", "max_concurrent", "evict"};
    double vals[] = {rp->min_gain, sim_time_to_s(rp->hold_ns), rp->max_concurrent, rp->evict};
    pol_param *items = arena_calloc(b->a, 4, sizeof *items);
    for (int i = 0; i < 4; i++) {
        char *v = arena_alloc(b->a, 32);
        snprintf(v, 32, "%.17g", vals[i]);
        items[i] = (pol_param){keys[i], v, rp->at, rp->at};
    }
    param_set ps = {.n = 4, .items = items, .path = "repartition", .at = rp->at};
    reconf_cfg rc = {.delay_s = sim_time_to_s(rp->delay_ns),
                     .reset_s = sim_time_to_s(rp->reset_ns),
                     .restart_s = sim_time_to_s(rp->timeslice.restart_ns),
                     .interval_s = sim_time_to_s(rp->interval_ns),
                     .policy = repart_find(rp->policy),
                     .params = &ps};
    SIM_ASSERT(rc.policy != NULL); /* the schema admits only registered names */
    if (reconf_create(b->w, &rc, b->d, &b->reconf) != 0) {
        b->reconf = NULL;
    }
}
