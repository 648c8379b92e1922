/* tests/unit/worldfx.h - worlds for the model tests: the configuration of a one-node cluster, a
 * world that must be created, jobs added by resource, and their start and end times read back.
 * Ownership: an fx_node holds the configurations a world points at (keep it alive, and its GPU
 * array, while the world lives); fx_world hands the job table to the world (world_destroy frees
 * it). Times in seconds, work in seconds of solo run time.
 */
#ifndef SIMPROJ_TESTS_UNIT_WORLDFX_H
#define SIMPROJ_TESTS_UNIT_WORLDFX_H

#include "model/cluster/world.h"

typedef struct fx_node {
    cluster_node_cfg node;
    cluster_cfg cc;
    world_cfg wc;
} fx_node;

/* One node `name` with the n GPUs of `gpus`, scheduled by `policy` (which must exist) up to
 * `until` (SIM_TIME_MAX: no horizon), the invariants verified after every event. */
void fx_node_init(fx_node *f, const char *name, const cluster_gpu_cfg *gpus, uint32_t n,
                  const char *policy, sim_time until);

/* world_create(wc, t) that must succeed. */
world *fx_world(const world_cfg *wc, job_table *t);

/* A job of class "c": per_worker units of `res` for each of `workers` pods, submitted at
 * submit_s with work_s of work. */
job_id fx_add(job_table *t, double submit_s, const char *res, uint32_t per_worker, uint32_t workers,
              double work_s);

double fx_start_s(const world *w, job_id j);
double fx_end_s(const world *w, job_id j);

#endif
