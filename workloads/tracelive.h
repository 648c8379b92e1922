/* workloads/tracelive.h - a trace's live instances over time: the step function that drives a
 * service's request arrivals (model/cluster/service.h SERVICE_STEPS).
 *
 * Every record of the trace (workloads/trace.h) whose class key equals `klass` (NULL: any) and
 * that asks for a GPU (gpus > 0: DLRM's HN instances; the CPU-only CN instances are left out)
 * is live from its submission to submission + duration (open-ended records: to the end of the
 * run). level(t) = records live at t, a step function: times where it changes (ascending, each
 * once, the changes at one instant summed) and the level from each on; 0 before the first.
 * A service with `rate` r per instance then receives requests at r x level(t) (the operator ran
 * as many instances as the load asked for: the trace's instances stand for its load).
 * Units: seconds from the trace's origin. Ownership: the arrays live in the arena given; the
 * reader and klass are borrowed during the call.
 */
#ifndef SIMPROJ_WORKLOADS_TRACELIVE_H
#define SIMPROJ_WORKLOADS_TRACELIVE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/arena.h"
#include "workloads/trace.h"

typedef struct tracelive {
    size_t n_steps;
    double *t;          /* change times, s, ascending */
    double *level;      /* live records from t[i] on */
    uint64_t n_records; /* records counted (matching class, with a GPU) */
    uint64_t n_rows;    /* rows read */
    double max_level;
} tracelive;

/* Read r to its end into *out. Returns 0, SIM_EINPUT when rows were bad (each reported by the
 * reader), SIM_EIO on a read error. */
int tracelive_read(trace_reader *r, const char *klass, arena *a, tracelive *out);

#endif
