/* tools/gantt.h - the rows of report.html's Gantt chart: which device is drawn on which row, and
 * over which intervals it exists, from a finished run's device log (tools/devlog.h).
 *
 * GPUs are drawn in id order, each as a lane of consecutive rows. A GPU whose layout never
 * changed during the observed window [0, end) has one row per device it advertises, in device id
 * order (a whole GPU, or each MIG instance of its layout). A GPU whose layout changed (a
 * re-partitioned GPU: devices became advertised or withdrawn at some time in (0, end)) has as
 * many rows as it ever had devices at once: each device that existed at some time is put on the
 * lowest row of the lane on which none of its existence intervals overlaps those of the devices
 * already there, taking devices in order of their first appearance (then device id). Its devices'
 * existence intervals are the chart's bands, and the times at which its layout changed are its
 * marks. Existence comes from the devlog's layout walker (devlog_layout), the same reading of the
 * world's layout record that metrics.om uses.
 * Rows are capped: GPUs are taken while their rows fit in max_rows (a lane is never cut; the
 * first GPU is always taken).
 * Units: sim_time (ns). Ownership: gantt_build allocates the arrays (gantt_fini frees them); the
 * cluster and the devlog are borrowed during build only.
 */
#ifndef SIMPROJ_TOOLS_GANTT_H
#define SIMPROJ_TOOLS_GANTT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/cluster/cluster.h"
#include "tools/devlog.h"

#define GANTT_NO_ROW UINT32_MAX

/* One existence interval of a device of a changed GPU: [from, to) within [0, end]. */
typedef struct gantt_band {
    uint32_t row;
    dev_id dev;
    sim_time from, to;
} gantt_band;

/* One GPU's lane: rows first_row .. first_row + n_rows - 1; for a changed GPU, its bands
 * bands[first_band .. first_band + n_bands) (by row, then time) and its layout-change times
 * marks[first_mark .. first_mark + n_marks) (increasing, in (0, end)). */
typedef struct gantt_lane {
    gpu_id gpu;
    uint32_t first_row, n_rows;
    bool changed;
    size_t first_band, n_bands;
    size_t first_mark, n_marks;
} gantt_lane;

typedef struct gantt {
    uint32_t n_rows;
    uint32_t n_lanes; /* the first n_lanes GPUs in id order are drawn */
    gantt_lane *lanes;
    uint32_t *dev_row; /* per device of the cluster: its row, GANTT_NO_ROW when not drawn */
    size_t n_bands;
    gantt_band *bands;
    size_t n_marks;
    sim_time *marks;
} gantt;

/* Lay out the chart of the run that log records, on cluster c, in at most max_rows rows. */
void gantt_build(const cluster *c, const devlog *log, uint32_t max_rows, gantt *out);
void gantt_fini(gantt *g);

#endif
