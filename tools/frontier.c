/* tools/frontier.c - Pareto frontiers and their plots (see frontier.h). */
#include "tools/frontier.h"

#include <stdlib.h>

#include "sim/err.h"
#include "sim/xalloc.h"

void frontier_mark(frontier_pt *p, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        p[i].pareto = p[i].has;
        for (size_t j = 0; j < n && p[i].pareto; j++) {
            if (j != i && p[j].has && p[j].x <= p[i].x && p[j].y <= p[i].y &&
                (p[j].x < p[i].x || p[j].y < p[i].y)) {
                p[i].pareto = false;
            }
        }
    }
}

/* Data block b (0 all, 1 frontier, 2 marked) in x order, then two blank lines. */
static void put_block(FILE *d, const frontier_pt *p, size_t n, int b)
{
    size_t *order = xcalloc(n ? n : 1, sizeof *order, "frontier");
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i].has && (b == 0 || (b == 1 && p[i].pareto) || (b == 2 && p[i].marked))) {
            order[m++] = i;
        }
    }
    for (size_t a = 1; a < m; a++) { /* insertion sort by x, stable */
        for (size_t q = a; q > 0 && p[order[q]].x < p[order[q - 1]].x; q--) {
            size_t t = order[q];
            order[q] = order[q - 1];
            order[q - 1] = t;
        }
    }
    for (size_t a = 0; a < m; a++) {
        fprintf(d, "%.6g %.6g %.6g\n", p[order[a]].x, p[order[a]].y, p[order[a]].half);
    }
    if (m == 0) {
        fputs("NaN NaN NaN\n", d);
    }
    fputs("\n\n", d);
    free(order);
}

int frontier_plot(plot_dir *pd, FILE *html, const char *id, const char *title, const char *xlabel,
                  const char *ylabel, const frontier_pt *pts, size_t n, bool has_limit,
                  double limit)
{
    size_t n_has = 0;
    for (size_t i = 0; i < n; i++) {
        n_has += pts[i].has;
    }
    if (n_has == 0) { /* nothing measured: no plot, say so */
        fprintf(html, "<section id=\"%s\">\n<h2>", id);
        html_text(html, title);
        fputs("</h2>\n<p class=\"note\">No point has this figure.</p>\n</section>\n", html);
        return 0;
    }
    char dat[96], svg[96], gp[96];
    snprintf(dat, sizeof dat, "%s.dat", id);
    snprintf(svg, sizeof svg, "%s.svg", id);
    snprintf(gp, sizeof gp, "%s.gp", id);
    FILE *d = plot_file(pd, dat);
    if (!d) {
        return SIM_EIO;
    }
    bool any_marked = false;
    for (int b = 0; b < 3; b++) {
        put_block(d, pts, n, b);
    }
    for (size_t i = 0; i < n; i++) {
        any_marked = any_marked || (pts[i].has && pts[i].marked);
    }
    FILE *p = plot_file(pd, gp);
    if (!p) {
        return SIM_EIO;
    }
    plot_header(p, svg, 1000, 380);
    fputs("set offsets graph 0.05, graph 0.05, 0, 0\nset xlabel \"", p);
    plot_string(p, xlabel);
    fputs("\"\nset ylabel \"", p);
    plot_string(p, ylabel);
    fprintf(p,
            "\"\nplot '%s' index 0 u 1:2:3 w yerrorbars pt 7 ps 0.6 lc rgb '#888888' "
            "t 'all (mean, 95%% CI)', '' index 1 u 1:2 w linespoints lw 2 pt 7 "
            "lc rgb '#1f77b4' t 'Pareto frontier'",
            dat);
    if (any_marked) {
        fputs(", '' index 2 u 1:2 w points pt 6 ps 3 lw 2 lc rgb '#d62728' t 'answer'", p);
    }
    if (has_limit) {
        fprintf(p, ", %.9g w lines dt 2 lc rgb '#d62728' t 'limit'", limit);
    }
    fputc('\n', p);
    int rc = plot_run(pd, gp);
    if (rc == 0) {
        fprintf(html, "<section id=\"%s\">\n<h2>", id);
        html_text(html, title);
        fputs("</h2>\n<figure>", html);
        rc = plot_inline_svg(pd, svg, html);
        fputs("</figure>\n</section>\n", html);
    }
    return rc;
}
