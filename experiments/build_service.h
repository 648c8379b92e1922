/* experiments/build_service.h - a scenario's inference services, for the run builder
 * (experiments/build_run.h): with each service's profile (resolved at load,
 * scenario_resolved.svc_prof), its replica pods (first in the job table,
 * submitted at 0, running past the horizon) and the spare pods of an autoscaled one (after every
 * other job, submitted only by the autoscaler: a service gets its most replicas for every
 * stabilization window, or interval, of the horizon, at most EST_MAX_SPARES of
 * experiments/estimate.h), and the service components started on the built world.
 * Checks (each an input error at its field, exit 2): a resource no node advertises, a model that
 * cannot serve a batch of the service's size on that partition (the loader checked the rest:
 * experiments/resolve.h).
 * Ownership: everything built is allocated in the run's arena; the services are the run's
 * (built_run.svcs). Units: seconds.
 */
#ifndef SIMPROJ_EXPERIMENTS_BUILD_SERVICE_H
#define SIMPROJ_EXPERIMENTS_BUILD_SERVICE_H

#include <stddef.h>

#include "experiments/build_run.h"
#include "model/cluster/cluster.h"
#include "model/cluster/job.h"

/* The time of a batch of service i's largest size alone on the first device of c advertising
 * its resource (seconds), for the estimate; 0 when unknown (build_services reports why). */
double build_service_batch_s(const built_run *b, const cluster *c, size_t i);

/* The replica pods, first in the job table (submitted at 0, running past the horizon), each
 * asking for one unit and the profile's memory at the service's largest batch. */
void build_service_replicas(built_run *b, job_table *jobs);

/* Spare replica pods of autoscaled services, after every other job, submitted only by the
 * autoscaler. Fills the replica id lists (b->svc_ids, b->svc_pool). */
void build_service_spares(built_run *b, job_table *jobs);

/* Check each service against the built world's cluster and start it (b->svcs). */
void build_services(built_run *b);

#endif
