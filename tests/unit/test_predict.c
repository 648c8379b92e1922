/* Tests of fit-workload and predict (experiments/obs_fit.c, tools/cmd_fit_workload.c,
 * tools/cmd_predict.c): synthetic observations generated from a known profile with the model
 * itself are fitted, written, read back and predicted on configurations that were not observed.
 * Tolerances: with five noise-free partitions H and C come back within 2 %, M (a fifth of the
 * time) within two of its standard errors, and predictions within 1 %; with two observations the
 * pinned parameters come back within 5 % and the truth lies inside time_s_lo..time_s_hi. The CLI
 * tests run ./slicesim from the repository root. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments/catalog_load.h"
#include "experiments/comm_load.h"
#include "experiments/embedded.h"
#include "experiments/obs.h"
#include "experiments/physics_load.h"
#include "model/physics/predict.h"
#include "model/fit/wmeas.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "tests/unit/diagfx.h"

#define GPU "A100-SXM4-40GB"

typedef struct fixture {
    arena *a;
    diag *d;
    gpu_catalog cat;
    phys_params phys;
    const gpu_type *gpu;
    obs_priors *priors;
    char dir[64];
} fixture;

static void fx_init(fixture *f)
{
    f->a = arena_create();
    f->d = diag_create();
    cr_assert_eq(catalog_load_default(f->a, &f->cat, f->d), 0);
    cr_assert_eq(physics_load_default(f->d, &f->phys), 0);
    f->gpu = gpu_catalog_find(&f->cat, GPU);
    cr_assert_not_null(f->gpu);
    const unsigned char *data = NULL;
    size_t len = 0;
    cr_assert(embedded_get("workloads/priors.yaml", &data, &len));
    cr_assert_eq(obs_load_priors("workloads/priors.yaml", data, len, f->a, f->d, &f->priors), 0);
    snprintf(f->dir, sizeof f->dir, "/tmp/predict_XXXXXX");
    cr_assert_not_null(mkdtemp(f->dir));
}

static void fx_fini(fixture *f)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
    cr_assert_eq(system(cmd), 0);
    diag_destroy(f->d);
    arena_destroy(f->a);
}

/* The known profile: per iteration of 8 samples, host 20 ms, 3 SM-seconds of fp32 compute,
 * 10 GB of memory traffic, a 6 GiB footprint. */
static wl_profile truth(void)
{
    wl_profile p;
    memset(&p, 0, sizeof p);
    p.name = "synth";
    p.unit_is_sample = true;
    p.host_s_fixed = 0.020;
    p.compute_sm_s_fixed[WL_CLASS_FP32] = 3.0;
    p.mem_traffic_bytes_fixed = 10e9;
    p.mem_footprint_bytes_fixed = 6.0 * 1073741824.0;
    return p;
}

/* Seconds per unit of the truth at batch 8 on `part` with `peers` time-sliced processes. */
static double truth_unit_s(fixture *fx, const char *part, int peers, int mig_busy)
{
    wl_profile p = truth();
    /* the time-slice class that fit-workload gives under the generic class */
    p.ts_class = phys_ts_class_index(&fx->phys, obs_priors_find(fx->priors, "generic")->ts_class);
    partition_cfg c;
    partition_cfg_init(&c, fx->gpu);
    c.mig = strcmp(part, "full") ? gpu_find_profile(fx->gpu, part) : NULL;
    c.peers = peers;
    c.sharing = peers > 1 ? SHARE_TIMESLICE : SHARE_EXCLUSIVE;
    c.mig_busy = mig_busy;
    speed_result r;
    predict_unit_time(&p, 8, &c, &fx->phys, &r);
    cr_assert_eq(r.outcome, SPEED_OK, "%s: %s", part, r.reason);
    return r.unit_time_s;
}

/* Write observations of the truth on the given partitions (exclusive, batch 8) to a file. */
static void write_obs(fixture *fx, const char *path, const char *const *parts, int n)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "workload: synth\ngpu: %s\nunit: sample\nobservations:\n", GPU);
    for (int i = 0; i < n; i++) {
        fprintf(f, "  - {config: {partition: %s}, batch: 8, work: 8000, time_s: %.17g}\n", parts[i],
                8000 * truth_unit_s(fx, parts[i], 1, 0));
    }
    fclose(f);
}

static const obs_fit_param *find_param(const obs_fit_report *r, wl_param w)
{
    for (int i = 0; i < r->n_params; i++) {
        if (r->params[i].which == w) {
            return &r->params[i];
        }
    }
    return NULL;
}

/* fit -> write -> load -> predict recovers the profile and its predictions. */
Test(predict, round_trip_recovers_known_profile)
{
    fixture fx;
    fx_init(&fx);
    const char *parts[] = {"full", "7g.40gb", "4g.20gb", "3g.20gb", "2g.10gb"};
    char obs_path[128], prof_path[128];
    snprintf(obs_path, sizeof obs_path, "%s/obs.yaml", fx.dir);
    snprintf(prof_path, sizeof prof_path, "%s/profile.yaml", fx.dir);
    write_obs(&fx, obs_path, parts, 5);
    obs_file *f = NULL;
    cr_assert_eq(obs_load_observations(obs_path, NULL, 0, &fx.cat, fx.a, fx.d, &f), 0);
    obs_profile *p = NULL;
    obs_fit_report rep;
    int rc = obs_fit(f, obs_priors_find(fx.priors, "generic"), &fx.phys, fx.a, &p, &rep);
    cr_assert_eq(rc, 0, "%s", rep.error);
    wl_profile t = truth();
    cr_assert_float_eq(p->p.host_s_fixed / t.host_s_fixed, 1.0, 0.02, "H %g", p->p.host_s_fixed);
    cr_assert_float_eq(wl_compute_total_sm_s(&p->p, 8) / 3.0, 1.0, 0.02, "C %g",
                       wl_compute_total_sm_s(&p->p, 8));
    /* M moves the time least (about a fifth of it): it is held to two standard errors */
    const obs_fit_param *pm = find_param(&rep, WL_P_MEM_TRAFFIC_FIXED);
    cr_assert_leq(fabs(p->p.mem_traffic_bytes_fixed - 10e9), 2 * pm->std_err, "M %g +- %g",
                  p->p.mem_traffic_bytes_fixed, pm->std_err);
    cr_assert(find_param(&rep, WL_P_HOST_S_FIXED)->pinned);
    cr_assert(find_param(&rep, WL_P_COMPUTE_FIXED)->pinned);
    for (size_t i = 0; i < rep.n_rows; i++) {
        cr_assert(rep.rows[i].used);
        cr_assert_lt(fabs(rep.rows[i].rel_residual), 0.005, "row %zu", i);
    }
    cr_assert_eq(obs_write_profile(prof_path, p, "test"), 0);
    obs_profile *q = NULL;
    cr_assert_eq(obs_load_profile(prof_path, NULL, 0, &fx.phys, fx.a, fx.d, &q), 0);
    cr_assert_eq(q->p.host_s_fixed, p->p.host_s_fixed);
    /* predict configurations never observed */
    const char *qtext = "gpu: " GPU "\n"
                        "queries:\n"
                        "  - {config: {partition: 1g.10gb}, batch: 8, work: 8000}\n"
                        "  - {config: {partition: 7g.40gb, peers: 4}, batch: 8, work: 8000}\n"
                        "  - {config: {partition: 1g.10gb, mig_busy: 4}, batch: 8, work: 8000}\n";
    obs_queries *qs = NULL;
    cr_assert_eq(obs_load_queries("q.yaml", qtext, strlen(qtext), &fx.cat, fx.a, fx.d, &qs), 0);
    double want[] = {8000 * truth_unit_s(&fx, "1g.10gb", 1, 0),
                     8000 * truth_unit_s(&fx, "7g.40gb", 4, 0),
                     8000 * truth_unit_s(&fx, "1g.10gb", 1, 4)};
    for (size_t i = 0; i < qs->n; i++) {
        obs_prediction r;
        obs_predict(q, NULL, 0, qs, i, &fx.phys, NULL, &r);
        cr_assert_eq(r.outcome, SPEED_OK, "query %zu: %s", i, r.reason);
        cr_assert_float_eq(r.time_s / want[i], 1.0, 0.01, "query %zu: %g vs %g", i, r.time_s,
                           want[i]);
        cr_assert_leq(r.time_lo_s, r.time_s);
        cr_assert_geq(r.time_hi_s, r.time_s);
        cr_assert_float_eq(r.throughput * r.time_s, 8000, 1e-6);
    }
    fx_fini(&fx);
}

/* Two observations: H and C are pinned, the memory traffic is not; the range holds the truth. */
Test(predict, two_observations_name_the_open_parameter_and_cover_the_truth)
{
    fixture fx;
    fx_init(&fx);
    const char *parts[] = {"full", "1g.10gb"};
    char obs_path[128];
    snprintf(obs_path, sizeof obs_path, "%s/obs.yaml", fx.dir);
    write_obs(&fx, obs_path, parts, 2);
    obs_file *f = NULL;
    cr_assert_eq(obs_load_observations(obs_path, NULL, 0, &fx.cat, fx.a, fx.d, &f), 0);
    obs_profile *p = NULL;
    obs_fit_report rep;
    cr_assert_eq(obs_fit(f, obs_priors_find(fx.priors, "generic"), &fx.phys, fx.a, &p, &rep), 0);
    const obs_fit_param *m = find_param(&rep, WL_P_MEM_TRAFFIC_FIXED);
    cr_assert_not_null(m);
    cr_assert(!m->pinned);
    cr_assert_gt(strlen(m->assumed), 0);
    cr_assert_eq(p->src[WL_P_MEM_TRAFFIC_FIXED], OBS_SRC_PRIOR);
    cr_assert_gt(p->n_variants, 0);
    for (size_t i = 0; i < rep.n_rows; i++) {
        cr_assert_lt(fabs(rep.rows[i].rel_residual), 0.01, "row %zu", i);
    }
    const char *qtext = "gpu: " GPU "\n"
                        "queries:\n"
                        "  - {config: {partition: 3g.20gb}, batch: 8, work: 1}\n"
                        "  - {config: {partition: 7g.40gb}, batch: 8, work: 1}\n";
    obs_queries *qs = NULL;
    cr_assert_eq(obs_load_queries("q.yaml", qtext, strlen(qtext), &fx.cat, fx.a, fx.d, &qs), 0);
    const char *qp[] = {"3g.20gb", "7g.40gb"};
    for (size_t i = 0; i < qs->n; i++) {
        obs_prediction r;
        obs_predict(p, NULL, 0, qs, i, &fx.phys, NULL, &r);
        double want = truth_unit_s(&fx, qp[i], 1, 0);
        cr_assert_eq(r.outcome, SPEED_OK);
        cr_assert_leq(r.time_lo_s, want, "%s: lo %g > truth %g", qp[i], r.time_lo_s, want);
        cr_assert_geq(r.time_hi_s, want, "%s: hi %g < truth %g", qp[i], r.time_hi_s, want);
        cr_assert_float_eq(r.time_s / want, 1.0, 0.15, "%s: %g vs %g", qp[i], r.time_s, want);
    }
    fx_fini(&fx);
}

/* Write a profile with the truth's parameters and a given name. */
static void write_profile_grad(fixture *fx, const char *path, const char *name, double grad)
{
    obs_profile p;
    memset(&p, 0, sizeof p);
    p.p = truth();
    p.p.grad_bytes = grad;
    p.p.name = name;
    p.unit = "sample";
    p.gpu_name = GPU;
    p.ts_class_name = obs_priors_find(fx->priors, "generic")->ts_class;
    p.ref_batch = 8;
    cr_assert_eq(obs_write_profile(path, &p, NULL), 0);
}

static void write_truth_profile(fixture *fx, const char *path, const char *name)
{
    write_profile_grad(fx, path, name, 0);
}

/* Run a command, capturing stdout and stderr into files; returns the exit status. */
static int run(const char *cmd, const char *out, const char *err)
{
    char full[1024];
    snprintf(full, sizeof full, "%s >%s 2>%s", cmd, out, err);
    int st = system(full);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "%s", path);
    static char buf[65536];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Run `slicesim predict PROFILE QUERIES` (exit 0 required) and split its CSV into at most max
 * lines (pointers into a static buffer); returns the number of lines. */
static int predict_lines(const char *profile, const char *queries, const char *out,
                         const char *err, char **line, int max)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "./slicesim predict %s %s", profile, queries);
    cr_assert_eq(run(cmd, out, err), 0, "%s", slurp(err));
    char *csv = slurp(out);
    int n = 0;
    for (char *s = strtok(csv, "\n"); s && n < max; s = strtok(NULL, "\n")) {
        line[n++] = s;
    }
    return n;
}

/* Issue 21 item 5: a DDP job on H200 1g.18gb slices (16 GiB) whose worker holds 16 GiB - 14 MiB
 * of model and 1e9 bytes of gradients: alone it fits; at 2 workers DDP adds the bucket copy and
 * NCCL's 12 MiB (2 channels x 6 MiB of state, its FIFOs staged in host memory), 2 MiB under the
 * slice; at 4 096 workers the channel state holds a 608-byte peer per rank (2.4 MB: 2 granules),
 * 16 MiB in all, 2 MiB over: oom, with the reason. The one term of a ring worker's memory that
 * grows with the world (NCCL's maintainers, NVIDIA/nccl issue #986). */
Test(predict, ddp_many_workers_on_small_slices_run_out_of_memory)
{
    fixture fx;
    fx_init(&fx);
    char a[128], q[128], out[128], err[128];
    snprintf(a, sizeof a, "%s/a.yaml", fx.dir);
    snprintf(q, sizeof q, "%s/q.yaml", fx.dir);
    snprintf(out, sizeof out, "%s/out.csv", fx.dir);
    snprintf(err, sizeof err, "%s/err.txt", fx.dir);
    FILE *f = fopen(a, "w");
    fprintf(f, "schema_version: 1\nworkload: big\nunit: iteration\ngrad_bytes: 1e9\nparams:\n"
               "  host_s_fixed: {value: 0.01}\n  compute_sm_s_fixed: {value: 2.0}\n"
               "  mem_footprint_bytes_fixed: {value: %.0f}\n",
            16.0 * 1073741824.0 - 1e9 - 14.0 * 1048576.0);
    fclose(f);
    f = fopen(q, "w");
    fprintf(f, "gpu: H200-SXM5-141GB\nqueries:\n"
               "  - {config: {partition: 1g.18gb}}\n"
               "  - {config: {partition: 1g.18gb, workers: 2, per_gpu: 2}}\n"
               "  - {config: {partition: 1g.18gb, workers: 4096, per_gpu: 7, gpus_per_node: 8}}\n");
    fclose(f);
    char *line[8];
    cr_assert_eq(predict_lines(a, q, out, err, line, 8), 4);
    cr_assert(strstr(line[1], "0,") == line[1] && strstr(line[1], ",ok,"), "%s", line[1]);
    cr_assert(strstr(line[2], "1,") == line[2] && strstr(line[2], ",ok,"), "%s", line[2]);
    cr_assert_str_eq(line[3], "2,,,oom,,,worker needs 16 GiB (profile 15.06 GiB at batch 1 + DDP "
                              "buckets 0.931 GiB + NCCL 16 MiB: 2 channels x (0 MiB buffers + "
                              "8 MiB state)) > partition's 16 GiB (2 MiB over)");
    fx_fini(&fx);
}

Test(predict, cli_csv_format_outcomes_and_reasons)
{
    fixture fx;
    fx_init(&fx);
    char a[128], b[128], q[128], out[128], err[128], cmd[512];
    snprintf(a, sizeof a, "%s/a.yaml", fx.dir);
    snprintf(b, sizeof b, "%s/b.yaml", fx.dir);
    snprintf(q, sizeof q, "%s/q.yaml", fx.dir);
    snprintf(out, sizeof out, "%s/out.csv", fx.dir);
    snprintf(err, sizeof err, "%s/err.txt", fx.dir);
    write_truth_profile(&fx, a, "a");
    write_truth_profile(&fx, b, "b");
    FILE *f = fopen(q, "w");
    fprintf(f,
            "gpu: " GPU "\n"
            "queries:\n"
            "  - {config: {partition: full}, batch: 8, work: 800}\n"
            "  - {config: {partition: 1g.5gb}, batch: 8, work: 800}\n"
            "  - {config: {partition: 1g.20gb}, batch: 8}\n"
            "  - {config: {partition: full, peers: 0}, batch: 8}\n"
            "  - {config: {partition: 3g.20gb, per_gpu: 2, workers: 16, topology: [4, 4, 4, 4]}, "
            "batch: 8}\n"
            "  - {config: {partition: full, with: [b]}, batch: 8, work: 800}\n"
            "  - {config: {partition: full, with: [c]}, batch: 8}\n");
    fclose(f);
    snprintf(cmd, sizeof cmd, "./slicesim predict %s %s %s", a, b, q);
    cr_assert_eq(run(cmd, out, err), 0, "%s", slurp(err));
    char *csv = slurp(out);
    char *line[16];
    int n = 0;
    for (char *s = strtok(csv, "\n"); s && n < 16; s = strtok(NULL, "\n")) {
        line[n++] = s;
    }
    cr_assert_eq(n, 8);
    cr_assert_str_eq(line[0], "index,time_s,throughput,outcome,time_s_lo,time_s_hi,reason");
    double t0, x0, lo0, hi0;
    cr_assert_eq(sscanf(line[1], "0,%lg,%lg,ok,%lg,%lg,", &t0, &x0, &lo0, &hi0), 4, "%s", line[1]);
    cr_assert_float_eq(t0 / (800 * truth_unit_s(&fx, "full", 1, 0)), 1.0, 1e-5);
    cr_assert_eq(line[1][strlen(line[1]) - 1], ',');
    cr_assert(lo0 <= t0 && t0 <= hi0);
    /* 6 GiB does not fit the 4.75 GiB of 1g.5gb */
    cr_assert_eq(strncmp(line[2], "1,,,oom,,,", 10), 0, "%s", line[2]);
    cr_assert_gt(strlen(line[2]), 10);
    cr_assert_str_eq(line[3], "2,,,invalid,,,\"unknown partition for A100-SXM4-40GB; expected "
                              "one of full, 1g.5gb, 1g.5gb+me, 1g.10gb, 2g.10gb, 3g.20gb, "
                              "4g.20gb, 7g.40gb, got '1g.20gb'\"");
    cr_assert_str_eq(line[4], "3,,,invalid,,,peers must be >= 1; got 0");
    /* the profile states no gradient size: a 16-worker DDP job cannot be costed */
    cr_assert_str_eq(line[5], "4,,,invalid,,,gradient size unknown: the profile needs grad_bytes "
                              "for 16 workers");
    double t5;
    cr_assert_eq(sscanf(line[6], "5,%lg,", &t5), 1, "%s", line[6]);
    cr_assert_gt(t5, t0, "time-sliced with b must be slower than alone");
    cr_assert_str_eq(line[7],
                     "6,,,invalid,,,with: no profile named 'c' was given on the command line");
    fx_fini(&fx);
}

Test(predict, cli_fit_workload_bad_input_exits_2_and_writes_nothing)
{
    fixture fx;
    fx_init(&fx);
    char prof[128], out[128], err[128], cmd[512];
    snprintf(prof, sizeof prof, "%s/p.yaml", fx.dir);
    snprintf(out, sizeof out, "%s/out.txt", fx.dir);
    snprintf(err, sizeof err, "%s/err.txt", fx.dir);
    snprintf(cmd, sizeof cmd,
             "./slicesim fit-workload tests/bad_input/obs/obs_unknown_partition.yaml -o %s", prof);
    cr_assert_eq(run(cmd, out, err), 2);
    cr_assert_str_eq(slurp(err),
                     "tests/bad_input/obs/obs_unknown_partition.yaml:6:26: error: "
                     "observations[1].config.partition: unknown partition for A100-SXM4-40GB; "
                     "expected one of full, 1g.5gb, 1g.5gb+me, 1g.10gb, 2g.10gb, 3g.20gb, "
                     "4g.20gb, 7g.40gb, got '1g.20gb'\n");
    struct stat st;
    cr_assert_neq(stat(prof, &st), 0, "no profile may be written on error");
    snprintf(cmd, sizeof cmd, "./slicesim fit-workload x.yaml -o %s --class nope", prof);
    cr_assert_eq(run(cmd, out, err), 2);
    const char *want = "slicesim fit-workload: error: --class: unknown class; expected one of "
                       "generic, ";
    cr_assert_eq(strncmp(slurp(err), want, strlen(want)), 0, "%s", slurp(err));
    snprintf(cmd, sizeof cmd, "./slicesim fit-workload /nonexistent.yaml -o %s", prof);
    cr_assert_eq(run(cmd, out, err), 1);
    cr_assert_str_eq(slurp(err), "slicesim fit-workload: error: /nonexistent.yaml: No such file "
                                 "or directory\n");
    fx_fini(&fx);
}

/* A fit that does not converge (here: one throughput of 1e-300 units/s, a time per unit the
 * model cannot reach with finite parameters) exits 2 and writes no profile. */
Test(predict, cli_fit_workload_no_convergence_exits_2_and_writes_nothing)
{
    fixture fx;
    fx_init(&fx);
    char obs[128], prof[128], out[128], err[128], cmd[512];
    snprintf(obs, sizeof obs, "%s/obs.yaml", fx.dir);
    snprintf(prof, sizeof prof, "%s/p.yaml", fx.dir);
    snprintf(out, sizeof out, "%s/out.txt", fx.dir);
    snprintf(err, sizeof err, "%s/err.txt", fx.dir);
    FILE *f = fopen(obs, "w");
    cr_assert_not_null(f);
    fputs("workload: x\ngpu: A100-SXM4-80GB\nunit: image\nobservations:\n"
          "  - {config: {partition: 7g.80gb}, batch: 1, throughput: 1e-300}\n"
          "  - {config: {partition: 1g.10gb}, batch: 1, throughput: 1}\n"
          "  - {config: {partition: 3g.40gb}, batch: 2, throughput: 1e-10}\n",
          f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "./slicesim fit-workload %s -o %s", obs, prof);
    cr_assert_eq(run(cmd, out, err), 2, "%s", slurp(err));
    char want[256];
    snprintf(want, sizeof want, "%s: error: fit: did not converge; expected a finite chi^2 and "
             "finite parameters, got chi^2 ", obs);
    cr_assert_eq(strncmp(slurp(err), want, strlen(want)), 0, "%s", slurp(err));
    struct stat st;
    cr_assert_neq(stat(prof, &st), 0, "no profile may be written when the fit did not converge");
    fx_fini(&fx);
}

Test(predict, cli_fit_workload_reports_and_writes_a_readable_profile)
{
    fixture fx;
    fx_init(&fx);
    const char *parts[] = {"full", "1g.10gb"};
    char obs_path[128], prof[128], out[128], err[128], cmd[512];
    snprintf(obs_path, sizeof obs_path, "%s/obs.yaml", fx.dir);
    snprintf(prof, sizeof prof, "%s/p.yaml", fx.dir);
    snprintf(out, sizeof out, "%s/out.txt", fx.dir);
    snprintf(err, sizeof err, "%s/err.txt", fx.dir);
    write_obs(&fx, obs_path, parts, 2);
    snprintf(cmd, sizeof cmd, "./slicesim fit-workload %s -o %s --class generic", obs_path, prof);
    cr_assert_eq(run(cmd, out, err), 0, "%s", slurp(err));
    char *txt = slurp(out);
    cr_assert_not_null(strstr(txt, "mem_traffic_bytes_fixed"));
    cr_assert_not_null(strstr(txt, "NOT PINNED by the observations"));
    cr_assert_not_null(strstr(txt, "under-determined parameters (left to their prior: the class, or the measured split):"));
    cr_assert_not_null(strstr(txt, "wrote "));
    obs_profile *p = NULL;
    cr_assert_eq(obs_load_profile(prof, NULL, 0, &fx.phys, fx.a, fx.d, &p), 0);
    cr_assert_str_eq(p->p.name, "synth");
    cr_assert_str_eq(p->prior_class, "generic");
    cr_assert_eq(p->src[WL_P_MEM_TRAFFIC_FIXED], OBS_SRC_PRIOR);
    cr_assert_float_eq(p->ref_batch, 8, 0);
    fx_fini(&fx);
}

/* Configurations the profile cannot answer, and memory shared by time-sliced co-runners. */
Test(predict, batch_mps_and_shared_memory)
{
    fixture fx;
    fx_init(&fx);
    obs_profile p;
    memset(&p, 0, sizeof p);
    p.p = truth();
    p.p.ts_class = phys_ts_class_index(&fx.phys, "long");
    p.ref_batch = 8;
    const char *qtext =
        "gpu: " GPU "\n"
        "queries:\n"
        "  - {config: {partition: full}, batch: 16}\n"
        "  - {config: {partition: 3g.20gb, sharing: timeslice, peers: 3}, batch: 8}\n"
        "  - {config: {partition: 3g.20gb, sharing: timeslice, peers: 4}, batch: 8}\n"
        "  - {config: {partition: full, sharing: mps, peers: 2, mps_percent: 50}, batch: 8}\n"
        "  - {config: {partition: full, sharing: exclusive, peers: 2}, batch: 8}\n"
        "  - {config: {partition: full, mig_busy: 3}, batch: 8}\n";
    obs_queries *qs = NULL;
    cr_assert_eq(obs_load_queries("q.yaml", qtext, strlen(qtext), &fx.cat, fx.a, fx.d, &qs), 0);
    obs_prediction r[6];
    for (size_t i = 0; i < qs->n; i++) {
        obs_predict(&p, NULL, 0, qs, i, &fx.phys, NULL, &r[i]);
    }
    cr_assert_eq(r[0].outcome, SPEED_INVALID);
    cr_assert_str_eq(r[0].reason, "profile was fitted at batch 8 only; predicting batch 16 needs "
                                  "observations at two batch sizes");
    /* 3 x 6 GiB fit the 19.5 GiB of 3g.20gb, 4 x 6 GiB do not */
    cr_assert_eq(r[1].outcome, SPEED_OK, "%s", r[1].reason);
    cr_assert_eq(r[2].outcome, SPEED_OOM);
    cr_assert_gt(strlen(r[2].reason), 0);
    cr_assert_eq(r[3].outcome, SPEED_OK, "%s", r[3].reason);
    cr_assert_gt(r[3].time_s, 0);
    cr_assert_eq(r[4].outcome, SPEED_INVALID);
    cr_assert_str_eq(r[4].reason, "exclusive partition cannot hold several jobs");
    cr_assert_eq(r[5].outcome, SPEED_INVALID);
    cr_assert_str_eq(r[5].reason, "mig_busy needs a MIG partition; got partition full");
    fx_fini(&fx);
}

/* DDP queries: the profile's grad_bytes goes through the written file; 16 workers are faster than
 * one but not 16 times (the all-reduce is not free); bad shapes are invalid with the reason. */
Test(predict, ddp_queries)
{
    fixture fx;
    fx_init(&fx);
    char a[128], q[128], out[128], err[128];
    snprintf(a, sizeof a, "%s/a.yaml", fx.dir);
    snprintf(q, sizeof q, "%s/q.yaml", fx.dir);
    snprintf(out, sizeof out, "%s/out.csv", fx.dir);
    snprintf(err, sizeof err, "%s/err.txt", fx.dir);
    write_profile_grad(&fx, a, "a", 100e6);
    FILE *f = fopen(q, "w");
    fprintf(f, "gpu: " GPU "\n"
               "queries:\n"
               "  - {config: {partition: full}, batch: 8, work: 800}\n"
               "  - {config: {partition: full, workers: 16, topology: [4, 4, 4, 4]}, batch: 8, "
               "work: 800}\n"
               "  - {config: {partition: full, workers: 16, topology: [4, 4, 4]}, batch: 8}\n"
               "  - {config: {partition: 3g.20gb, per_gpu: 3, workers: 6}, batch: 8}\n"
               "  - {config: {partition: full, workers: 2, interconnect: carrier-pigeon}, batch: 8}\n");
    fclose(f);
    char *line[8];
    cr_assert_eq(predict_lines(a, q, out, err, line, 8), 6);
    double t1, x1, t16, x16;
    cr_assert_eq(sscanf(line[1], "0,%lg,%lg,ok", &t1, &x1), 2, "%s", line[1]);
    cr_assert_eq(sscanf(line[2], "1,%lg,%lg,ok", &t16, &x16), 2, "%s", line[2]);
    cr_assert(x16 > x1 && x16 < 16 * x1, "1 worker %g/s, 16 workers %g/s", x1, x16);
    cr_assert_str_eq(line[3], "2,,,invalid,,,topology places 12 workers over 3 nodes; expected "
                              "it to add up to workers = 16");
    cr_assert_str_eq(line[4], "3,,,invalid,,,per_gpu 3: a GPU holds at most 2 3g.20gb instances; "
                              "expected per_gpu <= 2");
    cr_assert(strstr(line[5], "unknown interconnect; expected one of eth-25g,"), "%s", line[5]);
    fx_fini(&fx);
}

/* A DDP query whose ring crosses a link the catalog gives no rate (V100-PCIE-16GB: neither
 * NVLink nor PCIe; B200-180GB: no PCIe, so no way off the node) is invalid with the hop and the
 * figure named instead of answering time_s inf; B200's 8 workers on one NVSwitch node are not. */
Test(predict, ddp_query_over_a_link_without_rate_is_invalid)
{
    fixture fx;
    fx_init(&fx);
    char a[128], q[128], out[128], err[128], cmd[512];
    snprintf(a, sizeof a, "%s/a.yaml", fx.dir);
    snprintf(q, sizeof q, "%s/q.yaml", fx.dir);
    snprintf(out, sizeof out, "%s/out.csv", fx.dir);
    snprintf(err, sizeof err, "%s/err.txt", fx.dir);
    write_profile_grad(&fx, a, "a", 100e6);
    static const char *const gpus[] = {"V100-PCIE-16GB", "B200-180GB", "B200-180GB"};
    static const char *const shapes[] = {"workers: 2", "workers: 16, nodes: 2, gpus_per_node: 8",
                                         "workers: 8, gpus_per_node: 8"};
    char *line[3];
    for (int i = 0; i < 3; i++) {
        FILE *f = fopen(q, "w");
        fprintf(f, "gpu: %s\nqueries:\n  - {config: {partition: full, %s}, batch: 8, work: 800}\n",
                gpus[i], shapes[i]);
        fclose(f);
        snprintf(cmd, sizeof cmd, "./slicesim predict %s %s", a, q);
        cr_assert_eq(run(cmd, out, err), 0, "%s", slurp(err));
        char *csv = slurp(out);
        strtok(csv, "\n");
        line[i] = strdup(strtok(NULL, "\n"));
    }
    cr_assert_str_eq(line[0], "0,,,invalid,,,\"the ring's hop from rank 0 (node 0 GPU 0) to "
                              "rank 1 (node 0 GPU 1) crosses the PCIe link of node 0 GPU 0 at 0 "
                              "bytes/s; expected a positive rate, but the GPU type's PCIe rate "
                              "(pcie_gb_s_per_direction) is missing (unsourced) or 0\"");
    cr_assert_str_eq(line[1], "0,,,invalid,,,\"the ring's hop from rank 7 (node 0 GPU 7) to "
                              "rank 8 (node 1 GPU 0) crosses the PCIe link of node 0 GPU 7 at 0 "
                              "bytes/s; expected a positive rate, but the GPU type's PCIe rate "
                              "(pcie_gb_s_per_direction) is missing (unsourced) or 0\"");
    double t, x;
    cr_assert_eq(sscanf(line[2], "0,%lg,%lg,ok", &t, &x), 2, "%s", line[2]);
    cr_assert(t > 0 && isfinite(t), "%s", line[2]);
    for (int i = 0; i < 3; i++) {
        free(line[i]);
    }
    fx_fini(&fx);
}

/* DDP queries with sharing are answered, not ignored: on whole GPUs and on 3g.20gb instances,
 * time-sliced or under MPS (capped or not), with 1 to 4 identical gangs on the same GPUs or a
 * co-runner of another profile (`with`), a gang is never faster than the same gang exclusive and
 * its time grows with its peers; a sharing the model cannot answer is invalid with the reason. */
Test(predict, ddp_queries_with_sharing)
{
    fixture fx;
    fx_init(&fx);
    char a[128], b[128], q[128], out[128], err[128], cmd[640];
    snprintf(a, sizeof a, "%s/a.yaml", fx.dir);
    snprintf(b, sizeof b, "%s/b.yaml", fx.dir);
    snprintf(q, sizeof q, "%s/q.yaml", fx.dir);
    snprintf(out, sizeof out, "%s/out.csv", fx.dir);
    snprintf(err, sizeof err, "%s/err.txt", fx.dir);
    write_profile_grad(&fx, a, "a", 100e6);
    write_profile_grad(&fx, b, "b", 0);
    static const char *const shapes[] = {"partition: full, workers: 2, topology: [2]",
                                         "partition: 3g.20gb, workers: 4, per_gpu: 2, "
                                         "topology: [4]"};
    static const char *const shares[] = {"sharing: timeslice", "sharing: mps",
                                         "sharing: mps, mps_percent: 50"};
    FILE *f = fopen(q, "w");
    fprintf(f, "gpu: " GPU "\nqueries:\n");
    for (int sh = 0; sh < 2; sh++) {
        fprintf(f, "  - {config: {%s}, batch: 8, work: 800}\n", shapes[sh]);
        for (int m = 0; m < 3; m++) {
            for (int k = 1; k <= 4; k++) {
                fprintf(f, "  - {config: {%s, %s, peers: %d}, batch: 8, work: 800}\n",
                        shapes[sh], shares[m], k);
            }
            fprintf(f, "  - {config: {%s, %s, with: [b]}, batch: 8, work: 800}\n", shapes[sh],
                    shares[m]);
        }
    }
    fprintf(f, "  - {config: {partition: full, workers: 2, sharing: exclusive, peers: 2}, "
               "batch: 8}\n"
               "  - {config: {partition: full, workers: 2, with: [c]}, batch: 8}\n");
    fclose(f);
    snprintf(cmd, sizeof cmd, "./slicesim predict %s %s %s", a, b, q);
    cr_assert_eq(run(cmd, out, err), 0, "%s", slurp(err));
    char *csv = slurp(out);
    char *line[64];
    int n = 0;
    for (char *s = strtok(csv, "\n"); s && n < 64; s = strtok(NULL, "\n")) {
        line[n++] = s;
    }
    cr_assert_eq(n, 1 + 2 * 16 + 2);
    int row = 1;
    for (int sh = 0; sh < 2; sh++) {
        double t_ex, x;
        int idx;
        cr_assert_eq(sscanf(line[row++], "%d,%lg,%lg,ok", &idx, &t_ex, &x), 3, "%s", line[row - 1]);
        for (int m = 0; m < 3; m++) {
            double prev = 0;
            for (int k = 1; k <= 5; k++) {
                double t;
                const char *l = line[row++];
                if (sh == 1 && k == 4) { /* four 6.105 GiB workers do not fit 19.5 GiB */
                    cr_assert(strstr(l, ",oom,,,\"worker needs 6.105 GiB"), "%s", l);
                    continue;
                }
                cr_assert_eq(sscanf(l, "%d,%lg,%lg,ok", &idx, &t, &x), 3, "%s", l);
                cr_assert_geq(t, t_ex * (1 - 1e-12), "%s: exclusive %g s", l, t_ex);
                if (k <= 4) {
                    cr_assert_geq(t, prev * (1 - 1e-12), "%s: fewer peers %g s", l, prev);
                    prev = t;
                }
                if (m == 0 && k >= 2) { /* time-slicing another gang or process: slower */
                    cr_assert_gt(t, 1.2 * t_ex, "%s: exclusive %g s", l, t_ex);
                }
            }
        }
    }
    cr_assert_str_eq(line[row++], "32,,,invalid,,,exclusive partition cannot hold several jobs");
    cr_assert_str_eq(line[row++], "33,,,invalid,,,with: no profile named 'c' was given on the "
                                  "command line");
    fx_fini(&fx);
}

/* Observations of the truth with gradient size g0 made by the model (obs_predict): 16 workers on
 * 4 nodes of 4 GPUs and 8 workers on 8 nodes, over 25 Gb/s Ethernet, batch 8, into *f. */
static void ddp_truth_obs(fixture *fx, const comm_params *cm, double g0, obs_file **f)
{
    obs_profile p;
    memset(&p, 0, sizeof p);
    p.p = truth();
    p.p.grad_bytes = g0;
    p.ref_batch = 8;
    const char *cfg[2] = {"{partition: full, workers: 16, topology: [4, 4, 4, 4], "
                          "gpus_per_node: 4, interconnect: eth-25g}",
                          "{partition: full, workers: 8, nodes: 8, gpus_per_node: 4, "
                          "interconnect: eth-25g}"};
    char o[1024];
    int len = snprintf(o, sizeof o, "workload: synth\ngpu: " GPU "\nunit: sample\nobservations:\n");
    for (int k = 0; k < 2; k++) {
        char q[512];
        snprintf(q, sizeof q, "gpu: " GPU "\nqueries:\n  - {config: %s, batch: 8, work: 1000}\n",
                 cfg[k]);
        obs_queries *qs = NULL;
        cr_assert_eq(obs_load_queries("q.yaml", q, strlen(q), &fx->cat, fx->a, fx->d, &qs), 0);
        obs_prediction r;
        obs_predict(&p, NULL, 0, qs, 0, &fx->phys, cm, &r);
        cr_assert_eq(r.outcome, SPEED_OK, "%s", r.reason);
        len += snprintf(o + len, sizeof o - (size_t)len,
                        "  - {config: %s, batch: 8, throughput: %.17g}\n", cfg[k], r.throughput);
    }
    cr_assert_eq(obs_load_observations("o.yaml", o, strlen(o), &fx->cat, fx->a, fx->d, f), 0);
}

/* fit-workload's DDP step: observations of a 16-worker job whose times come from the model with
 * a known gradient size G0 = 50 MB (predicted through obs_predict, not printed by the program)
 * give back G0 when the file states no grad_bytes; the residuals are then 0. */
Test(predict, ddp_observations_fit_the_gradient_size)
{
    fixture fx;
    fx_init(&fx);
    comm_params cm;
    cr_assert_eq(comm_load_default(fx.d, &cm), 0);
    obs_file *f = NULL;
    ddp_truth_obs(&fx, &cm, 50e6, &f);
    obs_profile p;
    memset(&p, 0, sizeof p);
    p.p = truth();
    p.ref_batch = 8;
    p.p.grad_bytes = 0;
    obs_fit_report rep;
    memset(&rep, 0, sizeof rep);
    rep.n_rows = f->n;
    rep.rows = arena_calloc(fx.a, f->n, sizeof *rep.rows);
    cr_assert_eq(obs_fit_ddp(f, &p, &fx.phys, &cm, &rep), 0);
    cr_assert(rep.grad_fitted);
    cr_assert_eq(rep.n_ddp, 2);
    cr_assert(fabs(p.p.grad_bytes / 50e6 - 1) < 1e-4, "G = %.9g", p.p.grad_bytes);
    for (int k = 0; k < 2; k++) {
        cr_assert(rep.rows[k].used);
        cr_assert(fabs(rep.rows[k].rel_residual) < 1e-4, "%g", rep.rows[k].rel_residual);
    }
    fx_fini(&fx);
}

/* fit-workload from DDP runs alone (no one-process run): the observations of the test above
 * (16 workers on 4 nodes and 8 workers on 8 nodes over 25 Gb/s Ethernet, G0 = 50 MB, made by the
 * model from the known profile) are fitted exactly, but G is NOT PINNED (another bucket count
 * fits as well) and the solo time leans on the priors' host/GPU split; the profile's other
 * parameters are the priors' (NOT PINNED). With 1 MB of gradients the all-reduce hides behind
 * backward: the solo time comes back exact and G is NOT PINNED. */
static void fit_from_ddp_only(fixture *fx, double g0, bool *pinned, double *g, double *alt,
                              double *derived)
{
    comm_params cm;
    cr_assert_eq(comm_load_default(fx->d, &cm), 0);
    /* no wait for a slowest host (ddp.h): it scales the host part, whose share the derived run
     * takes from the priors, so the runs' scaling is the communication's alone */
    cm.host_spread = 0;
    obs_file *f = NULL;
    ddp_truth_obs(fx, &cm, g0, &f);
    cr_assert(obs_fit_needs_ddp(f));
    const obs_file *f2 = NULL;
    obs_profile *out = NULL;
    obs_fit_report rep;
    int rc = obs_fit_from_ddp(f, obs_priors_find(fx->priors, "generic"), &fx->phys, &cm, fx->a,
                              &f2, &out, &rep);
    cr_assert_eq(rc, 0, "%s", rep.error);
    cr_assert(rep.derived_last);
    cr_assert_eq(f2->n, 3);
    int open = 0;
    for (int i = 0; i < rep.n_params; i++) {
        open += !rep.params[i].pinned;
    }
    cr_assert_geq(open, 1, "one timed run cannot pin every parameter");
    cr_assert_eq(obs_fit_ddp(f2, out, &fx->phys, &cm, &rep), 0);
    cr_assert(rep.grad_fitted);
    for (int k = 0; k < 2; k++) {
        cr_assert(rep.rows[k].used);
        cr_assert(fabs(rep.rows[k].rel_residual) < 2e-3, "row %d: %g", k,
                  rep.rows[k].rel_residual);
    }
    *pinned = rep.grad_pinned;
    cr_assert_eq(*pinned, !(rep.grad_alt_bytes > 0));
    *alt = rep.grad_alt_bytes;
    *g = out->p.grad_bytes;
    *derived = f2->obs[2].unit_time_s;
}

Test(predict, ddp_observations_alone_fit_a_profile)
{
    fixture fx;
    fx_init(&fx);
    bool pinned;
    double g, alt, derived, solo = truth_unit_s(&fx, "full", 1, 0);
    fit_from_ddp_only(&fx, 50e6, &pinned, &g, &alt, &derived);
    /* Two runs, two unknowns (the solo time and G), fitted exactly, but not pinned: the
     * profile's host/GPU split is the prior's, so backward (which the buckets overlap) is not the
     * truth's length, and the runs trade solo time against exposed communication. The fit lands
     * at G = 50 MB (2 buckets of 25 MiB at most) with the solo time 3.1 % high (7.090 against
     * 6.880 ms per sample: the exposed all-reduce, whose steps between nodes pay the network's
     * latency, is costed shorter than the truth's behind the prior's longer backward); 1 bucket
     * at 22.4 MB fits as well with another solo time (the bucket count is an integer: the cost
     * is a sawtooth in G), so G is NOT PINNED and the truth, 50 MB, lies within the two sizes
     * the fit names */
    cr_assert_not(pinned, "G = %.9g", g);
    cr_assert(fmin(g, alt) <= 50e6 * (1 + 1e-6) && 50e6 * (1 - 1e-6) <= fmax(g, alt),
              "G = %.9g, other %.9g", g, alt);
    cr_assert(fabs(derived / solo - 1.0305) < 0.005, "derived %.9g s, truth %.9g s", derived,
              solo);
    fit_from_ddp_only(&fx, 1e6, &pinned, &g, &alt, &derived);
    cr_assert_not(pinned, "G = %.9g", g);
    /* hidden communication: the runs scale perfectly, so they give the solo time itself */
    cr_assert(fabs(derived / solo - 1) < 2e-3, "derived %.9g s, truth %.9g s", derived, solo);
    fx_fini(&fx);
}

/* A solo run with the measurements the h100-coloc table uses (model/fit/wmeas.h). On the A100
 * (108 SMs) one run of t = 0.1 s at u = 0.6, kernel-busy b = 0.5, SM activity a = 0.2, DRAM
 * utilisation d = 0.1 sets the priors by hand: P = a / b * 108 = 43.2 SMs, M = d * BW * t =
 * 0.01 BW bytes (BW the datasheet bandwidth), H = (1 - u) t = 0.04 s (host_overlap 0), P and M
 * with a log-sd of 0.25; the census count becomes the profile's kernels_per_iter and the
 * profile says where P, M and C started. */
Test(predict, solo_measurements_set_the_priors)
{
    fixture fx;
    fx_init(&fx);
    static const char text[] =
        "workload: m\ngpu: " GPU "\nunit: iteration\nobservations:\n"
        "  - {config: {partition: full}, throughput: 10, gpu_util: 0.6, kernel_busy: 0.5,\n"
        "     sm_activity: 0.2, dram_util: 0.1, kernels_per_iter: 300}\n"
        "  - {config: {partition: 3g.20gb}, throughput: 6}\n";
    obs_file *f = NULL;
    cr_assert_eq(obs_load_observations("m.yaml", text, sizeof text - 1, &fx.cat, fx.a, fx.d, &f),
                 0, "%s", diag_error_count(fx.d) ? fx_diag_message(fx.d, 0) : "");
    cr_assert_eq(f->measured, 0);
    cr_assert_float_eq(f->obs[0].kernel_busy, 0.5, 0);
    cr_assert_float_eq(f->obs[0].sm_activity, 0.2, 0);
    cr_assert_float_eq(f->obs[0].dram_util, 0.1, 0);
    cr_assert_eq(fx.gpu->sms_total, 108);
    obs_profile *p = NULL;
    obs_fit_report rep;
    cr_assert_eq(obs_fit(f, obs_priors_find(fx.priors, "generic"), &fx.phys, fx.a, &p, &rep), 0,
                 "%s", rep.error);
    const obs_fit_param *pp = find_param(&rep, WL_P_MAX_SMS_FIXED);
    const obs_fit_param *pm = find_param(&rep, WL_P_MEM_TRAFFIC_FIXED);
    const obs_fit_param *ph = find_param(&rep, WL_P_HOST_S_FIXED);
    cr_assert(pp && pm && ph);
    cr_assert_float_eq(pp->prior_median, 43.2, 1e-9);
    cr_assert_float_eq(pp->prior_lo, 43.2 * exp(-0.25), 1e-9);
    cr_assert_str_eq(pp->prior_src, WMEAS_SOURCE);
    cr_assert_float_eq(pm->prior_median, 0.01 * fx.gpu->mem_bw_bytes_per_s, 1.0);
    cr_assert_str_eq(pm->prior_src, WMEAS_SOURCE);
    cr_assert_float_eq(ph->prior_median, 0.04, 1e-12);
    cr_assert_str_eq(ph->prior_src, WMEAS_HOST_SOURCE);
    cr_assert_eq(p->p.kernels_per_iter, 300);
    cr_assert_not_null(strstr(p->fitted_on, "GPM split of observations[0]"));
    for (int i = 0; i < 2; i++) {
        cr_assert_lt(fabs(rep.rows[i].rel_residual), 0.02, "obs %d: %g", i,
                     rep.rows[i].rel_residual);
    }
    /* without them, the generic class decides P (and names itself) */
    static const char plain[] = "workload: m\ngpu: " GPU "\nunit: iteration\nobservations:\n"
                                "  - {config: {partition: full}, throughput: 10}\n";
    cr_assert_eq(obs_load_observations("p.yaml", plain, sizeof plain - 1, &fx.cat, fx.a, fx.d, &f),
                 0);
    cr_assert_eq(f->measured, -1);
    cr_assert_eq(obs_fit(f, obs_priors_find(fx.priors, "generic"), &fx.phys, fx.a, &p, &rep), 0);
    cr_assert_str_neq(find_param(&rep, WL_P_MAX_SMS_FIXED)->prior_src, WMEAS_SOURCE);
    cr_assert_eq(p->p.kernels_per_iter, 0);
    fx_fini(&fx);
}

/* predict_lowest_eta: eta(n) of each class from a table, the lowest of them at every n, not
 * capped at 1. Class 0: 1, 1, 0.9, 1.2 (a calibration may measure eta above 1); class 1: 1, 1,
 * 0.95, 1.1: eta = 1, 1, 0.9, 1.1; class 0 alone: its own. */
typedef struct eta_table {
    double eta[2][4];
} eta_table;

static double table_eta(const void *ctx, int cls, int n)
{
    const eta_table *t = ctx;
    return t->eta[cls][n];
}

Test(predict, lowest_eta_takes_the_lowest_class)
{
    const eta_table t = {{{1, 1, 0.9, 1.2}, {1, 1, 0.95, 1.1}}};
    double eta[4];
    predict_lowest_eta(2, 3, table_eta, &t, eta);
    cr_assert(eta[0] == 1 && eta[1] == 1 && eta[2] == 0.9 && eta[3] == 1.1);
    predict_lowest_eta(1, 3, table_eta, &t, eta); /* one class: its own */
    cr_assert(eta[2] == 0.9 && eta[3] == 1.2);
}

Test(predict, cli_fit_workload_refuses_a_fit_far_outside_the_noise)
{
    fixture fx;
    fx_init(&fx);
    char prof[128], out[128], err[128], cmd[512];
    snprintf(prof, sizeof prof, "%s/p.yaml", fx.dir);
    snprintf(out, sizeof out, "%s/out.txt", fx.dir);
    snprintf(err, sizeof err, "%s/err.txt", fx.dir);
    /* the same run timed at t and 2t: residuals +41 % and -29 % of a time, data chi^2 600.6
     * against a limit of 25 x 10.83 = 270.7 (chi^2 quantile at p = 0.001, 1 degree of freedom) */
    snprintf(cmd, sizeof cmd, "./slicesim fit-workload tests/reports/obs-contradictory.yaml -o %s",
             prof);
    cr_assert_eq(run(cmd, out, err), 2);
    char want[1024];
    snprintf(want, sizeof want,
             "tests/reports/obs-contradictory.yaml: error: fit: the observations disagree with "
             "the model far beyond their noise; expected a chi^2 of the observations of at most "
             "270.7 (p >= 0.001 were the noise 5 times the stated 2 %% of a time, 1 degree of "
             "freedom), got 600.6 (largest residual +41.4 %% at observations[0]); nothing "
             "written to '%s' (--accept-poor-fit writes it anyway)\n",
             prof);
    cr_assert_str_eq(slurp(err), want);
    cr_assert_not_null(strstr(slurp(out), "+41.41%"), "the report is printed: %s", slurp(out));
    struct stat st;
    cr_assert_neq(stat(prof, &st), 0, "no profile may be written on a refused fit");
    snprintf(cmd, sizeof cmd,
             "./slicesim fit-workload tests/reports/obs-contradictory.yaml -o %s --accept-poor-fit",
             prof);
    cr_assert_eq(run(cmd, out, err), 0);
    cr_assert_eq(stat(prof, &st), 0, "--accept-poor-fit writes the profile");
    /* one consistent observation less: the shipped example passes far below the limit */
    snprintf(cmd, sizeof cmd,
             "./slicesim fit-workload experiments/examples/byom/observations.yaml -o %s", prof);
    cr_assert_eq(run(cmd, out, err), 0, "%s", slurp(err));
    fx_fini(&fx);
}

/* Issue 21: fit-workload reads `sharing` and `peers` on a DDP observation as predict reads the
 * same query. Observations made by the model (obs_predict) from the known profile with G = 50 MB
 * of a 2-worker job on one node: exclusive, time-sliced with a second identical gang (peers 2),
 * on MPS with it. Given the profile, obs_fit_ddp predicts each at its own time (residual 0; the
 * shared ones are 1.2x or more slower, so a fit that ignored the sharing would be 20 % or more
 * off, as it was: -43 %); with the profile fitted from one-process runs that pin it, within
 * 1 %. Sharing predict refuses (exclusive with peers 2) is refused at
 * load, at the sharing key. */
Test(predict, ddp_observations_under_sharing_are_read_as_predict_reads_them)
{
    fixture fx;
    fx_init(&fx);
    comm_params cm;
    cr_assert_eq(comm_load_default(fx.d, &cm), 0);
    obs_profile p;
    memset(&p, 0, sizeof p);
    p.p = truth();
    p.p.grad_bytes = 50e6;
    p.p.ts_class =
        phys_ts_class_index(&fx.phys, obs_priors_find(fx.priors, "generic")->ts_class);
    p.ref_batch = 8;
    static const char *const cfg[3] = {
        "{partition: full, workers: 2, topology: [2]}",
        "{partition: full, workers: 2, topology: [2], sharing: timeslice, peers: 2}",
        "{partition: full, workers: 2, topology: [2], sharing: mps, peers: 2}"};
    char o[3][1024];
    double tp[3];
    for (int k = 0; k < 3; k++) {
        char q[512];
        snprintf(q, sizeof q, "gpu: " GPU "\nqueries:\n  - {config: %s, batch: 8, work: 1000}\n",
                 cfg[k]);
        obs_queries *qs = NULL;
        cr_assert_eq(obs_load_queries("q.yaml", q, strlen(q), &fx.cat, fx.a, fx.d, &qs), 0);
        obs_prediction r;
        obs_predict(&p, NULL, 0, qs, 0, &fx.phys, &cm, &r);
        cr_assert_eq(r.outcome, SPEED_OK, "%s", r.reason);
        tp[k] = r.throughput;
        snprintf(o[k], sizeof o[k],
                 "workload: synth\ngpu: " GPU "\nunit: sample\ngrad_bytes: 5.0e7\n"
                 "observations:\n  - {config: %s, batch: 8, throughput: %.17g}\n",
                 cfg[k], r.throughput);
    }
    cr_assert_gt(tp[0], 1.2 * tp[1], "timeslice %g, exclusive %g", tp[1], tp[0]);
    cr_assert_gt(tp[0], 1.2 * tp[2], "mps %g, exclusive %g", tp[2], tp[0]);
    /* the three runs in one file, the profile given */
    char all[2048];
    snprintf(all, sizeof all,
             "workload: synth\ngpu: " GPU "\nunit: sample\ngrad_bytes: 5.0e7\nobservations:\n"
             "  - {config: %s, batch: 8, throughput: %.17g}\n"
             "  - {config: %s, batch: 8, throughput: %.17g}\n"
             "  - {config: %s, batch: 8, throughput: %.17g}\n",
             cfg[0], tp[0], cfg[1], tp[1], cfg[2], tp[2]);
    obs_file *f = NULL;
    cr_assert_eq(obs_load_observations("o.yaml", all, strlen(all), &fx.cat, fx.a, fx.d, &f), 0);
    obs_fit_report rep;
    memset(&rep, 0, sizeof rep);
    rep.n_rows = f->n;
    rep.rows = arena_calloc(fx.a, f->n, sizeof *rep.rows);
    cr_assert_eq(obs_fit_ddp(f, &p, &fx.phys, &cm, &rep), 0);
    cr_assert_eq(rep.n_ddp, 3);
    for (int k = 0; k < 3; k++) {
        cr_assert(rep.rows[k].used, "row %d: %s", k, rep.rows[k].note);
        cr_assert(fabs(rep.rows[k].rel_residual) < 1e-9, "row %d: %g", k,
                  rep.rows[k].rel_residual);
    }
    /* with the profile fitted from one-process runs on five partitions (which pin it, as in
     * round_trip_recovers_known_profile): every DDP run within 1 % */
    char fit[4096];
    int len = snprintf(fit, sizeof fit,
                       "workload: synth\ngpu: " GPU "\nunit: sample\ngrad_bytes: 5.0e7\n"
                       "observations:\n");
    static const char *const parts[] = {"full", "7g.40gb", "4g.20gb", "3g.20gb", "2g.10gb"};
    for (int k = 0; k < 5; k++) {
        len += snprintf(fit + len, sizeof fit - (size_t)len,
                        "  - {config: {partition: %s}, batch: 8, throughput: %.17g}\n", parts[k],
                        1 / truth_unit_s(&fx, parts[k], 1, 0));
    }
    for (int k = 0; k < 3; k++) {
        len += snprintf(fit + len, sizeof fit - (size_t)len,
                        "  - {config: %s, batch: 8, throughput: %.17g}\n", cfg[k], tp[k]);
    }
    cr_assert_eq(obs_load_observations("f.yaml", fit, strlen(fit), &fx.cat, fx.a, fx.d, &f), 0);
    obs_profile *q = NULL;
    cr_assert_eq(obs_fit(f, obs_priors_find(fx.priors, "generic"), &fx.phys, fx.a, &q, &rep), 0,
                 "%s", rep.error);
    cr_assert_eq(obs_fit_ddp(f, q, &fx.phys, &cm, &rep), 0);
    for (int k = 5; k < 8; k++) {
        cr_assert(rep.rows[k].used, "row %d: %s", k, rep.rows[k].note);
        cr_assert(fabs(rep.rows[k].rel_residual) < 0.01, "row %d: %g", k,
                  rep.rows[k].rel_residual);
    }
    /* refused as predict refuses it */
    static const char bad[] =
        "workload: synth\ngpu: " GPU "\nunit: sample\ngrad_bytes: 5.0e7\nobservations:\n"
        "  - {config: {partition: full, workers: 2, sharing: exclusive, peers: 2}, batch: 8, "
        "throughput: 100}\n";
    diag *d = diag_create();
    cr_assert_eq(obs_load_observations("b.yaml", bad, sizeof bad - 1, &fx.cat, fx.a, d, &f),
                 SIM_EINPUT);
    cr_assert_eq(diag_error_count(d), 1);
    cr_assert_str_eq(fx_diag_message(d, 0),
                     "b.yaml:6:53: error: observations[0].config.sharing: exclusive partition "
                     "cannot hold several jobs; expected a config that `slicesim predict` "
                     "answers, got sharing 'exclusive' with peers 2");
    diag_destroy(d);
    fx_fini(&fx);
}
