/* tools/sweep_report.c - report.html of a sweep (see sweep_report.h). */
#include "tools/sweep_report.h"

#include <stdbool.h>
#include <stdlib.h>

#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/frontier.h"
#include "tools/plot.h"

static const char *const shown[] = {"wait_mean_s",   "wait_p95_s", "jct_mean_s", "jct_p95_s",
                                    "slowdown_mean", "units_util", "gpus",       "energy_kwh"};
#define N_SHOWN (sizeof shown / sizeof shown[0])

static const cJSON *figure(const cJSON *combo, const char *name, const char *what)
{
    return cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(combo, "figures"), name),
        what);
}

/* Points (x = mean GPUs, y = mean of `name`) of every combination. */
static void points(const cJSON *combos, const char *name, frontier_pt *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const cJSON *c = cJSON_GetArrayItem(combos, (int)i);
        const cJSON *g = figure(c, "gpus", "mean"), *m = figure(c, name, "mean");
        const cJSON *h = figure(c, name, "ci95");
        p[i] = (frontier_pt){.x = cJSON_IsNumber(g) ? g->valuedouble : 0,
                             .y = cJSON_IsNumber(m) ? m->valuedouble : 0,
                             .half = cJSON_IsNumber(h) ? h->valuedouble : 0,
                             .has = cJSON_IsNumber(m) && cJSON_IsNumber(g)};
    }
    frontier_mark(p, n);
}

int sweep_report_html(FILE *f, const cJSON *s)
{
    const cJSON *sc = cJSON_GetObjectItemCaseSensitive(s, "scenario");
    const cJSON *axes = cJSON_GetObjectItemCaseSensitive(s, "axes");
    const cJSON *combos = cJSON_GetObjectItemCaseSensitive(s, "combinations");
    const cJSON *reps = cJSON_GetObjectItemCaseSensitive(s, "replications");
    size_t n = (size_t)cJSON_GetArraySize(combos), n_axes = (size_t)cJSON_GetArraySize(axes);
    char title[512];
    snprintf(title, sizeof title, "slicesim sweep: %s", cJSON_IsString(sc) ? sc->valuestring : "");
    html_begin(f, title);
    fprintf(f,
            "<section id=\"summary\">\n<h2>Combinations</h2>\n<p>%zu combinations of %zu "
            "ax%s, %d replication%s each (replication 0 with the scenario's seed, the others "
            "with seeds derived from it; the same seeds at every combination). Each figure is "
            "the mean over the replications &plusmn; the half-width of its 95 %% confidence "
            "interval (Student t).</p>\n<table>\n<tr>",
            n, n_axes, n_axes == 1 ? "is" : "es", reps ? reps->valueint : 0,
            reps && reps->valueint == 1 ? "" : "s");
    for (size_t a = 0; a < n_axes; a++) {
        fputs("<th class=\"l\">", f);
        const cJSON *path =
            cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(axes, (int)a), "path");
        html_text(f, cJSON_IsString(path) ? path->valuestring : "");
        fputs("</th>", f);
    }
    for (size_t k = 0; k < N_SHOWN; k++) {
        fputs("<th>", f);
        html_text(f, shown[k]);
        fputs("</th>", f);
    }
    fputs("</tr>\n", f);
    for (size_t i = 0; i < n; i++) {
        const cJSON *c = cJSON_GetArrayItem(combos, (int)i);
        const cJSON *vals = cJSON_GetObjectItemCaseSensitive(c, "values");
        fputs("<tr>", f);
        for (size_t a = 0; a < n_axes; a++) {
            const cJSON *v = cJSON_GetArrayItem(vals, (int)a);
            fputs("<td class=\"l\">", f);
            html_text(f, cJSON_IsString(v) ? v->valuestring : "");
            fputs("</td>", f);
        }
        for (size_t k = 0; k < N_SHOWN; k++) {
            const cJSON *m = figure(c, shown[k], "mean"), *h = figure(c, shown[k], "ci95");
            if (!cJSON_IsNumber(m)) {
                fputs("<td>&ndash;</td>", f);
            } else if (cJSON_IsNumber(h)) {
                fprintf(f, "<td>%.4g &plusmn; %.3g</td>", m->valuedouble, h->valuedouble);
            } else {
                fprintf(f, "<td>%.4g</td>", m->valuedouble);
            }
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n</section>\n", f);
    plot_dir *pd = plot_dir_open();
    if (!pd) {
        return SIM_EIO;
    }
    frontier_pt *pts = xcalloc(n ? n : 1, sizeof *pts, "frontier");
    points(combos, "wait_p95_s", pts, n);
    int rc = frontier_plot(pd, f, "frontier-wait", "Frontier: GPUs against the p95 wait", "GPUs",
                           "p95 wait (s)", pts, n, false, 0);
    if (rc == 0) {
        points(combos, "jct_mean_s", pts, n);
        rc = frontier_plot(pd, f, "frontier-jct", "Frontier: GPUs against the mean JCT", "GPUs",
                           "mean JCT (s)", pts, n, false, 0);
    }
    free(pts);
    plot_dir_close(pd);
    html_end(f);
    return rc == 0 && ferror(f) ? SIM_EIO : rc;
}
