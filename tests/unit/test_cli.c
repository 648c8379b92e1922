/* The command-line front end (tools/main.c): every command listed by `slicesim --help` has its
 * own `--help` (exit 0, "usage: slicesim CMD"), `slicesim help CMD` prints the same text, and an
 * unknown command is refused with the list of valid ones. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/sh.h"

Test(cli, every_listed_command_has_help_and_help_cmd_matches)
{
    static char top[8192], a[16384], b[16384];
    cr_assert_eq(test_sh("./slicesim --help", top, sizeof top), 0);
    const char *p = strstr(top, "\ncommands:\n");
    cr_assert_not_null(p, "%s", top);
    p += strlen("\ncommands:\n");
    int n = 0;
    while (p[0] == ' ' && p[1] == ' ') {
        char name[64], cmd[160], want[96];
        cr_assert_eq(sscanf(p, " %63s", name), 1);
        snprintf(cmd, sizeof cmd, "./slicesim %s --help 2>&1", name);
        cr_assert_eq(test_sh(cmd, a, sizeof a), 0, "%s --help: %s", name, a);
        snprintf(want, sizeof want, "usage: slicesim %s", name);
        cr_assert_eq(strncmp(a, want, strlen(want)), 0, "%s --help printed: %s", name, a);
        snprintf(cmd, sizeof cmd, "./slicesim help %s 2>&1", name);
        cr_assert_eq(test_sh(cmd, b, sizeof b), 0, "help %s", name);
        cr_assert_str_eq(b, a, "help %s differs from %s --help", name, name);
        n++;
        p = strchr(p, '\n') + 1;
    }
    cr_assert_geq(n, 10, "only %d commands listed:\n%s", n, top);
}

Test(cli, unknown_command_and_help_of_unknown_exit_2)
{
    char out[1024];
    cr_assert_eq(test_sh("./slicesim help nope 2>&1", out, sizeof out), 2);
    cr_assert_eq(
        strncmp(out, "slicesim: error: unknown command 'nope'; expected one of: run check", 66), 0,
        "%s", out);
    cr_assert_eq(test_sh("./slicesim nope 2>&1", out, sizeof out), 2);
    cr_assert_eq(test_sh("./slicesim 2>&1", out, sizeof out), 2);
    cr_assert_eq(strncmp(out, "usage: slicesim COMMAND", 23), 0, "%s", out);
}

Test(cli, run_help_shows_output_dir_as_optional)
{
    char out[4096];
    cr_assert_eq(test_sh("./slicesim --help", out, sizeof out), 0);
    cr_assert_not_null(strstr(out, "run FILE [-o DIR]"), "%s", out);
    cr_assert_eq(test_sh("./slicesim run --help", out, sizeof out), 0);
    cr_assert_eq(strncmp(out, "usage: slicesim run FILE [-o DIR]", 33), 0, "%s", out);
}

/* `-o ''` is a usage error (exit 2, the exact message) in every command that writes, refused
 * before anything is read or written: it once reached make_dirs as an empty path and read past
 * its end (issue 22: an ASan heap-buffer-overflow). */
Test(cli, an_empty_output_path_is_a_usage_error)
{
    static const char *const cmds[][2] = {
        {"run", "run experiments/default.yaml"},
        {"sweep", "sweep experiments/examples/sweep-shared.yaml"},
        {"plan", "plan experiments/examples/plan-a100-pool.yaml"},
        {"bench", "bench run experiments/default.yaml"},
        {"fit", "fit calib/no-such.json"},
        {"fit-workload", "fit-workload no-such-obs.yaml"},
    };
    char cmd[512], out[1024], want[256];
    for (size_t k = 0; k < sizeof cmds / sizeof cmds[0]; k++) {
        snprintf(cmd, sizeof cmd, "./slicesim %s -o '' 2>&1", cmds[k][1]);
        cr_assert_eq(test_sh(cmd, out, sizeof out), 2, "%s: %s", cmds[k][1], out);
        snprintf(want, sizeof want,
                 "slicesim %s: error: option '-o' needs a value; expected a non-empty value, "
                 "got ''\n",
                 cmds[k][0]);
        cr_assert_str_eq(out, want, "%s", cmds[k][1]);
    }
}

/* tools/readme-map.sh (make docs-check): the README's module map names every module of sim/ and
 * model/; a module left out, or one listed that does not exist, fails with both named. */
Test(cli, readme_map_names_every_module, .timeout = 30)
{
    char dir[64], cmd[512], out[4096];
    cr_assert_eq(test_sh("tools/readme-map.sh 2>&1", out, sizeof out), 0, "%s", out);
    cr_assert(test_tmpdir(dir, sizeof dir, "map"));
    snprintf(cmd, sizeof cmd,
             "sed '/^\\* `evq`:/d; s/^\\* `tsprobe`:/* `tsprobe2`:/' README.md >%s/r.md && "
             "tools/readme-map.sh %s/r.md 2>&1",
             dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 1, "%s", out);
    cr_assert_not_null(strstr(out, "sim/evq is not in the module map"), "%s", out);
    cr_assert_not_null(strstr(out, "model/fit/tsprobe is not in the module map"), "%s", out);
    cr_assert_not_null(strstr(out, "lists model/fit/tsprobe2, which does not exist"), "%s", out);
    cr_assert(test_rm_rf(dir));
}

/* tools/docs-check.sh (make docs-check) fails on a generated block that differs from what the
 * program prints, and passes once it matches. */
Test(cli, docs_check_detects_drift, .timeout = 60)
{
    char dir[64], md[128], cmd[512], out[4096];
    cr_assert(test_tmpdir(dir, sizeof dir, "docs"));
    snprintf(md, sizeof md, "%s/r.md", dir);
    cr_assert(test_write_text(md, "text\n\n<!-- docs-check: ./slicesim profiles A100-40GB | head -1 "
                                  "-->\n```\n$ ./slicesim profiles A100-40GB | head -1\nstale\n```\n"
                                  "after\n"));
    snprintf(cmd, sizeof cmd, "tools/docs-check.sh %s 2>&1", md);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 1, "%s", out);
    cr_assert_not_null(strstr(out, "-stale\n"), "%s", out);
    snprintf(cmd, sizeof cmd, "tools/docs-check.sh --update %s >/dev/null && tools/docs-check.sh %s",
             md, md);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(test_read_text(md, out, sizeof out));
    cr_assert_not_null(strstr(out, "$ ./slicesim profiles A100-40GB | head -1\nA100-SXM4-40GB"), "%s",
                       out);
    cr_assert_not_null(strstr(out, "```\nafter\n"), "%s", out);
    cr_assert(test_rm_rf(dir));
}
