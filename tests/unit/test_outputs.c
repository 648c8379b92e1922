/* What `slicesim run` leaves in its output directory: seeds recorded exactly (64-bit integers,
 * never through a double), and no mix of two runs' files (an earlier run's directory is refused
 * unless --force, which also removes the files this run does not write). */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiments/fileio.h"
#include "tests/unit/sh.h"

static char dir[64];

static void setup(void)
{
    cr_assert(test_tmpdir(dir, sizeof dir, "outputs"));
}

static void teardown(void)
{
    cr_assert(test_rm_rf(dir));
}

/* Count the occurrences of needle in the file dir/name. */
static int count_in(const char *name, const char *needle)
{
    /* on the heap: a static one lies in every test process's .bss, which LeakSanitizer
     * reads through at each exit (the ASan tests' time) */
    char *text = malloc(1 << 20);
    cr_assert_not_null(text);
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    cr_assert(test_read_text(path, text, 1 << 20), "%s missing", path);
    int n = 0;
    for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle)) {
        n++;
    }
    free(text);
    return n;
}

Test(outputs, seeds_above_2_pow_53_are_recorded_exactly, .init = setup, .fini = teardown)
{
    char cmd[512], out[4096];
    /* 2^53 + 1 = 9007199254740993 is the first integer a double cannot hold */
    snprintf(cmd, sizeof cmd,
             "./slicesim run experiments/default.yaml --set seed=9007199254740993 -o %s/a 2>&1",
             dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_eq(count_in("a/run.json", "\"seed\":\t9007199254740993,"), 2); /* top, config */
    cr_assert_eq(count_in("a/run_info.json", "\"seed\":\t9007199254740993,"), 1);
    snprintf(cmd, sizeof cmd,
             "./slicesim run experiments/default.yaml --seed 18446744073709551615 -o %s/b 2>&1",
             dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_eq(count_in("b/run.json", "\"seed\":\t18446744073709551615,"), 2);
    cr_assert_eq(count_in("b/run_info.json", "\"seed\":\t18446744073709551615,"), 1);
}

Test(outputs, earlier_run_dir_refused_unless_force, .init = setup, .fini = teardown)
{
    char cmd[1024], out[4096], want[1024], path[256];
    snprintf(cmd, sizeof cmd, "./slicesim run experiments/default.yaml -o %s/r >/dev/null 2>&1",
             dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0);
    snprintf(cmd, sizeof cmd, "./slicesim run experiments/default.yaml -o %s/r 2>&1 >/dev/null",
             dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 2);
    snprintf(
        want, sizeof want,
        "slicesim run: error: output directory '%s/r' holds an earlier run's files "
        "(run.json, jobs.csv, timeseries.csv, metrics.om, report.html, run_info.json); expected a "
        "new or "
        "empty directory, or --force to replace them\n",
        dir);
    cr_assert_str_eq(out, want);
    /* --force with a scenario that writes run.json only: the other files of the earlier run go */
    snprintf(path, sizeof path, "%s/one.yaml", dir);
    cr_assert(test_write_text(
        path,
        "name: one\nseed: 1\nhorizon: 1h\n"
        "cluster: {nodes: [{name: a, gpu: A100-SXM4-40GB, gpus_per_node: 8}]}\n"
        "workload: {jobs: [{name: j, rate: 1/h, duration: 1m, request: {nvidia.com/gpu: 1}}]}\n"
        "outputs: {files: [run.json]}\n"));
    snprintf(cmd, sizeof cmd, "./slicesim run %s -o %s/r --force >/dev/null 2>&1 && ls %s/r", path,
             dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_str_eq(out, "run.json\nrun_info.json\n");
    cr_assert_eq(count_in("r/run.json", "\"name\":\t\"one\""), 1);
}

Test(outputs, empty_existing_dir_is_fine, .init = setup, .fini = teardown)
{
    char cmd[512], out[4096];
    snprintf(cmd, sizeof cmd, "./slicesim run experiments/default.yaml -o %s 2>&1 >/dev/null", dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
}

/* The A30-24GB had no sourced SM count until issue 22 (SM utilisation n/a, null in run.json);
 * its 56 SMs (model/hw/gpus.yaml, A30-SEC) now count: no warning, 112 SMs for two GPUs in run.json
 * and an SM utilisation. The n/a path for a catalog entry without one:
 * world::a_gpu_without_an_sm_count_is_counted_not_summed. */
Test(outputs, the_a30_has_an_sm_count, .init = setup, .fini = teardown)
{
    char path[256], cmd[1024], out[8192];
    snprintf(path, sizeof path, "%s/a30.yaml", dir);
    cr_assert(test_write_text(path,
                              "name: a30\nseed: 1\nhorizon: 1h\n"
                              "cluster: {nodes: [{name: a, gpu: A30-24GB, gpus_per_node: 2}]}\n"
                              "workload: {jobs: [{name: j, arrival: fixed, interval: 10m,\n"
                              "                   duration: 5m, request: {nvidia.com/gpu: 1}}]}\n"
                              "outputs: {sample_interval: 30m}\n"));
    snprintf(cmd, sizeof cmd, "./slicesim run %s -o %s/o 2>&1", path, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_null(strstr(out, "warning"), "%s", out);
    cr_assert_null(strstr(out, "n/a of SMs"), "%s", out);
    cr_assert_eq(count_in("o/run.json", "\"sms_total\":\t112,"), 1);
    cr_assert_eq(count_in("o/run.json", "\"sms_busy_mean\":\tnull,"), 0);
}

/* jobs.csv: one GPU, three 100 s jobs arriving every 10 s (fixed arrivals come at 10, 20 and
 * 30 s), horizon 150 s. By hand: job 0 runs 10-110 (wait 0, JCT 100, slowdown 1); job 1 starts
 * at 110 (wait 90) and is still running at the horizon (no slowdown); job 2 never starts: its
 * wait is censored at the horizon, 150 - 30 = 120 s, and flagged. */
Test(outputs, jobs_csv_flags_censored_waits_and_gives_slowdown, .init = setup, .fini = teardown)
{
    char cmd[1024], out[4096], path[256];
    snprintf(path, sizeof path, "%s/cens.yaml", dir);
    cr_assert(test_write_text(
        path, "name: cens\nseed: 1\nhorizon: 150s\n"
              "cluster: {nodes: [{name: a, gpu: A100-SXM4-40GB, gpus_per_node: 1}]}\n"
              "workload: {jobs: [{name: j, arrival: fixed, interval: 10s, count: 3, "
              "duration: 100s, request: {nvidia.com/gpu: 1}}]}\n"
              "outputs: {files: [jobs.csv]}\n"));
    snprintf(cmd, sizeof cmd,
             "./slicesim run %s -o %s/c >/dev/null 2>&1 && cut -d, -f11,13,15,16 %s/c/jobs.csv",
             path, dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_str_eq(out, "wait_s,outcome,wait_censored,slowdown\n"
                          "0.000000000,done,0,1\n"
                          "90.000000000,running,0,\n"
                          "120.000000000,queued,1,\n");
}

/* A full disk: the staged run.json is a link to /dev/full, whose writes fail with ENOSPC. The
 * run says which file and why, exits 1, and leaves no output file (nor the staged one). */
Test(outputs, a_failed_write_names_the_file_and_the_reason, .init = setup, .fini = teardown)
{
    char cmd[1024], out[4096], want[512];
    const char *names[] = {"run.json", "jobs.csv"};
    for (int i = 0; i < 2; i++) {
        snprintf(cmd, sizeof cmd,
                 "mkdir -p %s/full%d && ln -s /dev/full %s/full%d/.%s.tmp && ./slicesim run "
                 "experiments/default.yaml -o %s/full%d 2>&1 >/dev/null",
                 dir, i, dir, i, names[i], dir, i);
        cr_expect_eq(test_sh(cmd, out, sizeof out), 1, "%s", out);
        snprintf(want, sizeof want,
                 "slicesim: %s/full%d/%s: write failed: No space left on device; none of the "
                 "files being written is kept\n",
                 dir, i, names[i]);
        cr_expect_str_eq(out, want);
        snprintf(cmd, sizeof cmd, "ls -A %s/full%d", dir, i);
        cr_expect_eq(test_sh(cmd, out, sizeof out), 0);
        cr_expect_str_eq(out, ".lock\n"); /* the directory existed: only its lock stays */
    }
    /* a directory the run made is removed again, lock file and all */
    snprintf(cmd, sizeof cmd,
             "./slicesim run experiments/default.yaml -o /dev/full/x 2>&1 >/dev/null; ls %s", dir);
    test_sh(cmd, out, sizeof out);
    cr_expect_not_null(strstr(out, "cannot create directory"), "%s", out);
}

/* Two runs into one directory at once: one is refused (the lock, exit 1; or, should the first
 * have finished already, its files: exit 2), the other's files are whole and its own. */
Test(outputs, two_runs_into_one_directory_one_refused, .init = setup, .fini = teardown)
{
    char cmd[2048], out[8192];
    /* the lock held (by this test): refused at once, naming the holder; nothing written */
    char lock[128], want[1024];
    snprintf(cmd, sizeof cmd, "mkdir %s/held", dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0);
    snprintf(lock, sizeof lock, "%s/held/.lock", dir);
    int fd = open(lock, O_RDWR | O_CREAT, 0644);
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    cr_assert_eq(fcntl(fd, F_SETLK, &fl), 0);
    snprintf(cmd, sizeof cmd, "./slicesim run experiments/default.yaml -o %s/held 2>&1", dir);
    cr_expect_eq(test_sh(cmd, out, sizeof out), 1);
    snprintf(want, sizeof want,
             "slicesim run: error: output directory '%s/held' is in use by another slicesim "
             "(pid %ld: '",
             dir, (long)getpid());
    cr_expect_eq(strncmp(out, want, strlen(want)), 0, "%s", out);
    cr_expect_not_null(strstr(out, "expected one run per output directory at a time"), "%s", out);
    close(fd);
    snprintf(cmd, sizeof cmd, "ls -A %s/held", dir);
    cr_expect_eq(test_sh(cmd, out, sizeof out), 0);
    cr_expect_str_eq(out, ".lock\n");
    for (int trial = 0; trial < 3; trial++) {
        snprintf(cmd, sizeof cmd,
                 "d=%s/t%d; (./slicesim run experiments/default.yaml --set workload.jobs[0]."
                 "count=3000 -o $d >/dev/null 2>$d.a; echo $? >$d.ra) & "
                 "(./slicesim run experiments/default.yaml --seed 5 --set workload.jobs[0]."
                 "count=3000 -o $d >/dev/null 2>$d.b; echo $? >$d.rb) & wait; "
                 "cat $d.ra $d.rb $d.a $d.b",
                 dir, trial);
        cr_assert_eq(test_sh(cmd, out, sizeof out), 0);
        bool a_won = !strncmp(out, "0\n", 2), b_won = !strncmp(out + 2, "0\n", 2);
        cr_expect(a_won != b_won, "exactly one run must succeed:\n%s", out);
        cr_expect(strstr(out, "is in use by another slicesim (pid ") ||
                      strstr(out, "holds an earlier run's files"),
                  "%s", out);
        char name[32];
        snprintf(name, sizeof name, "t%d/run.json", trial);
        cr_expect_eq(count_in(name, a_won ? "\"seed\":\t42," : "\"seed\":\t5,"), 2);
        snprintf(name, sizeof name, "t%d/run_info.json", trial);
        cr_expect_eq(count_in(name, a_won ? "\"seed\":\t42," : "\"seed\":\t5,"), 1);
        char path[256], *text = NULL;
        size_t len = 0;
        snprintf(path, sizeof path, "%s/t%d/run.json", dir, trial);
        cr_assert_eq(fileio_read_all(path, FILEIO_MAX_BYTES, &text, &len), 0);
        cJSON *j = cJSON_ParseWithLength(text, len);
        cr_expect_not_null(j, "%s is not valid JSON", path);
        cJSON_Delete(j);
        free(text);
    }
}
