/* metrics.om (tools/out_metrics.h): values of a hand-solved run, and Prometheus' own tools
 * reading the file (promtool check metrics; promtool tsdb create-blocks-from openmetrics).
 * The run (tests/reports/metrics-hand.yaml): a whole A100-SXM4-40GB busy over [600, 900) and
 * [1200, 1500) s with 10 GiB held; a MIG GPU (7 x 1g.5gb) whose instance 0 is busy over
 * [900, 1500) s with 1 GiB held; samples every 300 s up to the horizon, 3600 s.
 * promtool is Debian's `prometheus` package (tools/install-deps.sh installs it): a missing
 * promtool fails the test, it is not skipped. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments/fileio.h"
#include "tests/unit/sh.h"
#include "tools/run.h"

#define HAND "tests/reports/metrics-hand.yaml"
#define WHOLE "Hostname=\"whole-0\""
#define INST0 "GPU_I_PROFILE=\"1g.5gb\",GPU_I_ID=\"0\""
#define MIGGPU "Hostname=\"mig-0\""

static char dir[] = "/tmp/slicesim-om-XXXXXX";
static char *om; /* metrics.om of the hand run */

/* Run `scenario` into a fresh dir and read its metrics.om into om. */
static void load(const char *scenario)
{
    cr_assert_not_null(mkdtemp(dir));
    FILE *devnull = fopen("/dev/null", "w");
    run_opts o = {.scenario = scenario, .out_dir = dir, .summary = devnull, .errors = stderr};
    cr_assert_eq(run_scenario(&o), 0);
    fclose(devnull);
    char path[128];
    snprintf(path, sizeof path, "%s/metrics.om", dir);
    size_t len;
    cr_assert_eq(fileio_read_all(path, FILEIO_MAX_BYTES, &om, &len), 0);
}

static void setup(void)
{
    load(HAND);
}

static void teardown(void)
{
    free(om);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(metrics, .init = setup, .fini = teardown, .timeout = 60);

/* The value of family `fam` in the series whose labels hold `labels` followed by '}' or by the
 * pod labels (",container="), at timestamp ts (seconds), into *v; false when there is no such
 * sample. */
static bool find(const char *fam, const char *labels, long ts, double *v)
{
    size_t fl = strlen(fam), tl = strlen(labels);
    for (const char *line = om; *line;) {
        const char *eol = strchr(line, '\n');
        size_t n = eol ? (size_t)(eol - line) : strlen(line);
        const char *brace = memchr(line, '}', n);
        if (n > fl && !strncmp(line, fam, fl) && line[fl] == '{' && brace) {
            for (const char *p = line + fl; p + tl <= brace; p++) {
                if (!strncmp(p, labels, tl) &&
                    (p[tl] == '}' || !strncmp(p + tl, ",container=", 11))) {
                    char *end;
                    *v = strtod(brace + 1, &end);
                    if (strtol(end, NULL, 10) == ts) {
                        return true;
                    }
                    break;
                }
            }
        }
        line += n + (eol ? 1 : 0);
    }
    return false;
}

/* As find; fails the test when there is no such sample. */
static double value(const char *fam, const char *labels_tail, long ts)
{
    double v = 0;
    if (!find(fam, labels_tail, ts, &v)) {
        cr_assert_fail("no sample %s{...%s} at %ld", fam, labels_tail, ts);
    }
    return v;
}

Test(metrics, whole_gpu_busy_fraction_of_each_interval)
{
    /* (t - 300, t] busy: [600, 900) gives 100 % at 900, [1200, 1500) at 1500; at 600 and 1200
     * the job has just started (a zero-length busy time in the interval). */
    const long ts[] = {0, 300, 600, 900, 1200, 1500};
    const double util[] = {0, 0, 0, 100, 0, 100};
    for (size_t i = 0; i < 6; i++) {
        cr_expect_float_eq(value("DCGM_FI_DEV_GPU_UTIL", WHOLE, ts[i]), util[i], 1e-9, "t=%ld",
                           ts[i]);
        cr_expect_float_eq(value("DCGM_FI_PROF_GR_ENGINE_ACTIVE", WHOLE, ts[i]), util[i] / 100,
                           1e-9, "t=%ld", ts[i]);
    }
}

Test(metrics, framebuffer_held_at_the_sample_instant)
{
    /* 10 GiB = 10240 MiB from 600 to 900 and from 1200 to 1500 (released at 900 and 1500). */
    cr_expect_float_eq(value("DCGM_FI_DEV_FB_USED", WHOLE, 600), 10240, 1e-9);
    cr_expect_float_eq(value("DCGM_FI_DEV_FB_USED", WHOLE, 900), 0, 1e-9);
    cr_expect_float_eq(value("DCGM_FI_DEV_FB_USED", WHOLE, 1200), 10240, 1e-9);
    cr_expect_float_eq(value("DCGM_FI_DEV_FB_USED", WHOLE, 1500), 0, 1e-9);
    /* used + free = the board's memory at every sample */
    double total = value("DCGM_FI_DEV_FB_FREE", WHOLE, 0);
    cr_expect_float_eq(value("DCGM_FI_DEV_FB_FREE", WHOLE, 600), total - 10240, 1e-9);
    /* the MIG instance: 1 GiB over [900, 1500) */
    cr_expect_float_eq(value("DCGM_FI_DEV_FB_USED", INST0, 600), 0, 1e-9);
    cr_expect_float_eq(value("DCGM_FI_DEV_FB_USED", INST0, 900), 1024, 1e-9);
    cr_expect_float_eq(value("DCGM_FI_DEV_FB_USED", INST0, 1500), 0, 1e-9);
}

Test(metrics, mig_instances_have_their_own_series)
{
    /* instance 0 busy over [900, 1500): 0 at 900, 1 at 1200 and 1500; instance 6 never */
    cr_expect_float_eq(value("DCGM_FI_PROF_GR_ENGINE_ACTIVE", INST0, 900), 0, 1e-9);
    cr_expect_float_eq(value("DCGM_FI_PROF_GR_ENGINE_ACTIVE", INST0, 1200), 1, 1e-9);
    cr_expect_float_eq(value("DCGM_FI_PROF_GR_ENGINE_ACTIVE", INST0, 1500), 1, 1e-9);
    cr_expect_float_eq(
        value("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "GPU_I_PROFILE=\"1g.5gb\",GPU_I_ID=\"6\"", 1200), 0,
        1e-9);
    /* DCGM reports no GPU_UTIL for a GPU in MIG mode */
    cr_expect_null(strstr(om,
                          "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",device=\"nvidia0\",modelName=\"NVIDIA "
                          "A100-SXM4-40GB\",Hostname=\"mig-0\""));
}

Test(metrics, power_of_busy_sms_at_full_clock)
{
    /* model/physics/physics.yaml: 2.45 W per busy fp32 SM, board idle 0.19 of the TDP, cap idle share 0,
     * alpha 2.37; A100-SXM4-40GB: 108 SMs, TDP 400 W, so idle I = 76 W and the SMs' draw D maps
     * to P = 76 + (400 - 76) D / 400 (model/physics/power.h power_board_w). A busy whole GPU (the job is
     * GPU-bound: SM activity 1) wants D = 108 x 2.45 = 264.6 W < 400 W: no throttling,
     * P = 76 + 324 x 0.6615 = 290.326 W over (600, 900]; idle over (900, 1200]: 76 W. One busy
     * 1g.5gb instance (14 SMs): D = 34.3 W, P = 76 + 324 x 0.08575 = 103.783 W. */
    cr_expect_float_eq(value("DCGM_FI_DEV_POWER_USAGE", WHOLE, 900), 290.326, 1e-3);
    cr_expect_float_eq(value("DCGM_FI_DEV_POWER_USAGE", WHOLE, 1200), 76, 1e-3);
    cr_expect_float_eq(value("DCGM_FI_DEV_POWER_USAGE", MIGGPU, 1200), 103.783, 1e-3);
    cr_expect_float_eq(value("DCGM_FI_DEV_POWER_USAGE", MIGGPU, 600), 76, 1e-3);
}

/* promtool check metrics on dir/metrics.om: only dcgm-exporter's label-name finding allowed. */
static void promtool_check(void)
{
    /* promtool exits 1 on a parse error and 3 on lint findings. dcgm-exporter's own label names
     * (modelName, Hostname, GPU_I_PROFILE) are not snake_case, so its real output draws the
     * same finding; that one finding, and nothing else, is allowed. */
    cr_assert_eq(system("command -v promtool >/dev/null"), 0,
                 "promtool is not installed (Debian package prometheus)");
    char cmd[256];
    snprintf(cmd, sizeof cmd, "promtool check metrics < %s/metrics.om 2>&1", dir);
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    char line[1024];
    size_t n_lines = 0, n_other = 0;
    while (fgets(line, sizeof line, p)) {
        n_lines++;
        if (!strstr(line, "label names should be written in 'snake_case' not 'camelCase'")) {
            n_other++;
            cr_log_error("promtool: %s", line);
        }
    }
    int st = pclose(p);
    cr_assert(WIFEXITED(st));
    cr_expect(WEXITSTATUS(st) == 0 || WEXITSTATUS(st) == 3, "promtool exit %d", WEXITSTATUS(st));
    cr_expect_gt(n_lines, 0, "the camelCase finding is expected for dcgm-exporter's labels");
    cr_expect_eq(n_other, 0, "promtool reported something besides dcgm-exporter's label names");
}

Test(metrics, promtool_check_metrics_parses_it)
{
    promtool_check();
}

Test(metrics, promtool_backfills_it_into_a_tsdb)
{
    /* Per (family, device) 13 samples (0, 300, ..., 3600 s): the whole GPU's 6 families
     * (GPU_UTIL, GR_ENGINE_ACTIVE, SM_ACTIVE, FB_USED, FB_FREE, POWER_USAGE), the 7 instances'
     * GR_ENGINE_ACTIVE, SM_ACTIVE, FB_USED and FB_FREE, the MIG GPU's power: (6 + 28 + 1) x 13
     * = 455 samples. Series: the whole GPU's are split by pod (job a-0 at 600 s, a-1 at 1200 s,
     * the rest without a pod: 3 each), instance 0's by job b (900 and 1200 s: 2 each): 6 x 3 +
     * 4 x (2 + 6) + 1 = 51. */
    char cmd[256], out[8192];
    snprintf(cmd, sizeof cmd,
             "promtool tsdb create-blocks-from openmetrics %s/metrics.om %s/tsdb 2>&1", dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    /* one line per block: ULID MIN_TIME MAX_TIME DURATION NUM_SAMPLES NUM_CHUNKS NUM_SERIES SIZE */
    long samples = 0, series = 0;
    size_t n_blocks = 0;
    char *lsave;
    for (char *line = strtok_r(out, "\n", &lsave); line; line = strtok_r(NULL, "\n", &lsave)) {
        char *f[8];
        size_t nf = 0;
        for (char *save, *t = strtok_r(line, " ", &save); t && nf < 8;
             t = strtok_r(NULL, " ", &save)) {
            f[nf++] = t;
        }
        char *end;
        if (nf == 8 && strlen(f[0]) == 26) {
            samples += strtol(f[4], &end, 10);
            long ns = strtol(f[6], &end, 10);
            series = ns > series ? ns : series;
            n_blocks++;
        }
    }
    cr_expect_gt(n_blocks, 0, "%s", out);
    cr_expect_eq(samples, 455, "%s", out);
    cr_expect_eq(series, 51, "%s", out);
}

/* ---- a re-partitioned GPU (tests/reports/metrics-repart.yaml) -------------------------------
 * One A100: 7 x 1g.5gb until 360 s, 4g.20gb@0 + 3g.20gb@4 from 360 s (job a on the 3g.20gb over
 * [360, 1560) holding 2 GiB), time-sliced (MIG off) from 1890 s (job b on a replica over
 * [1890, 2490) holding 1 GiB); samples every 300 s. A device's series has samples while it
 * exists (the layout in force at the sample), GPU_I_ID its index on the GPU (whole 0, 1g.5gb@0..6
 * 1..7, 2g.10gb 8..10, 3g.20gb@0 11, @4 12, 4g.20gb 13, 7g.40gb 14, time-sliced 15); the
 * GPU-level utilisation and memory only while MIG is off. */
#define REPART "tests/reports/metrics-repart.yaml"
#define R_1G0 "GPU_I_PROFILE=\"1g.5gb\",GPU_I_ID=\"1\""
#define R_3G4 "GPU_I_PROFILE=\"3g.20gb\",GPU_I_ID=\"12\""
#define R_4G0 "GPU_I_PROFILE=\"4g.20gb\",GPU_I_ID=\"13\""
#define R_GPU "Hostname=\"mig-0\""

static void setup_repart(void)
{
    load(REPART);
}

TestSuite(metrics_repart, .init = setup_repart, .fini = teardown, .timeout = 60);

Test(metrics_repart, an_instance_has_samples_while_it_exists)
{
    double v;
    /* 1g.5gb@0 exists at 0 and 300 (the new layout comes at 360), not after */
    cr_expect_float_eq(value("DCGM_FI_PROF_GR_ENGINE_ACTIVE", R_1G0, 300), 0, 1e-9);
    cr_expect_not(find("DCGM_FI_PROF_GR_ENGINE_ACTIVE", R_1G0, 600, &v));
    /* 3g.20gb@4 from 360 to 1890: busy (360, 600] of (300, 600] = 0.8, then 1, then
     * (1500, 1560] of (1500, 1800] = 0.2; no sample at 300 (not yet) or 2100 (gone) */
    cr_expect_not(find("DCGM_FI_PROF_GR_ENGINE_ACTIVE", R_3G4, 300, &v));
    cr_expect_float_eq(value("DCGM_FI_PROF_GR_ENGINE_ACTIVE", R_3G4, 600), 0.8, 1e-9);
    cr_expect_float_eq(value("DCGM_FI_PROF_GR_ENGINE_ACTIVE", R_3G4, 900), 1, 1e-9);
    cr_expect_float_eq(value("DCGM_FI_PROF_GR_ENGINE_ACTIVE", R_3G4, 1800), 0.2, 1e-9);
    cr_expect_not(find("DCGM_FI_PROF_GR_ENGINE_ACTIVE", R_3G4, 2100, &v));
    cr_expect_float_eq(value("DCGM_FI_DEV_FB_USED", R_3G4, 600), 2048, 1e-9);
    cr_expect_float_eq(value("DCGM_FI_DEV_FB_USED", R_3G4, 1800), 0, 1e-9);
    /* its neighbour 4g.20gb@0 is idle all along, and gone with it */
    cr_expect_float_eq(value("DCGM_FI_PROF_GR_ENGINE_ACTIVE", R_4G0, 1200), 0, 1e-9);
    cr_expect_not(find("DCGM_FI_PROF_GR_ENGINE_ACTIVE", R_4G0, 2100, &v));
}

Test(metrics_repart, gpu_level_series_once_mig_is_off)
{
    double v;
    /* no GPU_UTIL while in MIG mode (up to 1890 s); then b busy (1890, 2100] = 70 %, all of
     * (2100, 2400], (2400, 2490] = 30 % */
    cr_expect_not(find("DCGM_FI_DEV_GPU_UTIL", R_GPU, 1800, &v));
    cr_expect_float_eq(value("DCGM_FI_DEV_GPU_UTIL", R_GPU, 2100), 70, 1e-9);
    cr_expect_float_eq(value("DCGM_FI_DEV_GPU_UTIL", R_GPU, 2400), 100, 1e-9);
    cr_expect_float_eq(value("DCGM_FI_DEV_GPU_UTIL", R_GPU, 2700), 30, 1e-9);
    cr_expect_float_eq(value("DCGM_FI_DEV_FB_USED", R_GPU, 2100), 1024, 1e-9);
    cr_expect_float_eq(value("DCGM_FI_DEV_FB_USED", R_GPU, 2700), 0, 1e-9);
    cr_expect_not(find("DCGM_FI_DEV_FB_USED", R_GPU, 1800, &v));
    /* power has a sample at every time, whatever the mode */
    cr_expect(find("DCGM_FI_DEV_POWER_USAGE", R_GPU, 1800, &v));
}

Test(metrics_repart, promtool_parses_and_backfills_it)
{
    promtool_check();
    char cmd[256], out[8192];
    snprintf(cmd, sizeof cmd,
             "promtool tsdb create-blocks-from openmetrics %s/metrics.om %s/tsdb 2>&1", dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
}

/* ---- end to end through Prometheus (tests/reports/metrics-prom.yaml) ------------------------
 * One H100 runs, for the whole hour, a job whose profile was fitted on a solo run with NVML
 * utilisation 0.3739; metrics.om starts at 2026-11-28T00:00:00Z (outputs.start_time). promtool
 * back-fills it into a TSDB, a real `prometheus` serves that TSDB on 127.0.0.1, and PromQL's
 * avg_over_time over the hour must be the run's own figure (run.json metrics.activity
 * gpu_util_mean): the job's activity, not its allocation (100 %). Prometheus is Debian's
 * `prometheus` package, like promtool: missing, the test fails. */
static void setup_prom(void)
{
    load("tests/reports/metrics-prom.yaml");
}

TestSuite(metrics_prom, .init = setup_prom, .fini = teardown, .timeout = 120);

/* The value `promtool query instant` prints for expr at 2026-11-28T01:00:00Z from the server on
 * port `port` ("{labels} => VALUE @[TS]"); fails the test when there is none. */
static double promql(int port, const char *expr)
{
    char cmd[1024], out[4096];
    snprintf(cmd, sizeof cmd,
             "promtool query instant --time=2026-11-28T01:00:00Z http://127.0.0.1:%d '%s' 2>&1",
             port, expr);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s: %s", cmd, out);
    const char *arrow = strstr(out, "=> ");
    cr_assert_not_null(arrow, "no value in: %s", out);
    cr_assert_null(strstr(arrow + 3, "=> "), "one series expected: %s", out);
    return strtod(arrow + 3, NULL);
}

Test(metrics_prom, prometheus_answers_promql_with_the_runs_own_figure)
{
    char cmd[1024], out[8192];
    cr_assert_eq(system("command -v prometheus >/dev/null"), 0,
                 "prometheus is not installed (Debian package prometheus)");
    snprintf(cmd, sizeof cmd,
             "promtool tsdb create-blocks-from openmetrics %s/metrics.om %s/tsdb 2>&1", dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    char path[160];
    snprintf(path, sizeof path, "%s/prometheus.yml", dir);
    cr_assert(test_write_text(path, "global:\n  scrape_interval: 1m\n"));
    snprintf(path, sizeof path, "%s/run.json", dir);
    /* on the heap: a static one lies in every test process's .bss, which LeakSanitizer
     * reads through at each exit (the ASan tests' time) */
    char *json = malloc(1 << 20);
    cr_assert_not_null(json);
    cr_assert(test_read_text(path, json, 1 << 20));
    const char *key = strstr(json, "\"gpu_util_mean\":");
    cr_assert_not_null(key, "run.json has no metrics.activity.gpu_util_mean");
    double run_util = strtod(key + strlen("\"gpu_util_mean\":"), NULL);
    key = strstr(json, "\"power_mean_w\":");
    cr_assert_not_null(key, "run.json has no metrics.activity.power_mean_w");
    double run_power = strtod(key + strlen("\"power_mean_w\":"), NULL);
    free(json);
    /* a port of our own (the pid spreads parallel runs), the server in the background; its pid
     * to stop it, and retention long enough for blocks of any date */
    int port = 20000 + (int)(getpid() % 20000);
    snprintf(cmd, sizeof cmd,
             "prometheus --config.file=%s/prometheus.yml --storage.tsdb.path=%s/tsdb "
             "--storage.tsdb.retention.time=100y --web.listen-address=127.0.0.1:%d "
             ">%s/prometheus.log 2>&1 & echo $!",
             dir, dir, port, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    long pid = strtol(out, NULL, 10);
    cr_assert_gt(pid, 0);
    snprintf(cmd, sizeof cmd,
             "for i in $(seq 60); do promtool query instant http://127.0.0.1:%d 'vector(1)' "
             ">/dev/null 2>&1 && exit 0; sleep 0.5; done; cat %s/prometheus.log; exit 1",
             port, dir);
    int ready = test_sh(cmd, out, sizeof out);
    double util = 0, gr = 0, power = 0;
    if (ready == 0) {
        power = promql(port, "avg_over_time(DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",Hostname=\"h100-0\"}[1h])");
        util = promql(port, "avg_over_time(DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",Hostname=\"h100-0\"}[1h])");
        gr = promql(port, "avg_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\","
                          "Hostname=\"h100-0\"}[1h])");
    }
    snprintf(cmd, sizeof cmd, "kill %ld", pid);
    cr_expect_eq(system(cmd), 0);
    cr_assert_eq(ready, 0, "prometheus did not answer: %s", out);
    cr_log_info("PromQL avg_over_time over the hour: GPU_UTIL %g %%, GR_ENGINE_ACTIVE %g; "
                "run.json activity.gpu_util_mean %g",
                util, gr, run_util);
    printf("metrics-prom: PromQL avg_over_time(DCGM_FI_DEV_GPU_UTIL[1h]) = %g %%, "
           "avg_over_time(DCGM_FI_PROF_GR_ENGINE_ACTIVE[1h]) = %g; run.json gpu_util_mean %g; "
           "avg_over_time(DCGM_FI_DEV_POWER_USAGE[1h]) = %g W; run.json power_mean_w %g W\n",
           util, gr, run_util, power, run_power);
    /* power by hand (model/physics/physics.yaml, model/hw/gpus.yaml; model/physics/power.h power_board_w): H100
     * TDP 700 W, idle 0.19 x 700 = 133 W; the job keeps its 132 SMs busy 0.3739 of the time,
     * D = 0.3739 x 132 x 2.45 W = 120.918 W (its busy phases draw 323.4 W < 700 W: full clock),
     * P = 133 + (700 - 133) x 120.918 / 700 = 230.945 W, where allocation said 323.4 W. Each
     * sample is its minute's mean, so the hour's average is the run's own mean. */
    cr_expect_float_eq(run_power, 133 + 567 * 0.3739 * 132 * 2.45 / 700, 1e-6);
    cr_expect_float_eq(power, run_power, 1e-3); /* metrics.om prints W with 3 decimals */
    cr_expect_float_eq(gr, run_util, 1e-6);
    cr_expect_float_eq(util, round(100 * run_util), 1e-9); /* GPU_UTIL is a whole percent */
    cr_expect(run_util > 0.3 && run_util < 0.45, "the job's activity, not its allocation: %g",
              run_util);
}
