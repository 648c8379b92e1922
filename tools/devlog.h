/* tools/devlog.h - who held which device when, rebuilt from a finished run's job table, and when
 * each device existed (a re-partitioned GPU's layout history), for the per-device writers
 * (metrics.om, the report's Gantt chart).
 *
 * A span is one unit of one run of a job on one device, from the run's start to its end: a job's
 * last run (from the job table: run_start to its end; a job still running at the end of the run
 * has end SIM_TIME_MAX: it holds its unit at any later time), and each earlier run that a kill or
 * a preemption ended (world_killed_units). Jobs that failed at placement (OOM, a refused request)
 * hold nothing and give no span. Spans are sorted by (GPU,
 * start, device, job), so one GPU's spans are contiguous: spans[gpu_first[g] .. gpu_first[g + 1]).
 * A cursor walks one GPU through increasing times and gives, per device, the units held and the
 * memory held at the time reached, and the time each device (and the GPU) was busy (at least one
 * unit held) since the previous time. The memory is only O(spans of that GPU) at a time.
 * The layout history is the world's record of devices becoming advertised or withdrawn
 * (world_active_log), grouped by GPU; a layout walker (devlog_layout) replays one GPU's changes
 * through increasing times and says which of its devices exist at the time reached. It is the one
 * reading of that record for every writer: a device that never changed kept its state all run,
 * and one that changed was, before its first change, in the opposite state.
 * Units: sim_time (ns), bytes, SM counts.
 * Ownership: devlog_build allocates the arrays (free with devlog_fini); the world is borrowed
 * during build; a cursor borrows the devlog and the cluster and owns its event array
 * (devlog_cursor_fini); a layout walker borrows the devlog and the cluster and owns nothing.
 */
#ifndef SIMPROJ_TOOLS_DEVLOG_H
#define SIMPROJ_TOOLS_DEVLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/cluster/cluster.h"
#include "model/cluster/world.h"

typedef struct devlog_span {
    sim_time start, end; /* [start, end), ns */
    dev_id dev;
    job_id job;
    uint64_t mem_bytes; /* memory the unit holds (0 = unstated) */
    uint32_t milli;     /* milli-GPU share the unit holds (openb gpu_milli); 0 = a whole unit */
} devlog_span;

typedef struct devlog {
    size_t n;
    devlog_span *spans;       /* sorted as above */
    size_t *gpu_first;        /* cluster_n_gpus + 1 offsets into spans */
    sim_time end;             /* end of the observed window (world_totals.horizon) */
    world_active_change *act; /* the layout changes (world_active_log) grouped by GPU, in time
                               * order within a GPU: GPU g's are act[act_first[g] ..
                               * act_first[g + 1]) */
    size_t *act_first;        /* cluster_n_gpus + 2 offsets (the last one is scratch) */
} devlog;

/* Build the spans of a finished run. */
void devlog_build(const world *w, devlog *out);
void devlog_fini(devlog *l);

#define DEVLOG_MAX_DEVS 16 /* devices per GPU (7 MIG instances at most) */

typedef struct devlog_cursor {
    const cluster *c;
    gpu_id gpu;
    dev_id first_dev;
    uint32_t n_devs;
    size_t n_ev, next; /* events (+1 at start, -1 at end) of the GPU, sorted by time */
    struct devlog_ev {
        sim_time t;
        int32_t delta;
        uint32_t dev; /* index on the GPU */
        uint64_t mem_bytes;
        uint32_t milli; /* the span's share, 0 = a whole unit */
    } * ev;
    sim_time t;                          /* time reached */
    uint32_t used[DEVLOG_MAX_DEVS];      /* units held on each device at t */
    uint64_t mem_bytes[DEVLOG_MAX_DEVS]; /* memory held on each device at t */
    uint32_t milli[DEVLOG_MAX_DEVS];     /* milli-GPU held on each device at t: a share's milli,
                                          * or 1000 / slots for a whole unit (a replica) */
    sim_time busy_ns[DEVLOG_MAX_DEVS];   /* busy time of each device over [0, t] */
    sim_time gpu_busy_ns;                /* time with any device busy over [0, t] */
} devlog_cursor;

/* Start a cursor on GPU g at time 0 (no events applied yet). */
void devlog_cursor_init(devlog_cursor *cur, const devlog *l, const cluster *c, gpu_id g);
/* Apply every event at or before t (>= the time reached), adding the busy times of
 * (previous t, t]. */
void devlog_cursor_advance(devlog_cursor *cur, sim_time t);
void devlog_cursor_fini(devlog_cursor *cur);

/* Which of one GPU's devices exist (are advertised), walked through increasing times. */
typedef struct devlog_layout {
    const devlog *log;
    const cluster *c;
    dev_id first_dev;
    uint32_t n_devs;
    bool on[DEVLOG_MAX_DEVS]; /* device index on the GPU -> advertised at the time reached */
    size_t next, stop;        /* its changes not yet applied: log->act[next .. stop) */
} devlog_layout;

/* Start a walker on GPU g at its layout at time 0 before any change (none applied yet). */
void devlog_layout_init(devlog_layout *lay, const devlog *l, const cluster *c, gpu_id g);
/* Apply the changes at or before t: the layout in force at t. */
void devlog_layout_advance(devlog_layout *lay, sim_time t);
/* Time of the next change not yet applied; SIM_TIME_MAX when none is left. */
sim_time devlog_layout_next_time(const devlog_layout *lay);
/* Is the GPU in MIG mode at the time reached (no whole-GPU device advertised, time-sliced or
 * not)? */
bool devlog_layout_mig(const devlog_layout *lay);

/* Sample times of a run's time series: 0, interval, 2 interval, ... while below end, then end
 * (once). *t is the current sample; returns false when there is none after it. */
bool devlog_next_sample(sim_time *t, sim_time interval_ns, sim_time end);

#endif
