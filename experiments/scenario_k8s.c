/* experiments/scenario_k8s.c - `cluster.snapshot`: a kubectl snapshot read into the scenario's
 * node groups and job classes (see scenario.h scenario_cluster_snapshot and
 * experiments/k8s_snapshot.h), as `slicesim import cluster` writes them. */
#include "experiments/scenario_int.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "experiments/k8s_snapshot.h"
#include "sim/err.h"

const cfg_field scenario__snapshot_fields[] = {
    CFG_SELF(scenario_cluster_snapshot, at),
    {"file", CFG_STRING, .required = true, .off = offsetof(scenario_cluster_snapshot, file),
     .expect = "the output of kubectl get nodes,pods -A -o json",
     CFG_LOC(scenario_cluster_snapshot, file_at)},
    {"mig_parted", CFG_STRING, .off = offsetof(scenario_cluster_snapshot, mig_parted),
     .expect = "the mig-parted config the nodes' nvidia.com/mig.config labels name",
     CFG_LOC(scenario_cluster_snapshot, mig_parted_at)},
    /* absent: the horizon */
    {"duration", CFG_DURATION, CFG_ABOVE(0),
     .off = offsetof(scenario_cluster_snapshot, duration_ns), .out = CFG_OUT_IF_SET},
    {0},
};

/* The node group of snapshot group g (its sharing from the labels the reader decoded). */
static scenario_node_group group_of(load_ctx *c, const k8s_group *g)
{
    const scenario_cluster_snapshot *sn = &c->spec->cluster.snapshot;
    scenario_sharing sh = {.at = sn->at};
    if (g->mig_config) {
        sh.is_mig = true;
        sh.mig = (scenario_mig){.file = sn->mig_parted,
                                .config = g->mig_config,
                                .strategy = g->mig_strategy == K8S_MIG_SINGLE ? SCN_MIG_SINGLE
                                                                              : SCN_MIG_MIXED,
                                .at = sn->at,
                                .file_at = sn->mig_parted_at,
                                .config_at = sn->at};
    }
    if (g->sharing != K8S_SHARE_NONE) {
        sh.mode = g->sharing == K8S_SHARE_MPS ? SCN_SHARE_MPS : SCN_SHARE_TIMESLICE;
        sh.rename_by_default = g->rename_by_default;
        sh.n_rules = 1;
        sh.rules = arena_calloc(c->a, 1, sizeof *sh.rules);
        sh.rules[0] = (scenario_replica_rule){NULL, g->replicas, sn->at};
    }
    scenario_taint *taints = arena_calloc(c->a, g->n_taints + 1, sizeof *taints);
    for (size_t i = 0; i < g->n_taints; i++) {
        taint_effect e = TAINT_NO_SCHEDULE;
        taint_effect_parse(g->taints[i].effect, &e);
        taints[i] = (scenario_taint){g->taints[i].key, g->taints[i].value,
                                     (int)e - TAINT_NO_SCHEDULE, sn->at};
    }
    return (scenario_node_group){.name = g->name,
                                 .labels = {g->n_labels, g->labels, sn->at},
                                 .n_taints = g->n_taints,
                                 .taints = taints,
                                 .count = (uint32_t)g->n_nodes,
                                 .gpu = g->gpu,
                                 .gpus_per_node = g->gpus_per_node,
                                 .sharing = sh,
                                 .cpu_milli = g->cpu_milli,
                                 .host_mem_bytes = g->mem_bytes,
                                 .label = g->name,
                                 .at = sn->at,
                                 .gpu_at = sn->at,
                                 .label_at = sn->at};
}

/* The job class of snapshot class k, serial `serial` of its phase. */
static scenario_job_class class_of(load_ctx *c, const k8s_snapshot *snap, const k8s_pod_class *k,
                                   int serial)
{
    const scenario_cluster_snapshot *sn = &c->spec->cluster.snapshot;
    char name[64];
    snprintf(name, sizeof name, "snapshot-%s-%d", k->running ? "running" : "pending", serial);
    int64_t dur = sn->duration_ns ? sn->duration_ns : c->spec->horizon_ns;
    const taint_pod *pl = &k->place;
    scenario_toleration *tols = arena_calloc(c->a, pl->n_tolerations + 1, sizeof *tols);
    for (size_t i = 0; i < pl->n_tolerations; i++) {
        const taint_toleration *t = &pl->tolerations[i];
        tols[i] = (scenario_toleration){.key = t->key,
                                        .value = t->value,
                                        .op = t->exists,
                                        .effect = (int)t->effect,
                                        .at = sn->at,
                                        .key_at = sn->at,
                                        .value_at = sn->at};
    }
    return (scenario_job_class){
        .node_selector = {pl->n_selector, pl->selector, sn->at},
        .n_tolerations = pl->n_tolerations,
        .tolerations = tols,
        .n_node_index = k->node_index ? k->n_pods : 0,
        .node_index = k->node_index,
        .node_index_at = sn->at,
        .name = arena_strdup(c->a, name),
        .arrival = SCN_ARRIVAL_FIXED,
        .interval_ns = 1000000, /* one a millisecond, as import cluster writes them */
        .start_ns = k->running ? 0 : (int64_t)k8s_running_most(snap) * 1000000,
        .count = k->n_pods,
        .duration = {.dist = SCN_DUR_FIXED, .value_ns = dur, .at = sn->at},
        .request = {.resource = k->resource, .count = k->count, .at = sn->at},
        .priority = k8s_priority_rank(snap, k->priority),
        .workers = 1,
        .nodes = k->groups,
        .cpu_milli = k->cpu_milli,
        .host_mem_bytes = k->mem_bytes,
        .nodes_at = sn->at,
        .at = sn->at,
        .interval_at = sn->at,
        .duration_at = sn->at};
}

void scenario__add_snapshot(load_ctx *c)
{
    scenario_spec *s = c->spec;
    scenario_cluster_snapshot *sn = &s->cluster.snapshot;
    if (!cfg_present(sn->at) || !sn->file) {
        return;
    }
    sn->file = scenario_resolve(s, c->a, sn->file);
    scenario__add_ref(c, sn->file, "kubectl snapshot", sn->file_at);
    if (sn->mig_parted) {
        sn->mig_parted = scenario_resolve(s, c->a, sn->mig_parted);
        scenario__add_ref(c, sn->mig_parted, "mig-parted config", sn->mig_parted_at);
    }
    if (c->flags & SCENARIO_NO_FILES) {
        return;
    }
    gpu_catalog cat;
    k8s_snapshot snap;
    if (catalog_load_default(c->a, &cat, c->d) != 0) {
        return;
    }
    int rc = k8s_snapshot_load_file(sn->file, &cat, c->a, c->d, &snap);
    if (rc == SIM_ENOENT || rc == SIM_EIO) {
        diag_error(c->d, sn->file_at, "cluster.snapshot.file",
                   "cannot read the snapshot (%s); expected a readable file, got '%s'",
                   strerror(errno), sn->file);
    }
    if (rc) {
        return;
    }
    for (size_t g = 0; g < snap.n_groups; g++) {
        if (snap.groups[g].mig_config && !sn->mig_parted) {
            diag_error(c->d, sn->at, "cluster.snapshot.mig_parted",
                       "missing; expected the mig-parted config the nodes' labels name (group %s "
                       "has nvidia.com/mig.config=%s), got nothing",
                       snap.groups[g].name, snap.groups[g].mig_config);
            return;
        }
    }
    FILE *mf = sn->mig_parted ? fopen(sn->mig_parted, "r") : NULL;
    if (sn->mig_parted && !mf) { /* here, once: its groups would each report it as theirs */
        diag_error(c->d, sn->mig_parted_at, "cluster.snapshot.mig_parted",
                   "cannot read the file (%s); expected a readable mig-parted config, got '%s'",
                   strerror(errno), sn->mig_parted);
        return;
    }
    if (mf) {
        fclose(mf);
    }
    scenario_cluster *cl = &s->cluster;
    scenario_node_group *groups = arena_calloc(c->a, cl->n_groups + snap.n_groups, sizeof *groups);
    if (cl->n_groups) {
        memcpy(groups, cl->groups, cl->n_groups * sizeof *groups);
    }
    for (size_t g = 0; g < snap.n_groups; g++) {
        groups[cl->n_groups + g] = group_of(c, &snap.groups[g]);
    }
    cl->groups = groups;
    cl->n_groups += snap.n_groups;
    scenario_workload *wl = &s->workload;
    scenario_job_class *jobs = arena_calloc(c->a, wl->n_jobs + snap.n_classes + 1, sizeof *jobs);
    if (wl->n_jobs) {
        memcpy(jobs, wl->jobs, wl->n_jobs * sizeof *jobs);
    }
    int serial[2] = {0, 0};
    for (int pass = 1; pass >= 0; pass--) { /* running pods first, as import cluster writes */
        for (size_t i = 0; i < snap.n_classes; i++) {
            if (snap.classes[i].running == (pass == 1)) {
                jobs[wl->n_jobs++] = class_of(c, &snap, &snap.classes[i], ++serial[pass]);
            }
        }
    }
    wl->jobs = jobs;
}
