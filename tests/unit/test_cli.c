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
