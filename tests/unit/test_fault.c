/* Unit tests for model/fault: the blast radius of each fault kind on each sharing mode (the
 * victims are derived by hand from the placement below), the gang rule, checkpoint restarts and
 * repair times against hand-computed timelines, the cost report, and the seeded process
 * (deterministic, one stream per component, rate as the MTBF says). The GPU type is a made-up
 * fixture (no catalog data); jobs run at rate 1 (no rate function), so times are exact.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/cluster/fault.h"
#include "model/cluster/world.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/worldfx.h"

/* Cluster (first-fit places the jobs below in this order, so every placement is known):
 *   node a (0): GPU 0 MIG [1g.x@0, 1g.x@1, 2g.y@2] -> devices 0, 1, 2;
 *               GPU 1 time-sliced, 4 replicas, renamed -> device 3 (nvidia.com/gpu.shared)
 *   node b (1): GPU 2 under MPS, 2 replicas, renamed -> device 4 (nvidia.com/gpu.shared)
 *   node c (2): GPUs 3, 4 whole -> devices 5, 6 (nvidia.com/gpu)
 * Jobs, all submitted at 0 with 1000 s of work:
 *   j0 mig-1g.x -> dev 0; j1 mig-1g.x -> dev 1; j2 mig-2g.y -> dev 2;
 *   j3..j6 gpu.shared -> dev 3 (4 replicas); j7, j8 gpu.shared -> dev 4 (MPS, 2 replicas);
 *   j9 nvidia.com/gpu x2 in one pod -> devs 5, 6 (two whole GPUs of node c: NVLink). */
typedef struct env {
    gpu_type g;
    cluster_gpu_cfg a[2], b[1], c[2];
    cluster_share_rule all4, all2;
    cluster_node_cfg nodes[3];
    cluster_cfg cc;
    world_cfg wc;
} env;

static void env_init(env *e)
{
    memset(e, 0, sizeof *e);
    e->g = test_gpu();
    e->a[0] = (cluster_gpu_cfg){.type = &e->g, .mig_enabled = true, .n_mig = 3};
    e->a[0].mig[0] = &e->g.profiles[0];
    e->a[0].mig_start[0] = 0;
    e->a[0].mig[1] = &e->g.profiles[0];
    e->a[0].mig_start[1] = 1;
    e->a[0].mig[2] = &e->g.profiles[1];
    e->a[0].mig_start[2] = 2;
    e->all4 = (cluster_share_rule){NULL, 4};
    e->all2 = (cluster_share_rule){NULL, 2};
    e->a[1] = (cluster_gpu_cfg){.type = &e->g,
                                .sharing = CLUSTER_SHARE_TIMESLICE,
                                .rename_by_default = true,
                                .n_rules = 1,
                                .rules = &e->all4};
    e->b[0] = (cluster_gpu_cfg){.type = &e->g,
                                .sharing = CLUSTER_SHARE_MPS,
                                .rename_by_default = true,
                                .n_rules = 1,
                                .rules = &e->all2};
    e->c[0] = (cluster_gpu_cfg){.type = &e->g};
    e->c[1] = (cluster_gpu_cfg){.type = &e->g};
    e->nodes[0] = (cluster_node_cfg){.name = "a", .n_gpus = 2, .gpus = e->a};
    e->nodes[1] = (cluster_node_cfg){.name = "b", .n_gpus = 1, .gpus = e->b};
    e->nodes[2] = (cluster_node_cfg){.name = "c", .n_gpus = 2, .gpus = e->c};
    e->cc = (cluster_cfg){.n_nodes = 3, .nodes = e->nodes};
    e->wc = (world_cfg){
        .cluster = &e->cc, .policy = pol_find("fifo"), .until = SIM_TIME_MAX, .verify_every = 1};
}

/* The ten jobs of the header comment. */
static job_table *standard_jobs(void)
{
    job_table *t = job_table_create();
    fx_add(t, 0, "nvidia.com/mig-1g.x", 1, 1, 1000);
    fx_add(t, 0, "nvidia.com/mig-1g.x", 1, 1, 1000);
    fx_add(t, 0, "nvidia.com/mig-2g.y", 1, 1, 1000);
    for (int i = 0; i < 6; i++) {
        fx_add(t, 0, "nvidia.com/gpu.shared", 1, 1, 1000);
    }
    fx_add(t, 0, "nvidia.com/gpu", 2, 1, 1000);
    return t;
}

static fault_event resolve(const world *w, fault_kind k, const char *node, uint32_t gpu,
                           uint32_t inst, double at_s, double repair_s)
{
    fault_event ev;
    char why[128];
    cr_assert(fault_resolve(world_cluster(w), k, node, gpu, inst, &ev, why, sizeof why), "%s", why);
    ev.at = sim_time_from_s(at_s);
    ev.repair_ns = sim_time_from_s(repair_s);
    return ev;
}

/* Jobs killed by one fault at t = 100 s (every job is running then): a bitmask of job ids. */
static unsigned killed_by(fault_kind k, const char *node, uint32_t gpu, uint32_t inst,
                          fault_stats *st)
{
    env e;
    env_init(&e);
    world *w = fx_world(&e.wc, standard_jobs());
    fault_event ev = resolve(w, k, node, gpu, inst, 100, 0);
    fault_injector *fi = fault_injector_create(w, &ev, 1);
    world_run(w);
    unsigned mask = 0;
    const job_table *t = world_jobs(w);
    for (job_id j = 0; j < job_table_count(t); j++) {
        const job *jb = job_table_get(t, j);
        cr_assert_eq(jb->state, JOB_DONE);
        if (jb->n_restarts > 0) {
            mask |= 1u << j;
            cr_assert_eq(jb->n_restarts, 1);
            /* no checkpoint, no repair: back at once at 100 s, the whole 1000 s again */
            cr_assert_float_eq(sim_time_to_s(jb->end), 1100.0, 1e-9);
        } else {
            cr_assert_float_eq(sim_time_to_s(jb->end), 1000.0, 1e-9);
        }
    }
    if (st) {
        *st = *fault_injector_stats(fi);
    }
    uint64_t kills = 0;
    for (int m = 0; m < FAULT_N_MODES; m++) {
        kills += fault_injector_stats(fi)->n_kills[m];
    }
    cr_assert_eq(kills, (uint64_t)__builtin_popcount(mask));
    fault_injector_destroy(fi);
    world_destroy(w);
    return mask;
}

#define J(i) (1u << (i))

Test(fault, a_mig_instance_fault_kills_only_that_instances_pod)
{
    fault_stats st;
    cr_assert_eq(killed_by(FAULT_INSTANCE, "a", 0, 1, &st), J(1));
    cr_assert_eq(st.n_kills[FAULT_MODE_MIG], 1);
    cr_assert_eq(st.n_faults[FAULT_INSTANCE], 1);
    /* 100 s since the start, on 1 of 7 compute slices */
    cr_assert_float_eq(st.lost_gpu_s[FAULT_MODE_MIG], 100.0 / 7, 1e-9);
    cr_assert_float_eq(st.lost_work_s[FAULT_MODE_MIG], 100.0, 1e-9);
}

Test(fault, a_gpu_fault_on_a_mig_gpu_kills_every_instance)
{
    fault_stats st;
    cr_assert_eq(killed_by(FAULT_GPU, "a", 0, 0, &st), J(0) | J(1) | J(2));
    cr_assert_eq(st.n_kills[FAULT_MODE_MIG], 3);
    cr_assert_float_eq(st.lost_gpu_s[FAULT_MODE_MIG], 100.0 * (1 + 1 + 2) / 7, 1e-9);
}

Test(fault, a_fault_on_a_time_sliced_gpu_kills_every_process_on_it)
{
    fault_stats st;
    cr_assert_eq(killed_by(FAULT_INSTANCE, "a", 1, 0, &st), J(3) | J(4) | J(5) | J(6));
    cr_assert_eq(st.n_kills[FAULT_MODE_TIMESLICE], 4);
    /* four replicas of one GPU held for 100 s: 100 GPU-seconds in all */
    cr_assert_float_eq(st.lost_gpu_s[FAULT_MODE_TIMESLICE], 100.0, 1e-9);
    cr_assert_eq(killed_by(FAULT_GPU, "a", 1, 0, NULL), J(3) | J(4) | J(5) | J(6));
}

Test(fault, an_mps_server_crash_takes_all_its_clients)
{
    fault_stats st;
    cr_assert_eq(killed_by(FAULT_INSTANCE, "b", 0, 0, &st), J(7) | J(8));
    cr_assert_eq(st.n_kills[FAULT_MODE_MPS], 2);
    cr_assert_eq(st.n_affected[FAULT_MODE_MPS], 2);
    cr_assert_eq(st.n_kills[FAULT_MODE_TIMESLICE] + st.n_kills[FAULT_MODE_MIG], 0);
}

Test(fault, a_fault_on_one_gpu_of_a_multi_gpu_pod_kills_the_whole_job)
{
    fault_stats st;
    cr_assert_eq(killed_by(FAULT_INSTANCE, "c", 1, 0, &st), J(9));
    cr_assert_float_eq(st.lost_gpu_s[FAULT_MODE_WHOLE], 200.0, 1e-9); /* 2 GPUs x 100 s */
}

Test(fault, nvlink_kills_jobs_spanning_whole_gpus_only)
{
    cr_assert_eq(killed_by(FAULT_NVLINK, "c", 0, 0, NULL), J(9));
    /* node a: MIG instances (no peer-to-peer) and single-GPU pods carry on */
    cr_assert_eq(killed_by(FAULT_NVLINK, "a", 0, 0, NULL), 0);
}

Test(fault, a_node_fault_kills_every_pod_on_the_node)
{
    cr_assert_eq(killed_by(FAULT_NODE, "a", 0, 0, NULL),
                 J(0) | J(1) | J(2) | J(3) | J(4) | J(5) | J(6));
}

Test(fault, a_gang_dies_whole_across_nodes)
{
    /* two pods of one whole GPU each, on GPUs 3 and 4 of node c: a fault on GPU 3 kills the
     * job, so the pod on GPU 4 dies with it (2 GPUs x 100 s lost) */
    env e;
    env_init(&e);
    job_table *t = job_table_create();
    fx_add(t, 0, "nvidia.com/gpu", 1, 2, 1000);
    world *w = fx_world(&e.wc, t);
    fault_event ev = resolve(w, FAULT_GPU, "c", 0, 0, 100, 0);
    fault_injector *fi = fault_injector_create(w, &ev, 1);
    world_run(w);
    const job *j = job_table_get(world_jobs(w), 0);
    cr_assert_eq(j->n_restarts, 1);
    cr_assert_eq(fault_injector_stats(fi)->n_kills[FAULT_MODE_WHOLE], 1);
    cr_assert_float_eq(fault_injector_stats(fi)->lost_gpu_s[FAULT_MODE_WHOLE], 200.0, 1e-9);
    fault_injector_destroy(fi);
    world_destroy(w);
}

/* One pod on both GPUs of node c, 1000 s of work, a GPU fault at 700 s with a 50 s repair.
 * Checkpoints every 300 s of work: 600 s kept, 100 s lost; the pod needs both GPUs, so it waits
 * for the repair. */
Test(fault, checkpoint_restart_keeps_the_last_checkpoint)
{
    env e;
    env_init(&e);
    e.wc.checkpoint_s = 300;
    job_table *t = job_table_create();
    fx_add(t, 0, "nvidia.com/gpu", 2, 1, 1000); /* both GPUs of node c */
    world *w = fx_world(&e.wc, t);
    fault_event ev = resolve(w, FAULT_GPU, "c", 0, 0, 700, 50);
    fault_injector *fi = fault_injector_create(w, &ev, 1);
    world_run(w);
    const job *j = job_table_get(world_jobs(w), 0);
    /* GPU 3 down 700..750, the pod needs both GPUs: restart at 750 with 1000 - 600 = 400 s */
    cr_assert_float_eq(sim_time_to_s(j->end), 1150.0, 1e-9);
    cr_assert_float_eq(j->done_s, 600.0, 1e-9);
    cr_assert_float_eq(sim_time_to_s(j->start), 0.0, 1e-9);
    const fault_stats *st = fault_injector_stats(fi);
    cr_assert_float_eq(st->lost_work_s[FAULT_MODE_WHOLE], 100.0, 1e-9);
    cr_assert_float_eq(st->lost_gpu_s[FAULT_MODE_WHOLE], 200.0, 1e-9); /* 2 GPUs x 100 s */
    fault_injector_destroy(fi);
    world_destroy(w);
}

Test(fault, without_checkpoints_a_job_restarts_from_zero_after_the_repair)
{
    env e;
    env_init(&e);
    job_table *t = job_table_create();
    fx_add(t, 0, "nvidia.com/gpu", 2, 1, 1000);
    world *w = fx_world(&e.wc, t);
    fault_event ev = resolve(w, FAULT_NODE, "c", 0, 0, 700, 50);
    fault_injector *fi = fault_injector_create(w, &ev, 1);
    world_run(w);
    const job *j = job_table_get(world_jobs(w), 0);
    cr_assert_float_eq(sim_time_to_s(j->end), 750.0 + 1000.0, 1e-9);
    cr_assert_float_eq(fault_injector_stats(fi)->lost_work_s[FAULT_MODE_WHOLE], 700.0, 1e-9);
    fault_injector_destroy(fi);
    world_destroy(w);
}

/* Checkpoint times follow the rate: a job at rate 1/2 writes its 300 s-of-work checkpoint at
 * 600 s of wall time; killed at 900 s it has lost 300 s of wall time and 150 s of work. */
static double half_rate(void *ctx, const world *w, job_id j)
{
    (void)ctx;
    (void)w;
    (void)j;
    return 0.5;
}

Test(fault, checkpoints_are_placed_in_wall_time_by_the_rate)
{
    env e;
    env_init(&e);
    e.wc.checkpoint_s = 300;
    e.wc.rate = half_rate;
    job_table *t = job_table_create();
    fx_add(t, 0, "nvidia.com/gpu", 1, 1, 1000);
    world *w = fx_world(&e.wc, t);
    fault_event ev = resolve(w, FAULT_INSTANCE, "c", 0, 0, 900, 0);
    fault_injector *fi = fault_injector_create(w, &ev, 1);
    world_run(w);
    const fault_stats *st = fault_injector_stats(fi);
    cr_assert_float_eq(st->lost_work_s[FAULT_MODE_WHOLE], 150.0, 1e-9);
    cr_assert_float_eq(st->lost_gpu_s[FAULT_MODE_WHOLE], 300.0, 1e-9);
    const job *j = job_table_get(world_jobs(w), 0);
    /* restarted at 900 s with 700 s of work at rate 1/2: 1400 s more */
    cr_assert_float_eq(sim_time_to_s(j->end), 2300.0, 1e-9);
    fault_injector_destroy(fi);
    world_destroy(w);
}

Test(fault, a_down_device_takes_no_pod_until_repaired)
{
    env e;
    env_init(&e);
    job_table *t = job_table_create();
    fx_add(t, 10, "nvidia.com/mig-2g.y", 1, 1, 100); /* its only instance is down 5..505 */
    world *w = fx_world(&e.wc, t);
    fault_event ev = resolve(w, FAULT_INSTANCE, "a", 0, 2, 5, 500);
    fault_injector *fi = fault_injector_create(w, &ev, 1);
    world_run(w);
    const job *j = job_table_get(world_jobs(w), 0);
    cr_assert_float_eq(sim_time_to_s(j->start), 505.0, 1e-9);
    cr_assert_float_eq(sim_time_to_s(j->end), 605.0, 1e-9);
    fault_injector_destroy(fi);
    world_destroy(w);
}

Test(fault, resolve_reports_missing_targets)
{
    env e;
    env_init(&e);
    world *w = fx_world(&e.wc, job_table_create());
    fault_event ev;
    char why[128];
    cr_assert_not(fault_resolve(world_cluster(w), FAULT_GPU, "zz", 0, 0, &ev, why, sizeof why));
    cr_assert_str_eq(why, "no node is named 'zz'");
    cr_assert_not(fault_resolve(world_cluster(w), FAULT_GPU, "b", 1, 0, &ev, why, sizeof why));
    cr_assert_str_eq(why, "node 'b' has 1 GPUs, no GPU 1");
    cr_assert_not(fault_resolve(world_cluster(w), FAULT_INSTANCE, "a", 0, 3, &ev, why, sizeof why));
    cr_assert_str_eq(why, "GPU 0 of node 'a' has 3 device(s), no instance 3");
    world_destroy(w);
}

/* An MTBF of centuries draws failure times past sim_time's range (+-292 years): none falls in
 * the horizon and nothing asserts (issue 22: `--set faults.process.gpu.mtbf=2000000h` aborted). */
Test(fault, an_mtbf_past_sim_time_range_gives_no_fault_instead_of_aborting)
{
    env e;
    env_init(&e);
    world *w = fx_world(&e.wc, job_table_create());
    rng_root root = rng_root_make(1);
    fault_process p = {0};
    p.mtbf_s[FAULT_GPU] = 2e6 * 3600; /* mean 7.2e9 s; draws pass 9.2e9 s */
    p.mtbf_s[FAULT_NODE] = 1e12;
    fault_event *a = NULL;
    size_t na = 99;
    fault_generate(world_cluster(w), &p, &root, sim_time_from_s(86400), &a, &na);
    cr_assert_eq(na, 0);
    free(a);
    world_destroy(w);
}

/* The process: a GPU MTBF of 1000 s over 10^6 s on 5 GPUs gives ~5000 faults (Poisson: sd
 * sqrt(5000) ~ 71; 4 sd = 283); the same seed gives the same list; adding the node kind leaves
 * the GPU faults unchanged (own streams). */
Test(fault, the_process_follows_the_mtbf_and_is_reproducible)
{
    env e;
    env_init(&e);
    world *w = fx_world(&e.wc, job_table_create());
    rng_root root = rng_root_make(7);
    fault_process p = {0};
    p.mtbf_s[FAULT_GPU] = 1000;
    fault_event *a = NULL, *b = NULL;
    size_t na = 0, nb = 0;
    fault_generate(world_cluster(w), &p, &root, sim_time_from_s(1e6), &a, &na);
    cr_assert(fabs((double)na - 5000.0) < 283, "%zu faults", na);
    p.mtbf_s[FAULT_NODE] = 5000;
    fault_generate(world_cluster(w), &p, &root, sim_time_from_s(1e6), &b, &nb);
    size_t k = 0;
    for (size_t i = 0; i < nb; i++) {
        if (b[i].kind == FAULT_GPU) {
            cr_assert(k < na);
            cr_assert_eq(b[i].at, a[k].at);
            cr_assert_eq(b[i].target, a[k].target);
            k++;
        }
        cr_assert(i == 0 || b[i - 1].at <= b[i].at);
    }
    cr_assert_eq(k, na);
    cr_assert(nb > na);
    free(a);
    free(b);
    world_destroy(w);
}
