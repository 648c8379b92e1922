/* tools/cleanup.c and the output stage under SIGINT/SIGTERM: the staged files and the
 * directories the run made are removed, the process says so and exits 128 + the signal.
 * Each case runs in a forked child that raises the signal itself (no timing involved). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/sh.h"
#include "tools/cleanup.h"
#include "tools/out.h"

static char base[64];

static void setup(void)
{
    cr_assert(test_tmpdir(base, sizeof base, "cleanup"));
}

static void teardown(void)
{
    cr_assert(test_rm_rf(base));
}

static void path_in(char *out, size_t n, const char *rel)
{
    snprintf(out, n, "%s/%s", base, rel);
}

static bool exists(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0;
}

/* Fork; the child sends its stderr to BASE/stderr, runs body(arg), then raises sig. Returns
 * the child's exit status (or -1 when it did not exit). */
static int in_child(void (*body)(const char *), int sig)
{
    char errpath[128];
    snprintf(errpath, sizeof errpath, "%s/stderr", base);
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        int fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, STDERR_FILENO) < 0 || cleanup_install() != 0) {
            _exit(99);
        }
        body(base);
        raise(sig);
        _exit(98); /* not reached: the handler exits */
    }
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The child's stderr must be exactly `want`. */
static void expect_said(const char *want)
{
    char p[256], msg[512];
    path_in(p, sizeof p, "stderr");
    cr_assert(test_read_text(p, msg, sizeof msg));
    cr_assert_str_eq(msg, want);
}

static void make_file(const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        _exit(97);
    }
    fputs("partial", f);
    fclose(f);
}

/* Registers a/ and a/b/ (made here) and a/b/.x.tmp; keeps a/keep.txt (forgotten). */
static void body_tree(const char *dir)
{
    char a[256], b[256], x[256], keep[256];
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/a/b", dir);
    snprintf(x, sizeof x, "%s/a/b/.x.tmp", dir);
    snprintf(keep, sizeof keep, "%s/a/keep.txt", dir);
    cleanup_register(a, true);
    mkdir(a, 0777);
    cleanup_register(b, true);
    mkdir(b, 0777);
    int hk = cleanup_register(keep, false);
    make_file(keep);
    cleanup_register(x, false);
    make_file(x);
    cleanup_forget(hk); /* keep.txt is final: it stays, and so does a/ which holds it */
}

Test(cleanup, sigterm_removes_staged_file_and_empty_dirs, .init = setup, .fini = teardown)
{
    cr_assert_eq(in_child(body_tree, SIGTERM), 143);
    char p[256];
    path_in(p, sizeof p, "a/b/.x.tmp");
    cr_assert(!exists(p), "staged file left behind");
    path_in(p, sizeof p, "a/b");
    cr_assert(!exists(p), "half-made directory left behind");
    path_in(p, sizeof p, "a/keep.txt");
    cr_assert(exists(p), "a forgotten (final) file was removed");
    path_in(p, sizeof p, "a");
    cr_assert(exists(p), "a directory holding a final file was removed");
    expect_said("slicesim: terminated (SIGTERM): removed 1 staged file and 1 directory it had "
                "made\n");
}

static void body_stage(const char *dir)
{
    char out[256];
    snprintf(out, sizeof out, "%s/new/run", dir);
    out_stage *st = out_stage_begin(out);
    if (!st) {
        _exit(96);
    }
    FILE *f1 = out_stage_open(st, "run.json"), *f2 = out_stage_open(st, "jobs.csv");
    if (!f1 || !f2) {
        _exit(95);
    }
    fputs("{\"half\": ", f1);
    fputs("id,class\n", f2);
    fflush(NULL);
}

Test(cleanup, sigint_during_output_stage_leaves_nothing, .init = setup, .fini = teardown)
{
    cr_assert_eq(in_child(body_stage, SIGINT), 130);
    char p[256];
    path_in(p, sizeof p, "new");
    cr_assert(!exists(p), "the output directory the stage made is still there");
    expect_said("slicesim: interrupted (SIGINT): removed 2 staged files and 2 directories it had "
                "made\n");
}

static void body_existing_dir(const char *dir)
{
    out_stage *st = out_stage_begin(dir); /* exists: the stage made nothing */
    if (!st || !out_stage_open(st, "run.json")) {
        _exit(96);
    }
}

Test(cleanup, existing_output_dir_is_kept, .init = setup, .fini = teardown)
{
    cr_assert_eq(in_child(body_existing_dir, SIGTERM), 143);
    char p[256];
    path_in(p, sizeof p, ".run.json.tmp");
    cr_assert(!exists(p));
    cr_assert(exists(base));
}

Test(cleanup, committed_and_aborted_stages_unregister_everything, .init = setup, .fini = teardown)
{
    int before = cleanup__count_for_test();
    char out[256];
    path_in(out, sizeof out, "c/d");
    out_stage *st = out_stage_begin(out);
    cr_assert_not_null(st);
    cr_assert_not_null(out_stage_open(st, "run.json"));
    cr_assert_eq(cleanup__count_for_test(), before + 3); /* c/, c/d/ and the staged file */
    cr_assert_eq(out_stage_commit(st), 0);
    cr_assert_eq(cleanup__count_for_test(), before);
    path_in(out, sizeof out, "c/d/run.json");
    cr_assert(exists(out));
    path_in(out, sizeof out, "e/f");
    st = out_stage_begin(out);
    cr_assert_not_null(out_stage_open(st, "run.json"));
    out_stage_abort(st);
    cr_assert_eq(cleanup__count_for_test(), before);
    path_in(out, sizeof out, "e");
    cr_assert(!exists(out), "an aborted stage left the directory it made");
}

/* The real binary installs the handlers: a run blocked opening its scenario (a FIFO nobody
 * writes) is terminated with 143 and says so. */
Test(cleanup, slicesim_run_exits_143_on_sigterm, .init = setup, .fini = teardown)
{
    char cmd[512], out[512];
    snprintf(cmd, sizeof cmd,
             "mkfifo %s/fifo && { ./slicesim run %s/fifo -o %s/out 2>&1 & pid=$!; sleep 0.3; "
             "kill -TERM $pid; wait $pid; echo \"status $?\"; }",
             base, base, base);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0);
    cr_assert_str_eq(out, "slicesim: terminated (SIGTERM): removed 0 staged files and 0 "
                          "directories it had made\nstatus 143\n");
}
