/* tests/unit/worldfx.c - see worldfx.h. */
#include "tests/unit/worldfx.h"

#include <criterion/criterion.h>
#include <string.h>

#include "sim/diag.h"

void fx_node_init(fx_node *f, const char *name, const cluster_gpu_cfg *gpus, uint32_t n,
                  const char *policy, sim_time until)
{
    memset(f, 0, sizeof *f);
    f->node = (cluster_node_cfg){.name = name, .n_gpus = n, .gpus = gpus};
    f->cc = (cluster_cfg){.n_nodes = 1, .nodes = &f->node};
    f->wc = (world_cfg){
        .cluster = &f->cc, .policy = pol_find(policy), .until = until, .verify_every = 1};
    cr_assert(f->wc.policy, "no policy %s", policy);
}

world *fx_world(const world_cfg *wc, job_table *t)
{
    diag *d = diag_create();
    world *w = NULL;
    cr_assert_eq(world_create(wc, t, d, (src_loc){"x", 1, 1}, &w), 0);
    diag_destroy(d);
    return w;
}

job_id fx_add(job_table *t, double submit_s, const char *res, uint32_t per_worker, uint32_t workers,
              double work_s)
{
    job_spec s = {.class_name = "c",
                  .req = {res, per_worker, workers},
                  .submit = sim_time_from_s(submit_s),
                  .work_s = work_s};
    return job_table_add(t, &s);
}

double fx_start_s(const world *w, job_id j)
{
    return sim_time_to_s(job_table_get(world_jobs(w), j)->start);
}

double fx_end_s(const world *w, job_id j)
{
    return sim_time_to_s(job_table_get(world_jobs(w), j)->end);
}
