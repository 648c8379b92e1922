/* tools/frontier.h - Pareto frontiers of capacity (or cost) against a figure, and their plots, for
 * the sweep and plan reports.
 *
 * A point is on the frontier when no other point is at most as far right (x: GPUs or cost) and
 * at most as high (y: a figure where lower is better), one of them strictly. frontier_plot draws
 * every point with its 95 % interval, the frontier as a line in x order, an optional marked
 * point (a plan's answer) and an optional limit (an SLO), as one report <section>.
 * Ownership: borrows the points; writes through the plot_dir and the page's FILE. No units.
 */
#ifndef SIMPROJ_TOOLS_FRONTIER_H
#define SIMPROJ_TOOLS_FRONTIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "tools/plot.h"

typedef struct frontier_pt {
    double x, y, half; /* half: the 95 % half-width of y (0 when unknown) */
    bool has;          /* y was measured; points without are neither drawn nor on the frontier */
    bool pareto;       /* set by frontier_mark */
    bool marked;       /* drawn as the answer */
} frontier_pt;

/* Set pareto on each of the n points. */
void frontier_mark(frontier_pt *pts, size_t n);

/* One <section id="ID"> with heading `title` and the plot; `limit` is drawn unless has_limit is
 * false. Files in pd are named after id. 0 or SIM_EIO. */
int frontier_plot(plot_dir *pd, FILE *html, const char *id, const char *title, const char *xlabel,
                  const char *ylabel, const frontier_pt *pts, size_t n, bool has_limit,
                  double limit);

#endif
