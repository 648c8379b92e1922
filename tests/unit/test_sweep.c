/* Sweeps (experiments/sweep.h, tools/sweep_run.h, `slicesim sweep`): seeds, the order of
 * combinations, a hand-solved summary, the confidence interval, byte-identical points under
 * -j 1, -j 2 and 2 MPI ranks, resuming, and the bad-input corpus tests/bad_input/sweep/.
 * mpirun is Debian's openmpi-bin (tools/install-deps.sh installs it with libopenmpi-dev): a
 * missing mpirun fails the MPI test, it is not skipped. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "experiments/fileio.h"
#include "experiments/sweep.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "tests/unit/browser.h"
#include "tests/unit/corpus.h"
#include "tests/unit/sh.h"
#include "tools/sha256.h"
#include "tools/sweep_mpi.h"

#define HAND "tests/reports/sweep-hand.yaml"
#define SMALL "tests/reports/sweep-small.yaml"

static char *mkdir_tmp(void)
{
    char tmpl[] = "/tmp/slicesim-sweep-XXXXXX";
    cr_assert_not_null(mkdtemp(tmpl));
    return strdup(tmpl);
}

static void rm_tree(char *dir)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_assert_eq(system(cmd), 0);
    free(dir);
}

static cJSON *read_json(const char *dir, const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *buf;
    size_t len;
    cr_assert_eq(fileio_read_all(path, FILEIO_MAX_BYTES, &buf, &len), 0, "cannot read %s", path);
    cJSON *j = cJSON_ParseWithLength(buf, len);
    free(buf);
    cr_assert_not_null(j, "%s is not JSON", path);
    return j;
}

/* summary.json: combinations[c].figures[name][what] */
static const cJSON *fig(const cJSON *summary, int c, const char *name, const char *what)
{
    const cJSON *combos = cJSON_GetObjectItemCaseSensitive(summary, "combinations");
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(combos, c), "figures"), name);
    return cJSON_GetObjectItemCaseSensitive(f, what);
}

static void sweep_into(const char *file, const char *dir, const char *extra)
{
    char cmd[512], out[4096];
    snprintf(cmd, sizeof cmd, "./slicesim sweep %s -o %s %s 2>&1", file, dir, extra);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s: %s", cmd, out);
}

/* Identical trees apart from run_info.json and point_info.json (the wall clock). */
static void assert_same_tree(const char *a, const char *b)
{
    char cmd[512], out[4096];
    snprintf(cmd, sizeof cmd, "diff -r -x run_info.json -x point_info.json %s %s 2>&1", a, b);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s and %s differ:\n%s", a, b, out);
}

Test(sweep, replication_seeds_are_the_master_then_distinct_derived_ones)
{
    cr_assert_eq(sweep_seed(42, 0), 42u, "replication 0 is `slicesim run` with the same seed");
    enum { N = 1000 };
    static uint64_t s[N];
    for (uint32_t r = 0; r < N; r++) {
        s[r] = sweep_seed(42, r);
        for (uint32_t q = 0; q < r; q++) {
            cr_assert_neq(s[q], s[r], "replications %u and %u share a seed", q, r);
        }
    }
    cr_assert_neq(sweep_seed(43, 1), sweep_seed(42, 1), "derived from the master seed");
}

Test(sweep, combinations_vary_the_last_axis_fastest)
{
    arena *a = arena_create();
    diag *d = diag_create();
    sweep_spec *sw = NULL;
    char *text = NULL;
    size_t len = 0;
    cr_assert_eq(fileio_read_all(SMALL, 1 << 20, &text, &len), 0);
    cr_assert_eq(sweep_load_buffer(SMALL, text, len, a, d, &sw), 0);
    free(text);
    cr_assert_not_null(sw);
    cr_assert_eq(sw->n_axes, 2);
    cr_assert_eq(sw->n_combos, 4);
    cr_assert_eq(sw->replications, 2);
    cr_assert_eq(sw->n_points, 8);
    size_t idx[2];
    sweep_combo_values(sw, 1, idx);
    cr_expect(idx[0] == 0 && idx[1] == 1);
    sweep_combo_values(sw, 2, idx);
    cr_expect(idx[0] == 1 && idx[1] == 0);
    cr_expect_str_eq(sw->axes[0].labels[1], "3");
    cr_expect_str_eq(sw->axes[1].labels[0], "{timeslice: {replicas: 2, rename_by_default: true}}");
    diag_destroy(d);
    arena_destroy(a);
}

Test(sweep, hand_solved_waits_per_combination, .timeout = 60)
{
    char *dir = mkdir_tmp();
    sweep_into(HAND, dir, "");
    cJSON *s = read_json(dir, "summary.json");
    /* tests/reports/sweep-hand.yaml: waits 0, 900, 1800, 2700 s on 1 GPU; 0, 0, 300, 300 s on
     * 2. p95 interpolates linearly between order statistics (index 0.95 x 3 = 2.85):
     * 1800 + 0.85 x 900 = 2565 s and 300 s. JCT = wait + 1500 s. */
    cr_expect_float_eq(fig(s, 0, "wait_mean_s", "mean")->valuedouble, 1350, 1e-9);
    cr_expect_float_eq(fig(s, 0, "wait_p95_s", "mean")->valuedouble, 2565, 1e-9);
    cr_expect_float_eq(fig(s, 0, "jct_mean_s", "mean")->valuedouble, 2850, 1e-9);
    cr_expect_float_eq(fig(s, 1, "wait_mean_s", "mean")->valuedouble, 150, 1e-9);
    cr_expect_float_eq(fig(s, 1, "wait_p95_s", "mean")->valuedouble, 300, 1e-9);
    cr_expect_float_eq(fig(s, 1, "jct_mean_s", "mean")->valuedouble, 1650, 1e-9);
    /* nothing random: three equal replications, a zero-width interval */
    cr_expect_eq(fig(s, 0, "wait_mean_s", "n")->valueint, 3);
    cr_expect_float_eq(fig(s, 0, "wait_mean_s", "ci95")->valuedouble, 0, 1e-12);
    cJSON_Delete(s);
    rm_tree(dir);
}

Test(sweep, interval_is_student_t_over_replications, .timeout = 60)
{
    char *dir = mkdir_tmp();
    sweep_into(SMALL, dir, "");
    cJSON *s = read_json(dir, "summary.json");
    char pdir[512];
    snprintf(pdir, sizeof pdir, "%s/points/c0-r0", dir);
    cJSON *p0 = read_json(pdir, "point.json");
    snprintf(pdir, sizeof pdir, "%s/points/c0-r1", dir);
    cJSON *p1 = read_json(pdir, "point.json");
    double a = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p0, "figures"),
                                                "jct_mean_s")
                   ->valuedouble;
    double b = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p1, "figures"),
                                                "jct_mean_s")
                   ->valuedouble;
    cr_assert_neq(a, b, "the two replications should differ (distinct seeds)");
    /* n = 2: mean (a+b)/2, s = |a-b|/sqrt 2, half-width t s / sqrt 2 with t the 0.975 quantile
     * of Student t with 1 degree of freedom (Cauchy): tan(pi (0.975 - 0.5)) = 12.7062... */
    double t = tan(0.475 * 3.14159265358979323846);
    cr_expect_float_eq(fig(s, 0, "jct_mean_s", "mean")->valuedouble, (a + b) / 2, 1e-9);
    cr_expect_float_eq(fig(s, 0, "jct_mean_s", "ci95")->valuedouble, t * fabs(a - b) / 2,
                       1e-9 * t * fabs(a - b));
    cJSON_Delete(p0);
    cJSON_Delete(p1);
    cJSON_Delete(s);
    /* the sweep's page: its table and both frontiers, in Chromium without a console message */
    cr_assert_eq(system("command -v chromium >/dev/null"), 0,
                 "chromium is not installed (Debian package chromium)");
    char page[512];
    snprintf(page, sizeof page, "%s/report.html", dir);
    /* on the heap: a static one lies in every test process's .bss, which LeakSanitizer
     * reads through at each exit (the ASan tests' time) */
    char *dom = malloc(1 << 20);
    cr_assert_not_null(dom);
    static char msgs[4096];
    cr_expect_eq(test_chromium_console(page, dom, 1 << 20, msgs, sizeof msgs), 0, "%s", msgs);
    static const char *const ids[] = {"summary", "frontier-wait", "frontier-jct"};
    for (size_t i = 0; i < 3; i++) {
        char want[64];
        snprintf(want, sizeof want, "<section id=\"%s\">", ids[i]);
        const char *sec = strstr(dom, want);
        cr_expect_not_null(sec, "no %s", want);
        cr_expect(i == 0 || (sec && strstr(sec, "<svg")), "%s has no plot", ids[i]);
    }
    free(dom);
    rm_tree(dir);
}

Test(sweep, workers_give_the_same_files_and_a_resumed_sweep_too, .timeout = 120)
{
    char *one = mkdir_tmp(), *two = mkdir_tmp();
    sweep_into(SMALL, one, "-j 1");
    sweep_into(SMALL, two, "-j 2");
    assert_same_tree(one, two);
    /* an interrupted sweep: one point never finished (no point.json), another never started,
     * no summary yet; starting it again runs just those two */
    char cmd[600], out[4096];
    snprintf(cmd, sizeof cmd,
             "rm %s/points/c1-r0/point.json && rm -r %s/points/c3-r1 && rm %s/summary.csv "
             "%s/summary.json && ./slicesim sweep %s -o %s -j 2",
             two, two, two, two, SMALL, two);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "2 run now, 6 were done"), "%s", out);
    assert_same_tree(one, two);
    rm_tree(one);
    rm_tree(two);
}

Test(sweep, two_mpi_ranks_give_the_same_files, .timeout = 120)
{
    cr_assert_eq(system("command -v mpirun >/dev/null"), 0,
                 "mpirun is not installed (Debian package openmpi-bin)");
    char *one = mkdir_tmp(), *mpi = mkdir_tmp();
    sweep_into(SMALL, one, "-j 1");
    /* Open MPI refuses root without --allow-run-as-root; --oversubscribe lets 2 ranks start on
     * a 1-core machine. LeakSanitizer (ASan builds) reports Open MPI's own allocations left at
     * exit, which are not slicesim's. */
    char cmd[600], out[8192];
    snprintf(cmd, sizeof cmd,
             "ASAN_OPTIONS=detect_leaks=0 mpirun %s --oversubscribe -np 2 ./slicesim sweep %s -o "
             "%s 2>&1",
             getuid() == 0 ? "--allow-run-as-root" : "", SMALL, mpi);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s:\n%s", cmd, out);
    cr_expect_not_null(strstr(out, "8 run now, 0 were done; 2 ranks x 1 worker"), "%s", out);
    assert_same_tree(one, mpi);
    rm_tree(one);
    rm_tree(mpi);
}

Test(sweep, bad_input_corpus_gives_exact_messages_and_writes_nothing, .timeout = 60)
{
    char *dir = mkdir_tmp();
    cr_expect_geq(test_bad_corpus("tests/bad_input/sweep", "sweep", 1, dir), 6);
    rm_tree(dir);
}

Test(sweep, service_figures_are_the_worst_service_of_the_run, .timeout = 120)
{
    /* point.json's service figures against the same run's run.json: the largest p95 and p99
     * request latency over the services, and the smallest share served within SLO */
    char *dir = mkdir_tmp();
    sweep_into("tests/reports/sweep-services.yaml", dir, "");
    char pdir[512];
    snprintf(pdir, sizeof pdir, "%s/points/c0-r0", dir);
    cJSON *pt = read_json(pdir, "point.json"), *run = read_json(pdir, "run.json");
    const cJSON *figs = cJSON_GetObjectItemCaseSensitive(pt, "figures");
    const cJSON *svcs = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(run, "metrics"), "services");
    cr_assert_geq(cJSON_GetArraySize(svcs), 2);
    double p95 = 0, p99 = 0, att = 1;
    const cJSON *s;
    cJSON_ArrayForEach(s, svcs)
    {
        const cJSON *lat = cJSON_GetObjectItemCaseSensitive(s, "latency_s");
        double a = cJSON_GetObjectItemCaseSensitive(lat, "p95")->valuedouble;
        double b = cJSON_GetObjectItemCaseSensitive(lat, "p99")->valuedouble;
        double c = cJSON_GetObjectItemCaseSensitive(s, "slo_attainment")->valuedouble;
        p95 = a > p95 ? a : p95;
        p99 = b > p99 ? b : p99;
        att = c < att ? c : att;
    }
    cr_expect_float_eq(cJSON_GetObjectItemCaseSensitive(figs, "service_latency_p95_s")->valuedouble,
                       p95, 1e-12);
    cr_expect_float_eq(cJSON_GetObjectItemCaseSensitive(figs, "service_latency_p99_s")->valuedouble,
                       p99, 1e-12);
    cr_expect_float_eq(cJSON_GetObjectItemCaseSensitive(figs, "service_attainment")->valuedouble,
                       att, 1e-12);
    cJSON_Delete(pt);
    cJSON_Delete(run);
    rm_tree(dir);
}

Test(sweep, sha256_gives_the_standards_examples)
{
    /* FIPS 180-2 appendix B: "abc", the 448-bit two-block message, one million 'a' */
    static const struct {
        const char *msg;
        size_t repeat;
        const char *want;
    } ex[] = {
        {"abc", 1, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 1,
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"a", 1000000, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"},
    };
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
        sha256_ctx c;
        char hex[SHA256_HEX_LEN + 1];
        sha256_init(&c);
        for (size_t r = 0; r < ex[i].repeat; r++) {
            sha256_update(&c, ex[i].msg, strlen(ex[i].msg));
        }
        sha256_final_hex(&c, hex);
        cr_expect_str_eq(hex, ex[i].want, "example %zu", i);
    }
}

/* Run `cmd` (stderr captured too); expect exit status `want` and `part` in what it printed. */
static void expect_sh(const char *cmd, int want, const char *part)
{
    char out[8192];
    int rc = test_sh(cmd, out, sizeof out);
    cr_expect_eq(rc, want, "%s: exit %d, expected %d:\n%s", cmd, rc, want, out);
    cr_expect_not_null(strstr(out, part), "%s: expected '%s' in:\n%s", cmd, part, out);
}

Test(sweep, other_inputs_are_refused_and_force_runs_every_point_again, .timeout = 120)
{
    char *dir = mkdir_tmp(), *fresh = mkdir_tmp();
    char cmd[1024], want[1024];
    sweep_into(SMALL, dir, "");
    /* the same inputs resume (nothing to run); a --set seed does not */
    snprintf(cmd, sizeof cmd, "./slicesim sweep %s -o %s 2>&1", SMALL, dir);
    expect_sh(cmd, 0, "0 run now, 8 were done");
    snprintf(cmd, sizeof cmd, "./slicesim sweep %s -o %s --set seed=8 2>&1", SMALL, dir);
    snprintf(want, sizeof want,
             "slicesim sweep: error: output directory '%s' holds points computed from other "
             "inputs (%s/inputs.json: the --set values, the seed differ); expected the same "
             "scenario, seed, --set values and input files to resume, or --force to run every "
             "point again\n",
             dir, dir);
    char out[4096];
    cr_expect_eq(test_sh(cmd, out, sizeof out), 2);
    cr_expect_str_eq(out, want);
    /* --force: every point again, the same files as a fresh sweep of the new inputs */
    snprintf(cmd, sizeof cmd, "./slicesim sweep %s -o %s --set seed=8 --force 2>&1", SMALL, dir);
    expect_sh(cmd, 0, "8 run now, 0 were done");
    sweep_into(SMALL, fresh, "--set seed=8");
    assert_same_tree(dir, fresh);
    /* points without a record of their inputs (an older slicesim's) are refused too */
    snprintf(cmd, sizeof cmd, "rm %s/inputs.json && ./slicesim sweep %s -o %s --set seed=8 2>&1",
             dir, SMALL, dir);
    expect_sh(cmd, 2, "holds a sweep's points but no record of their inputs");
    rm_tree(dir);
    rm_tree(fresh);
}

Test(sweep, a_changed_referenced_file_is_named, .timeout = 120)
{
    /* the scenario and its device-plugin config in one folder; the config's replicas change */
    char *dir = mkdir_tmp();
    char path[512], cmd[1024], text[2048];
    snprintf(path, sizeof path, "%s/ts.yaml", dir);
    cr_assert(test_write_text(path, "version: v1\nsharing:\n  timeSlicing:\n    renameByDefault: "
                                    "true\n    resources:\n      - name: nvidia.com/gpu\n"
                                    "        replicas: 2\n"));
    snprintf(text, sizeof text,
             "name: s\nseed: 1\nhorizon: 2h\ncluster:\n  nodes:\n    - {name: a, gpu: "
             "A100-SXM4-40GB, gpus_per_node: 2, sharing: {timeslice: {file: ts.yaml}}}\n"
             "workload:\n  jobs:\n    - {name: j, rate: 4/h, duration: 10m, request: "
             "{nvidia.com/gpu.shared: 1}}\noutputs: {files: [run.json]}\n"
             "sweep:\n  axes:\n    - {path: \"cluster.nodes[0].count\", values: [1, 2]}\n");
    snprintf(path, sizeof path, "%s/s.yaml", dir);
    cr_assert(test_write_text(path, text));
    snprintf(cmd, sizeof cmd, "./slicesim sweep %s -o %s/out 2>&1", path, dir);
    expect_sh(cmd, 0, "2 run now");
    snprintf(cmd, sizeof cmd,
             "sed -i 's/replicas: 2/replicas: 3/' %s/ts.yaml && ./slicesim sweep %s -o %s/out "
             "2>&1",
             dir, path, dir);
    snprintf(text, sizeof text, "(%s/out/inputs.json: input file '%s/ts.yaml' differs)", dir, dir);
    expect_sh(cmd, 2, text);
    rm_tree(dir);
}

Test(sweep, a_directory_in_use_is_refused_naming_its_holder, .timeout = 60)
{
    char *dir = mkdir_tmp();
    char path[512], cmd[1024], want[256];
    snprintf(path, sizeof path, "%s/.lock", dir);
    int fd = open(path, O_RDWR | O_CREAT, 0644);
    cr_assert_geq(fd, 0);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    cr_assert_eq(fcntl(fd, F_SETLK, &fl), 0);
    snprintf(want, sizeof want, "is in use by another slicesim (pid %ld: '", (long)getpid());
    const char *cmds[] = {"sweep", "plan"};
    const char *files[] = {SMALL, "experiments/examples/plan-a100-pool.yaml"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "./slicesim %s %s -o %s 2>&1", cmds[i], files[i], dir);
        expect_sh(cmd, 1, want);
    }
    snprintf(cmd, sizeof cmd, "ls %s/points 2>&1", dir);
    expect_sh(cmd, 2, "No such file"); /* refused before any point ran */
    close(fd);
    rm_tree(dir);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

Test(sweep, sigterm_to_the_parent_stops_its_workers, .timeout = 120)
{
    char *dir = mkdir_tmp();
    char first[600];
    snprintf(first, sizeof first, "%s/points", dir);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) { /* its own process group: the workers are found through it afterwards */
        setpgid(0, 0);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, STDOUT_FILENO);
        dup2(null, STDERR_FILENO);
        execl("./slicesim", "slicesim", "sweep", SMALL, "-o", dir, "-j", "2", "--set",
              "horizon=3000h", (char *)NULL);
        _exit(127);
    }
    setpgid(pid, pid);
    /* wait until the workers are running (the points folder is made by the first of them) */
    for (int i = 0; i < 2000 && access(first, F_OK) != 0; i++) {
        sleep_ms(5);
    }
    cr_assert_eq(access(first, F_OK), 0, "the sweep did not start");
    sleep_ms(200);
    cr_assert_eq(kill(pid, SIGTERM), 0);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGTERM, "status %d", st);
    /* no worker outlives the parent: the process group is empty */
    errno = 0;
    cr_expect_eq(kill(-pid, 0), -1, "a worker of the sweep is still running");
    cr_expect_eq(errno, ESRCH);
    /* nothing is written after the parent exited: the tree stays as it is, with no staged
     * file and no summary */
    char cmd[1024], before[8192], after[8192];
    snprintf(cmd, sizeof cmd, "cd %s && find . | sort", dir);
    test_sh(cmd, before, sizeof before);
    sleep_ms(1500);
    test_sh(cmd, after, sizeof after);
    cr_expect_str_eq(after, before);
    cr_expect_null(strstr(after, ".tmp"), "%s", after);
    cr_expect_null(strstr(after, "summary.json"), "%s", after);
    /* and the sweep resumes from there to the files of an uninterrupted one */
    char *whole = mkdir_tmp();
    sweep_into(SMALL, dir, "-j 2 --set horizon=3000h");
    sweep_into(SMALL, whole, "-j 2 --set horizon=3000h");
    assert_same_tree(dir, whole);
    rm_tree(dir);
    rm_tree(whole);
}

Test(sweep, set_overrides_reach_the_sweep_and_plan_sections, .timeout = 120)
{
    char *dir = mkdir_tmp();
    char cmd[1024], out[4096];
    /* acted on: one replication instead of the file's two */
    snprintf(cmd, sizeof cmd, "./slicesim sweep %s -o %s/a --set sweep.replications=1 2>&1",
             SMALL, dir);
    expect_sh(cmd, 0, "sweep: 4 points (4 combinations x 1 replications): 4 run now");
    /* an unknown key there is refused, by sweep and by check alike */
    const char *cmds[] = {"sweep", "check"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "./slicesim %s %s %s --set sweep.replication=3 2>&1", cmds[i],
                 SMALL, i == 0 ? "-o /nonexistent/x" : "");
        cr_expect_eq(test_sh(cmd, out, sizeof out), 2, "%s", cmd);
        cr_expect_str_eq(out, "--set sweep.replication=3: error: sweep.replication: unknown key; "
                              "expected one of [replications, axes], got 'replication'\n");
    }
    /* a plan's SLO: plan and check refuse the same typo with the same message */
    const char *plan = "experiments/examples/plan-a100-pool.yaml";
    const char *pcmds[] = {"plan", "check"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd, "./slicesim %s %s %s --set plan.slo.wait_p99=10m 2>&1",
                 pcmds[i], plan, i == 0 ? "-o /nonexistent/x" : "");
        cr_expect_eq(test_sh(cmd, out, sizeof out), 2, "%s", cmd);
        cr_expect_str_eq(out, "--set plan.slo.wait_p99=10m: error: plan.slo.wait_p99: unknown "
                              "key; expected one of [wait_mean, wait_p95, jct_mean, jct_p95, "
                              "slowdown_mean, failed, latency_p95, latency_p99, attainment], "
                              "got 'wait_p99'\n");
    }
    /* and a plan's axes are acted on: check counts the candidates' runs under the override */
    snprintf(cmd, sizeof cmd, "./slicesim check %s --set plan.replications=1 2>&1", plan);
    expect_sh(cmd, 0, "sweep of 24 points (24 combinations x 1 replication): every combination checked");
    rm_tree(dir);
}

Test(sweep, a_point_is_run_with_set_of_its_values_flow_mappings_included, .timeout = 120)
{
    /* docs/sweeps-and-plans.md: a one-replication point is exactly `slicesim run FILE --set ...`, with a mapping
     * value written as the summary (and plan's answer) prints it */
    char *dir = mkdir_tmp();
    char cmd[1024], out[4096];
    sweep_into(SMALL, dir, "");
    snprintf(cmd, sizeof cmd,
             "./slicesim run %s -o %s/run --set cluster.nodes[0].gpus_per_node=3 --set "
             "'cluster.nodes[1].sharing={timeslice: {replicas: 4, rename_by_default: true}}' "
             ">/dev/null 2>&1 && cmp %s/run/run.json %s/points/c3-r0/run.json && cmp "
             "%s/run/jobs.csv %s/points/c3-r0/jobs.csv",
             SMALL, dir, dir, dir, dir, dir);
    cr_expect_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    /* a value that is not one flow mapping or sequence is refused, naming the override */
    snprintf(cmd, sizeof cmd,
             "./slicesim check %s --set 'cluster.nodes[1].sharing={timeslice: {replicas: 4}' 2>&1",
             SMALL);
    cr_expect_eq(test_sh(cmd, out, sizeof out), 2);
    cr_expect_str_eq(out, "--set cluster.nodes[1].sharing={timeslice: {replicas: 4}: error: "
                          "cluster.nodes[1].sharing: not a YAML flow value (did not find expected "
                          "',' or '}'); expected a mapping like {key: value, ...} or a sequence "
                          "like [a, b], got '{timeslice: {replicas: 4}'\n");
    snprintf(cmd, sizeof cmd, "./slicesim check %s --set 'cluster.nodes[1].sharing={mps: {}} x' 2>&1",
             SMALL);
    expect_sh(cmd, 2, "not a YAML flow value; expected one mapping like {key: value, ...} or "
                      "one sequence like [a, b], got '{mps: {}} x'");
    rm_tree(dir);
}
