/* tools/cli.h - the slicesim subcommands and small CLI helpers.
 *
 * Each subcommand is `int cmd_NAME(int argc, char **argv)` where argv[0] is the subcommand name;
 * it returns the process exit status: 0 success, 1 environment failure (file missing, disk
 * full), 2 bad input or bad usage (message already printed to stderr).
 * Commands are listed in tools/main.c; each lives in tools/cmd_NAME.c.
 */
#ifndef SIMPROJ_TOOLS_CLI_H
#define SIMPROJ_TOOLS_CLI_H

#include <stdbool.h>
#include <stdint.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_ENV 1
#define CLI_EXIT_INPUT 2

typedef int cli_cmd_fn(int argc, char **argv);

cli_cmd_fn cmd_run, cmd_check, cmd_profiles, cmd_layouts, cmd_bench, cmd_validate, cmd_fit,
    cmd_fit_workload, cmd_predict, cmd_policies;

/* Print "slicesim CMD: MSG" to stderr for a usage error; returns CLI_EXIT_INPUT. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Parse a whole-string unsigned integer (decimal) into *out; false if the text is not exactly a
 * number within [min, max]. Never accepts "12abc". */
bool cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* Parse a whole-string finite double into *out; false otherwise. */
bool cli_parse_double(const char *s, double *out);

#endif
