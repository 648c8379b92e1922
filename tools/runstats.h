/* tools/runstats.h - the headline figures of one finished run, as sweeps and plans compare them.
 *
 * Figures (name: meaning, unit):
 *   jobs, done, failed          jobs generated, done, failed (OOM or refused request)
 *   unfinished                  jobs still queued, running or not submitted at the end
 *   wait_mean_s, wait_p95_s     wait of the jobs that started (s)
 *   jct_mean_s, jct_p95_s       completion time of the done jobs (s)
 *   slowdown_mean               mean over done jobs of JCT / solo run time (>= 1 when nothing
 *                               runs faster than alone)
 *   units_util, gpus_busy, sms_busy   time-weighted fractions over [0, horizon] (as run.json)
 *   queued_mean                 time-weighted mean number of queued jobs
 *   gpus                        GPUs in the cluster
 *   energy_kwh                  energy the GPUs draw over [0, horizon] (tools/out_metrics.h's
 *                               power model; set by the run, which has the physics)
 *   service_latency_p95_s,      inference services (model/cluster/service.h), when the scenario has any:
 *   service_latency_p99_s       the worst (largest) request-latency percentile over its services
 *   service_attainment          the worst (smallest) share of requests served within their SLO
 *                               (set by the run; absent without services)
 * A figure with nothing to measure (no job started) is absent (has[i] false), never NaN.
 * Per class (runstats_class): the same wait / JCT figures for the jobs of one class.
 * Ownership: pure function of a borrowed world; results are plain values.
 */
#ifndef SIMPROJ_TOOLS_RUNSTATS_H
#define SIMPROJ_TOOLS_RUNSTATS_H

#include <stdbool.h>

#include "model/cluster/world.h"

enum {
    RS_JOBS,
    RS_DONE,
    RS_FAILED,
    RS_UNFINISHED,
    RS_WAIT_MEAN,
    RS_WAIT_P95,
    RS_JCT_MEAN,
    RS_JCT_P95,
    RS_SLOWDOWN_MEAN,
    RS_UNITS_UTIL,
    RS_GPUS_BUSY,
    RS_SMS_BUSY,
    RS_QUEUED_MEAN,
    RS_GPUS,
    RS_ENERGY_KWH,
    RS_SVC_P95,
    RS_SVC_P99,
    RS_SVC_ATTAINMENT,
    RS_COUNT
};

typedef struct runstats {
    double v[RS_COUNT];
    bool has[RS_COUNT];
} runstats;

/* Name of figure i (i < RS_COUNT), e.g. "wait_p95_s"; static storage. */
const char *runstats_name(int i);
/* The figures of a finished run. */
void runstats_compute(const world *w, runstats *out);
/* The figures of the jobs of class `class_name` only (utilisation figures absent). */
void runstats_class(const world *w, const char *class_name, runstats *out);

#endif
