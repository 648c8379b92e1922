/* tools/devlog.h - who held which device when, rebuilt from a finished run's job table, for the
 * per-device writers (metrics.om, the report's Gantt chart).
 *
 * A span is one unit of one job on one device, from its start to its end (a job still running at
 * the end of the run has end SIM_TIME_MAX: it holds its unit at any later time). Jobs that failed
 * at placement (OOM, a refused request) hold nothing and give no span. Spans are sorted by (GPU,
 * start, device, job), so one GPU's spans are contiguous: spans[gpu_first[g] .. gpu_first[g + 1]).
 * A cursor walks one GPU through increasing times and gives, per device, the units held and the
 * memory held at the time reached, and the time each device (and the GPU) was busy (at least one
 * unit held) since the previous time. The memory is only O(spans of that GPU) at a time.
 * Units: sim_time (ns), bytes, SM counts.
 * Ownership: devlog_build allocates the arrays (free with devlog_fini); the world is borrowed
 * during build; a cursor borrows the devlog and the cluster and owns its event array
 * (devlog_cursor_fini).
 */
#ifndef SIMPROJ_TOOLS_DEVLOG_H
#define SIMPROJ_TOOLS_DEVLOG_H

#include <stddef.h>
#include <stdint.h>

#include "model/cluster.h"
#include "model/world.h"

typedef struct devlog_span {
    sim_time start, end; /* [start, end), ns */
    dev_id dev;
    job_id job;
    uint64_t mem_bytes; /* memory the unit holds (0 = unstated) */
    uint32_t milli;     /* milli-GPU share the unit holds (openb gpu_milli); 0 = a whole unit */
} devlog_span;

typedef struct devlog {
    size_t n;
    devlog_span *spans; /* sorted as above */
    size_t *gpu_first;  /* cluster_n_gpus + 1 offsets into spans */
    sim_time end;       /* end of the observed window (world_totals.horizon) */
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
/* Time of the next event not yet applied; SIM_TIME_MAX when none is left. */
sim_time devlog_cursor_next_time(const devlog_cursor *cur);
void devlog_cursor_fini(devlog_cursor *cur);

/* Sample times of a run's time series: 0, interval, 2 interval, ... while below end, then end
 * (once). *t is the current sample; returns false when there is none after it. */
bool devlog_next_sample(sim_time *t, sim_time interval_ns, sim_time end);

#endif
