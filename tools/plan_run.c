/* tools/plan_run.c - capacity planning over a sweep of candidates (see plan_run.h). */
#include "tools/plan_run.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/resolve.h"
#include "experiments/fileio.h"
#include "experiments/plan.h"
#include "experiments/scenario.h"
#include "sim/arena.h"
#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/frontier.h"
#include "tools/out.h"
#include "tools/plot.h"
#include "experiments/build.h"
#include "tools/sweep_mpi.h"

typedef struct cand {
    size_t combo;
    double gpus, energy_kwh, cost;
    bool has[PLAN_MAX_SLOS];
    double mean[PLAN_MAX_SLOS], half[PLAN_MAX_SLOS], upper[PLAN_MAX_SLOS];
    bool ok[PLAN_MAX_SLOS], meets;
    bool pareto[PLAN_MAX_SLOS];
} cand;

typedef struct plan_ctx {
    const sweep_run_opts *o;
    const plan_spec *ps;
    const scenario_spec *base;
    const char *dir;
    double horizon_h;
    size_t n;
    cand *c;
    long chosen; /* index into c, -1 when none meets the SLOs */
} plan_ctx;

static const cJSON *fig(const cJSON *combo, const char *name, const char *what)
{
    return cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(combo, "figures"), name),
        what);
}

/* Fill the candidates from DIR/summary.json. 0 or SIM_EIO. */
static int read_candidates(plan_ctx *x)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.json", x->dir);
    char *buf = NULL;
    size_t len;
    if (fileio_read_all(path, FILEIO_MAX_BYTES, &buf, &len) != 0) {
        fprintf(stderr, "slicesim plan: %s: %s\n", path, strerror(errno));
        return SIM_EIO;
    }
    cJSON *s = cJSON_ParseWithLength(buf, len);
    free(buf);
    const cJSON *combos = cJSON_GetObjectItemCaseSensitive(s, "combinations");
    x->n = (size_t)cJSON_GetArraySize(combos);
    x->c = xcalloc(x->n ? x->n : 1, sizeof *x->c, "plan candidates");
    for (size_t i = 0; i < x->n; i++) {
        const cJSON *cj = cJSON_GetArrayItem(combos, (int)i);
        cand *c = &x->c[i];
        c->combo = i;
        const cJSON *g = fig(cj, "gpus", "mean"), *e = fig(cj, "energy_kwh", "mean");
        c->gpus = cJSON_IsNumber(g) ? g->valuedouble : 0;
        c->energy_kwh = cJSON_IsNumber(e) ? e->valuedouble : 0;
        c->cost = x->ps->gpu_hour * c->gpus * x->horizon_h + x->ps->energy_kwh * c->energy_kwh;
        c->meets = true;
        for (size_t k = 0; k < x->ps->n_slos; k++) {
            const cJSON *m = fig(cj, x->ps->slos[k].figure, "mean");
            const cJSON *h = fig(cj, x->ps->slos[k].figure, "ci95");
            c->has[k] = cJSON_IsNumber(m);
            c->mean[k] = c->has[k] ? m->valuedouble : 0;
            c->half[k] = cJSON_IsNumber(h) ? h->valuedouble : 0;
            const plan_slo *slo = &x->ps->slos[k];
            /* the conservative end of the interval: upper for a limit, lower for a floor */
            c->upper[k] = slo->at_least ? c->mean[k] - c->half[k] : c->mean[k] + c->half[k];
            c->ok[k] = c->has[k] &&
                       (slo->at_least ? c->upper[k] >= slo->limit : c->upper[k] <= slo->limit);
            c->meets = c->meets && c->ok[k];
        }
    }
    cJSON_Delete(s);
    return 0;
}

static void choose_and_mark(plan_ctx *x)
{
    x->chosen = -1;
    for (size_t i = 0; i < x->n; i++) {
        const cand *c = &x->c[i];
        if (!c->meets) {
            continue;
        }
        const cand *b = x->chosen >= 0 ? &x->c[x->chosen] : NULL;
        if (!b || c->cost < b->cost || (c->cost == b->cost && c->gpus < b->gpus)) {
            x->chosen = (long)i;
        }
    }
    frontier_pt *pts = xcalloc(x->n ? x->n : 1, sizeof *pts, "frontier");
    for (size_t k = 0; k < x->ps->n_slos; k++) {
        for (size_t i = 0; i < x->n; i++) {
            /* higher is better for a floor (attainment): mark on the negated figure */
            double y = x->ps->slos[k].at_least ? -x->c[i].mean[k] : x->c[i].mean[k];
            pts[i] = (frontier_pt){.x = x->c[i].cost, .y = y, .has = x->c[i].has[k]};
        }
        frontier_mark(pts, x->n);
        for (size_t i = 0; i < x->n; i++) {
            x->c[i].pareto[k] = pts[i].pareto;
        }
    }
    free(pts);
}

/* Axis values of combination c, "path=value; ..." into buf. */
static const char *describe(const plan_ctx *x, size_t combo, char *buf, size_t len)
{
    size_t idx[SWEEP_MAX_AXES], used = 0;
    sweep_combo_values(&x->ps->sw, combo, idx);
    buf[0] = '\0';
    for (size_t a = 0; a < x->ps->sw.n_axes && used < len; a++) {
        int k = snprintf(buf + used, len - used, "%s%s=%s", a ? "; " : "", x->ps->sw.axes[a].path,
                         x->ps->sw.axes[a].labels[idx[a]]);
        used += k > 0 ? (size_t)k : 0;
    }
    return buf;
}

/* ---- plan.csv and plan.json ------------------------------------------------------------------ */

static void write_csv(const plan_ctx *x, FILE *f)
{
    const plan_spec *ps = x->ps;
    fputs("candidate", f);
    for (size_t a = 0; a < ps->sw.n_axes; a++) {
        fputc(',', f);
        out_csv_field(f, ps->sw.axes[a].path);
    }
    fputs(",gpus,gpu_hours,energy_kwh,cost", f);
    for (size_t k = 0; k < ps->n_slos; k++) {
        const char *n = ps->slos[k].figure;
        fprintf(f, ",%s_mean,%s_ci95,%s_bound,%s_ok,%s_pareto", n, n, n, n, n);
    }
    fputs(",meets,chosen\n", f);
    for (size_t i = 0; i < x->n; i++) {
        const cand *c = &x->c[i];
        size_t idx[SWEEP_MAX_AXES];
        sweep_combo_values(&ps->sw, c->combo, idx);
        fprintf(f, "%zu", c->combo);
        for (size_t a = 0; a < ps->sw.n_axes; a++) {
            fputc(',', f);
            out_csv_field(f, ps->sw.axes[a].labels[idx[a]]);
        }
        fprintf(f, ",%.0f,%.6g,%.6g,%.6g", c->gpus, c->gpus * x->horizon_h, c->energy_kwh, c->cost);
        for (size_t k = 0; k < ps->n_slos; k++) {
            if (c->has[k]) {
                fprintf(f, ",%.6g,%.6g,%.6g", c->mean[k], c->half[k], c->upper[k]);
            } else {
                fputs(",,,", f);
            }
            fprintf(f, ",%d,%d", c->ok[k], c->pareto[k]);
        }
        fprintf(f, ",%d,%d\n", c->meets, (long)i == x->chosen);
    }
}

static cJSON *cand_json(const plan_ctx *x, const cand *c)
{
    char buf[2048];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "candidate", out_json_number((double)c->combo));
    cJSON_AddStringToObject(o, "values", describe(x, c->combo, buf, sizeof buf));
    cJSON_AddItemToObject(o, "gpus", out_json_number(c->gpus));
    cJSON_AddItemToObject(o, "energy_kwh", out_json_number(c->energy_kwh));
    cJSON_AddItemToObject(o, "cost", out_json_number(c->cost));
    cJSON *slos = cJSON_AddObjectToObject(o, "slo");
    for (size_t k = 0; k < x->ps->n_slos; k++) {
        cJSON *s = cJSON_AddObjectToObject(slos, x->ps->slos[k].figure);
        if (c->has[k]) {
            cJSON_AddItemToObject(s, "mean", out_json_number(c->mean[k]));
            cJSON_AddItemToObject(s, "ci95", out_json_number(c->half[k]));
            cJSON_AddItemToObject(s, "bound", out_json_number(c->upper[k]));
        } else {
            cJSON_AddNullToObject(s, "mean");
        }
        cJSON_AddBoolToObject(s, "ok", c->ok[k]);
        cJSON_AddBoolToObject(s, "pareto", c->pareto[k]);
    }
    cJSON_AddBoolToObject(o, "meets", c->meets);
    return o;
}

static cJSON *plan_json(const plan_ctx *x)
{
    const plan_spec *ps = x->ps;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "scenario", x->o->scenario);
    cJSON *search = cJSON_AddObjectToObject(root, "search");
    cJSON_AddItemToObject(search, "candidates", out_json_number((double)ps->sw.n_combos));
    cJSON_AddItemToObject(search, "replications", out_json_number(ps->sw.replications));
    cJSON_AddItemToObject(search, "runs", out_json_number((double)ps->sw.n_points));
    cJSON_AddStringToObject(search, "space", "every combination of the plan's axes");
    cJSON_AddStringToObject(
        search, "uncertainty",
        ps->sw.replications > 1
            ? "an SLO is met when mean + 95% half-width (Student t over replications) <= limit "
              "(mean - half-width >= limit for attainment)"
            : "one replication: an SLO is met when the figure <= limit (no interval)");
    cJSON_AddStringToObject(search, "answer",
                            "the cheapest candidate meeting every SLO (ties: fewer GPUs)");
    cJSON *slos = cJSON_AddObjectToObject(root, "slo");
    for (size_t k = 0; k < ps->n_slos; k++) {
        cJSON_AddItemToObject(slos, ps->slos[k].figure, out_json_number(ps->slos[k].limit));
    }
    cJSON *cost = cJSON_AddObjectToObject(root, "cost");
    cJSON_AddItemToObject(cost, "gpu_hour", out_json_number(ps->gpu_hour));
    cJSON_AddItemToObject(cost, "energy_kwh", out_json_number(ps->energy_kwh));
    cJSON_AddItemToObject(cost, "horizon_h", out_json_number(x->horizon_h));
    cJSON_AddItemToObject(root, "chosen",
                          x->chosen >= 0 ? cand_json(x, &x->c[x->chosen]) : cJSON_CreateNull());
    cJSON *all = cJSON_AddArrayToObject(root, "candidates");
    for (size_t i = 0; i < x->n; i++) {
        cJSON_AddItemToArray(all, cand_json(x, &x->c[i]));
    }
    return root;
}

/* ---- plan.html ------------------------------------------------------------------------------- */

static int write_html(const plan_ctx *x, FILE *f)
{
    const plan_spec *ps = x->ps;
    char buf[2048];
    snprintf(buf, sizeof buf, "slicesim plan: %s", x->base->name ? x->base->name : "");
    html_begin(f, buf);
    fputs("<section id=\"summary\">\n<h2>Search and answer</h2>\n<p>", f);
    fprintf(f,
            "%zu candidates (every combination of the plan's axes), %u replication%s each: %zu "
            "runs. Cost = %.4g per GPU-hour &times; GPUs &times; %.4g h + %.4g per kWh &times; "
            "energy. ",
            ps->sw.n_combos, ps->sw.replications, ps->sw.replications == 1 ? "" : "s",
            ps->sw.n_points, ps->gpu_hour, x->horizon_h, ps->energy_kwh);
    fputs(ps->sw.replications > 1
              ? "An SLO is met when the upper end of the 95 % confidence interval of the mean "
                "over the replications is within the limit."
              : "One replication: an SLO is met when the figure is within the limit.",
          f);
    fputs("</p>\n<p><b>Answer:</b> ", f);
    if (x->chosen >= 0) {
        const cand *c = &x->c[x->chosen];
        html_text(f, describe(x, c->combo, buf, sizeof buf));
        fprintf(f, " &mdash; %.0f GPUs, cost %.2f.", c->gpus, c->cost);
    } else {
        fputs("no candidate meets every SLO.", f);
    }
    fputs("</p>\n<table>\n<tr><th class=\"l\">candidate</th><th>GPUs</th><th>cost</th>", f);
    for (size_t k = 0; k < ps->n_slos; k++) {
        fputs("<th>", f);
        html_text(f, ps->slos[k].figure);
        fprintf(f, " %s %.4g</th>", ps->slos[k].at_least ? "&ge;" : "&le;", ps->slos[k].limit);
    }
    fputs("<th>meets</th></tr>\n", f);
    for (size_t i = 0; i < x->n; i++) {
        const cand *c = &x->c[i];
        fprintf(f, "<tr%s><td class=\"l\">", (long)i == x->chosen ? " class=\"pareto\"" : "");
        html_text(f, describe(x, c->combo, buf, sizeof buf));
        fprintf(f, "</td><td>%.0f</td><td>%.2f</td>", c->gpus, c->cost);
        for (size_t k = 0; k < ps->n_slos; k++) {
            if (c->has[k]) {
                fprintf(f, "<td>%.4g &plusmn; %.3g</td>", c->mean[k], c->half[k]);
            } else {
                fputs("<td>&ndash;</td>", f);
            }
        }
        fprintf(f, "<td>%s</td></tr>\n", c->meets ? "yes" : "no");
    }
    fputs("</table>\n</section>\n", f);
    plot_dir *pd = plot_dir_open();
    if (!pd) {
        return SIM_EIO;
    }
    int rc = 0;
    frontier_pt *pts = xcalloc(x->n ? x->n : 1, sizeof *pts, "frontier");
    for (size_t k = 0; k < ps->n_slos && rc == 0; k++) {
        for (size_t i = 0; i < x->n; i++) {
            const cand *c = &x->c[i];
            pts[i] = (frontier_pt){.x = c->cost,
                                   .y = c->mean[k],
                                   .half = c->half[k],
                                   .has = c->has[k],
                                   .pareto = c->pareto[k],
                                   .marked = (long)i == x->chosen};
        }
        char id[32], title[160];
        snprintf(id, sizeof id, "frontier-%zu", k);
        snprintf(title, sizeof title, "Frontier: cost against %s", ps->slos[k].figure);
        rc = frontier_plot(pd, f, id, title, "cost", ps->slos[k].figure, pts, x->n, true,
                           ps->slos[k].limit);
    }
    free(pts);
    plot_dir_close(pd);
    html_end(f);
    return rc;
}

/* ---- the answer as mig-parted and device-plugin configs ---------------------------------------
 */

typedef struct group_layout {
    const scenario_node_group *g;
    const cluster_gpu_cfg *gpu0; /* the first GPU of the group's first node */
    bool uniform;                /* every GPU of the group has gpu0's layout */
    const cluster_gpu_cfg *gpus; /* the first node's GPUs */
} group_layout;

static void put_mig_devices(FILE *f, const cluster_gpu_cfg *g, const char *indent)
{
    /* profiles in first-seen order with their counts */
    const char *names[GPU_MAX_SLICES];
    int counts[GPU_MAX_SLICES], n = 0;
    for (uint32_t i = 0; i < g->n_mig; i++) {
        int k = 0;
        while (k < n && strcmp(names[k], g->mig[i]->name) != 0) {
            k++;
        }
        if (k == n) {
            names[n] = g->mig[i]->name;
            counts[n++] = 0;
        }
        counts[k]++;
    }
    for (int k = 0; k < n; k++) {
        fprintf(f, "%s\"%s\": %d\n", indent, names[k], counts[k]);
    }
}

static bool same_layout(const cluster_gpu_cfg *a, const cluster_gpu_cfg *b)
{
    if (a->n_mig != b->n_mig) {
        return false;
    }
    for (uint32_t i = 0; i < a->n_mig; i++) {
        if (a->mig[i] != b->mig[i] || a->mig_start[i] != b->mig_start[i]) {
            return false;
        }
    }
    return true;
}

static void write_mig_parted(const plan_ctx *x, FILE *f, const group_layout *gl, size_t n)
{
    char buf[2048];
    fprintf(f, "# mig-parted config written by `slicesim plan %s`: the answer's MIG layouts\n",
            x->o->scenario);
    fprintf(f, "# (%s).\n", describe(x, x->c[x->chosen].combo, buf, sizeof buf));
    fputs("# Label each node with the config of its group, e.g.\n"
          "#   kubectl label node NODE nvidia.com/mig.config=<config> --overwrite\n"
          "# and the GPU operator's mig-manager applies it.\n"
          "version: v1\nmig-configs:\n  all-disabled:\n    - devices: all\n"
          "      mig-enabled: false\n",
          f);
    for (size_t i = 0; i < n; i++) {
        if (!gl[i].g->sharing.is_mig) {
            continue;
        }
        fprintf(f, "  # node group %s: %" PRIu32 " nodes x %" PRIu32 " %s\n", gl[i].g->name,
                gl[i].g->count, gl[i].g->gpus_per_node, gl[i].g->gpu);
        fprintf(f, "  slicesim-%s:\n", gl[i].g->name);
        if (gl[i].uniform) {
            fputs("    - devices: all\n      mig-enabled: true\n      mig-devices:\n", f);
            put_mig_devices(f, gl[i].gpu0, "        ");
        } else {
            for (uint32_t d = 0; d < gl[i].g->gpus_per_node; d++) {
                fprintf(f,
                        "    - devices: [%" PRIu32 "]\n      mig-enabled: true\n"
                        "      mig-devices:\n",
                        d);
                put_mig_devices(f, &gl[i].gpus[d], "        ");
            }
        }
    }
}

static void write_device_plugin(const plan_ctx *x, FILE *f, const group_layout *gl, size_t n)
{
    char buf[2048];
    fprintf(f,
            "# NVIDIA device-plugin configs written by `slicesim plan %s`: the answer's\n"
            "# (%s) sharing, one key per node group. Give the ConfigMap to the GPU operator\n"
            "# (devicePlugin.config.name) and label each node with its group's key:\n"
            "#   kubectl label node NODE nvidia.com/device-plugin.config=<group> --overwrite\n",
            x->o->scenario, describe(x, x->c[x->chosen].combo, buf, sizeof buf));
    fputs("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: slicesim-device-plugin-config\n"
          "  namespace: gpu-operator\ndata:\n",
          f);
    for (size_t i = 0; i < n; i++) {
        const scenario_sharing *sh = &gl[i].g->sharing;
        fprintf(f, "  %s: |-\n    version: v1\n    flags:\n      migStrategy: %s\n", gl[i].g->name,
                !sh->is_mig                          ? "none"
                : sh->mig.strategy == SCN_MIG_SINGLE ? "single"
                                                     : "mixed");
        if (sh->mode == SCN_SHARE_EXCLUSIVE) {
            continue;
        }
        fprintf(f, "    sharing:\n      %s:\n        renameByDefault: %s\n",
                sh->mode == SCN_SHARE_MPS ? "mps" : "timeSlicing",
                sh->rename_by_default ? "true" : "false");
        if (sh->mode == SCN_SHARE_TIMESLICE) {
            fprintf(f, "        failRequestsGreaterThanOne: %s\n",
                    sh->fail_requests_greater_than_one ? "true" : "false");
        }
        fputs("        resources:\n", f);
        for (size_t r = 0; r < sh->n_rules; r++) {
            const char *res = sh->rules[r].resource;
            if (!res) { /* every resource of the GPU: name them */
                if (!sh->is_mig || sh->mig.strategy == SCN_MIG_SINGLE) {
                    fprintf(f,
                            "          - name: nvidia.com/gpu\n            replicas: %" PRIu32 "\n",
                            sh->rules[r].replicas);
                    continue;
                }
                for (uint32_t k = 0; k < gl[i].gpu0->n_mig; k++) {
                    char name[128];
                    cluster_resource_name_for(gl[i].gpu0->mig[k], false, name, sizeof name);
                    fprintf(f, "          - name: %s\n            replicas: %" PRIu32 "\n", name,
                            sh->rules[r].replicas);
                }
                continue;
            }
            fprintf(f, "          - name: %s\n            replicas: %" PRIu32 "\n", res,
                    sh->rules[r].replicas);
        }
    }
}

/* Load the answer's scenario and write mig-parted.yaml and device-plugin-config.yaml. */
static int write_configs(const plan_ctx *x, out_stage *st)
{
    arena *a = arena_create();
    diag *d = diag_create();
    sweep_combo ce = {&x->ps->sw, x->c[x->chosen].combo};
    scenario_edit edit = {sweep_combo_edit, &ce};
    scenario_spec *s = NULL;
    int rc = scenario_load_file_edit(x->o->scenario, x->o->sets, x->o->n_sets, &edit, 0, a, d, &s);
    cluster_cfg cc = {0};
    if (rc == 0) {
        build_cluster(a, s, &s->resolved->cat, &cc);
    }
    if (rc != 0 || diag_error_count(d) > 0) {
        diag_print(d, stderr);
        diag_destroy(d);
        arena_destroy(a);
        return SIM_EINPUT;
    }
    size_t n = s->cluster.n_groups;
    group_layout *gl = xcalloc(n ? n : 1, sizeof *gl, "plan groups");
    uint32_t node = 0;
    for (size_t i = 0; i < n; i++) {
        const scenario_node_group *g = &s->cluster.groups[i];
        const cluster_node_cfg *nc = &cc.nodes[node];
        gl[i] = (group_layout){.g = g, .gpu0 = &nc->gpus[0], .uniform = true, .gpus = nc->gpus};
        for (uint32_t k = 0; k < g->count; k++) {
            const cluster_node_cfg *nk = &cc.nodes[node + k];
            for (uint32_t gi = 0; gi < nk->n_gpus; gi++) {
                gl[i].uniform = gl[i].uniform && same_layout(&nk->gpus[gi], gl[i].gpu0);
            }
        }
        node += g->count;
    }
    FILE *mp = out_stage_open(st, "mig-parted.yaml");
    FILE *dp = mp ? out_stage_open(st, "device-plugin-config.yaml") : NULL;
    if (dp) {
        write_mig_parted(x, mp, gl, n);
        write_device_plugin(x, dp, gl, n);
    }
    free(gl);
    diag_destroy(d);
    arena_destroy(a);
    return dp ? 0 : SIM_EIO;
}

/* ---- entry point --------------------------------------------------------------------------------
 */

static void print_answer(const plan_ctx *x, FILE *out)
{
    char buf[2048];
    const plan_spec *ps = x->ps;
    fprintf(out,
            "plan: %zu candidates x %u replications = %zu runs; cost = %.4g/GPU-h x GPUs x "
            "%.4g h + %.4g/kWh x energy; SLO met when %s\n",
            ps->sw.n_combos, ps->sw.replications, ps->sw.n_points, ps->gpu_hour, x->horizon_h,
            ps->energy_kwh,
            ps->sw.replications > 1 ? "mean + 95% half-width <= limit (- and >= for attainment)"
                                    : "value <= limit (>= for attainment)");
    if (x->chosen < 0) {
        fprintf(out, "answer: none of the candidates meets every SLO\n");
    } else {
        const cand *c = &x->c[x->chosen];
        fprintf(out, "answer: %s: %.0f GPUs, cost %.2f (energy %.2f kWh)",
                describe(x, c->combo, buf, sizeof buf), c->gpus, c->cost, c->energy_kwh);
        for (size_t k = 0; k < ps->n_slos; k++) {
            fprintf(out, "; %s %.4g +- %.3g (limit %.4g)", ps->slos[k].figure, c->mean[k],
                    c->half[k], ps->slos[k].limit);
        }
        fputc('\n', out);
    }
    for (size_t k = 0; k < ps->n_slos; k++) {
        fprintf(out, "frontier cost vs %s:", ps->slos[k].figure);
        for (size_t i = 0; i < x->n; i++) {
            if (x->c[i].pareto[k]) {
                fprintf(out, " [%s: %.2f, %.4g]", describe(x, x->c[i].combo, buf, sizeof buf),
                        x->c[i].cost, x->c[i].mean[k]);
            }
        }
        fputc('\n', out);
    }
}

int plan_run(const sweep_run_opts *o)
{
    arena *a = arena_create();
    diag *d = diag_create();
    const plan_spec *ps = NULL;
    scenario_spec *base = NULL;
    /* the plan section is checked by the scenario loader, as `check` and `run` check it */
    int rc = scenario_load_file(o->scenario, o->sets, o->n_sets, 0, a, d, &base);
    if (rc == SIM_ENOENT || rc == SIM_EIO) {
        fprintf(stderr, "slicesim plan: error: cannot read '%s': %s\n", o->scenario,
                strerror(errno));
    } else if (rc == 0 && !base->plan) {
        fprintf(stderr,
                "%s:1:1: error: plan: missing; expected a plan: section with axes, slo "
                "and cost, got none\n",
                o->scenario);
        rc = SIM_EINPUT;
    } else if (rc == 0 && (base->outputs.files & o->need_files) != o->need_files) {
        /* found now, not after every candidate ran */
        char have[160] = "";
        for (unsigned b = 0; b < SCN_OUT_COUNT; b++) {
            if (base->outputs.files & (1u << b)) {
                snprintf(have + strlen(have), sizeof have - strlen(have), "%s%s",
                         have[0] ? ", " : "", scenario_output_name(b));
            }
        }
        diag_error(d, cfg_present(base->outputs.files_at) ? base->outputs.files_at : base->outputs.at,
                   "outputs.files",
                   "plan --fail-on reads each run's run.json and jobs.csv back; expected both "
                   "among the outputs (or --set 'outputs.files=[run.json, jobs.csv]'), got [%s]",
                   have);
    } else if (rc == 0) {
        ps = base->plan;
    }
    if (rc == SIM_EINPUT || diag_error_count(d) > 0) {
        if (o->mpi->rank == 0) {
            diag_print(d, stderr);
        }
        rc = SIM_EINPUT;
    }
    diag_destroy(d);
    if (rc != 0) {
        arena_destroy(a);
        return rc;
    }
    const char *dir = o->out_dir ? o->out_dir : base->outputs.dir;
    out_lock *lock = NULL; /* held over the candidates' runs and the answer's files */
    rc = o->mpi->rank == 0 ? out_lock_take(dir, "plan", &lock) : 0;
    if (sweep_mpi_max(o->mpi, rc == 0 ? 0 : 1) != 0) {
        arena_destroy(a);
        return SIM_EIO;
    }
    sweep_run_opts so = *o;
    so.sw = &ps->sw;
    so.dir_locked = true;
    rc = sweep_run(&so);
    if (rc != 0 || o->mpi->rank != 0) {
        out_lock_release(lock, rc != 0); /* a candidate's bad input leaves no directory behind */
        arena_destroy(a);
        return rc;
    }
    plan_ctx x = {.o = o,
                  .ps = ps,
                  .base = base,
                  .dir = dir,
                  .horizon_h = sim_time_to_s(base->horizon_ns) / 3600.0};
    rc = read_candidates(&x);
    if (rc == 0) {
        choose_and_mark(&x);
        out_stage *st = out_stage_begin(x.dir);
        FILE *csv = st ? out_stage_open(st, "plan.csv") : NULL;
        FILE *js = csv ? out_stage_open(st, "plan.json") : NULL;
        FILE *html = js ? out_stage_open(st, "plan.html") : NULL;
        rc = html ? 0 : SIM_EIO;
        if (rc == 0) {
            write_csv(&x, csv);
            cJSON *root = plan_json(&x);
            rc = out_write_json(js, root);
            cJSON_Delete(root);
        }
        rc = rc ? rc : write_html(&x, html);
        if (rc == 0 && x.chosen >= 0) {
            rc = write_configs(&x, st);
        }
        rc = rc == 0 ? out_stage_commit(st) : (out_stage_abort(st), rc);
        if (rc == 0 && o->out) {
            print_answer(&x, o->out);
            fprintf(o->out, "plan: %s/plan.html, plan.csv, plan.json%s\n", x.dir,
                    x.chosen >= 0 ? ", mig-parted.yaml, device-plugin-config.yaml" : "");
        }
    }
    free(x.c);
    out_lock_release(lock, false);
    arena_destroy(a);
    return rc;
}
