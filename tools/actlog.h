/* tools/actlog.h - what each device does over a run, from the physics: the activity the
 * telemetry writers show (metrics.om's DCGM_FI_DEV_GPU_UTIL, DCGM_FI_PROF_GR_ENGINE_ACTIVE and
 * DCGM_FI_PROF_SM_ACTIVE, report.html's activity plot, run.json's activity means), as opposed to
 * allocation (tools/devlog.h: who held which unit).
 *
 * A world observer: whenever a job starts, ends or is killed, the activity of every device of
 * the GPUs it holds is recomputed from the running jobs there and their current rates (the
 * world re-rated them first), and recorded when it changed. Job j on a device (per unit it
 * holds, a context) has solo activity (jobrate_solo_activity: the fraction g_j of its solo time
 * with GPU work, G / t of its profile, and the fraction s_j of the device's SMs its kernels
 * occupy) and runs at rate r_j (1 alone; less when co-runners slow it). Its host phases do not
 * stretch, so it has GPU work a fraction b_j = 1 - r_j (1 - g_j) of the time, and it completes
 * r_j g_j seconds of solo GPU work per second. The device:
 *   util (GPU_UTIL / 100, GR_ENGINE_ACTIVE) = 1 - prod_j (1 - b_j): at least one context has
 *     GPU work (independent phases, as the sharing solvers' mean field takes them); a GPU-bound
 *     job (no profile) keeps it at 1;
 *   sm (SM_ACTIVE) = min(1, sum_j r_j g_j s_j): the SMs kept busy by useful work (time-slicing's
 *     switches are busy time without it).
 * A job alone whose profile was fitted on gpu_util 0.37 shows 0.37. Rates that change without a
 * job event on the GPU (a data-parallel gang's links when another gang starts elsewhere) are
 * taken at the last event on the GPU.
 * Units: sim_time (ns), fractions 0..1. Memory: one record per device change (O(job events x
 * devices per GPU)) and two doubles per job.
 * Ownership: actlog_init borrows the world (observer; valid for its life) and the rate context;
 * actlog_fini frees what it allocated. A cursor borrows the log.
 */
#ifndef SIMPROJ_TOOLS_ACTLOG_H
#define SIMPROJ_TOOLS_ACTLOG_H

#include <stddef.h>

#include "model/cluster/jobrate.h"
#include "model/cluster/world.h"

typedef struct actlog_rec {
    sim_time t;
    dev_id dev;
    double util, sm; /* from t until the device's next record */
} actlog_rec;

typedef struct actlog {
    const jobrate_ctx *rc;
    size_t n, cap;
    actlog_rec *recs;    /* in time order while recording; by (device, time) after finish */
    size_t *dev_first;   /* after finish: device d's records are recs[dev_first[d] ..
                          * dev_first[d + 1]) */
    double *last_util;   /* per device: the value last recorded (0 before any) */
    double *last_sm;
    double *job_g;       /* per job: solo GPU fraction, NAN until it first starts */
    double *job_s;       /* per job: solo SM fraction */
    uint32_t n_devs;
    size_t n_jobs;
} actlog;

/* Start recording world w's activity (register before world_run); rc is the run's rate context
 * (profiles, physics), borrowed for the log's life. */
void actlog_init(actlog *a, world *w, const jobrate_ctx *rc);
/* After world_run: group the records by device for the cursors. */
void actlog_finish(actlog *a);
void actlog_fini(actlog *a);

/* Walks one device's activity through increasing times, integrating it. */
typedef struct actlog_cursor {
    const actlog *a;
    size_t next, stop;   /* records not yet applied */
    sim_time t;          /* time reached */
    double util, sm;     /* values in force at t */
    double util_ns, sm_ns; /* integrals over [0, t] (fraction x ns) */
} actlog_cursor;

void actlog_cursor_init(actlog_cursor *c, const actlog *a, dev_id d);

/* Weight of device d in its GPU's activity: 1 for a GPU with one device, else its SMs over the
 * GPU's (a MIG instance's share). A GPU's activity is the weighted sum of its devices', at most
 * 1. */
double actlog_dev_weight(const cluster *c, dev_id d);

/* The run's activity figures (run.json metrics.activity): over [0, end], the mean over the GPUs
 * of each GPU's time-averaged utilisation (*util_mean; a MIG GPU's is its instances' weighted by
 * their SMs, at most 1) and SM activity (*sm_mean, likewise). 0 for a cluster without GPUs or
 * end 0. */
void actlog_means(const actlog *a, const cluster *c, sim_time end, double *util_mean,
                  double *sm_mean);
/* Integrate up to t (>= the time reached) and apply the records at or before t. */
void actlog_cursor_advance(actlog_cursor *c, sim_time t);
/* Time of the device's next change (SIM_TIME_MAX when none). */
sim_time actlog_cursor_next_time(const actlog_cursor *c);

#endif
