/* experiments/build.c - scenario -> cluster config and workload profiles (see build.h). */
#include "experiments/build.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/build_ddp.h"
#include "experiments/embedded.h"
#include "experiments/obs.h"
#include "model/hw/mig.h"
#include "model/policy/frag.h"
#include "sim/err.h"
#include "sim/xalloc.h"

/* GPU number idx of a group: the layout its mig-parted config placed at load
 * (scenario_node_group.mig_gpus), with profiles of the run's GPU type t. */
static void apply_mig(const gpu_type *t, const scenario_node_group *grp, uint32_t idx,
                      cluster_gpu_cfg *gc)
{
    SIM_ASSERT(grp->mig_gpus != NULL); /* scenario_validate placed every MIG group's layouts */
    const scenario_gpu_mig *gm = &grp->mig_gpus[idx];
    gc->mig_single = grp->sharing.mig.strategy == SCN_MIG_SINGLE;
    gc->mig_enabled = gm->mig_enabled;
    if (!gc->mig_enabled) {
        return;
    }
    gc->n_mig = (uint32_t)gm->layout.n;
    for (int k = 0; k < gm->layout.n; k++) {
        gc->mig[k] = &t->profiles[gm->layout.inst[k].profile];
        gc->mig_start[k] = gm->layout.inst[k].start;
    }
}

/* ---- cluster -------------------------------------------------------------------------------- */

/* The cluster's nodes, or (one_per_group) the first node of each group. */
static void cluster_nodes(arena *a, const scenario_spec *s, const gpu_catalog *cat,
                          bool one_per_group, cluster_cfg *out)
{
    uint64_t n_nodes = one_per_group ? s->cluster.n_groups : scenario_node_count(s);
    cluster_node_cfg *nodes = arena_calloc(a, n_nodes ? n_nodes : 1, sizeof *nodes);
    uint32_t n = 0;
    for (size_t gi = 0; gi < s->cluster.n_groups; gi++) {
        const scenario_node_group *grp = &s->cluster.groups[gi];
        const gpu_type *t = grp->gpus_per_node ? gpu_catalog_find(cat, grp->gpu) : NULL;
        /* scenario_validate reported an unknown GPU type, and nothing is built after it */
        SIM_ASSERT(t != NULL || grp->gpus_per_node == 0);
        const scenario_sharing *sh = &grp->sharing;
        cluster_share_rule *rules = arena_calloc(a, sh->n_rules ? sh->n_rules : 1, sizeof *rules);
        for (size_t r = 0; r < sh->n_rules; r++) {
            rules[r] = (cluster_share_rule){sh->rules[r].resource, sh->rules[r].replicas};
        }
        /* every node of the group has the same GPUs: one array shared by its nodes */
        cluster_gpu_cfg *gpus =
            arena_calloc(a, grp->gpus_per_node ? grp->gpus_per_node : 1, sizeof *gpus);
        for (uint32_t i = 0; i < grp->gpus_per_node; i++) {
            cluster_gpu_cfg *gc = &gpus[i];
            gc->type = t;
            /* the name a pod's gpu_spec matches: the group's label, or the trace's model */
            gc->label = grp->label ? grp->label : grp->trace_model;
            gc->sharing = sh->mode == SCN_SHARE_TIMESLICE ? CLUSTER_SHARE_TIMESLICE
                          : sh->mode == SCN_SHARE_MPS     ? CLUSTER_SHARE_MPS
                                                          : CLUSTER_SHARE_NONE;
            gc->rename_by_default = sh->rename_by_default;
            gc->fail_requests_greater_than_one = sh->fail_requests_greater_than_one;
            gc->n_rules = (uint32_t)sh->n_rules;
            gc->rules = rules;
            if (sh->is_mig) {
                apply_mig(t, grp, i, gc);
            }
            gc->reconfigurable = scenario_group_reconfigurable(s, gi);
            gc->ts_replicas = gc->reconfigurable && cfg_present(s->repartition.timeslice.at)
                                  ? s->repartition.timeslice.replicas
                                  : 0;
        }
        taint_node *meta = NULL;
        if (grp->labels.n || grp->n_taints) {
            meta = arena_calloc(a, 1, sizeof *meta);
            scenario_group_meta(grp, a, meta);
        }
        for (uint32_t k = 0; k < (one_per_group ? 1 : grp->count); k++) {
            char name[160];
            snprintf(name, sizeof name, "%s-%" PRIu32, grp->name, k);
            nodes[n++] = (cluster_node_cfg){.name = arena_strdup(a, name),
                                            .n_gpus = grp->gpus_per_node,
                                            .gpus = gpus,
                                            .cpu_milli = grp->cpu_milli,
                                            .host_mem_bytes = grp->host_mem_bytes,
                                            .meta = meta};
        }
    }
    *out = (cluster_cfg){.n_nodes = n, .nodes = nodes};
}

void build_cluster(arena *a, const scenario_spec *s, const gpu_catalog *cat, cluster_cfg *out)
{
    cluster_nodes(a, s, cat, false, out);
}

void build_cluster_groups(arena *a, const scenario_spec *s, const gpu_catalog *cat,
                          cluster_cfg *out)
{
    cluster_nodes(a, s, cat, true, out);
}

bool build_request_fits(const cluster *c, const job_request *req, const job_pod *pod)
{
    const char *gpu_spec = pod ? pod->gpu_spec : NULL;
    res_id r;
    if (!cluster_resource_find(c, req->resource, &r)) {
        return false;
    }
    bool any_gpu = !gpu_spec || !*gpu_spec;
    uint32_t workers = 0;
    for (node_id n = 0; n < cluster_n_nodes(c) && workers < req->n_workers; n++) {
        if (pod && !job_pod_admits(pod, n, cluster_node_meta(c, n))) {
            continue;
        }
        /* a re-partitioned GPU may come to advertise its inactive candidates: counted as the
         * most it could (their number is each classic profile's placements) */
        uint32_t cap = any_gpu ? cluster_capacity(c, n, r) : 0;
        dev_id first;
        uint32_t nd;
        cluster_node_devices(c, n, &first, &nd);
        for (dev_id d = first; d < first + nd; d++) {
            const cluster_device *cd = cluster_device_get(c, d);
            if (cd->resource != r || (any_gpu && cd->active)) {
                continue;
            }
            /* a pod's gpu_spec allows GPUs by the name the policies match (model/policy/view.c:
             * the node's label for its model, else the catalog name) */
            const cluster_gpu *g = cluster_gpu_get(c, cd->gpu);
            cap += any_gpu || frag_type_allowed(gpu_spec, g->label ? g->label : g->type->name)
                       ? cd->slots
                       : 0;
        }
        workers += cap / req->per_worker;
    }
    return workers >= req->n_workers;
}

const char *build_advertised(const cluster *c, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (res_id r = 0; r < cluster_n_resources(c) && used < len; r++) {
        uint32_t most = 0;
        for (node_id n = 0; n < cluster_n_nodes(c); n++) {
            uint32_t cap = cluster_capacity(c, n, r);
            most = cap > most ? cap : most;
        }
        int k = snprintf(buf + used, len - used, "%s%s x%" PRIu32, r ? ", " : "",
                         cluster_resource_name(c, r), most);
        if (k < 0) {
            break;
        }
        used += (size_t)k;
    }
    return buf;
}

/* The partition a device advertising `res` is (first such device of the empty cluster). */
bool build_partition_for(const cluster *c, const char *res, partition_cfg *part)
{
    res_id want;
    if (!cluster_resource_find(c, res, &want)) {
        return false;
    }
    for (dev_id d = 0; d < cluster_n_devices(c); d++) {
        const cluster_device *cd = cluster_device_get(c, d);
        if (cd->resource == want) {
            partition_cfg_init(part, cluster_gpu_get(c, cd->gpu)->type);
            part->mig = cd->profile;
            return true;
        }
    }
    return false;
}

/* ---- workload profiles ---------------------------------------------------------------------- */

#define LIBRARY_DIR "workloads/library/"

/* Names of the library profiles compiled into the binary, comma-separated, into buf. */
static const char *library_names(char *buf, size_t len)
{
    size_t used = 0, pre = strlen(LIBRARY_DIR);
    buf[0] = '\0';
    for (size_t i = 0; embedded_path(i) && used < len; i++) {
        const char *p = embedded_path(i);
        size_t n = strlen(p);
        if (strncmp(p, LIBRARY_DIR, pre) != 0 || strchr(p + pre, '/') || n < pre + 6 ||
            strcmp(p + n - 5, ".yaml") != 0) {
            continue;
        }
        int k = snprintf(buf + used, len - used, "%s%.*s", used ? ", " : "", (int)(n - pre - 5),
                         p + pre);
        used += k > 0 ? (size_t)k : 0;
    }
    return buf;
}

const jobrate_profile *build_load_profile(const scenario_spec *s, const phys_params *phys,
                                          jobrate_profile *profiles, size_t *n_profiles,
                                          const char *name, src_loc at, const char *path, arena *a,
                                          diag *d)
{
    for (size_t i = 0; i < *n_profiles; i++) {
        if (!strcmp(profiles[i].name, name)) {
            return &profiles[i];
        }
    }
    obs_profile *op = NULL;
    size_t n = strlen(name);
    int rc;
    if (n > 5 && !strcmp(name + n - 5, ".yaml")) {
        size_t dl = strlen(s->dir), len = dl + n + 2;
        char *file = arena_alloc(a, len);
        if (name[0] == '/') {
            snprintf(file, len, "%s", name);
        } else {
            snprintf(file, len, "%s%s%s", s->dir,
                     dl && s->dir[dl - 1] != '/' ? "/" : "", name);
        }
        rc = obs_load_profile(file, NULL, 0, phys, a, d, &op);
        if (rc == SIM_ENOENT || rc == SIM_EIO) {
            diag_error(d, at, path,
                       "cannot read the profile; expected a readable "
                       "profile.yaml, got '%s' (%s)",
                       file, strerror(errno));
        }
    } else {
        char emb[256];
        snprintf(emb, sizeof emb, LIBRARY_DIR "%s.yaml", name);
        const unsigned char *data;
        size_t len;
        if (!embedded_get(emb, &data, &len)) {
            char names[512];
            diag_error(d, at, path,
                       "unknown workload profile; expected a library "
                       "profile [%s] or a path to a profile .yaml, got '%s'",
                       library_names(names, sizeof names), name);
            return NULL;
        }
        rc = obs_load_profile(emb, data, len, phys, a, d, &op);
    }
    if (rc != 0) {
        return NULL;
    }
    jobrate_profile *jp = &profiles[(*n_profiles)++];
    *jp = (jobrate_profile){
        .name = name, .p = &op->p, .batch = op->ref_batch >= 1 ? op->ref_batch : 1};
    return jp;
}

/* The policy named by the scenario (the loader checked the name and the parameters), its
 * parameters into *params (arena). */
const policy_ops *build_policy(const scenario_spec *s, arena *a, param_set *params)
{
    const scenario_policy *p = &s->policy;
    const policy_ops *pol = pol_find(p->scheduler);
    SIM_ASSERT(pol != NULL);
    pol_param *items = arena_calloc(a, p->n_params ? p->n_params : 1, sizeof *items);
    for (size_t i = 0; i < p->n_params; i++) {
        items[i] = (pol_param){p->params[i].key, p->params[i].value, p->params[i].at,
                               p->params[i].value_at};
    }
    *params = (param_set){.n = p->n_params, .items = items, .path = "policy.params", .at = p->at};
    return pol;
}

/* What build_classes works with. */
typedef struct build_classes_ctx {
    const scenario_spec *spec;
    const gpu_catalog *cat;
    const phys_params *phys;
    const comm_params *comm;
    arena *a;
    diag *d;
    jobrate_profile *profiles; /* arena */
    size_t n_profiles;
} build_classes_ctx;

/* A class asking for any MIG slice states its duration on MIG profile duration_on of the pool's
 * GPU type (the first re-partitioned group's): its work is counted on the largest profile
 * (model/cluster/jobrate.h), so its durations are scaled by the job's speed on duration_on relative to
 * the largest, from the physics (jobrate_slice_speed). An unknown profile is reported there. */
static void any_slice_duration(build_classes_ctx *r, size_t i, synth_class *k)
{
    const scenario_job_class *jc = &r->spec->workload.jobs[i];
    const scenario_repartition *rp = &r->spec->repartition;
    const gpu_type *t = NULL;
    for (size_t g = 0; g < r->spec->cluster.n_groups && !t && rp->n_groups > 0; g++) {
        if (!strcmp(r->spec->cluster.groups[g].name, rp->groups[0])) {
            t = gpu_catalog_find(r->cat, r->spec->cluster.groups[g].gpu);
        }
    }
    if (!t) {
        return; /* reported with the cluster or the repartition section */
    }
    char names[512] = "", path[96];
    const mig_profile *p = NULL;
    for (int q = 0, used = 0; q < t->n_profiles; q++) {
        if (!mig_profile_is_classic(&t->profiles[q])) {
            continue;
        }
        p = strcmp(t->profiles[q].name, jc->duration_on) ? p : &t->profiles[q];
        int w = snprintf(names + used, sizeof names - (size_t)used, "%s%s", used ? ", " : "",
                         t->profiles[q].name);
        used += w > 0 && (size_t)(used + w) < sizeof names ? w : 0;
    }
    snprintf(path, sizeof path, "workload.jobs[%zu].duration_on", i);
    if (!p) {
        diag_error(r->d, jc->duration_on_at, path,
                   "not a MIG profile of %s; expected one of [%s], got '%s'", t->name, names,
                   jc->duration_on);
        return;
    }
    jobrate_ctx rc = {.phys = r->phys, .n_profiles = r->n_profiles, .profiles = r->profiles};
    double v = jobrate_slice_speed(&rc, &(job_spec){.profile = k->profile}, t, p);
    if (!(v > 0)) {
        diag_error(r->d, jc->duration_on_at, path,
                   "the profile cannot run on this slice (out of memory or invalid); expected a "
                   "MIG profile the job fits, got '%s'",
                   jc->duration_on);
        return;
    }
    k->duration_s.a *= v; /* fixed: the value; exponential: the mean; lognormal: the median */
}

synth_class *build_classes(const scenario_spec *spec, const gpu_catalog *cat,
                           const phys_params *phys, const comm_params *comm, arena *a, diag *d,
                           jobrate_profile **profiles, size_t *n_profiles)
{
    build_classes_ctx ctx = {spec, cat, phys, comm, a, d, NULL, 0}, *r = &ctx;
    const scenario_workload *wl = &r->spec->workload;
    synth_class *cls = arena_calloc(r->a, wl->n_jobs ? wl->n_jobs : 1, sizeof *cls);
    /* one per profile, plus one per class that runs its profile at another batch */
    r->profiles = arena_calloc(r->a, 2 * wl->n_jobs + r->spec->n_services + wl->trace.n_rules + 1,
                               sizeof *r->profiles);
    for (size_t i = 0; i < wl->n_jobs; i++) {
        const scenario_job_class *jc = &wl->jobs[i];
        synth_class *k = &cls[i];
        k->name = jc->name;
        k->req = (job_request){jc->request.resource, jc->request.count, 1};
        if (jc->arrival == SCN_ARRIVAL_POISSON) {
            k->interarrival_s = (synth_dist){SYNTH_EXPONENTIAL, 1.0 / jc->rate_per_s, 0};
        } else {
            k->interarrival_s = (synth_dist){SYNTH_FIXED, sim_time_to_s(jc->interval_ns), 0};
        }
        const scenario_duration *du = &jc->duration;
        switch (du->dist) {
        case SCN_DUR_EXPONENTIAL:
            k->duration_s = (synth_dist){SYNTH_EXPONENTIAL, sim_time_to_s(du->mean_ns), 0};
            break;
        case SCN_DUR_LOGNORMAL:
            k->duration_s = (synth_dist){SYNTH_LOGNORMAL, sim_time_to_s(du->median_ns), du->sigma};
            break;
        default:
            k->duration_s = (synth_dist){SYNTH_FIXED, sim_time_to_s(du->value_ns), 0};
            break;
        }
        k->start_s = sim_time_to_s(jc->start_ns);
        k->count = (uint32_t)jc->count;
        k->mem_bytes = jc->memory_bytes;
        k->profile = jc->profile;
        k->priority = (int32_t)jc->priority;
        k->gpu_spec = jc->nodes;
        if (jc->node_selector.n || jc->n_tolerations) {
            taint_pod *tp = arena_calloc(r->a, 1, sizeof *tp);
            scenario_class_place(jc, r->a, tp);
            k->place = tp;
        }
        if (jc->n_node_index) { /* a snapshot's running pods: each on its node (node id + 1) */
            uint32_t first = 0;
            size_t g = 0;
            while (g < r->spec->cluster.n_groups &&
                   !scenario_group_named(&r->spec->cluster.groups[g], jc->nodes)) {
                first += r->spec->cluster.groups[g++].count;
            }
            uint32_t *pin = arena_calloc(r->a, jc->n_node_index, sizeof *pin);
            for (size_t q = 0; q < jc->n_node_index; q++) {
                pin[q] = first + jc->node_index[q] + 1;
            }
            k->node_pin = pin;
            k->n_node_pin = jc->n_node_index;
        }
        k->cpu_milli = (uint32_t)jc->cpu_milli;
        k->host_mem_bytes = jc->host_mem_bytes;
        char path[128];
        snprintf(path, sizeof path, "workload.jobs[%zu].profile", i);
        const jobrate_profile *jp =
            jc->profile ? build_load_profile(r->spec, r->phys, r->profiles, &r->n_profiles,
                                             jc->profile, jc->profile_at, path, r->a, r->d)
                        : NULL;
        if (jp && jc->batch > 0 && jc->batch != jp->batch) {
            jp = build_ddp_batch(r->spec, i, jp, &r->profiles[r->n_profiles], r->a, r->d);
            if (jp) {
                r->n_profiles++;
                k->profile = jp->name;
            }
        }
        if (jp && k->mem_bytes == 0) { /* the profile's footprint at its batch */
            k->mem_bytes = (uint64_t)ceil(wl_mem_footprint_bytes(jp->p, jp->batch));
        }
        if (jp && jc->duration_on) {
            any_slice_duration(r, i, k);
        }
        build_ddp_class(r->spec, r->cat, r->comm, r->phys, i, jp, k, r->d);
    }
    *profiles = r->profiles;
    *n_profiles = r->n_profiles;
    return cls;
}
