/* tools/cli.h - the slicesim subcommands and small CLI helpers.
 *
 * Each subcommand is `int cmd_NAME(int argc, char **argv)` where argv[0] is the subcommand name;
 * it returns the process exit status: 0 success, 1 environment failure (file missing, disk
 * full), 2 bad input or bad usage (message already printed to stderr).
 * Commands are listed in tools/main.c; each lives in tools/cmd_NAME.c.
 * Ownership: argument strings are borrowed; what the loaders return lives in the caller's arena.
 * No units (numbers are parsed as given).
 */
#ifndef SIMPROJ_TOOLS_CLI_H
#define SIMPROJ_TOOLS_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/hw/catalog.h"
#include "sim/arena.h"
#include "sim/diag.h"

#include "model/cluster/taint.h"

#define CLI_EXIT_OK 0
#define CLI_EXIT_ENV 1
#define CLI_EXIT_INPUT 2

typedef int cli_cmd_fn(int argc, char **argv);

cli_cmd_fn cmd_run, cmd_sweep, cmd_plan, cmd_check, cmd_profiles, cmd_layouts, cmd_bench, cmd_validate,
    cmd_fit, cmd_fit_workload, cmd_predict, cmd_policies, cmd_import, cmd_diff,
    cmd_import_workload;

/* Write a job class's `node_selector:` and `tolerations:` (scenario YAML, class indentation)
 * for `import cluster` and `import workload`; nothing when p states neither. */
void import_put_place(FILE *f, const taint_pod *p);

/* Print "slicesim CMD: MSG" to stderr for a usage error; returns CLI_EXIT_INPUT. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Exit status for a loader's return code `rc` on the input file `path`, after printing why:
 * CLI_EXIT_OK for 0; CLI_EXIT_ENV for SIM_ENOENT / SIM_EIO, printing
 * "slicesim CMD: error: cannot read 'PATH': <strerror(errno)>" (call it before errno changes);
 * CLI_EXIT_INPUT otherwise, printing d's messages. */
int cli_load_status(const char *cmd, const char *path, int rc, const diag *d);

/* Load the GPU catalog for command `cmd`: the file `path`, or the embedded model/hw/gpus.yaml when
 * path is NULL, into *cat (its data lives in arena a). When `gpu` is not NULL, also look it up
 * (a catalog name or alias) into *g; g may be NULL when gpu is. Prints what went wrong and returns
 * the exit status: CLI_EXIT_OK; CLI_EXIT_ENV when the file cannot be read; CLI_EXIT_INPUT for a
 * bad catalog (reported through d, then printed) or an unknown GPU (the valid names listed). */
int cli_load_catalog(const char *cmd, const char *path, const char *gpu, arena *a, diag *d,
                     gpu_catalog *cat, const gpu_type **g);

/* Parse a whole-string unsigned integer (decimal) into *out; false if the text is not exactly a
 * number within [min, max]. Never accepts "12abc". */
bool cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out);
/* CLI_EXIT_OK when the value v of option opt is not empty; else a usage error (printed:
 * "option 'OPT' needs a value; expected a non-empty value, got ''"; CLI_EXIT_INPUT). An empty
 * `-o ''` once reached the output writer as an empty path. */
int cli_nonempty(const char *cmd, const char *opt, const char *v);
/* Options that take one value: when argv[*i] is names[k] (k < n), *dst[k] = argv[++*i] and it
 * returns 1; 0 when argv[*i] is none of them; -1 after a usage error (printed) for a missing or
 * empty value or an option given before (*dst[k] already set). */
int cli_option_value(const char *cmd, int argc, char **argv, int *i, const char *const *names,
                     const char **const *dst, size_t n);
/* Record the value v of a `--set PATH=VALUE` option of command cmd into sets[(*n_sets)++];
 * returns CLI_EXIT_OK, or a usage error (printed; CLI_EXIT_INPUT) when v is not an assignment. */
int cli_add_set(const char *cmd, const char *v, const char **sets, size_t *n_sets);

/* The arguments every scenario command (run, check, sweep, plan) shares, tried after its own
 * options at argv[*i]: `--set PATH=VALUE` or `--set=PATH=VALUE` (recorded as cli_add_set does;
 * *i advanced past a separate value), an unknown option, and the one scenario FILE (*scenario).
 * `expect` ends each usage message ("expected: run FILE ..."). Returns CLI_EXIT_OK, or a printed
 * usage error (CLI_EXIT_INPUT). */
int cli_scenario_arg(const char *cmd, int argc, char **argv, int *i, const char **sets,
                     size_t *n_sets, const char **scenario, const char *expect);

/* Exit status for a library status: CLI_EXIT_OK for 0, CLI_EXIT_INPUT for SIM_EINPUT,
 * CLI_EXIT_ENV for anything else (a file could not be read or written). */
int cli_exit_status(int st);

/* "slicesim" and argv[0..argc) joined by spaces (the command line recorded in run_info.json);
 * caller frees. */
char *cli_join_args(int argc, char **argv);

/* Parse a whole-string finite double into *out; false otherwise. */
bool cli_parse_double(const char *s, double *out);

#endif
