/* tools/out_sched.c - the scheduling metrics of run.json (metrics.scheduling) and of the summary
 * (see out.h and docs/outputs.md, `scheduling`).
 *
 * Wait: started jobs wait from submission to their first start; a job still queued at the end
 * is *censored*: its wait so far (horizon - submit) is a lower bound, counted in
 * wait_with_queued_s and flagged by n_censored. Slowdown: JCT / solo work time, done jobs.
 * Node groups: the node name without its "-<index>" suffix (nodes are named GROUP-k).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/cluster/fragstat.h"
#include "sim/xalloc.h"
#include "tools/out.h"

static void add_num(cJSON *o, const char *k, double v)
{
    cJSON_AddItemToObject(o, k, out_json_number(v));
}

/* FGD's figures at the end and the curve, from the typical pods and the curve of the jobs'
 * pass (st). */
static cJSON *fgd_json(const world *w, const out_stats *st)
{
    SIM_ASSERT(st->has_curve);
    const cluster *c = world_cluster(w);
    fragstat fs;
    fragstat_measure(c, &st->typical, &fs);
    cJSON *o = cJSON_CreateObject();
    add_num(o, "gpus_total", fs.gpus_total);
    add_num(o, "gpus_allocated", fs.gpus_alloc);
    add_num(o, "gpu_allocation", fs.gpus_total ? (double)fs.gpus_alloc / fs.gpus_total : 0);
    add_num(o, "milli_gpu_total", (double)fs.milli_total);
    add_num(o, "milli_gpu_allocated", (double)fs.milli_alloc);
    add_num(o, "milli_gpu_allocation",
            fs.milli_total ? (double)fs.milli_alloc / (double)fs.milli_total : 0);
    add_num(o, "idle_milli_gpu", (double)fs.milli_idle);
    add_num(o, "fragmented_milli_gpu", fs.frag_milli);
    add_num(o, "fragmented_share_of_idle", fs.frag_ratio);
    add_num(o, "typical_pods", (double)st->typical.n);
    cJSON *curve = cJSON_AddArrayToObject(o, "curve");
    for (size_t i = 0; i < st->n_curve; i++) {
        cJSON *p = cJSON_CreateObject();
        add_num(p, "arrived", st->curve[i].arrived);
        add_num(p, "gpu_allocation", st->curve[i].gpu_alloc);
        add_num(p, "milli_gpu_allocation", st->curve[i].milli_alloc);
        cJSON_AddItemToArray(curve, p);
    }
    return o;
}

static double mean_or_0(double sum, uint32_t n)
{
    return n ? sum / n : 0;
}

static cJSON *per_class_json(const out_stats *st)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < st->n_classes; i++) {
        const out_class_stats *a = &st->classes[i];
        cJSON *c = cJSON_AddObjectToObject(o, a->name);
        add_num(c, "jobs", a->jobs);
        add_num(c, "done", a->done);
        add_num(c, "queued", a->queued);
        add_num(c, "failed", a->failed);
        add_num(c, "wait_mean_s", mean_or_0(a->wait_sum, a->n_wait));
        add_num(c, "jct_mean_s", mean_or_0(a->jct_sum, a->done));
        add_num(c, "slowdown_mean", mean_or_0(a->slow_sum, a->done));
    }
    return o;
}

/* Length of node name s without a trailing "-<digits>". */
static size_t group_len(const char *s)
{
    size_t n = strlen(s), k = n;
    while (k > 0 && s[k - 1] >= '0' && s[k - 1] <= '9') {
        k--;
    }
    return k > 0 && k < n && s[k - 1] == '-' ? k - 1 : n;
}

typedef struct group_acc {
    const char *name; /* a node name; the group is its first len bytes */
    size_t len;
    uint32_t nodes, gpus, busy;
} group_acc;

static cJSON *per_group_json(const world *w)
{
    const cluster *c = world_cluster(w);
    group_acc *acc = xcalloc(cluster_n_nodes(c), sizeof *acc, "node groups");
    size_t n_acc = 0;
    for (node_id n = 0; n < cluster_n_nodes(c); n++) {
        const char *name = cluster_node_name(c, n);
        size_t len = group_len(name), i = 0;
        while (i < n_acc && (acc[i].len != len || strncmp(acc[i].name, name, len) != 0)) {
            i++;
        }
        if (i == n_acc) {
            acc[n_acc++] = (group_acc){.name = name, .len = len};
        }
        acc[i].nodes++;
        gpu_id g0;
        uint32_t ng;
        cluster_node_gpus(c, n, &g0, &ng);
        for (gpu_id g = g0; g < g0 + ng; g++) {
            const cluster_gpu *cg = cluster_gpu_get(c, g);
            bool held = false;
            for (dev_id d = cg->first_dev; d < cg->first_dev + cg->n_devs && !held; d++) {
                held = cluster_device_get(c, d)->used > 0;
            }
            acc[i].gpus++;
            acc[i].busy += held;
        }
    }
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < n_acc; i++) {
        char key[256];
        snprintf(key, sizeof key, "%.*s", (int)(acc[i].len < 255 ? acc[i].len : 255), acc[i].name);
        cJSON *g = cJSON_AddObjectToObject(o, key);
        add_num(g, "nodes", acc[i].nodes);
        add_num(g, "gpus", acc[i].gpus);
        add_num(g, "gpus_allocated_at_end", acc[i].busy);
    }
    free(acc);
    return o;
}

cJSON *out_sched_json(const world *w, const out_stats *st)
{
    world_totals tot = world_get_totals(w);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "fgd", fgd_json(w, st));
    cJSON *un = cJSON_AddObjectToObject(o, "unscheduled");
    add_num(un, "never_started", st->never_started);
    add_num(un, "queued_again", st->queued_again);
    add_num(un, "failed_oom", tot.n_oom);
    add_num(un, "failed_request", tot.n_failed_request);
    cJSON *wj = out_dist_json(&st->wait_queued);
    add_num(wj, "n_censored", st->n_censored);
    cJSON_AddItemToObject(o, "wait_with_queued_s", wj);
    cJSON_AddItemToObject(o, "slowdown", out_dist_json(&st->slowdown));
    cJSON_AddItemToObject(o, "per_class", per_class_json(st));
    cJSON_AddItemToObject(o, "per_node_group", per_group_json(w));
    return o;
}

void out_sched_summary(FILE *f, const world *w, const out_stats *st)
{
    if (!st->has_shares && world_get_totals(w).n_queued == 0) {
        return; /* nothing left waiting and no fractional pods: the line would say little */
    }
    fragstat fs;
    fragstat_measure(world_cluster(w), &st->typical, &fs);
    world_totals tot = world_get_totals(w);
    fprintf(f,
            "at the end: %.1f%% of GPUs allocated (%" PRIu32 " of %" PRIu32
            "), %.1f%% of milli-GPU, %" PRIu32 " jobs unscheduled; %.2f%% of idle GPU share "
            "fragmented (FGD)\n",
            fs.gpus_total ? 100.0 * fs.gpus_alloc / fs.gpus_total : 0.0, fs.gpus_alloc,
            fs.gpus_total,
            fs.milli_total ? 100.0 * (double)fs.milli_alloc / (double)fs.milli_total : 0.0,
            tot.n_queued, 100 * fs.frag_ratio);
}
