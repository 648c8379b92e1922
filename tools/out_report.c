/* tools/out_report.c - report.html of one run (see out_report.h). */
#include "tools/out_report.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/cluster/fragstat.h"
#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/actlog.h"
#include "tools/out_metrics.h"
#include "tools/devlog.h"
#include "tools/gantt.h"
#include "tools/plot.h"
#include "tools/runstats.h"

#define S_PER_H 3600.0

typedef struct rep {
    FILE *f;
    const world *w;
    const cluster *c;
    const scenario_spec *spec;
    plot_dir *pd;
    devlog log;
    const actlog *act; /* device activity (finished) */
    double energy_j;   /* the GPUs' energy over [0, horizon] (out_energy_j) */
    size_t n_classes; /* distinct class names, first-seen order */
    const char **classes;
    sim_time horizon;
} rep;

static size_t class_index(const rep *r, const char *name)
{
    for (size_t i = 0; i < r->n_classes; i++) {
        if (!strcmp(r->classes[i], name)) {
            return i;
        }
    }
    return r->n_classes;
}

static void collect_classes(rep *r)
{
    const job_table *jt = world_jobs(r->w);
    size_t n = job_table_count(jt), cap = 8;
    r->classes = xcalloc(cap, sizeof *r->classes, "report classes");
    for (job_id k = 0; k < n; k++) {
        const char *name = job_table_get(jt, k)->spec.class_name;
        if (class_index(r, name) < r->n_classes) {
            continue;
        }
        if (r->n_classes == cap) {
            cap *= 2;
            r->classes = xrealloc(r->classes, cap * sizeof *r->classes, "report classes");
        }
        r->classes[r->n_classes++] = name;
    }
}

/* ---- summary -------------------------------------------------------------------------------- */

/* A figure with `decimals` decimals, times scale (100 for %, then suffixed " %"). */
static void put_fig(FILE *f, const runstats *rs, int i, int decimals, double scale)
{
    fputs("<td>", f);
    if (rs->has[i]) {
        fprintf(f, "%.*f%s", decimals, rs->v[i] * scale, scale == 100 ? " %" : "");
    } else {
        fputs("&ndash;", f);
    }
    fputs("</td>", f);
}

static void row_text(FILE *f, const char *k, const char *v)
{
    fputs("<tr><th class=\"l\">", f);
    html_text(f, k);
    fputs("</th><td class=\"l\">", f);
    html_text(f, v);
    fputs("</td></tr>\n", f);
}

static void summary(rep *r, const char *policy)
{
    FILE *f = r->f;
    char buf[256];
    runstats rs;
    runstats_compute(r->w, &rs);
    fputs("<section id=\"summary\">\n<h2>Summary</h2>\n<table>\n", f);
    row_text(f, "scenario", r->spec->name ? r->spec->name : "");
    if (r->spec->description) {
        row_text(f, "description", r->spec->description);
    }
    snprintf(buf, sizeof buf, "%" PRIu64, r->spec->seed);
    row_text(f, "seed", buf);
    snprintf(buf, sizeof buf, "%.2f h", sim_time_to_s(r->horizon) / S_PER_H);
    row_text(f, "observed up to", buf);
    row_text(f, "policy", policy);
    snprintf(buf, sizeof buf,
             "%" PRIu32 " nodes, %" PRIu32 " GPUs, %" PRIu32 " devices, %" PRIu32
             " schedulable units",
             cluster_n_nodes(r->c), cluster_n_gpus(r->c), cluster_n_devices(r->c),
             cluster_units_total(r->c));
    row_text(f, "cluster", buf);
    snprintf(buf, sizeof buf, "%.0f: %.0f done, %.0f failed, %.0f unfinished", rs.v[RS_JOBS],
             rs.v[RS_DONE], rs.v[RS_FAILED], rs.v[RS_UNFINISHED]);
    row_text(f, "jobs", buf);
    fputs("</table>\n<table>\n<tr><th class=\"l\">class</th><th>jobs</th><th>done</th>"
          "<th>failed</th><th>wait mean (s)</th><th>wait p95 (s)</th><th>JCT mean (s)</th>"
          "<th>JCT p95 (s)</th><th>slowdown</th></tr>\n",
          f);
    for (size_t i = 0; i <= r->n_classes; i++) {
        runstats cs = rs;
        fputs(i < r->n_classes ? "<tr><td class=\"l\">" : "<tr><th class=\"l\">", f);
        if (i < r->n_classes) {
            runstats_class(r->w, r->classes[i], &cs);
            html_text(f, r->classes[i]);
            fputs("</td>", f);
        } else {
            fputs("all</th>", f);
        }
        put_fig(f, &cs, RS_JOBS, 0, 1);
        put_fig(f, &cs, RS_DONE, 0, 1);
        put_fig(f, &cs, RS_FAILED, 0, 1);
        put_fig(f, &cs, RS_WAIT_MEAN, 1, 1);
        put_fig(f, &cs, RS_WAIT_P95, 1, 1);
        put_fig(f, &cs, RS_JCT_MEAN, 1, 1);
        put_fig(f, &cs, RS_JCT_P95, 1, 1);
        put_fig(f, &cs, RS_SLOWDOWN_MEAN, 3, 1);
        fputs("</tr>\n", f);
    }
    fputs("</table>\n<table>\n<tr><th>units held</th><th>GPUs busy</th><th>SMs busy</th>"
          "<th>jobs queued (mean)</th><th>GPU power (mean, W)</th><th>energy (kWh)</th></tr>\n<tr>",
          f);
    put_fig(f, &rs, RS_UNITS_UTIL, 1, 100);
    put_fig(f, &rs, RS_GPUS_BUSY, 1, 100);
    put_fig(f, &rs, RS_SMS_BUSY, 1, 100);
    put_fig(f, &rs, RS_QUEUED_MEAN, 2, 1);
    fprintf(f, "<td>%.1f</td><td>%.2f</td>", out_power_mean_w(r->w, r->energy_j),
            r->energy_j / 3.6e6);
    fputs(
        "</tr>\n</table>\n<p class=\"note\">Time-weighted over [0, horizon]; slowdown is JCT over "
        "the job's run time alone on what it asked for; power and energy are the power model's "
        "from the GPUs' activity (idle power included), as metrics.om's "
        "DCGM_FI_DEV_POWER_USAGE.</p>\n</section>\n",
        f);
}

/* ---- time series (utilisation, queue, fragmentation) --------------------------------------- */

/* The sample in force at t: the last one at or before t (samples are in time order). */
static size_t sample_at(const world *w, size_t n, size_t from, sim_time t)
{
    while (from + 1 < n && world_sample_get(w, from + 1)->t <= t) {
        from++;
    }
    return from;
}

/* Fragmented share (%) of the non-MIG GPUs at the cursors' time, by fragstat's rules (a device's
 * held share, the node's GPU type); CPU is not followed over time, so no pod is short of it. -1
 * when there are none. */
static double frag_now(const rep *r, const devlog_cursor *cur, const frag_typical *typ)
{
    double frag = 0, cap = 0;
    for (node_id nd = 0; nd < cluster_n_nodes(r->c); nd++) {
        frag_node fn = {.cpu_left = UINT64_MAX};
        for (gpu_id g = 0; g < cluster_n_gpus(r->c); g++) {
            const cluster_gpu *cg = cluster_gpu_get(r->c, g);
            if (cg->node != nd || cg->mig_enabled || cg->n_devs != 1) {
                continue;
            }
            const cluster_device *dev = cluster_device_get(r->c, cg->first_dev);
            fragstat_node_add(&fn, cg, fragstat_dev_held(dev->shareable, cur[g].milli[0],
                                                          cur[g].used[0]));
        }
        if (fn.n_gpus) {
            frag += frag_node_amount(&fn, typ);
            cap += (double)MILLI_PER_GPU * fn.n_gpus;
        }
    }
    return cap > 0 ? 100 * frag / cap : -1;
}

static int time_series(rep *r)
{
    size_t n = world_n_samples(r->w);
    uint32_t gpus = cluster_n_gpus(r->c), units = cluster_units_total(r->c);
    frag_typical typ;
    fragstat_typical(world_jobs(r->w), &typ);
    bool has_frag = typ.n > 0;
    devlog_cursor *cur = xcalloc(gpus ? gpus : 1, sizeof *cur, "report cursors");
    for (gpu_id g = 0; g < gpus; g++) {
        devlog_cursor_init(&cur[g], &r->log, r->c, g);
    }
    uint32_t n_devs = cluster_n_devices(r->c);
    actlog_cursor *act = xcalloc(n_devs ? n_devs : 1, sizeof *act, "report activity cursors");
    for (dev_id k = 0; k < n_devs; k++) {
        actlog_cursor_init(&act[k], r->act, k);
    }
    FILE *d = plot_file(r->pd, "ts.dat");
    if (!d) {
        free(cur);
        free(act);
        return SIM_EIO;
    }
    sim_time step = r->horizon / OUT_REPORT_POINTS > 0 ? r->horizon / OUT_REPORT_POINTS : 1;
    size_t i = 0;
    bool any_frag = false;
    sim_time t = 0;
    do {
        i = sample_at(r->w, n, i, t);
        const world_sample si = *world_sample_get(r->w, i);
        double frag = -1;
        if (has_frag) {
            for (gpu_id g = 0; g < gpus; g++) {
                devlog_cursor_advance(&cur[g], t);
            }
            frag = frag_now(r, cur, &typ);
        }
        any_frag = any_frag || frag >= 0;
        /* activity at t: the mean over GPUs of each one's (a MIG GPU's: its instances' weighted
         * by SMs, at most 1), as run.json's metrics.activity averages over time */
        double util = 0, sm = 0;
        for (gpu_id g = 0; g < gpus; g++) {
            const cluster_gpu *cg = cluster_gpu_get(r->c, g);
            double gu = 0, gm = 0;
            for (dev_id k = cg->first_dev; k < cg->first_dev + cg->n_devs; k++) {
                actlog_cursor_advance(&act[k], t);
                double wt = actlog_dev_weight(r->c, k);
                gu += wt * act[k].util;
                gm += wt * act[k].sm;
            }
            util += fmin(1.0, gu);
            sm += fmin(1.0, gm);
        }
        fprintf(d, "%.6f %.4f %.4f %.4f %" PRIu32 " %" PRIu32 " ", sim_time_to_s(t) / S_PER_H,
                units ? 100.0 * si.units_used / units : 0, gpus ? 100.0 * util / gpus : 0,
                gpus ? 100.0 * sm / gpus : 0, si.queued, si.running);
        fprintf(d, frag >= 0 ? "%.4f\n" : "NaN\n", frag);
    } while (devlog_next_sample(&t, step, r->horizon));
    for (gpu_id g = 0; g < gpus; g++) {
        devlog_cursor_fini(&cur[g]);
    }
    free(cur);
    free(act);
    frag_typical_fini(&typ);
    FILE *p = plot_file(r->pd, "ts.gp");
    if (!p) {
        return SIM_EIO;
    }
    plot_header(p, "util.svg", 1000, 320);
    fprintf(p, "set xrange [0:%.6f]\n", sim_time_to_s(r->horizon) / S_PER_H);
    fputs("set xlabel 'simulated time (h)'\nset ylabel '% of the cluster'\nset yrange [0:*]\n"
          "plot 'ts.dat' u 1:3 w steps lw 2 t 'GPU utilisation (activity)', "
          "'' u 1:4 w steps lw 2 t 'SMs active (activity)', "
          "'' u 1:2 w steps lw 1 dt 2 t 'units held (allocation)'\n",
          p);
    plot_header(p, "queue.svg", 1000, 320);
    fputs("set ylabel 'jobs'\n"
          "plot 'ts.dat' u 1:5 w steps lw 2 t 'queued', '' u 1:6 w steps lw 2 t 'running'\n",
          p);
    if (any_frag) {
        plot_header(p, "frag.svg", 1000, 320);
        fputs("set ylabel '% of non-MIG GPU capacity'\n"
              "plot 'ts.dat' u 1:7 w steps lw 2 t 'fragmented (FGD)'\n",
              p);
    }
    int rc = plot_run(r->pd, "ts.gp");
    FILE *f = r->f;
    if (rc == 0) {
        fputs("<section id=\"utilisation\">\n<h2>Activity over time</h2>\n<figure>", f);
        rc = plot_inline_svg(r->pd, "util.svg", f);
        fputs("</figure>\n</section>\n<section id=\"queue\">\n<h2>Queue length over time</h2>\n"
              "<figure>",
              f);
    }
    rc = rc ? rc : plot_inline_svg(r->pd, "queue.svg", f);
    if (rc == 0) {
        fputs("</figure>\n</section>\n<section id=\"fragmentation\">\n<h2>Fragmentation over "
              "time</h2>\n",
              f);
        if (any_frag) {
            fputs("<figure>", f);
            rc = plot_inline_svg(r->pd, "frag.svg", f);
            fputs("</figure>\n", f);
        }
        fputs("<p class=\"note\">FGD's measure (Weng et al., ATC '23; model/policy/frag.h): the "
              "idle GPU share that the run's typical pod shapes (run.json's, "
              "model/cluster/fragstat.h) cannot use, as % of the capacity of the GPUs without "
              "MIG. MIG GPUs are left out (their free capacity is fixed instances, not milli-GPU "
              "shares); a time-sliced GPU with a replica held counts as held; CPU is not "
              "followed over time",
              f);
        fputs(any_frag ? ".</p>\n" : "; this cluster has no GPU without MIG, or no job.</p>\n", f);
        fputs("</section>\n", f);
    }
    return rc;
}

/* ---- CDFs ------------------------------------------------------------------------------------ */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One CDF plot of per-class values: jct (done jobs) or wait (started jobs). */
static int cdf(rep *r, bool jct, const char *id, const char *title)
{
    const job_table *jt = world_jobs(r->w);
    size_t n = job_table_count(jt),
           nc = r->n_classes < OUT_REPORT_CLASSES ? r->n_classes : OUT_REPORT_CLASSES;
    char dat[32], svg[32], gp[32];
    snprintf(dat, sizeof dat, "%s.dat", id);
    snprintf(svg, sizeof svg, "%s.svg", id);
    snprintf(gp, sizeof gp, "%s.gp", id);
    FILE *d = plot_file(r->pd, dat);
    if (!d) {
        return SIM_EIO;
    }
    double *v = xcalloc(n ? n : 1, sizeof *v, "cdf values");
    size_t blocks = 0;
    const char **titles = xcalloc(nc ? nc : 1, sizeof *titles, "cdf titles");
    for (size_t c = 0; c < nc; c++) {
        size_t k = 0;
        for (job_id j = 0; j < n; j++) {
            const job *jb = job_table_get(jt, j);
            if (strcmp(jb->spec.class_name, r->classes[c]) != 0) {
                continue;
            }
            if (jct && jb->state == JOB_DONE) {
                v[k++] = sim_time_to_s(job_jct_ns(jb));
            } else if (!jct && jb->start >= 0) {
                v[k++] = sim_time_to_s(job_wait_ns(jb));
            }
        }
        if (k == 0) {
            continue;
        }
        qsort(v, k, sizeof *v, cmp_double);
        size_t pts = k < OUT_REPORT_CDF_POINTS ? k : OUT_REPORT_CDF_POINTS;
        fprintf(d, "%s", blocks ? "\n\n" : "");
        fprintf(d, "%.6g 0\n", v[0]);
        for (size_t q = 1; q <= pts; q++) {
            size_t idx = (q * k + pts - 1) / pts - 1; /* ceil(q k / pts) - 1 */
            fprintf(d, "%.6g %.6f\n", v[idx], (double)(idx + 1) / (double)k);
        }
        titles[blocks++] = r->classes[c];
    }
    free(v);
    FILE *p = plot_file(r->pd, gp);
    if (!p) {
        free(titles);
        return SIM_EIO;
    }
    plot_header(p, svg, 1000, 340);
    fprintf(p, "set xlabel '%s (s)'\nset ylabel 'fraction of jobs'\nset yrange [0:1]\n",
            jct ? "job completion time" : "wait");
    if (jct) {
        fputs("set logscale x\n", p);
    }
    if (blocks == 0) {
        fputs("set label 'no jobs' at graph 0.5, graph 0.5 center\nset xrange [1:10]\n"
              "plot NaN notitle\n",
              p);
    } else {
        fprintf(p, "array T[%zu]\n", blocks);
        for (size_t b = 0; b < blocks; b++) {
            fprintf(p, "T[%zu] = \"", b + 1);
            plot_string(p, titles[b]);
            fputs("\"\n", p);
        }
        fprintf(p, "plot for [i=1:%zu] '%s' index (i-1) u 1:2 w steps lw 2 t T[i]\n", blocks, dat);
    }
    free(titles);
    int rc = plot_run(r->pd, gp);
    if (rc == 0) {
        fprintf(r->f, "<section id=\"%s\">\n<h2>", id);
        html_text(r->f, title);
        fputs("</h2>\n<figure>", r->f);
        rc = plot_inline_svg(r->pd, svg, r->f);
        fputs("</figure>\n", r->f);
        if (r->n_classes > nc) {
            fprintf(r->f, "<p class=\"note\">The first %d of %zu classes are drawn.</p>\n",
                    OUT_REPORT_CLASSES, r->n_classes);
        }
        fputs("</section>\n", r->f);
    }
    return rc;
}

/* ---- Gantt chart ----------------------------------------------------------------------------- */

/* A device's name on its band: profile@placement, the whole GPU, or the GPU time-sliced into its
 * replicas. */
static void dev_name(const cluster_device *dev, char *buf, size_t n)
{
    if (dev->profile) {
        snprintf(buf, n, "%s@%d", dev->profile->name, dev->mig_start);
    } else if (dev->slots > 1) {
        snprintf(buf, n, "time-sliced x%" PRIu32, dev->slots);
    } else {
        snprintf(buf, n, "whole GPU");
    }
}

/* The data of the re-partitioned GPUs' lanes: bands, layout-change marks, and the names of the
 * bands wide enough for one (1/16 of the window). */
static int gantt_layouts(rep *r, const gantt *g)
{
    FILE *b = plot_file(r->pd, "gantt-bands.dat"), *m = plot_file(r->pd, "gantt-marks.dat"),
         *n = plot_file(r->pd, "gantt-names.dat");
    if (!b || !m || !n) {
        return SIM_EIO;
    }
    for (uint32_t i = 0; i < g->n_lanes; i++) {
        const gantt_lane *l = &g->lanes[i];
        for (size_t k = l->first_band; k < l->first_band + l->n_bands; k++) {
            const gantt_band *bd = &g->bands[k];
            double from = sim_time_to_s(bd->from) / S_PER_H, to = sim_time_to_s(bd->to) / S_PER_H;
            fprintf(b, "%.6f %.6f %" PRIu32 "\n", from, to, bd->row);
            if ((bd->to - bd->from) * 16 >= r->horizon) {
                char name[64];
                dev_name(cluster_device_get(r->c, bd->dev), name, sizeof name);
                fprintf(n, "%.6f %" PRIu32 " \"", from, bd->row);
                plot_string(n, name);
                fputs("\"\n", n);
            }
        }
        for (size_t k = l->first_mark; k < l->first_mark + l->n_marks; k++) {
            fprintf(m, "%.6f %.1f %" PRIu32 "\n", sim_time_to_s(g->marks[k]) / S_PER_H,
                    l->first_row - 0.5, l->n_rows);
        }
    }
    return 0;
}

/* The y tics: one per row of a GPU with a fixed layout (node/GPU, or node/GPU/profile for a MIG
 * instance), one per re-partitioned GPU's lane (node/GPU) with grey lines around the lane. */
static void gantt_tics(rep *r, FILE *p, const gantt *g)
{
    for (uint32_t i = 0; i < g->n_lanes; i++) {
        const gantt_lane *l = &g->lanes[i];
        uint32_t edge[2] = {l->first_row, l->first_row + l->n_rows}; /* lines at edge - 0.5 */
        for (int k = 0; k < 2 && l->changed; k++) {
            bool shared = k == 0 && i > 0 && g->lanes[i - 1].changed; /* drawn with lane i-1 */
            if (edge[k] > 0 && edge[k] < g->n_rows && !shared) {
                fprintf(p,
                        "set arrow from graph 0, first %.1f to graph 1, first %.1f nohead "
                        "lc rgb '#909090' lw 0.5 back\n",
                        edge[k] - 0.5, edge[k] - 0.5);
            }
        }
    }
    fputs("set ytics font 'sans,9' (", p);
    bool first = true;
    for (uint32_t i = 0; i < g->n_lanes; i++) {
        const gantt_lane *l = &g->lanes[i];
        const cluster_gpu *cg = cluster_gpu_get(r->c, l->gpu);
        for (uint32_t k = 0; k < cg->n_devs && !(l->changed && k > 0); k++) {
            const cluster_device *dev = cluster_device_get(r->c, cg->first_dev + k);
            if (!l->changed && g->dev_row[cg->first_dev + k] == GANTT_NO_ROW) {
                continue;
            }
            fprintf(p, "%s\"", first ? "" : ", ");
            first = false;
            plot_string(p, cluster_node_name(r->c, dev->node));
            fprintf(p, "/%" PRIu32, cg->index);
            if (l->changed) {
                fprintf(p, "\" %.1f", l->first_row + (l->n_rows - 1) / 2.0);
                continue;
            }
            if (dev->profile) {
                fputc('/', p);
                plot_string(p, dev->profile->name);
            }
            fprintf(p, "\" %" PRIu32, g->dev_row[cg->first_dev + k]);
        }
    }
    fputs(")\n", p);
}

static int gantt_chart(rep *r, const gantt *g)
{
    uint32_t rows = g->n_rows, n_gpus = cluster_n_gpus(r->c);
    bool changed = false;
    for (uint32_t i = 0; i < g->n_lanes; i++) {
        changed = changed || g->lanes[i].changed;
    }
    FILE *d = plot_file(r->pd, "gantt.dat");
    if (!d) {
        return SIM_EIO;
    }
    size_t n_bars = 0;
    for (size_t i = 0; i < r->log.n; i++) {
        const devlog_span *sp = &r->log.spans[i];
        uint32_t row = g->dev_row[sp->dev];
        if (row == GANTT_NO_ROW || sp->start >= r->horizon) {
            continue;
        }
        sim_time end = sp->end < r->horizon ? sp->end : r->horizon;
        size_t c = class_index(r, job_table_get(world_jobs(r->w), sp->job)->spec.class_name);
        fprintf(d, "%.6f %.6f %" PRIu32 " %zu\n", sim_time_to_s(sp->start) / S_PER_H,
                sim_time_to_s(end) / S_PER_H, row, c % 8 + 1);
        n_bars++;
    }
    if (changed && gantt_layouts(r, g) != 0) {
        return SIM_EIO;
    }
    FILE *p = plot_file(r->pd, "gantt.gp");
    if (!p) {
        return SIM_EIO;
    }
    plot_header(p, "gantt.svg", 1000, 80 + 16 * (int)(rows ? rows : 1));
    fprintf(p,
            "set xlabel 'simulated time (h)'\nset xrange [0:%.6f]\n"
            "set yrange [%u.5:-0.5]\nset grid noytics\n",
            sim_time_to_s(r->horizon) / S_PER_H, rows ? rows - 1 : 0);
    gantt_tics(r, p, g);
    if (changed) { /* the names' boxes: translucent white, so the bars under them still show */
        fputs("set style textbox opaque fc rgb '#60ffffff' noborder margins 1,1\n", p);
    }
    size_t nc = r->n_classes < 8 ? r->n_classes : 8;
    fputs("plot ", p);
    if (changed) {
        fputs("'gantt-bands.dat' u (($1+$2)/2):3:(($2-$1)/2):(0.47) w boxxyerror fs solid 1 "
              "noborder lc rgb '#dcdcdc' notitle, ",
              p);
    }
    if (n_bars) {
        fputs("'gantt.dat' u (($1+$2)/2):3:(($2-$1)/2):(0.38):4 w boxxyerror fs solid 0.85 "
              "noborder lc variable notitle",
              p);
    } else {
        fputs("NaN notitle", p);
    }
    if (changed) {
        fputs(", 'gantt-marks.dat' u 1:2:(0):3 w vectors nohead dt 2 lw 1.2 lc rgb '#404040' "
              "notitle, 'gantt-names.dat' u 1:2:3 w labels left offset char 0.3,0 font 'sans,7' "
              "tc rgb '#202020' boxed notitle",
              p);
    }
    for (size_t c = 0; c < nc; c++) {
        fprintf(p, ", NaN w boxes fs solid 0.85 lc %zu t \"", c + 1);
        plot_string(p, r->classes[c]);
        fputs("\"", p);
    }
    if (changed) {
        fputs(", NaN w boxes fs solid 1 lc rgb '#dcdcdc' t 'device exists', NaN w lines dt 2 "
              "lw 1.2 lc rgb '#404040' t 'layout change'",
              p);
    }
    fputs("\n", p);
    int rc = plot_run(r->pd, "gantt.gp");
    if (rc == 0) {
        fputs("<section id=\"gantt\">\n<h2>Devices and jobs (Gantt chart)</h2>\n<figure>", r->f);
        rc = plot_inline_svg(r->pd, "gantt.svg", r->f);
        fprintf(r->f,
                "</figure>\n<p class=\"note\">One row per schedulable device: a whole GPU "
                "(node/GPU) or a MIG instance (node/GPU/profile, the mig-parted layout); a "
                "bar per job unit held, coloured by class%s. ",
                r->n_classes > 8 ? " (colours repeat after 8 classes)" : "");
        if (changed) {
            fputs("A GPU whose layout changed during the run (re-partitioning) is one lane "
                  "(node/GPU, between grey lines) with as many rows as it had devices at once: "
                  "each device it had (a MIG instance profile@placement, the whole GPU, or the "
                  "GPU time-sliced into replicas) is drawn on a row over the intervals it existed "
                  "(grey band, named at its start where there is room); dashed lines mark the "
                  "times its layout changed. ",
                  r->f);
        }
        if (g->n_lanes < n_gpus) {
            fprintf(r->f, "The first %" PRIu32 " of %" PRIu32 " GPUs are shown.", g->n_lanes,
                    n_gpus);
        }
        fputs("</p>\n</section>\n", r->f);
    }
    return rc;
}

static int gantt_section(rep *r)
{
    gantt g;
    gantt_build(r->c, &r->log, OUT_REPORT_GANTT_ROWS, &g);
    int rc = gantt_chart(r, &g);
    gantt_fini(&g);
    return rc;
}

int out_report_html(FILE *f, const world *w, const actlog *act, double energy_j,
                    const scenario_spec *spec, const char *policy)
{
    rep r = {.f = f,
             .w = w,
             .act = act,
             .energy_j = energy_j,
             .c = world_cluster(w),
             .spec = spec,
             .horizon = world_get_totals(w).horizon};
    r.pd = plot_dir_open();
    if (!r.pd) {
        return SIM_EIO;
    }
    devlog_build(w, &r.log);
    collect_classes(&r);
    char title[256];
    snprintf(title, sizeof title, "slicesim report: %s", spec->name ? spec->name : "run");
    html_begin(f, title);
    summary(&r, policy);
    int rc = time_series(&r);
    rc = rc ? rc : cdf(&r, true, "jct-cdf", "Job completion time (CDF per class)");
    rc = rc ? rc : cdf(&r, false, "wait-cdf", "Wait (CDF per class)");
    rc = rc ? rc : gantt_section(&r);
    html_end(f);
    free(r.classes);
    devlog_fini(&r.log);
    plot_dir_close(r.pd);
    return rc == 0 && ferror(f) ? SIM_EIO : rc;
}
