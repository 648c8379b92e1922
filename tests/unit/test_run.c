/* Integration tests of a whole run (tools/run.h, tools/cmd_run.c): determinism, seeds, outputs,
 * bad input and bad flags, and the cluster the default scenario builds (all-balanced MIG on the
 * catalog's A100-SXM4-40GB). Tests run from the repository root (make test does so).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments/catalog_load.h"
#include "experiments/fileio.h"
#include "experiments/scenario.h"
#include "model/cluster/cluster.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "sim/rng.h"
#include "tools/run.h"
#include "experiments/build.h"
#include "workloads/synth.h"

/* The synthetic stream's jobs appended to t, as a run's table generates them; how many. */
static size_t drain(const synth_class *cls, size_t n, const rng_root *root, sim_time horizon,
                    job_table *t)
{
    size_t n_jobs, k = 0;
    synth_stream *s = synth_stream_create(cls, n, root, horizon, &n_jobs);
    job_spec js;
    while (synth_stream_next(s, &js)) {
        job_table_add(t, &js);
        k++;
    }
    synth_stream_destroy(s);
    cr_assert_eq(k, n_jobs);
    return k;
}

#define DEFAULT_SCENARIO "experiments/default.yaml"

/* Whole file into a malloc'd buffer (NUL-terminated); *len its size. NULL when unreadable. */
static char *slurp(const char *path, size_t *len)
{
    char *buf = NULL;
    return fileio_read_all(path, FILEIO_MAX_BYTES, &buf, len) == 0 ? buf : NULL;
}

static char *tmpdir(void)
{
    char tmpl[] = "/tmp/slicesim-test-XXXXXX";
    char *d = mkdtemp(tmpl);
    cr_assert_not_null(d);
    return strdup(d);
}

static char *path_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static void rm_dir(const char *dir)
{
    static const char *const names[] = {"run.json",       "run_info.json", "jobs.csv",
                                        "timeseries.csv", "metrics.om",    "report.html"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char *p = path_in(dir, names[i]);
        remove(p);
        free(p);
    }
    rmdir(dir);
}

/* Run the default scenario in-process into dir; returns the status. */
static int run_into(const char *dir, bool has_seed, uint64_t seed, const char *const *sets,
                    size_t n_sets)
{
    FILE *devnull = fopen("/dev/null", "w");
    run_opts o = {.scenario = DEFAULT_SCENARIO,
                  .out_dir = dir,
                  .has_seed = has_seed,
                  .seed = seed,
                  .sets = sets,
                  .n_sets = n_sets,
                  .summary = devnull,
                  .errors = devnull,
                  .verify_every = 1};
    int rc = run_scenario(&o);
    fclose(devnull);
    return rc;
}

static bool same_file(const char *a_dir, const char *b_dir, const char *name)
{
    char *pa = path_in(a_dir, name), *pb = path_in(b_dir, name);
    size_t la = 0, lb = 0;
    char *a = slurp(pa, &la), *b = slurp(pb, &lb);
    cr_assert_not_null(a, "%s missing", pa);
    cr_assert_not_null(b, "%s missing", pb);
    bool same = la == lb && memcmp(a, b, la) == 0;
    free(a);
    free(b);
    free(pa);
    free(pb);
    return same;
}

Test(run, same_seed_gives_byte_identical_outputs)
{
    char *a = tmpdir(), *b = tmpdir();
    cr_assert_eq(run_into(a, false, 0, NULL, 0), 0);
    cr_assert_eq(run_into(b, false, 0, NULL, 0), 0);
    cr_assert(same_file(a, b, "run.json"));
    cr_assert(same_file(a, b, "jobs.csv"));
    cr_assert(same_file(a, b, "timeseries.csv"));
    rm_dir(a);
    rm_dir(b);
    free(a);
    free(b);
}

Test(run, another_seed_gives_other_results)
{
    char *a = tmpdir(), *b = tmpdir();
    cr_assert_eq(run_into(a, true, 1, NULL, 0), 0);
    cr_assert_eq(run_into(b, true, 2, NULL, 0), 0);
    cr_assert_not(same_file(a, b, "run.json"));
    cr_assert_not(same_file(a, b, "jobs.csv"));
    rm_dir(a);
    rm_dir(b);
    free(a);
    free(b);
}

Test(run, the_cli_twice_gives_byte_identical_run_json)
{
    char *a = tmpdir(), *b = tmpdir();
    char cmd[512];
    snprintf(cmd, sizeof cmd, "./slicesim run %s -o %s --seed 11 >/dev/null", DEFAULT_SCENARIO, a);
    cr_assert_eq(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "./slicesim run %s -o %s --seed 11 >/dev/null", DEFAULT_SCENARIO, b);
    cr_assert_eq(system(cmd), 0);
    cr_assert(same_file(a, b, "run.json"));
    /* run_info.json carries the seed and the command, run.json no wall clock or host */
    char *p = path_in(a, "run.json");
    size_t n = 0;
    char *text = slurp(p, &n);
    cr_assert_null(strstr(text, "wall_clock"));
    cr_assert_null(strstr(text, "host"));
    cr_assert_not_null(strstr(text, "\"schema_version\":\t1"));
    cr_assert_not_null(strstr(text, "\"seed\":\t11"));
    cr_assert_null(strstr(text, ":\tnan"));
    cr_assert_null(strstr(text, ":\tinf"));
    cr_assert_null(strstr(text, ":\t-inf"));
    free(text);
    free(p);
    p = path_in(a, "run_info.json");
    text = slurp(p, &n);
    cr_assert_not_null(strstr(text, "\"wall_clock_utc\""));
    cr_assert_not_null(strstr(text, "\"seed\":\t11"));
    free(text);
    free(p);
    rm_dir(a);
    rm_dir(b);
    free(a);
    free(b);
}

Test(run, outputs_have_their_columns_and_counts)
{
    char *a = tmpdir();
    cr_assert_eq(run_into(a, false, 0, NULL, 0), 0);
    char *p = path_in(a, "jobs.csv");
    size_t n = 0;
    char *csv = slurp(p, &n);
    static const char header[] = "id,class,resource,per_worker,workers,mem_bytes,work_s,"
                                 "submit_s,start_s,end_s,wait_s,jct_s,outcome,placement,"
                                 "wait_censored,slowdown\n";
    cr_assert(!strncmp(csv, header, strlen(header)));
    size_t lines = 0, oom = 0;
    for (char *s = csv; (s = strchr(s, '\n')); s++) {
        lines++;
    }
    for (char *s = csv; (s = strstr(s, ",failed_oom,")); s++) {
        oom++;
    }
    /* big-batch-1g: 3 jobs needing 8 GiB on a 1g.5gb instance */
    cr_assert_eq(oom, 3);
    free(csv);
    free(p);
    p = path_in(a, "run.json");
    char *js = slurp(p, &n);
    char want[64];
    snprintf(want, sizeof want, "\"jobs\":\t%zu", lines - 1);
    cr_assert_not_null(strstr(js, want), "run.json lacks %s", want);
    cr_assert_not_null(strstr(js, "\"failed_oom\":\t3"));
    free(js);
    free(p);
    /* timeseries: never more units used than advertised */
    p = path_in(a, "timeseries.csv");
    char *ts = slurp(p, &n);
    char *line = strchr(ts, '\n') + 1;
    size_t rows = 0;
    while (*line) {
        double t;
        unsigned q, r, used, total;
        cr_assert_eq(sscanf(line, "%lf,%u,%u,%u,%u", &t, &q, &r, &used, &total), 5);
        cr_assert_leq(used, total);
        cr_assert_eq(total, 56);
        rows++;
        line = strchr(line, '\n') + 1;
    }
    cr_assert_gt(rows, 10);
    free(ts);
    free(p);
    rm_dir(a);
    free(a);
}

Test(run, bad_input_writes_nothing_and_exits_2)
{
    char *a = tmpdir();
    char *out = path_in(a, "out");
    char cmd[512];
    snprintf(cmd, sizeof cmd,
             "./slicesim run %s -o %s --set workload.jobs[0].rate=fast 2>%s/err.txt",
             DEFAULT_SCENARIO, out, a);
    int st = system(cmd);
    cr_assert(WIFEXITED(st));
    cr_assert_eq(WEXITSTATUS(st), 2);
    struct stat sb;
    cr_assert_neq(stat(out, &sb), 0, "the output directory must not exist");
    char *ep = path_in(a, "err.txt");
    size_t n = 0;
    char *err = slurp(ep, &n);
    cr_assert_str_eq(err, "--set workload.jobs[0].rate=fast: error: workload.jobs[0].rate: "
                          "not a number; expected a rate like 2/h above 0/s, got 'fast'\n");
    free(err);
    remove(ep);
    free(ep);
    free(out);
    rmdir(a);
    free(a);
}

/* Exit status and exact first stderr line of `./slicesim ARGS`. */
static int cli(const char *args, char *err_line, size_t len)
{
    char out[64], cmd[512], bash[600];
    snprintf(out, sizeof out, "/tmp/slicesim-cli-%ld.txt", (long)getpid());
    snprintf(cmd, sizeof cmd,
             "./slicesim %s 2>&1 >/dev/null | head -n 1 > %s; "
             "exit ${PIPESTATUS[0]}",
             args, out);
    snprintf(bash, sizeof bash, "bash -c '%s'", cmd);
    int st = system(bash);
    size_t n = 0;
    char *t = slurp(out, &n);
    snprintf(err_line, len, "%s", t ? t : "");
    free(t);
    remove(out);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(run, bad_flags_are_rejected_precisely)
{
    char e[512];
    cr_assert_eq(cli("run " DEFAULT_SCENARIO " --sed 3", e, sizeof e), 2);
    cr_assert_str_eq(e, "slicesim run: error: unknown option '--sed'; expected: run FILE [-o DIR] "
                        "[--force] [--seed N] [--set PATH=VALUE]...\n");
    cr_assert_eq(cli("run " DEFAULT_SCENARIO " --seed 12x", e, sizeof e), 2);
    cr_assert_str_eq(e, "slicesim run: error: --seed: not a seed; expected an integer from 0 to "
                        "18446744073709551615, got '12x'\n");
    cr_assert_eq(cli("run " DEFAULT_SCENARIO " -o", e, sizeof e), 2);
    cr_assert_str_eq(e, "slicesim run: error: option '-o' needs a value; expected: run FILE "
                        "[-o DIR] [--force] [--seed N] [--set PATH=VALUE]...\n");
    cr_assert_eq(cli("run " DEFAULT_SCENARIO " --set nodes", e, sizeof e), 2);
    cr_assert_str_eq(e, "slicesim run: error: --set: not an assignment; expected PATH=VALUE, got "
                        "'nodes'\n");
    cr_assert_eq(cli("run", e, sizeof e), 2);
    cr_assert_str_eq(e, "slicesim run: error: missing scenario FILE; expected: run FILE [-o DIR] "
                        "[--force] [--seed N] [--set PATH=VALUE]...\n");
    cr_assert_eq(cli("run a.yaml b.yaml", e, sizeof e), 2);
    cr_assert_str_eq(e, "slicesim run: error: unexpected argument 'b.yaml' after the scenario "
                        "'a.yaml'; expected: run FILE [-o DIR] [--force] [--seed N] "
                        "[--set PATH=VALUE]...\n");
    cr_assert_eq(cli("run /nonexistent/s.yaml", e, sizeof e), 1);
    cr_assert_str_eq(e, "slicesim run: error: cannot read '/nonexistent/s.yaml': No such file or "
                        "directory\n");
    cr_assert_eq(cli("policies", e, sizeof e), 0);
}

/* Run the default scenario with one override that makes it bad: the status must be SIM_EINPUT,
 * nothing may be written; the first error line goes to line. */
static void run_bad(const char *set, char *line, size_t len)
{
    char *a = tmpdir();
    char *out = path_in(a, "out");
    const char *sets[] = {set};
    FILE *err = tmpfile();
    run_opts o = {
        .scenario = DEFAULT_SCENARIO, .out_dir = out, .sets = sets, .n_sets = 1, .errors = err};
    cr_assert_eq(run_scenario(&o), SIM_EINPUT);
    struct stat sb;
    cr_assert_neq(stat(out, &sb), 0, "nothing may be written on bad input");
    rewind(err);
    line[0] = '\0';
    cr_assert_not_null(fgets(line, (int)len, err));
    fclose(err);
    free(out);
    rmdir(a);
    free(a);
}

Test(run, a_request_no_node_can_hold_is_an_input_error)
{
    char line[512];
    run_bad("workload.jobs[0].request.nvidia.com/gpu=5", line, sizeof line);
    /* the position is that of jobs[0]'s request mapping in the scenario file */
    size_t n = 0;
    char *text = slurp(DEFAULT_SCENARIO, &n);
    char *at = strstr(text, "request: {nvidia.com/gpu: 4}");
    cr_assert_not_null(at);
    int lineno = 1;
    for (char *p = text; p < at; p++) {
        lineno += *p == '\n';
    }
    char *bol = at;
    while (bol > text && bol[-1] != '\n') {
        bol--;
    }
    char want[512];
    snprintf(want, sizeof want,
             "experiments/default.yaml:%d:%d: error: workload.jobs[0].request: no node can hold "
             "it; expected at most the units one node advertises (nvidia.com/gpu x4, "
             "nvidia.com/mig-1g.5gb x8, nvidia.com/mig-2g.10gb x4, nvidia.com/mig-3g.20gb x4, "
             "nvidia.com/gpu.shared x16), got 5 x 'nvidia.com/gpu'\n",
             lineno, (int)(at - bol) + (int)strlen("request: ") + 1);
    free(text);
    cr_assert_str_eq(line, want);
}

/* The cluster of the default scenario, built as a run builds it. */
Test(run, all_balanced_a100_40gb_advertises_what_mig_parted_lists)
{
    arena *a = arena_create();
    diag *d = diag_create();
    scenario_spec *s = NULL;
    cr_assert_eq(scenario_load_file(DEFAULT_SCENARIO, NULL, 0, 0, a, d, &s), 0);
    gpu_catalog cat;
    cr_assert_eq(catalog_load_default(a, &cat, d), 0);
    cluster_cfg cc;
    build_cluster(a, s, &cat, &cc);
    cr_assert_eq(diag_error_count(d), 0);
    cluster *c = NULL;
    char why[128];
    cr_assert_eq(cluster_create(&cc, &c, why, sizeof why), 0);
    /* node groups: whole x2, mig x2, shared x1, 4 GPUs each */
    cr_assert_eq(cluster_n_nodes(c), 5);
    cr_assert_str_eq(cluster_node_name(c, 2), "mig-0");
    /* all-balanced for A100-40GB in experiments/mig/config-default.yaml (after mig-parted's
     * own file): 1g.5gb x2, 2g.10gb x1, 3g.20gb x1 per GPU, four GPUs per node */
    const char *names[] = {"nvidia.com/mig-1g.5gb", "nvidia.com/mig-2g.10gb",
                           "nvidia.com/mig-3g.20gb", "nvidia.com/gpu", "nvidia.com/gpu.shared"};
    uint32_t per_node_mig0[] = {8, 4, 4, 0, 0};
    uint32_t per_node_whole0[] = {0, 0, 0, 4, 0};
    uint32_t per_node_shared0[] = {0, 0, 0, 0, 16}; /* 4 replicas, renameByDefault */
    for (size_t i = 0; i < 5; i++) {
        res_id r;
        cr_assert(cluster_resource_find(c, names[i], &r), "%s not advertised", names[i]);
        cr_assert_eq(cluster_capacity(c, 2, r), per_node_mig0[i], "%s", names[i]);
        cr_assert_eq(cluster_capacity(c, 0, r), per_node_whole0[i], "%s", names[i]);
        cr_assert_eq(cluster_capacity(c, 4, r), per_node_shared0[i], "%s", names[i]);
    }
    /* placements follow model/hw/mig.h: valid, and instance memory/SMs come from the catalog */
    const cluster_gpu *g = cluster_gpu_get(c, 8); /* mig-0, GPU 0 */
    cr_assert(g->mig_enabled);
    cr_assert_eq(g->n_devs, 4);
    const gpu_type *t = gpu_catalog_find(&cat, "A100-SXM4-40GB");
    for (dev_id k = g->first_dev; k < g->first_dev + g->n_devs; k++) {
        const cluster_device *dv = cluster_device_get(c, k);
        cr_assert_eq(dv->sms, gpu_find_profile(t, dv->profile->name)->sms);
        cr_assert_eq(dv->mem_bytes, gpu_find_profile(t, dv->profile->name)->mem_bytes);
    }
    cluster_destroy(c);
    diag_destroy(d);
    arena_destroy(a);
}

Test(synth, adding_a_class_leaves_the_other_classes_draws_unchanged)
{
    synth_class a = {.name = "a",
                     .req = {"nvidia.com/gpu", 1, 1},
                     .interarrival_s = {SYNTH_EXPONENTIAL, 60, 0},
                     .duration_s = {SYNTH_LOGNORMAL, 600, 0.5},
                     .count = 50};
    synth_class b = {.name = "b",
                     .req = {"nvidia.com/gpu", 1, 1},
                     .interarrival_s = {SYNTH_EXPONENTIAL, 30, 0},
                     .duration_s = {SYNTH_EXPONENTIAL, 100, 0},
                     .count = 80};
    synth_class both[2] = {b, a};
    rng_root root = rng_root_make(42);
    job_table *t1 = job_table_create(), *t2 = job_table_create();
    cr_assert_eq(drain(&a, 1, &root, SIM_TIME_MAX, t1), 50);
    cr_assert_eq(drain(both, 2, &root, SIM_TIME_MAX, t2), 130);
    size_t k = 0;
    for (job_id i = 0; i < job_table_count(t2); i++) {
        const job *j = job_table_get(t2, i);
        if (strcmp(j->spec.class_name, "a") != 0) {
            continue;
        }
        const job *o = job_table_get(t1, (job_id)k++);
        cr_assert_eq(j->spec.submit, o->spec.submit);
        cr_assert_eq(j->spec.work_s, o->spec.work_s);
    }
    cr_assert_eq(k, 50);
    /* chronological ids */
    for (job_id i = 1; i < job_table_count(t2); i++) {
        cr_assert_geq(job_table_get(t2, i)->spec.submit, job_table_get(t2, i - 1)->spec.submit);
    }
    job_table_destroy(t1);
    job_table_destroy(t2);
}

/* A rate below ~1e-10/s draws inter-arrival times past sim_time's range (+-292 years): the
 * generator stops at the horizon instead of asserting in the conversion (issue 22). Mean 1e11 s
 * between arrivals: the first one lies far past the 24 h horizon and past 9.2e9 s. */
Test(synth, a_rate_below_1e_minus_10_per_s_gives_no_job_instead_of_aborting)
{
    synth_class rare = {.name = "rare",
                        .req = {"nvidia.com/gpu", 1, 1},
                        .interarrival_s = {SYNTH_EXPONENTIAL, 1e11, 0},
                        .duration_s = {SYNTH_FIXED, 3600, 0}};
    synth_class fixed = rare;
    fixed.interarrival_s = (synth_dist){SYNTH_FIXED, 1e12, 0};
    fixed.count = 3; /* a count cannot push it past the horizon either */
    rng_root root = rng_root_make(1);
    job_table *t = job_table_create();
    cr_assert_eq(drain(&rare, 1, &root, sim_time_from_s(86400), t), 0);
    cr_assert_eq(drain(&fixed, 1, &root, sim_time_from_s(86400), t), 0);
    cr_assert_eq(job_table_count(t), 0);
    job_table_destroy(t);
}

Test(run, a_missing_profile_file_is_an_input_error)
{
    char line[512];
    run_bad("workload.jobs[6].profile=no-such-profile.yaml", line, sizeof line);
    cr_assert_str_eq(line, "--set workload.jobs[6].profile=no-such-profile.yaml: error: "
                           "workload.jobs[6].profile: cannot read the profile; expected a "
                           "readable profile.yaml, got 'experiments/no-such-profile.yaml' (No "
                           "such file or directory)\n");
}

Test(run, an_unknown_library_profile_lists_the_library)
{
    char line[512];
    run_bad("workload.jobs[6].profile=vit", line, sizeof line);
    cr_assert_str_eq(line, "--set workload.jobs[6].profile=vit: error: workload.jobs[6].profile: "
                           "unknown workload profile; expected a library profile "
                           "[bert-base-train, cern-finetune, resnet50-train, simpletrack, "
                           "vit-b16-infer, yolos-small-infer] or a path to a profile .yaml, got "
                           "'vit'\n");
}

/* Replace every occurrence of `from` in text by `to` (new malloc'd string). */
static char *replace_all(const char *text, const char *from, const char *to)
{
    size_t n = 0, lf = strlen(from), lt = strlen(to);
    for (const char *p = text; (p = strstr(p, from)); p += lf) {
        n++;
    }
    char *out = malloc(strlen(text) + n * (lt + 1) + 1), *o = out;
    for (const char *p = text;;) {
        const char *q = strstr(p, from);
        if (!q) {
            strcpy(o, p);
            break;
        }
        memcpy(o, p, (size_t)(q - p));
        o += q - p;
        memcpy(o, to, lt);
        o += lt;
        p = q + lf;
    }
    return out;
}

/* "class,submit_s -> start_s,end_s,outcome,placement" lines of a jobs.csv, sorted. */
static char *job_keys(const char *csv_path, const char *skip_class)
{
    size_t n = 0;
    char *csv = slurp(csv_path, &n);
    cr_assert_not_null(csv);
    char *out = calloc(1, n + 1), *o = out;
    char *line = strchr(csv, '\n') + 1;
    while (*line) {
        char *end = strchr(line, '\n');
        *end = '\0';
        char *f[14];
        size_t k = 0;
        for (char *p = line; k < 14; k++) {
            f[k] = p;
            p = strchr(p, ',');
            if (!p) {
                k++;
                break;
            }
            *p++ = '\0';
        }
        if (strcmp(f[1], skip_class) != 0) {
            o += sprintf(o, "%s,%s,%s,%s,%s,%s\n", f[1], f[7], f[8], f[9], f[12], f[13]);
        }
        line = end + 1;
    }
    free(csv);
    return out;
}

/* Adding a job class (its own RNG streams, its own MIG resource on an added node group) leaves
 * every other job's submission, start, end, outcome and placement unchanged. */
Test(run, an_unrelated_class_leaves_the_other_jobs_unchanged)
{
    char cwd[512];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    size_t n = 0;
    char *text = slurp(DEFAULT_SCENARIO, &n);
    char abs_mig[600], abs_ts[600];
    snprintf(abs_mig, sizeof abs_mig, "file: %s/experiments/mig/", cwd);
    snprintf(abs_ts, sizeof abs_ts, "file: %s/experiments/sharing/", cwd);
    char *t1 = replace_all(text, "file: mig/", abs_mig);
    char *base = replace_all(t1, "file: sharing/", abs_ts);
    char extra_mig[1024];
    snprintf(extra_mig, sizeof extra_mig,
             "    - name: extra\n      gpu: A100-SXM4-40GB\n      gpus_per_node: 8\n"
             "      sharing:\n        mig: {%sconfig-default.yaml, config: all-7g.40gb}\n\n"
             "workload:",
             abs_mig);
    char *t2 = replace_all(base, "\nworkload:", extra_mig);
    char *more = replace_all(t2, "\npolicy:",
                             "    - name: unrelated\n      rate: 1/h\n      count: 5\n"
                             "      duration: 10m\n      request: {nvidia.com/mig-7g.40gb: 1}\n"
                             "\npolicy:");
    char *dir = tmpdir();
    char *a_yaml = path_in(dir, "a.yaml"), *b_yaml = path_in(dir, "b.yaml");
    FILE *f = fopen(a_yaml, "w");
    fputs(base, f);
    fclose(f);
    f = fopen(b_yaml, "w");
    fputs(more, f);
    fclose(f);
    char *a_out = path_in(dir, "a"), *b_out = path_in(dir, "b");
    FILE *devnull = fopen("/dev/null", "w");
    run_opts o = {.scenario = a_yaml, .out_dir = a_out, .summary = devnull, .errors = stderr};
    cr_assert_eq(run_scenario(&o), 0);
    o.scenario = b_yaml;
    o.out_dir = b_out;
    cr_assert_eq(run_scenario(&o), 0);
    fclose(devnull);
    char *ja = path_in(a_out, "jobs.csv"), *jb = path_in(b_out, "jobs.csv");
    char *ka = job_keys(ja, "unrelated"), *kb = job_keys(jb, "unrelated");
    cr_assert_gt(strlen(ka), 1000);
    cr_assert_str_eq(ka, kb);
    char *all_b = job_keys(jb, "");
    cr_assert_gt(strlen(all_b), strlen(kb), "the unrelated class made no jobs");
    free(all_b);
    free(ka);
    free(kb);
    free(ja);
    free(jb);
    rm_dir(a_out);
    rm_dir(b_out);
    remove(a_yaml);
    remove(b_yaml);
    rmdir(dir);
    free(a_out);
    free(b_out);
    free(a_yaml);
    free(b_yaml);
    free(dir);
    free(text);
    free(t1);
    free(t2);
    free(base);
    free(more);
}

/* Run `yaml` (written to a scenario file in a temporary directory); returns run.json's text. */
static char *run_text(const char *yaml, size_t *n_failed_request_rows)
{
    char *a = tmpdir();
    char *scen = path_in(a, "scenario.yaml");
    FILE *f = fopen(scen, "w");
    cr_assert_not_null(f);
    fputs(yaml, f);
    fclose(f);
    FILE *devnull = fopen("/dev/null", "w");
    run_opts o = {
        .scenario = scen, .out_dir = a, .summary = devnull, .errors = devnull, .verify_every = 1};
    cr_assert_eq(run_scenario(&o), 0);
    fclose(devnull);
    size_t n = 0;
    char *p = path_in(a, "jobs.csv");
    char *csv = slurp(p, &n);
    *n_failed_request_rows = 0;
    for (char *s = csv; (s = strstr(s, ",failed_request,")); s++) {
        (*n_failed_request_rows)++;
    }
    free(csv);
    free(p);
    p = path_in(a, "run.json");
    char *js = slurp(p, &n);
    free(p);
    remove(scen);
    free(scen);
    rm_dir(a);
    free(a);
    return js;
}

Test(run, fail_requests_greater_than_one_fails_two_replica_jobs_and_runs_the_rest)
{
    static const char yaml[] = "name: failreq\n"
                               "seed: 1\n"
                               "horizon: 1d\n"
                               "cluster:\n"
                               "  nodes:\n"
                               "    - name: ts\n"
                               "      gpu: A100-SXM4-40GB\n"
                               "      gpus_per_node: 1\n"
                               "      sharing:\n"
                               "        timeslice: {replicas: 4, "
                               "fail_requests_greater_than_one: FLAG}\n"
                               "workload:\n"
                               "  jobs:\n"
                               "    - {name: two, arrival: fixed, interval: 1h, count: 2, "
                               "duration: 10m, request: {nvidia.com/gpu: 2}}\n"
                               "    - {name: one, arrival: fixed, interval: 1h, count: 3, "
                               "duration: 10m, request: {nvidia.com/gpu: 1}}\n"
                               "policy:\n"
                               "  scheduler: fifo\n";
    size_t rows = 0;
    char *text = replace_all(yaml, "FLAG", "true");
    char *js = run_text(text, &rows);
    cr_assert_eq(rows, 2);
    cr_assert_not_null(strstr(js, "\"failed_request\":\t2"));
    cr_assert_not_null(strstr(js, "\"done\":\t3"));
    cr_assert_not_null(strstr(js, "\"fail_requests_greater_than_one\":\ttrue"));
    free(js);
    free(text);
    text = replace_all(yaml, "FLAG", "false");
    js = run_text(text, &rows);
    cr_assert_eq(rows, 0);
    cr_assert_not_null(strstr(js, "\"failed_request\":\t0"));
    cr_assert_not_null(strstr(js, "\"done\":\t5"));
    free(js);
    free(text);
}
