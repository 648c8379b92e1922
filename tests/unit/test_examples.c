/* Every scenario shipped in experiments/ and experiments/examples/ (the ones README.md and docs/ show)
 * passes `slicesim check` and runs to completion with all its outputs. */
#include <criterion/criterion.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int run_cmd(const char *cmd, char *out, size_t n)
{
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p, "popen %s", cmd);
    size_t got = fread(out, 1, n - 1, p);
    out[got] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static size_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (size_t)st.st_size : 0;
}

Test(examples, every_shipped_scenario_checks_and_runs, .timeout = 120)
{
    glob_t g;
    int rc = glob("experiments/*.yaml", 0, NULL, &g);
    cr_assert_eq(rc, 0, "no scenario in experiments/");
    rc = glob("experiments/examples/*.yaml", GLOB_APPEND, NULL, &g);
    cr_assert_eq(rc, 0, "no scenario in experiments/examples/");
    rc = glob("experiments/whatif/*.yaml", GLOB_APPEND, NULL, &g);
    cr_assert_eq(rc, 0, "no scenario in experiments/whatif/");
    char dir[] = "/tmp/slicesim-examples-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char run_json[sizeof dir + 16], info_json[sizeof dir + 16];
    snprintf(run_json, sizeof run_json, "%s/run.json", dir);
    snprintf(info_json, sizeof info_json, "%s/run_info.json", dir);
    char cmd_rm[128];
    int n_run = 0;
    for (size_t i = 0; i < g.gl_pathc; i++) {
        const char *f = g.gl_pathv[i];
        char cmd[1024], out[8192];
        snprintf(cmd, sizeof cmd, "./slicesim check %s 2>&1", f);
        cr_assert_eq(run_cmd(cmd, out, sizeof out), 0, "%s: %s", f, out);
        cr_assert_not_null(strstr(out, ": ok ("), "%s: %s", f, out);
        snprintf(cmd, sizeof cmd, "rm -rf %s/* && ./slicesim run %s -o %s 2>&1", dir, f, dir);
        cr_assert_eq(run_cmd(cmd, out, sizeof out), 0, "%s: %s", f, out);
        cr_assert_gt(file_size(run_json), 100, "%s wrote no run.json", f);
        cr_assert_gt(file_size(info_json), 10, "%s", f);
        n_run++;
    }
    globfree(&g);
    snprintf(cmd_rm, sizeof cmd_rm, "rm -rf %s", dir);
    cr_assert_eq(system(cmd_rm), 0);
    cr_assert_geq(n_run, 2, "expected the default scenario and the docs' example");
}
