/* Unit tests for experiments/obs (observations, queries, profiles, priors) and its bad-input
 * corpus tests/bad_input/obs/: each file's first lines "# expect: MESSAGE" give the exact
 * messages in order; the file name's prefix (obs_, query_, profile_, priors_) picks the loader.
 * Tests run from the repository root. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "experiments/catalog_load.h"
#include "experiments/embedded.h"
#include "experiments/obs.h"
#include "experiments/physics_load.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "tests/unit/sh.h"
#include "tests/unit/diagfx.h"

/* The two examples of DESIGN.md §8, verbatim. */
static const char *contract_obs =
    "workload: my-transformer           # a name\n"
    "gpu: A100-SXM4-40GB                 # a catalog name\n"
    "unit: sample                        # what `work` counts\n"
    "observations:\n"
    "  - config: {partition: full}       # whole GPU, MIG disabled\n"
    "    batch: 4\n"
    "    work: 20000                     # units processed\n"
    "    time_s: 812.0                   # measured wall time for that work\n"
    "  - config: {partition: 1g.5gb}     # a MIG instance of that profile\n"
    "    batch: 4\n"
    "    throughput: 9.5                 # units/s, instead of work + time_s\n"
    "  - config: {partition: full, sharing: timeslice, peers: 4}   # 4 identical processes\n"
    "    batch: 4\n"
    "    throughput: 7.1                 # per process\n"
    "  - config: {partition: 3g.20gb, per_gpu: 2, workers: 16, topology: [4, 4, 4, 4]}  # DDP\n"
    "    batch: 64\n"
    "    time_s: 300.0\n"
    "  - config: {partition: 1g.5gb, per_gpu: 7, workers: 56}\n"
    "    batch: 32\n"
    "    outcome: oom                    # it failed: out of memory\n";

static const char *contract_queries =
    "gpu: A100-SXM4-40GB\n"
    "queries:\n"
    "  - {config: {partition: 7g.40gb}, batch: 4, work: 20000}\n"
    "  - {config: {partition: 1g.5gb, mig_busy: 7}, batch: 4, work: 20000}   # 7 busy\n";

typedef struct fixture {
    arena *a;
    diag *d;
    gpu_catalog cat;
    phys_params phys;
} fixture;

static void fx_init(fixture *f)
{
    f->a = arena_create();
    f->d = diag_create();
    cr_assert_eq(catalog_load_default(f->a, &f->cat, f->d), 0);
    cr_assert_eq(physics_load_default(f->d, &f->phys), 0);
}

static void fx_fini(fixture *f)
{
    diag_destroy(f->d);
    arena_destroy(f->a);
}

/* The example of DESIGN.md §8 loads as written, every key of it. Its DDP row gives time_s
 * without work: that is the time of one unit. */
Test(obs, contract_observations_load_with_every_key)
{
    fixture fx;
    fx_init(&fx);
    obs_file *f = NULL;
    int rc = obs_load_observations("obs.yaml", contract_obs, strlen(contract_obs), &fx.cat, fx.a,
                                   fx.d, &f);
    cr_assert_eq(rc, 0, "%s", diag_error_count(fx.d) ? fx_diag_message(fx.d, 0) : "");
    cr_assert_str_eq(f->workload, "my-transformer");
    cr_assert_str_eq(f->gpu->name, "A100-SXM4-40GB");
    cr_assert(f->unit_is_sample);
    cr_assert_eq(f->n, 5);
    cr_assert_null(f->obs[0].mig);
    cr_assert_float_eq(f->obs[0].unit_time_s, 812.0 / 20000, 1e-15);
    cr_assert_str_eq(f->obs[1].mig->name, "1g.5gb");
    cr_assert_float_eq(f->obs[1].unit_time_s, 1 / 9.5, 1e-15);
    cr_assert_eq(f->obs[2].config.sharing, SHARE_TIMESLICE);
    cr_assert_eq(f->obs[2].config.peers, 4);
    cr_assert_eq(f->obs[1].config.peers, 1);
    cr_assert(!obs_config_is_ddp(&f->obs[2].config));
    cr_assert(obs_config_is_ddp(&f->obs[3].config));
    cr_assert_eq(f->obs[3].config.n_topology, 4);
    cr_assert_eq(f->obs[3].config.topology[3], 4);
    cr_assert_eq(f->obs[3].config.workers, 16);
    cr_assert_float_eq(f->obs[3].unit_time_s, 300.0, 0);
    cr_assert_eq(f->obs[4].outcome, OBS_OUTCOME_OOM);
    cr_assert_eq(f->obs[4].config.per_gpu, 7);
    cr_assert_eq(f->obs[4].batch, 32);
    cr_assert_lt(f->obs[0].gpu_util, 0);
    fx_fini(&fx);
}

Test(obs, contract_queries_load)
{
    fixture fx;
    fx_init(&fx);
    obs_queries *q = NULL;
    int rc = obs_load_queries("q.yaml", contract_queries, strlen(contract_queries), &fx.cat, fx.a,
                              fx.d, &q);
    cr_assert_eq(rc, 0);
    cr_assert_eq(q->n, 2);
    cr_assert_str_eq(q->q[0].config.partition, "7g.40gb");
    cr_assert_eq(q->q[0].batch, 4);
    cr_assert_float_eq(q->q[0].work, 20000, 0);
    cr_assert_eq(q->q[1].config.mig_busy, 7);
    cr_assert_eq(q->q[1].at.line, 4);
    fx_fini(&fx);
}

Test(obs, unit_names)
{
    cr_assert(obs_unit_counts_samples("sample"));
    cr_assert(obs_unit_counts_samples("particle"));
    cr_assert(!obs_unit_counts_samples("iteration"));
    cr_assert(!obs_unit_counts_samples("steps"));
}

/* Read the "# expect: " lines at the top of a corpus file. */
static int read_expect(const char *path, char msgs[][1024], int max)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s: %s", path, strerror(errno));
    char line[1024];
    int n = 0;
    while (n < max && fgets(line, sizeof line, f) && !strncmp(line, "# expect: ", 10)) {
        line[strcspn(line, "\n")] = '\0';
        snprintf(msgs[n++], 1024, "%s", line + 10);
    }
    fclose(f);
    return n;
}

Test(obs, bad_input_corpus_gives_exact_messages)
{
    const char *dir = "tests/bad_input/obs";
    DIR *dp = opendir(dir);
    cr_assert_not_null(dp, "%s missing (run from the repository root)", dir);
    char names[64][256];
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dp)) && n < 64) {
        if (strstr(de->d_name, ".yaml")) {
            snprintf(names[n++], 256, "%s", de->d_name);
        }
    }
    closedir(dp);
    cr_assert_geq(n, 25);
    for (int i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        char want[8][1024];
        int n_want = read_expect(path, want, 8);
        cr_assert_gt(n_want, 0, "%s has no # expect: line", path);
        fixture fx;
        fx_init(&fx);
        int rc;
        if (!strncmp(names[i], "obs_", 4)) {
            obs_file *f = NULL;
            rc = obs_load_observations(path, NULL, 0, &fx.cat, fx.a, fx.d, &f);
        } else if (!strncmp(names[i], "query_", 6)) {
            obs_queries *q = NULL;
            rc = obs_load_queries(path, NULL, 0, &fx.cat, fx.a, fx.d, &q);
        } else if (!strncmp(names[i], "profile_", 8)) {
            obs_profile *p = NULL;
            rc = obs_load_profile(path, NULL, 0, &fx.phys, fx.a, fx.d, &p);
        } else {
            cr_assert(!strncmp(names[i], "priors_", 7), "%s: unknown prefix", names[i]);
            obs_priors *p = NULL;
            rc = obs_load_priors(path, NULL, 0, fx.a, fx.d, &p);
        }
        cr_assert_eq(rc, SIM_EINPUT, "%s: loader returned %d", path, rc);
        cr_assert_eq(diag_error_count(fx.d), n_want, "%s: %d messages, expected %d; first: %s",
                     path, diag_error_count(fx.d), n_want, fx_diag_message(fx.d, 0));
        for (int k = 0; k < n_want; k++) {
            cr_assert_str_eq(fx_diag_message(fx.d, k), want[k], "%s message %d", path, k);
        }
        fx_fini(&fx);
    }
}

Test(obs, library_observation_files_load)
{
    const char *dir = "workloads/library/obs";
    DIR *dp = opendir(dir);
    cr_assert_not_null(dp);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dp))) {
        if (!strstr(de->d_name, ".yaml")) {
            continue;
        }
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        fixture fx;
        fx_init(&fx);
        obs_file *f = NULL;
        int rc = obs_load_observations(path, NULL, 0, &fx.cat, fx.a, fx.d, &f);
        cr_assert_eq(rc, 0, "%s: %s", path, diag_error_count(fx.d) ? fx_diag_message(fx.d, 0) : "");
        cr_assert_gt(f->n, 1, "%s", path);
        fx_fini(&fx);
        n++;
    }
    closedir(dp);
    cr_assert_geq(n, 4);
}

Test(obs, builtin_priors_have_every_class_and_source)
{
    fixture fx;
    fx_init(&fx);
    const unsigned char *data = NULL;
    size_t len = 0;
    cr_assert(embedded_get("workloads/priors.yaml", &data, &len));
    obs_priors *p = NULL;
    cr_assert_eq(obs_load_priors("workloads/priors.yaml", data, len, fx.a, fx.d, &p), 0);
    const char *want[] = {"generic",
                          "compute-bound-simulation",
                          "cnn-training",
                          "transformer-training",
                          "small-batch-inference",
                          "memory-bound"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const obs_prior_class *c = obs_priors_find(p, want[i]);
        cr_assert_not_null(c, "class %s", want[i]);
        const obs_prior_value *v[] = {&c->host_fraction, &c->mem_fraction, &c->parallel_fraction,
                                      &c->footprint_gib, &c->batch_share};
        for (size_t k = 0; k < 5; k++) {
            cr_assert_gt(strlen(v[k]->src), 8, "%s: a prior without provenance", want[i]);
            cr_assert_gt(v[k]->rel_sd, 0);
        }
        cr_assert_geq(phys_ts_class_index(&fx.phys, c->ts_class), 0, "%s ts_class", want[i]);
    }
    cr_assert_null(obs_priors_find(p, "nope"));
    fx_fini(&fx);
}

/* A profile survives write -> load bit for bit. */
Test(obs, profile_write_load_round_trip)
{
    fixture fx;
    fx_init(&fx);
    obs_profile p;
    memset(&p, 0, sizeof p);
    p.p.name = "rt \"quoted\", name";
    p.p.unit_is_sample = true;
    p.unit = "image";
    p.gpu_name = "A100-SXM4-40GB";
    p.prior_class = "cnn-training";
    p.fitted_on = "somewhere: rows 0-3";
    p.ts_class_name = "long";
    p.ref_batch = 32;
    p.p.host_s_fixed = 0.1234567890123;
    p.p.host_s_per_sample = 1.0 / 3.0;
    p.p.compute_sm_s_fixed[WL_CLASS_TENSOR] = 2.5e-3;
    p.p.compute_sm_s_per_sample[WL_CLASS_TENSOR] = 7.1e-5;
    p.p.mem_footprint_bytes_fixed = 4.5 * 1073741824.0;
    p.p.kernels_per_iter = 861;
    p.p.kernel_busy_frac = 0.8756;
    p.p.gpu_tail_frac = 0.2519;
    p.p.mps_sm_growth = 0.0961;
    p.p.host_overlap = 0.75;
    p.p.grad_bytes = 2.3e8;
    p.p.grad_tensors = 161;
    p.p.buffer_tensors = 322;
    p.p.grad_buckets = 10;
    p.p.backward_frac = 2.0 / 3.0;
    p.p.optimizer_frac = 0.0417;
    for (int i = 0; i < WL_P_COUNT; i++) {
        p.src[i] = OBS_SRC_FIXED;
    }
    p.src[WL_P_HOST_S_FIXED] = OBS_SRC_FIT;
    p.sd[WL_P_HOST_S_FIXED] = 0.001;
    p.src[WL_P_MEM_FOOTPRINT_FIXED] = OBS_SRC_PRIOR;
    p.lo[WL_P_MEM_FOOTPRINT_FIXED] = 1e9;
    p.hi[WL_P_MEM_FOOTPRINT_FIXED] = 1e10;
    p.n_variants = 2;
    p.variants[0] = p.p;
    p.variants[0].host_s_fixed = 0.2;
    p.variants[1] = p.p;
    char dir[] = "/tmp/obs_rt_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128];
    snprintf(path, sizeof path, "%s/p.yaml", dir);
    cr_assert_eq(obs_write_profile(path, &p, "a comment\nsecond line"), 0);
    obs_profile *q = NULL;
    int rc = obs_load_profile(path, NULL, 0, &fx.phys, fx.a, fx.d, &q);
    cr_assert_eq(rc, 0, "%s", diag_error_count(fx.d) ? fx_diag_message(fx.d, 0) : "");
    cr_assert_str_eq(q->p.name, p.p.name);
    cr_assert_str_eq(q->unit, "image");
    cr_assert_str_eq(q->prior_class, "cnn-training");
    cr_assert_eq(q->p.ts_class, phys_ts_class_index(&fx.phys, "long"));
    cr_assert_eq(q->ref_batch, 32);
    cr_assert_eq(q->p.kernels_per_iter, 861);
    cr_assert_eq(q->p.kernel_busy_frac, 0.8756);
    cr_assert_eq(q->p.gpu_tail_frac, 0.2519);
    cr_assert_eq(q->p.mps_sm_growth, 0.0961);
    cr_assert_eq(q->p.host_overlap, 0.75);
    cr_assert_eq(q->p.grad_bytes, 2.3e8);
    cr_assert_eq(q->p.grad_tensors, 161);
    cr_assert_eq(q->p.buffer_tensors, 322);
    cr_assert_eq(q->p.grad_buckets, 10);
    cr_assert_eq(q->p.backward_frac, 2.0 / 3.0);
    cr_assert_eq(q->p.optimizer_frac, 0.0417);
    cr_assert_eq(q->variants[0].grad_buckets, 10);
    for (int i = 0; i < WL_P_COUNT; i++) {
        cr_assert_eq(wl_param_get(&q->p, (wl_param)i), wl_param_get(&p.p, (wl_param)i), "%s",
                     wl_param_name((wl_param)i));
        cr_assert_eq(q->src[i], p.src[i]);
    }
    cr_assert_eq(q->p.compute_sm_s_per_sample[WL_CLASS_TENSOR], 7.1e-5);
    cr_assert_eq(q->sd[WL_P_HOST_S_FIXED], 0.001);
    cr_assert_eq(q->lo[WL_P_MEM_FOOTPRINT_FIXED], 1e9);
    cr_assert_eq(q->hi[WL_P_MEM_FOOTPRINT_FIXED], 1e10);
    cr_assert_eq(q->n_variants, 2);
    cr_assert_eq(q->variants[0].host_s_fixed, 0.2);
    cr_assert_eq(q->variants[0].host_s_per_sample, 1.0 / 3.0);
    cr_assert_eq(q->variants[1].host_s_fixed, p.p.host_s_fixed);
    /* nothing else is left in the directory (no temporary file) */
    DIR *dp = opendir(dir);
    int files = 0;
    struct dirent *de;
    while ((de = readdir(dp))) {
        files += de->d_name[0] != '.';
    }
    closedir(dp);
    cr_assert_eq(files, 1);
    unlink(path);
    rmdir(dir);
    fx_fini(&fx);
}

/* fx initialised and the profile fit-workload wrote to DIR/p.yaml, loaded with fx's parameters
 * (asserted to load). */
static const obs_profile *load_fitted_profile(fixture *fx, const char *dir)
{
    fx_init(fx);
    char path[128];
    snprintf(path, sizeof path, "%s/p.yaml", dir);
    obs_profile *q = NULL;
    int rc = obs_load_profile(path, NULL, 0, &fx->phys, fx->a, fx->d, &q);
    cr_assert_eq(rc, 0, "%s", diag_error_count(fx->d) ? fx_diag_message(fx->d, 0) : "");
    return q;
}

/* Issue 21: DDP's step terms at the top of an observations file reach the profile fit-workload
 * writes (and its DDP residuals), and that profile loads back with the same values. */
Test(obs, fit_workload_carries_ddp_terms_into_the_profile)
{
    char dir[64], cmd[2048], out[8192];
    cr_assert(test_tmpdir(dir, sizeof dir, "ddpterms"));
    snprintf(cmd, sizeof cmd,
             "printf 'workload: t\\ngpu: A100-PCIE-40GB\\ngrad_bytes: 8.0e6\\ngrad_tensors: 40\\n"
             "buffer_tensors: 6\\ngrad_buckets: 2\\nbackward_frac: 0.6\\noptimizer_frac: 0.05\\n"
             "step_cv: 0.12\\n"
             "observations:\\n  - {config: {partition: full}, batch: 64, throughput: 160, "
             "gpu_util: 0.9}\\n  - {config: {partition: full, workers: 4, topology: [4]}, "
             "batch: 64, throughput: 600}\\n' > %s/o.yaml && "
             "./slicesim fit-workload %s/o.yaml -o %s/p.yaml 2>&1",
             dir, dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    fixture fx;
    const obs_profile *q = load_fitted_profile(&fx, dir);
    cr_assert_eq(q->p.grad_bytes, 8.0e6);
    cr_assert_eq(q->p.grad_tensors, 40);
    cr_assert_eq(q->p.buffer_tensors, 6);
    cr_assert_eq(q->p.grad_buckets, 2);
    cr_assert_eq(q->p.backward_frac, 0.6);
    cr_assert_eq(q->p.optimizer_frac, 0.05);
    cr_assert_eq(q->p.step_cv, 0.12);
    for (int v = 0; v < q->n_variants; v++) {
        cr_assert_eq(q->variants[v].grad_buckets, 2);
    }
    fx_fini(&fx);
    cr_assert(test_rm_rf(dir));
}

/* Issue 25: `mps_sm_growth` at the top of an observations file (a of 1 + a ln k, measured on
 * two MPS clients: model/physics/share_mps.h) reaches the profile fit-workload writes; outside
 * [0, 1] it is an error at its line and column, exit 2, and no profile is written. */
Test(obs, fit_workload_carries_mps_sm_growth_into_the_profile)
{
    char dir[64], cmd[2048], out[8192];
    cr_assert(test_tmpdir(dir, sizeof dir, "smgrowth"));
    snprintf(cmd, sizeof cmd,
             "printf 'workload: t\ngpu: H200-SXM5-141GB\nmps_sm_growth: 0.0961\n"
             "observations:\n  - {config: {partition: full}, batch: 64, throughput: 160, "
             "gpu_util: 0.9}\n' > %s/o.yaml && "
             "./slicesim fit-workload %s/o.yaml -o %s/p.yaml 2>&1",
             dir, dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    fixture fx;
    const obs_profile *q = load_fitted_profile(&fx, dir);
    cr_assert_eq(q->p.mps_sm_growth, 0.0961);
    fx_fini(&fx);
    snprintf(cmd, sizeof cmd,
             "rm %s/p.yaml && sed -i 's/0.0961/1.5/' %s/o.yaml && "
             "./slicesim fit-workload %s/o.yaml -o %s/p.yaml 2>&1; echo rc=$?; test ! -e %s/p.yaml",
             dir, dir, dir, dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "o.yaml:3:16: error: mps_sm_growth:") && strstr(out, "rc=2"), "%s", out);
    cr_assert(test_rm_rf(dir));
}

/* Issue 25: a solo observation with kernel_busy and gpu_util gives the profile's launch-gap share
 * (kernel_busy_frac = kernel_busy / gpu_util, model/physics/share_mps.h), as validate's coloc
 * tables take it from their census; a time-only run states none (phi 1, no launch gaps). */
Test(obs, fit_workload_writes_the_kernel_busy_share)
{
    char dir[64], cmd[1024], out[8192];
    cr_assert(test_tmpdir(dir, sizeof dir, "kbfrac"));
    snprintf(cmd, sizeof cmd,
             "./slicesim fit-workload experiments/examples/byom-h100/resnet50-train.yaml "
             "-o %s/p.yaml 2>&1 && ./slicesim fit-workload "
             "experiments/examples/byom-h100/resnet50-train-time-only.yaml -o %s/t.yaml 2>&1",
             dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    fixture fx;
    fx_init(&fx);
    char path[128];
    obs_profile *q = NULL, *t = NULL;
    snprintf(path, sizeof path, "%s/p.yaml", dir);
    cr_assert_eq(obs_load_profile(path, NULL, 0, &fx.phys, fx.a, fx.d, &q), 0);
    snprintf(path, sizeof path, "%s/t.yaml", dir);
    cr_assert_eq(obs_load_profile(path, NULL, 0, &fx.phys, fx.a, fx.d, &t), 0);
    /* the example's solo: kernel_busy 0.3274, gpu_util 0.3739 */
    cr_assert_float_eq(q->p.kernel_busy_frac, 0.3274 / 0.3739, 1e-12);
    cr_assert_eq(t->p.kernel_busy_frac, 0);
    fx_fini(&fx);
    cr_assert(test_rm_rf(dir));
}

Test(obs, profile_write_error_leaves_nothing)
{
    obs_profile p;
    memset(&p, 0, sizeof p);
    p.p.name = "x";
    int rc = obs_write_profile("/nonexistent-dir-obs/p.yaml", &p, NULL);
    cr_assert_eq(rc, SIM_EIO);
    cr_assert_eq(errno, ENOENT);
    struct stat st;
    cr_assert_neq(stat("/nonexistent-dir-obs/p.yaml", &st), 0);
}

Test(obs, missing_file_is_an_environment_error)
{
    fixture fx;
    fx_init(&fx);
    obs_file *f = NULL;
    int rc = obs_load_observations("/nonexistent-obs.yaml", NULL, 0, &fx.cat, fx.a, fx.d, &f);
    cr_assert_eq(rc, SIM_ENOENT);
    cr_assert_eq(diag_error_count(fx.d), 0);
    cr_assert_null(f);
    fx_fini(&fx);
}

/* Every library profile loads, names its source, and was fitted on a file of obs/. */
Test(obs, library_profiles_load_with_provenance)
{
    const char *dir = "workloads/library";
    DIR *dp = opendir(dir);
    cr_assert_not_null(dp);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(dp))) {
        if (!strstr(de->d_name, ".yaml")) {
            continue;
        }
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
        fixture fx;
        fx_init(&fx);
        obs_profile *p = NULL;
        int rc = obs_load_profile(path, NULL, 0, &fx.phys, fx.a, fx.d, &p);
        cr_assert_eq(rc, 0, "%s: %s", path, diag_error_count(fx.d) ? fx_diag_message(fx.d, 0) : "");
        cr_assert_gt(strlen(p->p.provenance), 20, "%s", path);
        cr_assert_not_null(strstr(p->fitted_on, "workloads/library/obs/"), "%s", path);
        cr_assert_gt(wl_compute_total_sm_s(&p->p, p->ref_batch), 0, "%s", path);
        cr_assert_not_null(gpu_catalog_find(&fx.cat, p->gpu_name), "%s", path);
        fx_fini(&fx);
        n++;
    }
    closedir(dp);
    cr_assert_geq(n, 6);
}

/* The "bring your own model" example files load (experiments/examples/byom/). */
Test(obs, byom_example_files_load)
{
    fixture fx;
    fx_init(&fx);
    obs_file *f = NULL;
    obs_queries *q = NULL;
    cr_assert_eq(obs_load_observations("experiments/examples/byom/observations.yaml", NULL, 0,
                                       &fx.cat, fx.a, fx.d, &f),
                 0);
    cr_assert_eq(f->n, 2);
    cr_assert_eq(obs_load_queries("experiments/examples/byom/queries.yaml", NULL, 0, &fx.cat, fx.a,
                                  fx.d, &q),
                 0);
    cr_assert_eq(q->n, 9);
    cr_assert_str_eq(q->q[6].config.with[0], "cern-finetune");
    fx_fini(&fx);
}

/* The H100 example's solo runs carry the measurements of its calib/coloc row: the loop's
 * overlap, the census and the GPM fractions (experiments/validation/data/h100-coloc.csv,
 * cnn_train/solo as calib/coloc/table.py averages it from run3's exclusive runs: 0.3739, 0.3274,
 * 861, 0.2468, 0.1179); the time-only file carries none. */
Test(obs, byom_h100_example_files_load_with_measurements)
{
    fixture fx;
    fx_init(&fx);
    const char *dir = "experiments/examples/byom-h100/";
    const char *files[] = {"resnet50-train.yaml", "resnet50-train-time-only.yaml", "stream.yaml"};
    obs_file *f[3];
    for (int i = 0; i < 3; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s%s", dir, files[i]);
        cr_assert_eq(obs_load_observations(path, NULL, 0, &fx.cat, fx.a, fx.d, &f[i]), 0, "%s",
                     path);
        cr_assert_eq(f[i]->host_overlap, 1.0);
    }
    const obs_entry *e = &f[0]->obs[0];
    cr_assert_eq(f[0]->measured, 0);
    cr_assert_eq(e->gpu_util, 0.3739);
    cr_assert_eq(e->kernel_busy, 0.3274);
    cr_assert_eq(e->kernels_per_iter, 861);
    cr_assert_eq(e->sm_activity, 0.2468);
    cr_assert_eq(e->dram_util, 0.1179);
    cr_assert_eq(f[1]->measured, -1);
    cr_assert_eq(f[2]->measured, 0);
    obs_queries *q = NULL;
    cr_assert_eq(obs_load_queries("experiments/examples/byom-h100/queries.yaml", NULL, 0, &fx.cat,
                                  fx.a, fx.d, &q),
                 0);
    cr_assert_eq(q->n, 7);
    cr_assert_str_eq(q->q[6].config.with[0], "stream");
    fx_fini(&fx);
}

/* Issue 22: `fit-workload` on an H200 failed with only "the fit rejected the observations
 * (invalid input)" (no sms_total in the catalog). The H200 now has its 132 SMs: the byom-h100
 * time-only run, relabelled H200, fits and is written; a GPU whose catalog entry lacks a figure
 * the fit needs is refused naming it (tests/bad_input/obs/obs_profile_no_sms.yaml). */
Test(obs, fit_workload_on_an_h200_fits)
{
    char dir[64], cmd[1024], out[8192];
    cr_assert(test_tmpdir(dir, sizeof dir, "h200fit"));
    snprintf(cmd, sizeof cmd,
             "sed 's/^gpu: H100-SXM5-80GB/gpu: H200-SXM5-141GB/' "
             "experiments/examples/byom-h100/resnet50-train-time-only.yaml > %s/o.yaml && "
             "grep -c '^gpu: H200-SXM5-141GB' %s/o.yaml && "
             "./slicesim fit-workload %s/o.yaml -o %s/p.yaml 2>&1 && test -s %s/p.yaml",
             dir, dir, dir, dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_not_null(strstr(out, "workload resnet50-train on H200-SXM5-141GB"), "%s", out);
    cr_assert_null(strstr(out, "invalid input"), "%s", out);
    cr_assert(test_rm_rf(dir));
}

/* Issue 22: `fit-workload` with 1 000 observations ran for a long time silently. A fit estimated
 * at a second or more says so on stderr before it starts (170 observations x 6 ms); a small one
 * says nothing. The observations: byom's two runs repeated. */
Test(obs, a_long_fit_says_so_before_it_starts, .timeout = 120)
{
    char dir[64], cmd[1024], out[8192];
    cr_assert(test_tmpdir(dir, sizeof dir, "longfit"));
    snprintf(cmd, sizeof cmd,
             "f=experiments/examples/byom/observations.yaml; "
             "{ sed '/^observations:/q' $f; for i in $(seq 85); do "
             "sed '1,/^observations:/d' $f; done; } > %s/o.yaml && "
             "./slicesim fit-workload %s/o.yaml -o %s/p.yaml 2>&1 >/dev/null | head -1",
             dir, dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_str_eq(out, "slicesim fit-workload: 170 observations: the fit takes about 1 s of "
                          "CPU (up to 6 ms per observation, measured)\n");
    snprintf(cmd, sizeof cmd,
             "./slicesim fit-workload experiments/examples/byom/observations.yaml -o %s/q.yaml "
             "2>&1 >/dev/null",
             dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_str_eq(out, "");
    cr_assert(test_rm_rf(dir));
}
