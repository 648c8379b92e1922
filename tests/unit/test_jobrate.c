/* Unit tests for model/jobrate: the rate of a job on a shared device comes from its actual
 * co-runners. Different workloads on one time-sliced GPU get the mixed product form
 * (share_ts_solve), with a job without a profile as a GPU-bound class (host time 0); different
 * profiles under MPS get share_mps_solve; identical co-runners keep the peers rule. The GPU is the
 * catalog's A100-SXM4-40GB and the physics model/physics/physics.yaml (both embedded); the profiles are
 * made up. Expected values are computed here through the solvers' public interfaces. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "experiments/physics_load.h"
#include "model/cluster/jobrate.h"
#include "model/physics/predict.h"
#include "model/physics/share_mps.h"
#include "model/physics/share_ts.h"
#include "model/cluster/world.h"
#include "sim/arena.h"
#include "sim/diag.h"

/* The rate function under test, recording the rate each job got while `k` units of its first
 * device were held. */
typedef struct rec_ctx {
    jobrate_ctx rc;
    uint32_t k;
    double rate[4];
} rec_ctx;

static double rec_rate(void *ctx, const world *w, job_id j)
{
    rec_ctx *r = ctx;
    double v = jobrate_rate(&r->rc, w, j);
    const job *jb = job_table_get(world_jobs(w), j);
    if (j < 4 && cluster_device_get(world_cluster(w), jb->units[0])->used == r->k) {
        r->rate[j] = v;
    }
    return v;
}

typedef struct fix {
    arena *a;
    gpu_catalog cat;
    phys_params m;
    const gpu_type *gpu;
} fix;

static void fix_init(fix *f)
{
    diag *d = diag_create();
    f->a = arena_create();
    cr_assert_eq(physics_load_default(d, &f->m), 0);
    cr_assert_eq(catalog_load_default(f->a, &f->cat, d), 0);
    diag_destroy(d);
    f->gpu = gpu_catalog_find(&f->cat, "A100-SXM4-40GB");
    cr_assert_not_null(f->gpu);
}

/* Run the jobs of t (taken) on the one node `node` under `policy` with rate function rate (ctx)
 * and the invariants checked after every event; returns the world after the run. */
static world *run_world(const cluster_node_cfg *node, const char *policy, world_rate_fn *rate,
                        void *ctx, job_table *t)
{
    cluster_cfg cc = {.n_nodes = 1, .nodes = node};
    world_cfg wc = {.cluster = &cc,
                    .policy = pol_find(policy),
                    .until = SIM_TIME_MAX,
                    .verify_every = 1,
                    .rate = rate,
                    .rate_ctx = ctx};
    diag *d = diag_create();
    world *w = NULL;
    cr_assert_eq(world_create(&wc, t, d, (src_loc){"x", 1, 1}, &w), 0);
    diag_destroy(d);
    world_run(w);
    return w;
}

/* One node with one A100 shared under `sharing` with 4 replicas; jobs (profile names, NULL for
 * none) all arrive at t = 0 with 100 s of work each; returns the world after the run. */
static world *run_shared(const fix *f, cluster_sharing sharing, rec_ctx *rec, const char **names,
                         uint32_t n_jobs)
{
    cluster_share_rule rule = {.resource = "nvidia.com/gpu", .replicas = 4};
    cluster_gpu_cfg g = {.type = f->gpu, .sharing = sharing, .n_rules = 1, .rules = &rule};
    cluster_node_cfg node = {.name = "n0", .n_gpus = 1, .gpus = &g};
    job_table *t = job_table_create();
    for (uint32_t i = 0; i < n_jobs; i++) {
        job_spec s = {
            .class_name = "c", .req = {"nvidia.com/gpu", 1, 1}, .work_s = 100, .profile = names[i]};
        job_table_add(t, &s);
    }
    rec->k = n_jobs;
    for (int i = 0; i < 4; i++) {
        rec->rate[i] = -1;
    }
    return run_world(&node, "fifo", rec_rate, rec, t);
}

static double end_s(const world *w, job_id j)
{
    return sim_time_to_s(job_table_get(world_jobs(w), j)->end);
}

/* A compute-only profile of `compute` SM-seconds per iteration, with host time `host_ratio`
 * times its solo GPU time on the A100, moving `bytes` per iteration. */
static wl_profile make_profile(const fix *f, const char *name, double compute, double bytes,
                               double host_ratio)
{
    wl_profile p;
    memset(&p, 0, sizeof p);
    p.name = name;
    p.compute_sm_s_fixed[WL_CLASS_FP32] = compute;
    p.mem_traffic_bytes_fixed = bytes;
    partition_cfg pc;
    partition_cfg_init(&pc, f->gpu);
    speed_result r;
    predict_unit_time(&p, 1, &pc, &f->m, &r);
    cr_assert_eq(r.outcome, SPEED_OK);
    p.host_s_fixed = host_ratio * r.iter_gpu_s;
    return p;
}

/* The fixture, one compute-only profile `name` (make_profile) and a recording rate context that
 * knows only it. */
static void one_profile(fix *f, const char *name, double host_ratio, wl_profile *p,
                        jobrate_profile *jp, rec_ctx *rec)
{
    fix_init(f);
    *p = make_profile(f, name, 1.0, 0, host_ratio);
    *jp = (jobrate_profile){.name = name, .p = p, .batch = 1};
    *rec = (rec_ctx){.rc = {.phys = &f->m, .ts_class = 0, .n_profiles = 1, .profiles = jp}};
}

/* The fixture, a compute-heavy profile with a long host phase (pa, "compute") and a
 * memory-heavy one (pb, "memory"), and a recording rate context that knows both. */
static void two_profiles(fix *f, wl_profile *pa, wl_profile *pb, jobrate_profile jps[2],
                         rec_ctx *rec)
{
    fix_init(f);
    *pa = make_profile(f, "compute", 1.0, 20e9, 3.0);
    *pb = make_profile(f, "memory", 0.05, 400e9, 0.1);
    jps[0] = (jobrate_profile){.name = "compute", .p = pa, .batch = 1};
    jps[1] = (jobrate_profile){.name = "memory", .p = pb, .batch = 1};
    *rec = (rec_ctx){.rc = {.phys = &f->m, .ts_class = 0, .n_profiles = 2, .profiles = jps}};
}

/* (1) Time-slicing, a profiled job whose host phase is 3x its GPU phase with a GPU-bound job
 * (no profile): each rate is the product form's throughput relative to alone, and not what the
 * old peers assumption gave. */
Test(jobrate, a_profiled_and_a_gpu_bound_job_time_sliced_follow_the_product_form)
{
    fix f;
    wl_profile p;
    jobrate_profile jp;
    rec_ctx rec;
    one_profile(&f, "hosty", 3.0, &p, &jp, &rec);
    const char *names[2] = {"hosty", NULL};
    world *w = run_shared(&f, CLUSTER_SHARE_TIMESLICE, &rec, names, 2);

    /* direct: class 0 = (H, G) of the profile alone on the A100, class 1 = GPU-bound (H = 0);
     * the GPU-bound class's G is arbitrary, 0.37 s here (the model uses 1 s) */
    partition_cfg pc;
    partition_cfg_init(&pc, f.gpu);
    speed_result alone;
    predict_unit_time(&p, 1, &pc, &f.m, &alone);
    double gb = 0.37;
    share_ts_class cls[2] = {{1, alone.iter_host_s, alone.iter_gpu_s, 0.0, false, 0.0},
                             {1, 0.0, gb, 0.0, false, 0.0}};
    double eta[3];
    for (int n = 0; n <= 2; n++) {
        eta[n] = speed_eta(f.gpu, &f.m, 0, n);
    }
    double x[2];
    cr_assert_eq(share_ts_solve(2, cls, eta, x, NULL), 0);
    double r0 = x[0] * (alone.iter_host_s + alone.iter_gpu_s), r1 = x[1] * gb;
    cr_assert_float_eq(rec.rate[0], r0, 1e-9 * r0);
    cr_assert_float_eq(rec.rate[1], r1, 1e-9 * r1);
    cr_assert(r0 > 0 && r0 < 1 && r1 > 0 && r1 < 1);
    /* by hand: the profiled job's cycle is H + 2G/eta(2) (the GPU-bound job is always there),
     * so its rate is (H + G) / (H + 2G/eta(2)); the GPU-bound job has the GPU alone for H and
     * half of eta(2) for 2G/eta(2) of each cycle, which gives the same number */
    double h = alone.iter_host_s, g = alone.iter_gpu_s;
    double hand = (h + g) / (h + 2 * g / eta[2]);
    cr_assert_float_eq(rec.rate[0], hand, 1e-9 * hand);
    cr_assert_float_eq(rec.rate[1], hand, 1e-9 * hand);

    /* the old assumption: two identical peers of the profile, and eta(2)/2 for the other */
    speed_result two;
    pc.sharing = SHARE_TIMESLICE;
    pc.peers = 2;
    predict_unit_time(&p, 1, &pc, &f.m, &two);
    cr_assert_eq(two.outcome, SPEED_OK);
    double old0 = alone.unit_time_s / two.unit_time_s, old1 = eta[2] / 2;
    cr_assert_gt(fabs(rec.rate[0] - old0), 1e-3);
    cr_assert_gt(fabs(rec.rate[1] - old1), 1e-3);

    /* the world follows: the faster job ends first, the other finishes alone at rate 1 */
    double fast = fmax(r0, r1), slow = fmin(r0, r1);
    double t1 = 100 / fast;
    cr_assert_float_eq(fmin(end_s(w, 0), end_s(w, 1)), t1, 1e-6);
    cr_assert_float_eq(fmax(end_s(w, 0), end_s(w, 1)), t1 + 100 - slow * t1, 1e-6);
    world_destroy(w);
    arena_destroy(f.a);
}

/* (2) MPS, a compute-heavy profile with a long host phase and a memory-heavy one: each rate is
 * share_mps_solve's iteration time divided into the time alone on one replica (25 % of the
 * SMs), and never above 1. */
Test(jobrate, two_different_profiles_under_mps_follow_share_mps_solve)
{
    fix f;
    wl_profile pa, pb;
    jobrate_profile jps[2];
    rec_ctx rec;
    two_profiles(&f, &pa, &pb, jps, &rec);
    const char *names[2] = {"compute", "memory"};
    world *w = run_shared(&f, CLUSTER_SHARE_MPS, &rec, names, 2);

    partition_cfg pc;
    partition_cfg_init(&pc, f.gpu);
    pc.sharing = SHARE_MPS;
    pc.mps_percent = 25;
    speed_result alone_a, alone_b;
    predict_unit_time(&pa, 1, &pc, &f.m, &alone_a);
    predict_unit_time(&pb, 1, &pc, &f.m, &alone_b);
    share_mps_class cls[2] = {{&pa, 1, 1}, {&pb, 1, 1}};
    double iter[2];
    cr_assert_eq(share_mps_solve(2, cls, &pc, &f.m, iter, NULL), 0,
                 "the MPS solve converges here");
    double ra = alone_a.unit_time_s / iter[0], rb = alone_b.unit_time_s / iter[1];
    cr_assert_float_eq(rec.rate[0], ra, 1e-9 * ra);
    cr_assert_float_eq(rec.rate[1], rb, 1e-9 * rb);
    /* two 25 % clients fit side by side: neither is slowed by SMs; only bandwidth can */
    cr_assert(ra <= 1 + 1e-12 && rb <= 1 + 1e-12);

    /* not the peers assumption: two clients of the memory-heavy profile (the compute-heavy one
     * spends most of its time on the host, so it contends for bandwidth less) */
    speed_result two;
    pc.peers = 2;
    predict_unit_time(&pb, 1, &pc, &f.m, &two);
    cr_assert_gt(fabs(rec.rate[1] - alone_b.unit_time_s / two.unit_time_s), 1e-3);
    world_destroy(w);
    arena_destroy(f.a);
}

/* (3) Identical co-runners: three jobs of one profile, and three without one, keep the peers
 * rule exactly (speed model with 3 peers; eta(3)/3). */
Test(jobrate, identical_co_runners_keep_the_peers_rule)
{
    fix f;
    wl_profile p;
    jobrate_profile jp;
    rec_ctx rec;
    one_profile(&f, "same", 1.0, &p, &jp, &rec);
    const char *names[3] = {"same", "same", "same"};
    world *w = run_shared(&f, CLUSTER_SHARE_TIMESLICE, &rec, names, 3);
    partition_cfg pc;
    partition_cfg_init(&pc, f.gpu);
    speed_result alone, three;
    predict_unit_time(&p, 1, &pc, &f.m, &alone);
    pc.sharing = SHARE_TIMESLICE;
    pc.peers = 3;
    predict_unit_time(&p, 1, &pc, &f.m, &three);
    for (int j = 0; j < 3; j++) {
        cr_assert_eq(rec.rate[j], alone.unit_time_s / three.unit_time_s);
    }
    world_destroy(w);

    const char *none[3] = {NULL, NULL, NULL};
    w = run_shared(&f, CLUSTER_SHARE_TIMESLICE, &rec, none, 3);
    for (int j = 0; j < 3; j++) {
        cr_assert_eq(rec.rate[j], speed_eta(f.gpu, &f.m, 0, 3) / 3);
    }
    world_destroy(w);
    arena_destroy(f.a);
}

/* Jobs without a profile on a time-sliced GPU whose node was calibrated: eta comes from the
 * calibration (here a made-up measured eta(2) = 0.9 for the kernel-8ms class, the class the
 * physics file gives a kernel length), not from the default class 0 (0.649, CHEP's OpenCL
 * code): two such jobs each run at 0.9 / 2. */
Test(jobrate, jobs_without_profile_take_the_calibrated_eta)
{
    fix f;
    fix_init(&f);
    int cls = phys_ts_class_index(&f.m, "kernel-8ms");
    cr_assert_geq(cls, 1);
    gpu_type g = *f.gpu;
    g.meas.has_eta[cls] = true;
    for (int k = 0; k <= GPU_MEAS_MAX_K; k++) {
        g.meas.eta[cls][k] = k < 2 ? 1.0 : 0.9;
    }
    f.gpu = &g;
    rec_ctx rec = {.rc = {.phys = &f.m, .ts_class = 0}};
    const char *names[2] = {NULL, NULL};
    world *w = run_shared(&f, CLUSTER_SHARE_TIMESLICE, &rec, names, 2);
    cr_assert_float_eq(rec.rate[0], 0.45, 1e-12);
    cr_assert_float_eq(rec.rate[1], 0.45, 1e-12);
    world_destroy(w);
    arena_destroy(f.a);
}

static void place_first(world *w, void *ctx, uint64_t tag)
{
    (void)ctx;
    pol_place(world_decisions(w), 0, &(dev_id){(dev_id)tag}, 1);
    world_settle(w);
}

/* A job asking for any MIG slice states its work on the reference, the largest classic profile
 * (7g.40gb on the A100): placed alone on 3g.20gb its rate is its time per unit alone on 7g.40gb
 * over alone on 3g.20gb (predict_unit_estimate), and jobrate_slice_speed says the same. A job
 * without a profile has no slice speed (0). */
Test(jobrate, an_any_slice_job_runs_at_its_slice_speed_over_the_largest_profile)
{
    fix f;
    fix_init(&f);
    wl_profile p = make_profile(&f, "compute", 1.0, 20e9, 0.5);
    jobrate_profile jp = {.name = "compute", .p = &p, .batch = 1};
    jobrate_ctx rc = {.phys = &f.m, .ts_class = 0, .n_profiles = 1, .profiles = &jp};
    const mig_profile *ref = jobrate_reference(f.gpu), *p3 = NULL;
    cr_assert_str_eq(ref->name, "7g.40gb");
    cluster_gpu_cfg g = {.type = f.gpu, .mig_enabled = true, .n_mig = 2, .reconfigurable = true};
    for (int i = 0; i < f.gpu->n_profiles; i++) {
        p3 = strcmp(f.gpu->profiles[i].name, "3g.20gb") ? p3 : &f.gpu->profiles[i];
    }
    g.mig[0] = g.mig[1] = p3;
    g.mig_start[0] = 0;
    g.mig_start[1] = 4;
    cluster_node_cfg node = {.name = "n0", .n_gpus = 1, .gpus = &g};
    cluster_cfg cc = {.n_nodes = 1, .nodes = &node};
    world_cfg wc = {.cluster = &cc,
                    .policy = pol_find("fifo"),
                    .until = sim_time_from_s(1),
                    .verify_every = 1,
                    .rate = jobrate_rate,
                    .rate_ctx = &rc,
                    .slice_speed = jobrate_slice_speed,
                    .slice_ctx = &rc};
    job_table *t = job_table_create();
    job_spec s = {
        .class_name = "c", .req = {JOB_RES_MIG_ANY, 1, 1}, .work_s = 100, .profile = "compute"};
    job_table_add(t, &s);
    s.profile = NULL;
    job_table_add(t, &s);
    diag *d = diag_create();
    world *w = NULL;
    cr_assert_eq(world_create(&wc, t, d, (src_loc){"x", 1, 1}, &w), 0);
    diag_destroy(d);
    const cluster *c = world_cluster(w);
    dev_id d3 = 0;
    while (!(cluster_device_get(c, d3)->profile == p3 && cluster_device_get(c, d3)->active)) {
        d3++;
    }
    uint32_t client = world_timer_client(w, place_first, NULL);
    world_at(w, sim_time_from_s(0.5), client, d3); /* after the arrival at 0 */
    world_run(w);
    cr_assert_eq(job_table_get(world_jobs(w), 0)->state, JOB_RUNNING);
    partition_cfg pc;
    partition_cfg_init(&pc, f.gpu);
    speed_result on7, on3;
    pc.mig = ref;
    predict_unit_estimate(&p, 1, &pc, &f.m, &on7);
    pc.mig = p3;
    predict_unit_estimate(&p, 1, &pc, &f.m, &on3);
    double want = on7.unit_time_s / on3.unit_time_s;
    cr_assert(want > 0.3 && want < 0.6); /* 3 of 7 compute slices, some host time */
    cr_assert_float_eq(world_job_rate(w, 0), want, 1e-12);
    cr_assert_float_eq(jobrate_slice_speed(&rc, &s, f.gpu, p3), 0.0, 0);
    s.profile = "compute";
    cr_assert_float_eq(jobrate_slice_speed(&rc, &s, f.gpu, p3), want, 1e-12);
    world_destroy(w);
    arena_destroy(f.a);
}

/* (8) One pipeline: with one job of a compute-heavy profile and two of a memory-heavy one on one
 * GPU, each job's rate is its time per unit alone on what it asked for divided by
 * predict_unit_estimate's time on a hand-built partition_cfg (its own class as peers, the other
 * as one co-runner with with_n clients), under time-slicing and under MPS (4 replicas: every
 * client capped at 25 %). Under time-slicing (phases alternate: the exact product form) a
 * co-runner with with_n = 2 predicts what two entries of it do. */
static void mixed_rates_follow_the_prediction(cluster_sharing mode)
{
    fix f;
    wl_profile pa, pb;
    jobrate_profile jps[2];
    rec_ctx rec;
    two_profiles(&f, &pa, &pb, jps, &rec);
    const char *names[3] = {"compute", "memory", "memory"};
    world *w = run_shared(&f, mode, &rec, names, 3);

    const wl_profile *self[2] = {&pa, &pb}, *other[2] = {&pb, &pa};
    const int own[2] = {1, 2};
    for (int i = 0; i < 2; i++) {
        partition_cfg pc;
        partition_cfg_init(&pc, f.gpu);
        if (mode == CLUSTER_SHARE_MPS) {
            pc.sharing = SHARE_MPS;
            pc.mps_percent = 25;
        }
        speed_result alone, now;
        predict_unit_estimate(self[i], 1, &pc, &f.m, &alone);
        pc.sharing = mode == CLUSTER_SHARE_MPS ? SHARE_MPS : SHARE_TIMESLICE;
        pc.peers = own[i];
        pc.n_with = 1;
        pc.with[0] = other[i];
        pc.with_batch[0] = 1;
        pc.with_n[0] = 3 - own[i];
        predict_unit_estimate(self[i], 1, &pc, &f.m, &now);
        cr_assert(alone.outcome == SPEED_OK && now.outcome == SPEED_OK);
        double want = alone.unit_time_s / now.unit_time_s;
        cr_assert_eq(rec.rate[i], want, "job %d: rate %.17g, prediction %.17g", i, rec.rate[i],
                     want);
        cr_assert(want > 0 && want < 1);
        if (mode == CLUSTER_SHARE_TIMESLICE && pc.with_n[0] == 2) {
            speed_result two;
            pc.n_with = 2;
            pc.with[1] = other[i];
            pc.with_batch[1] = 1;
            pc.with_n[0] = pc.with_n[1] = 1;
            predict_unit_estimate(self[i], 1, &pc, &f.m, &two);
            cr_assert_float_eq(two.unit_time_s, now.unit_time_s, 1e-9 * now.unit_time_s);
        }
    }
    world_destroy(w);
    arena_destroy(f.a);
}

Test(jobrate, mixed_time_slice_rates_are_the_predictions)
{
    mixed_rates_follow_the_prediction(CLUSTER_SHARE_TIMESLICE);
}

Test(jobrate, mixed_mps_rates_are_the_predictions)
{
    mixed_rates_follow_the_prediction(CLUSTER_SHARE_MPS);
}

/* ---- fractional GPUs (openb's gpu_milli) ---- */

/* Rate recorder for the fractional tests: the last rate each job got at t = 0, i.e. with every
 * pod (all arrive at 0) on its GPU. */
typedef struct frac_rec {
    jobrate_ctx rc;
    double rate[8];
} frac_rec;

static double frac_rate_rec(void *ctx, const world *w, job_id j)
{
    frac_rec *r = ctx;
    double v = jobrate_rate(&r->rc, w, j);
    if (j < 8 && world_now(w) == 0) {
        r->rate[j] = v;
    }
    return v;
}

/* One node with n_gpus (1 or 2) whole A100s (no sharing rule, MIG off: shareable), policy
 * bestfit, running the n_jobs job specs (all arriving at t = 0); returns the world after the
 * run. */
static world *run_specs(const fix *f, frac_rec *rec, uint32_t n_gpus, const job_spec *specs,
                        uint32_t n_jobs)
{
    cluster_gpu_cfg g[2] = {{.type = f->gpu}, {.type = f->gpu}};
    cluster_node_cfg node = {.name = "n0", .n_gpus = n_gpus, .gpus = g};
    job_table *t = job_table_create();
    for (uint32_t i = 0; i < n_jobs; i++) {
        job_table_add(t, &specs[i]);
    }
    for (int i = 0; i < 8; i++) {
        rec->rate[i] = -1;
    }
    world *w = run_world(&node, "bestfit", frac_rate_rec, rec, t);
    cr_assert_eq(world_get_totals(w).n_rejected, 0);
    return w;
}

/* run_specs with pods of gpu_milli milli[i] and profile names[i] (NULL: none), 100 s of work
 * each (solo on the GPU). */
static world *run_frac(const fix *f, frac_rec *rec, uint32_t n_gpus, const uint32_t *milli,
                       const char **names, uint32_t n_jobs)
{
    job_spec specs[8];
    cr_assert(n_jobs <= 8);
    for (uint32_t i = 0; i < n_jobs; i++) {
        specs[i] = (job_spec){.class_name = "c",
                              .req = {"nvidia.com/gpu", 1, 1},
                              .work_s = 100,
                              .profile = names[i],
                              .pod = {.gpu_milli = milli[i]}};
    }
    return run_specs(f, rec, n_gpus, specs, n_jobs);
}

/* Issue 20 item 3, by hand: two GPU-bound pods of 500 milli on one GPU are two time-sliced
 * contexts with equal guaranteed shares, so each runs at eta(2)/2 of solo (eta of the default
 * time-slice class: the node has no calibration); 100 s of work ends at 200 / eta(2). */
Test(jobrate, two_half_gpu_pods_each_run_at_half_of_eta2)
{
    fix f;
    fix_init(&f);
    frac_rec rec = {.rc = {.phys = &f.m, .ts_class = 0}};
    const uint32_t milli[2] = {500, 500};
    const char *names[2] = {NULL, NULL};
    world *w = run_frac(&f, &rec, 1, milli, names, 2);
    double eta2 = speed_eta(f.gpu, &f.m, 0, 2);
    cr_assert(eta2 > 0.5 && eta2 < 1, "eta(2) = %g", eta2);
    for (job_id j = 0; j < 2; j++) {
        cr_assert_float_eq(rec.rate[j], eta2 / 2, 1e-12, "pod %u: %.17g", j, rec.rate[j]);
        cr_assert_float_eq(end_s(w, j), 200 / eta2, 1e-6);
    }
    world_destroy(w);
    arena_destroy(f.a);
}

/* A GPU-bound pod of 300 milli beside a 700-milli pod that spends 4/5 of its solo time on the
 * host: the GPU is shared in proportion to the shares of the contexts that want it, and what the
 * host-heavy pod leaves idle goes to the other (work-conserving), so the 300-milli pod gets far
 * more than 300 milli of the GPU's time. By hand (the mean field of model/physics/share_ts.h): the
 * host-heavy pod (H = 4G, weight 0.7) always finds the GPU-bound one there, so its GPU phase
 * stretches by S0 = (0.7 + 0.3) / (0.7 eta(2)) and it wants the GPU b0 = G S0 / (H + G S0) of the
 * time; the GPU-bound pod meets it that often: S1 = (0.3 + 0.7 b0) / (0.3 eta(1 + b0)), eta
 * linear between whole n. Rates: (H + G) / (H + G S0) and 1 / S1. */
Test(jobrate, a_300_milli_pod_beside_a_host_heavy_one_gets_more_than_300)
{
    fix f;
    wl_profile p;
    jobrate_profile jp;
    rec_ctx unused;
    one_profile(&f, "hosty", 4.0, &p, &jp, &unused);
    frac_rec rec = {.rc = unused.rc};
    const uint32_t milli[2] = {700, 300};
    const char *names[2] = {"hosty", NULL};
    world *w = run_frac(&f, &rec, 1, milli, names, 2);
    partition_cfg pc;
    partition_cfg_init(&pc, f.gpu);
    speed_result alone;
    predict_unit_time(&p, 1, &pc, &f.m, &alone);
    double h = alone.iter_host_s, g = alone.iter_gpu_s;
    cr_assert_float_eq(h, 4 * g, 1e-12 * h);
    double eta2 = speed_eta(f.gpu, &f.m, 0, 2);
    double s0 = 1.0 / (0.7 * eta2), b0 = g * s0 / (h + g * s0);
    double eta_b = 1.0 + (eta2 - 1.0) * b0; /* eta(1 + b0), linear between eta(1) and eta(2) */
    double s1 = (0.3 + 0.7 * b0) / (0.3 * eta_b);
    double r0 = (h + g) / (h + g * s0), r1 = 1.0 / s1;
    cr_assert_float_eq(rec.rate[0], r0, 1e-9, "host-heavy pod: %.17g, by hand %.17g", rec.rate[0],
                       r0);
    cr_assert_float_eq(rec.rate[1], r1, 1e-9, "300-milli pod: %.17g, by hand %.17g", rec.rate[1],
                       r1);
    cr_assert_gt(rec.rate[1], 0.3);
    cr_assert_gt(rec.rate[1], eta2 * 0.3); /* and more than its guaranteed share of eta(2) */
    world_destroy(w);
    arena_destroy(f.a);
}

/* The five pods of issue 20 (GPU-bound, 100 s of solo work each): 500 + 500 milli on one GPU
 * and 3 x 300 on another (bestfit packs them so). They no longer finish in their solo time:
 * 200 / eta(2) and 300 / eta(3). */
Test(jobrate, five_fractional_pods_no_longer_finish_in_solo_time)
{
    fix f;
    fix_init(&f);
    frac_rec rec = {.rc = {.phys = &f.m, .ts_class = 0}};
    const uint32_t milli[5] = {500, 500, 300, 300, 300};
    const char *names[5] = {NULL, NULL, NULL, NULL, NULL};
    world *w = run_frac(&f, &rec, 2, milli, names, 5);
    const job_table *jt = world_jobs(w);
    dev_id d0 = job_table_get(jt, 0)->units[0], d2 = job_table_get(jt, 2)->units[0];
    cr_assert_neq(d0, d2);
    cr_assert_eq(job_table_get(jt, 1)->units[0], d0);
    cr_assert_eq(job_table_get(jt, 3)->units[0], d2);
    cr_assert_eq(job_table_get(jt, 4)->units[0], d2);
    double eta2 = speed_eta(f.gpu, &f.m, 0, 2), eta3 = speed_eta(f.gpu, &f.m, 0, 3);
    for (job_id j = 0; j < 5; j++) {
        double want = j < 2 ? 200 / eta2 : 300 / eta3;
        cr_assert_float_eq(end_s(w, j), want, 1e-6, "pod %u ends at %.6f s", j, end_s(w, j));
        cr_assert_gt(end_s(w, j), 100 * 1.1);
    }
    world_destroy(w);
    arena_destroy(f.a);
}

/* Unequal shares of GPU-bound pods: the closed form eta(n) milli / sum (jobrate.c) is what the
 * prediction's weighted mean field gives for contexts that always want the GPU. */
Test(jobrate, gpu_bound_shares_split_the_gpu_by_their_weights)
{
    fix f;
    fix_init(&f);
    frac_rec rec = {.rc = {.phys = &f.m, .ts_class = 0}};
    const uint32_t milli[3] = {200, 300, 400};
    const char *names[3] = {NULL, NULL, NULL};
    world *w = run_frac(&f, &rec, 1, milli, names, 3);
    double eta3 = speed_eta(f.gpu, &f.m, 0, 3);
    partition_cfg pc;
    partition_cfg_init(&pc, f.gpu);
    pc.sharing = SHARE_TIMESLICE;
    pc.share = 0.2;
    pc.n_with = 2;
    pc.with_share[0] = 0.3;
    pc.with_share[1] = 0.4;
    speed_result r;
    predict_unit_estimate(NULL, 1, &pc, &f.m, &r);
    cr_assert_eq(r.outcome, SPEED_OK, "%s", r.reason);
    for (job_id j = 0; j < 3; j++) {
        cr_assert_float_eq(rec.rate[j], eta3 * milli[j] / 900.0, 1e-12);
    }
    cr_assert_float_eq(1.0 / r.unit_time_s, rec.rate[0], 1e-9);
    world_destroy(w);
    arena_destroy(f.a);
}

/* A pod whose memory need exceeds its share of the GPU's memory fails with OOM at start; one
 * that fits its slice runs. */
Test(jobrate, a_pod_larger_than_its_memory_slice_fails_oom)
{
    fix f;
    fix_init(&f);
    frac_rec rec = {.rc = {.phys = &f.m, .ts_class = 0}};
    uint64_t slice = f.gpu->mem_bytes / 4; /* 250 milli */
    job_spec s[2] = {{.class_name = "c",
                      .req = {"nvidia.com/gpu", 1, 1},
                      .work_s = 100,
                      .mem_bytes = slice + 1,
                      .pod = {.gpu_milli = 250}}};
    s[1] = s[0];
    s[1].mem_bytes = slice;
    world *w = run_specs(&f, &rec, 1, s, 2);
    cr_assert_eq(job_table_get(world_jobs(w), 0)->state, JOB_FAILED_OOM);
    cr_assert_eq(job_table_get(world_jobs(w), 1)->state, JOB_DONE);
    world_destroy(w);
    arena_destroy(f.a);
}

/* jobrate_alone, recorded for each job while it runs (-1 before). */
typedef struct alone_ctx {
    jobrate_ctx rc;
    int alone[5];
} alone_ctx;

static double alone_rate(void *ctx, const world *w, job_id j)
{
    alone_ctx *a = ctx;
    a->alone[j] = jobrate_alone(&a->rc, w, j);
    return jobrate_rate(&a->rc, w, j);
}

/* One node: an A100 in MIG mode with three 2g.10gb instances (two GPU-bound jobs and one of a
 * host-heavy profile, whose rate counts the busy instances sharing the power budget) and an
 * A100 time-sliced 4 ways (two GPU-bound jobs). Only the GPU-bound jobs on MIG instances stand
 * alone, and a world told so (world_cfg.rate_alone, which skips re-rating them) ends every job
 * at the same nanosecond as one that re-rates them all. */
Test(jobrate, only_gpu_bound_jobs_on_unshared_devices_stand_alone)
{
    fix f;
    fix_init(&f);
    wl_profile p = make_profile(&f, "hosty", 1.0, 20e9, 3.0);
    jobrate_profile jp = {.name = "hosty", .p = &p, .batch = 1};
    const mig_profile *p2 = NULL;
    for (int i = 0; i < f.gpu->n_profiles; i++) {
        p2 = strcmp(f.gpu->profiles[i].name, "2g.10gb") ? p2 : &f.gpu->profiles[i];
    }
    cr_assert_not_null(p2);
    cluster_share_rule rule = {.resource = "nvidia.com/gpu", .replicas = 4};
    cluster_gpu_cfg g[2] = {{.type = f.gpu, .mig_enabled = true, .n_mig = 3},
                            {.type = f.gpu,
                             .sharing = CLUSTER_SHARE_TIMESLICE,
                             .n_rules = 1,
                             .rules = &rule}};
    for (int i = 0; i < 3; i++) {
        g[0].mig[i] = p2;
        g[0].mig_start[i] = 2 * i;
    }
    cluster_node_cfg node = {.name = "n0", .n_gpus = 2, .gpus = g};
    const char *res[5] = {"nvidia.com/mig-2g.10gb", "nvidia.com/mig-2g.10gb",
                          "nvidia.com/mig-2g.10gb", "nvidia.com/gpu", "nvidia.com/gpu"};
    const char *prof[5] = {NULL, "hosty", NULL, NULL, NULL};
    const double work[5] = {100, 250, 400, 150, 300};
    sim_time end[2][5];
    for (int run = 0; run < 2; run++) {
        alone_ctx a = {.rc = {.phys = &f.m, .ts_class = 0, .n_profiles = 1, .profiles = &jp}};
        job_table *t = job_table_create();
        for (int i = 0; i < 5; i++) {
            a.alone[i] = -1;
            job_spec s = {.class_name = "c",
                          .req = {res[i], 1, 1},
                          .submit = sim_time_from_s(i),
                          .work_s = work[i],
                          .profile = prof[i]};
            job_table_add(t, &s);
        }
        cluster_cfg cc = {.n_nodes = 1, .nodes = &node};
        world_cfg wc = {.cluster = &cc,
                        .policy = pol_find("fifo"),
                        .until = SIM_TIME_MAX,
                        .verify_every = 1,
                        .rate = alone_rate,
                        .rate_alone = run ? jobrate_alone : NULL,
                        .rate_ctx = &a};
        diag *d = diag_create();
        world *w = NULL;
        cr_assert_eq(world_create(&wc, t, d, (src_loc){"x", 1, 1}, &w), 0);
        diag_destroy(d);
        world_run(w);
        const int want[5] = {1, 0, 1, 0, 0};
        for (job_id j = 0; j < 5; j++) {
            cr_assert_eq(a.alone[j], want[j], "run %d job %u: alone %d", run, j, a.alone[j]);
            cr_assert_eq(job_table_get(world_jobs(w), j)->state, JOB_DONE);
            end[run][j] = job_table_get(world_jobs(w), j)->end;
        }
        /* the profiled job shared the power budget and the time-sliced ones the GPU: slower
         * than alone; the GPU-bound MIG jobs took exactly their work */
        cr_assert_eq(end[run][0], sim_time_from_s(100));
        cr_assert_eq(end[run][2], sim_time_from_s(402));
        cr_assert_gt(end[run][3], sim_time_from_s(153));
        world_destroy(w);
    }
    for (int j = 0; j < 5; j++) {
        cr_assert_eq(end[0][j], end[1][j], "job %d: %lld vs %lld ns", j, (long long)end[0][j],
                     (long long)end[1][j]);
    }
    arena_destroy(f.a);
}
