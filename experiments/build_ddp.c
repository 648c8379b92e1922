/* experiments/build_ddp.c - multi-worker job classes of a run (see run_ddp.h). */
#include "experiments/build_ddp.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "experiments/comm_load.h"
#include "model/physics/ddp.h"
#include "model/physics/predict.h"

#define MIG_PREFIX "nvidia.com/mig-"

/* The partition resource `res` names: *g and *mig (NULL for a whole GPU). False when no node
 * group's GPU type has the MIG profile (the cluster check reports the resource then). */
static bool class_partition(const scenario_spec *spec, const gpu_catalog *cat, const char *res,
                            const gpu_type **g, const mig_profile **mig)
{
    *g = NULL;
    *mig = NULL;
    if (strncmp(res, MIG_PREFIX, strlen(MIG_PREFIX)) != 0) {
        *g = spec->cluster.n_groups ? gpu_catalog_find(cat, spec->cluster.groups[0].gpu) : NULL;
        return *g != NULL;
    }
    char name[64];
    snprintf(name, sizeof name, "%s", res + strlen(MIG_PREFIX));
    size_t n = strlen(name);
    if (n > 7 && !strcmp(name + n - 7, ".shared")) {
        name[n -= 7] = '\0';
    }
    if (n > 3 && !strcmp(name + n - 3, ".me")) { /* advertised ".me" for "+me" */
        name[n - 3] = '+';
    }
    for (size_t i = 0; i < spec->cluster.n_groups; i++) {
        const gpu_type *t = gpu_catalog_find(cat, spec->cluster.groups[i].gpu);
        const mig_profile *p = t ? gpu_find_profile(t, name) : NULL;
        if (p) {
            *g = t;
            *mig = p;
            return true;
        }
    }
    return false;
}

/* Why a gang of class jc on node group gi crosses PCIe (into why), or NULL when its rings can
 * stay on NVLink: MIG ranks are staged through host memory over PCIe, a hop between nodes
 * leaves over PCIe, and GPUs without NVLink between them talk over it (model/physics/comm.h). */
static const char *pcie_use(const scenario_spec *spec, const comm_params *cp,
                            const scenario_node_group *g, const gpu_type *t, bool mig)
{
    if (mig) {
        return "its MIG ranks are staged through host memory over PCIe";
    }
    if (scenario_node_count(spec) > 1) {
        return "a gang may span nodes, whose hops leave each node over PCIe";
    }
    int i = g->topology ? comm_topo_find(cp, g->topology) : -1;
    bool nvswitch = i >= 0 ? cp->topos[i].nvlink == COMM_NVLINK_SWITCH
                           : t->nvlink_bytes_per_s > 0;
    return nvswitch ? NULL : "its GPUs are not all joined by NVLink, so hops cross PCIe";
}

/* A data-parallel class whose rings may cross a link the catalog gives no rate: an error at
 * its `workers` (a ring at rate 0 would never finish a collective). */
static void check_links(const scenario_spec *spec, const gpu_catalog *cat, const comm_params *cp,
                        size_t ci, const mig_profile *mig, diag *d)
{
    const scenario_job_class *jc = &spec->workload.jobs[ci];
    for (size_t gi = 0; gi < spec->cluster.n_groups; gi++) {
        const scenario_node_group *g = &spec->cluster.groups[gi];
        const gpu_type *t = g->gpu ? gpu_catalog_find(cat, g->gpu) : NULL;
        if (!t || g->gpus_per_node == 0 || g->sharing.is_mig != (mig != NULL) ||
            (mig && !gpu_find_profile(t, mig->name)) || t->pcie_bytes_per_s > 0) {
            continue;
        }
        const char *why = pcie_use(spec, cp, g, t, mig != NULL);
        if (!why) {
            continue;
        }
        char path[64];
        snprintf(path, sizeof path, "workload.jobs[%zu].workers", ci);
        diag_error(d, jc->workers_at, path,
                   "a data-parallel gang on cluster.nodes[%zu] (%s) crosses PCIe (%s), but the "
                   "catalog gives %s no PCIe rate (pcie_gb_s_per_direction); expected a GPU type "
                   "with a PCIe rate, or one node whose GPUs are all joined by NVLink, got '%u'",
                   gi, g->name ? g->name : "?", why, t->name, jc->workers);
        return;
    }
}

void build_ddp_class(const scenario_spec *spec, const gpu_catalog *cat, const comm_params *cp,
                   const phys_params *m, size_t ci, const jobrate_profile *jp, synth_class *k,
                   diag *d)
{
    const scenario_job_class *jc = &spec->workload.jobs[ci];
    k->req.n_workers = jc->workers;
    char path[128];
    const gpu_type *g;
    const mig_profile *mig;
    bool known = class_partition(spec, cat, jc->request.resource, &g, &mig);
    if (known && jc->per_gpu > 0) {
        int cap = mig ? mig->max_instances : 1;
        if ((int)jc->per_gpu > cap) {
            snprintf(path, sizeof path, "workload.jobs[%zu].per_gpu", ci);
            diag_error(d, jc->per_gpu_at, path,
                       "more workers than one GPU holds; expected at most %d (%s), got '%u'", cap,
                       mig ? mig->name : "a whole GPU holds one worker", jc->per_gpu);
        }
    }
    uint32_t drv = spec->cluster.driver;
    if (known && mig && jc->request.count >= 2 && drv != 0 && drv < 570) {
        snprintf(path, sizeof path, "workload.jobs[%zu].request", ci);
        diag_error(d, jc->request.at, path,
                   "a worker asks for %u MIG devices, but before driver R570 a CUDA process sees "
                   "one MIG device; expected 1 per worker or cluster.driver >= 570, got driver "
                   "%u",
                   jc->request.count, drv);
    }
    if (!jp || !known) {
        return;
    }
    partition_cfg pc;
    partition_cfg_init(&pc, g);
    pc.mig = mig;
    if (cfg_present(jc->samples_at)) {
        speed_result r;
        predict_unit_estimate(jp->p, jp->batch, &pc, m, &r);
        if (r.outcome == SPEED_OK) {
            double s = jc->samples * r.unit_time_s / jc->workers;
            k->duration_s = (synth_dist){SYNTH_FIXED, s > 1e-9 ? s : 1e-9, 0};
        } else {
            /* it cannot run there (OOM): any work; the cluster's memory rule fails it at start */
            k->duration_s = (synth_dist){SYNTH_FIXED, 1.0, 0};
        }
    }
    if (jc->workers >= 2 && jp->p->grad_bytes > 0 && jc->memory_bytes == 0) {
        ddp_job dj;
        memset(&dj, 0, sizeof dj);
        dj.profile = jp->p;
        dj.batch = jp->batch;
        dj.grad_bytes = jp->p->grad_bytes;
        dj.workers = (int)jc->workers;
        dj.gpu = g;
        dj.mig = mig;
        ddp_mem mem; /* before placement: the most a placement can need */
        ddp_worker_mem(&dj, cp, NULL, &mem);
        k->mem_bytes = (uint64_t)ceil(mem.total_bytes);
    }
    if (jc->workers >= 2 && jp->p->grad_bytes > 0) {
        check_links(spec, cat, cp, ci, mig, d);
    }
}

const comm_net *build_ddp_net(const scenario_spec *spec, const comm_params *cp, diag *d)
{
    int net = comm_load_net(cp, spec->cluster.interconnect, spec->cluster.interconnect_at,
                            "cluster.interconnect", d);
    net = net < 0 ? cp->default_net : net;
    return &cp->nets[net];
}

const jobrate_profile *build_ddp_batch(const scenario_spec *spec, size_t ci,
                                     const jobrate_profile *jp, jobrate_profile *slot, arena *a,
                                     diag *d)
{
    const scenario_job_class *jc = &spec->workload.jobs[ci];
    const wl_profile *p = jp->p;
    bool scales = p->host_s_per_sample > 0 || p->mem_traffic_bytes_per_sample > 0 ||
                  p->mem_footprint_bytes_per_sample > 0 || p->max_sms_per_sample > 0;
    for (int c = 0; c < WL_CLASS_COUNT; c++) {
        scales |= p->compute_sm_s_per_sample[c] > 0;
    }
    if (!scales) {
        char path[128];
        snprintf(path, sizeof path, "workload.jobs[%zu].batch", ci);
        diag_error(d, jc->batch_at, path,
                   "the profile was fitted at batch %g only; expected that batch (or a profile "
                   "fitted at two batch sizes), got '%u'",
                   jp->batch, jc->batch);
        return NULL;
    }
    char name[512];
    snprintf(name, sizeof name, "%s@%u", jp->name, jc->batch);
    *slot = (jobrate_profile){arena_strdup(a, name), jp->p, (double)jc->batch};
    return slot;
}

const comm_topo **build_ddp_group_topologies(const scenario_spec *spec, const gpu_catalog *cat,
                                             const comm_params *cp, arena *a, diag *d)
{
    const comm_topo **out = arena_calloc(a, spec->cluster.n_groups + 1, sizeof *out);
    for (size_t gi = 0; gi < spec->cluster.n_groups; gi++) {
        const scenario_node_group *g = &spec->cluster.groups[gi];
        const comm_topo *topo = NULL;
        char path[64];
        snprintf(path, sizeof path, "cluster.nodes[%zu].topology", gi);
        if (g->topology) {
            int i = comm_topo_find(cp, g->topology);
            const gpu_type *t = g->gpu ? gpu_catalog_find(cat, g->gpu) : NULL;
            if (i < 0) {
                char names[256];
                comm_topo_names(cp, names, sizeof names);
                diag_error(d, g->topology_at, path,
                           "unknown topology; expected one of [%s], got '%s'", names,
                           g->topology);
            } else if (t && cp->topos[i].nvlink != COMM_NVLINK_NONE &&
                       !(t->nvlink_bytes_per_s > 0)) {
                diag_error(d, g->topology_at, path,
                           "the catalog gives %s no NVLink rate; expected a topology with "
                           "nvlink: none in model/physics/comm.yaml (like pcie), got '%s'",
                           t->name, g->topology);
            } else if (t && cp->topos[i].multicast && !comm_nvls_arch(cp, t->arch)) {
                char archs[160];
                comm_nvls_arch_words(cp, archs, sizeof archs);
                diag_error(d, g->topology_at, path,
                           "NVLink SHARP multicast needs a %s GPU behind a third-generation "
                           "NVSwitch (model/physics/comm.yaml nvls_archs), the catalog gives %s "
                           "arch '%s'; expected a topology without multicast, got '%s'",
                           archs, t->name, t->arch ? t->arch : "", g->topology);
            } else {
                topo = &cp->topos[i];
            }
        }
        out[gi] = topo;
    }
    return out;
}

const comm_topo **build_ddp_topologies(const scenario_spec *spec, const comm_topo *const *group_topo,
                                       arena *a, uint32_t *n)
{
    uint64_t n_nodes = scenario_node_count(spec);
    const comm_topo **out = arena_calloc(a, n_nodes ? n_nodes : 1, sizeof *out);
    uint64_t k = 0;
    for (size_t gi = 0; gi < spec->cluster.n_groups; gi++) {
        for (uint32_t c = 0; c < spec->cluster.groups[gi].count && k < n_nodes; c++) {
            out[k++] = group_topo[gi];
        }
    }
    *n = (uint32_t)k;
    return out;
}
