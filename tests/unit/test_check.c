/* `slicesim check` loads and checks everything `slicesim run` loads, and both refuse a run whose
 * estimated cost exceeds the scenario's limits (tools/estimate.h).
 *
 * Corpus tests/bad_input/run/: each file's first line "# expect: MESSAGE" is the exact stderr of
 * `slicesim check FILE`; `slicesim run FILE -o DIR` must print the same, exit 2 and create
 * nothing. (The files directly in tests/bad_input/ test the scenario loader alone; these need what
 * only a run loads: workload profiles, the estimate.) Each file ends with how its figures are
 * derived. */
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "experiments/scenario.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "tests/unit/sh.h"
#include "tools/estimate.h"

Test(check, run_corpus_gives_exact_messages_from_check_and_run, .timeout = 60)
{
    glob_t g;
    cr_assert_eq(glob("tests/bad_input/run/*.yaml", 0, NULL, &g), 0);
    cr_assert_geq(g.gl_pathc, 5);
    char dir[] = "/tmp/slicesim-check-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *f = g.gl_pathv[i];
        char head[2048], want[2048], cmd[1024], out[4096];
        cr_assert(test_read_text(f, head, sizeof head));
        cr_assert_eq(strncmp(head, "# expect: ", 10), 0, "%s has no '# expect:' line", f);
        snprintf(want, sizeof want, "%.*s\n", (int)strcspn(head + 10, "\n"), head + 10);
        snprintf(cmd, sizeof cmd, "./slicesim check %s 2>&1 >/dev/null", f);
        cr_expect_eq(test_sh(cmd, out, sizeof out), 2, "%s", f);
        cr_expect_str_eq(out, want, "check %s", f);
        snprintf(cmd, sizeof cmd, "./slicesim run %s -o %s/out 2>&1 >/dev/null", f, dir);
        cr_expect_eq(test_sh(cmd, out, sizeof out), 2, "%s", f);
        cr_expect_str_eq(out, want, "run %s", f);
        char outdir[64];
        snprintf(outdir, sizeof outdir, "%s/out", dir);
        struct stat sb;
        cr_expect_neq(stat(outdir, &sb), 0, "run %s created its output directory", f);
    }
    globfree(&g);
    rmdir(dir);
}

/* A scenario whose costs are easy to count by hand. */
static const char *est_text =
    "name: est\n"
    "seed: 1\n"
    "horizon: 10h\n"
    "cluster: {nodes: [{name: a, gpu: A100-SXM4-40GB, gpus_per_node: 8}]}\n"
    "workload:\n"
    "  jobs:\n"
    "    - {name: p, rate: 10/h, duration: 1m, request: {nvidia.com/gpu: 1}}\n"
    "    - {name: f, arrival: fixed, interval: 30m, count: 5, start: 1h,\n"
    "       duration: 1m, request: {nvidia.com/gpu: 1}}\n"
    "    - {name: g, arrival: fixed, interval: 4h, start: 1h, duration: 1m,\n"
    "       request: {nvidia.com/gpu: 1}}\n"
    "outputs: {sample_interval: 1h}\n";

static void load(const char *const *sets, size_t n_sets, run_estimate *e, diag *d)
{
    arena *a = arena_create();
    scenario_spec *s = NULL;
    cr_assert_eq(scenario_load_buffer("est.yaml", ".", est_text, strlen(est_text), sets, n_sets, 0,
                                      a, d, &s),
                 0);
    est_scenario(s, 0, e);
    est_check_limits(s, e, d);
    arena_destroy(a);
}

Test(check, estimate_counts_jobs_rows_bytes)
{
    diag *d = diag_create();
    run_estimate e;
    load(NULL, 0, &e, d);
    /* p: 10/h x 10 h = 100; f: min(5, floor(9 h / 30 min) + 1 = 19) = 5;
     * g: floor(9 h / 4 h) + 1 = 3 (at 1 h, 5 h, 9 h) */
    cr_assert_float_eq(e.jobs, 108.0, 1e-9);
    cr_assert_eq(e.top_class, 0);
    cr_assert_float_eq(e.timeseries_rows, 12.0, 1e-9); /* 10 h / 1 h + 2 */
    /* timeseries.csv 12 rows x (64 + 16 x 3 x 1 group) B, run.json + jobs.csv 108 jobs x
     * (600 + 160) B, metrics.om 12 samples x 8 GPUs x 1536 B */
    cr_assert_float_eq(e.output_bytes, 12 * 112.0 + 108 * 760.0 + 12 * 8 * 1536.0, 1e-6);
    cr_assert_float_eq(e.memory_bytes, 108 * 4096.0, 1e-6);
    cr_assert_eq(diag_error_count(d), 0);
    diag_destroy(d);
}

/* The scenario above with `sets` must give exactly one error: `msg`. */
static void expect_refused(const char *const *sets, size_t n_sets, const char *msg)
{
    diag *d = diag_create();
    run_estimate e;
    load(sets, n_sets, &e, d);
    cr_assert_eq(diag_error_count(d), 1);
    cr_assert_str_eq(diag_message(d, 0), msg);
    diag_destroy(d);
}

#define RAISE                                                                                      \
    "expected a run within the scenario's limits (raise them under `limits:` or with "             \
    "--set limits.KEY=VALUE)"

Test(check, limits_are_configurable)
{
    const char *jobs[] = {"limits.jobs=107", "limits.timeseries_rows=12"};
    expect_refused(jobs, 2,
                   "est.yaml:7:23: error: workload.jobs[0].rate: the run is too large: about 108 "
                   "jobs (limits.jobs 107); " RAISE ", got '10/h'");
    const char *rows[] = {"limits.timeseries_rows=11"};
    expect_refused(rows, 1,
                   "est.yaml:12:28: error: outputs.sample_interval: the run is too large: about "
                   "12 timeseries rows (limits.timeseries_rows 11); " RAISE ", got '3600s'");
    /* 1344 B of timeseries rows + 82080 B of jobs + 147456 B of metrics: the samples dominate */
    const char *bytes[] = {"limits.output=1KiB"};
    expect_refused(bytes, 1,
                   "est.yaml:12:28: error: outputs.sample_interval: the run is too large: about "
                   "2.31e+05 bytes of output (limits.output 1024); " RAISE ", got '3600s'");
    const char *mem[] = {"limits.memory=442368B"}; /* 108 x 4096 B: at the limit is allowed */
    diag *d = diag_create();
    run_estimate e;
    load(mem, 1, &e, d);
    cr_assert_eq(diag_error_count(d), 0);
    diag_destroy(d);
}

Test(check, check_prints_the_estimate_and_writes_nothing)
{
    char out[1024];
    int rc =
        test_sh("./slicesim check experiments/examples/small-mixed.yaml 2>&1", out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    /* nodes: whole 2 x 8 GPUs, mig 1 x 8, ts 1 x 4 = 4 nodes, 28 GPUs.
     * train: 2/h x 2 h = 4; notebook: min(10, 2 h / 5 min + 1 = 25) = 10; infer: 10/h x 2 h = 20;
     * no timeseries.csv (files: run.json, jobs.csv); output 34 x 760 B; memory 34 x 4096 B */
    cr_assert_str_eq(out, "experiments/examples/small-mixed.yaml: ok (4 nodes, 28 GPUs, 3 job "
                          "classes)\nestimate: about 34 jobs, 0 timeseries rows, 0.0258 MB of "
                          "output, 0.139 MB of memory\n");
}

/* A job rate below ~1e-10/s (issue 22: `check` and `run` aborted converting an inter-arrival
 * time of centuries) is a class whose jobs all arrive past the horizon: both exit 0, and the run
 * has none of them. The default scenario's first class is train-4gpu. */
Test(check, a_rate_below_1e_minus_10_per_s_runs_without_its_jobs)
{
    char dir[64], cmd[512], out[4096];
    const char *set = "--set 'workload.jobs[0].rate=1e-11/s'";
    snprintf(cmd, sizeof cmd, "./slicesim check experiments/default.yaml %s 2>&1", set);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_not_null(strstr(out, "experiments/default.yaml: ok ("), "%s", out);
    cr_assert(test_tmpdir(dir, sizeof dir, "lowrate"));
    snprintf(cmd, sizeof cmd,
             "./slicesim run experiments/default.yaml %s -o %s/r >/dev/null 2>&1 && "
             "grep -c ',train-4gpu,' %s/r/jobs.csv",
             set, dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 1, "run failed or train-4gpu jobs: %s", out);
    cr_assert_str_eq(out, "0\n");
    snprintf(cmd, sizeof cmd, "grep -c ',train-1gpu,' %s/r/jobs.csv", dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "the other classes ran: %s", out);
    cr_assert(test_rm_rf(dir));
}
