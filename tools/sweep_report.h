/* tools/sweep_report.h - report.html of a sweep: the axes and replications, a table of every
 * combination's headline figures (mean +- 95 % half-width over the replications), and the Pareto
 * frontier of capacity (GPUs) against the mean p95 wait and the mean JCT (tools/frontier.h).
 * Input is the sweep's summary.json tree (tools/sweep_run.h), so the page is the same however the
 * points ran. Sections: summary, frontier-wait, frontier-jct.
 * Ownership: borrows the tree; writes to f (temporary plot files removed). */
#ifndef SIMPROJ_TOOLS_SWEEP_REPORT_H
#define SIMPROJ_TOOLS_SWEEP_REPORT_H

#include <cjson/cJSON.h>
#include <stdio.h>

/* Write the page for summary.json's tree. 0 or SIM_EIO. */
int sweep_report_html(FILE *f, const cJSON *summary);

#endif
