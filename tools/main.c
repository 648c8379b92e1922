/* tools/main.c - the slicesim command-line front end: dispatches to tools/cmd_*.c. */
#include "tools/buildinfo.h"
#include "tools/cleanup.h"
#include "tools/cli.h"

#include "sim/gslerr.h"

#include <stdio.h>
#include <string.h>

typedef struct cli_cmd {
    const char *name;
    cli_cmd_fn *fn;
    const char *summary;
} cli_cmd;

static const cli_cmd commands[] = {
    {"run", cmd_run,
     "run a scenario: run FILE [-o DIR] [--force] [--seed N] [--set PATH=VALUE]..."},
    {"check", cmd_check, "check a scenario, estimate its cost: check FILE [--set PATH=VALUE]..."},
    {"sweep", cmd_sweep, "run a scenario's sweep points: sweep FILE [-o DIR] [-j N] (or mpirun)"},
    {"plan", cmd_plan, "capacity plan: cheapest candidate meeting SLOs: plan FILE [-o DIR] [-j N]"},
    {"profiles", cmd_profiles,
     "the catalog's GPU types, or a GPU's MIG profile table: profiles [GPU]"},
    {"layouts", cmd_layouts, "list valid MIG layouts or check a mig-parted file: layouts GPU"},
    {"bench", cmd_bench,
     "benchmarks: bench engine|heap|fluid [--pending N] [--events M], bench run FILE"},
    {"validate", cmd_validate, "reproduce the published tables"},
    {"fit", cmd_fit, "fit model parameters from a calibration JSON: fit CALIB.json -o MODEL.json"},
    {"fit-workload", cmd_fit_workload, "fit a workload profile: fit-workload OBS.yaml -o P.yaml"},
    {"predict", cmd_predict, "predict a profile on queries: predict PROFILE.yaml... QUERIES.yaml"},
    {"policies", cmd_policies, "list the scheduling and placement policies"},
    {"import", cmd_import,
     "a scenario from a cluster: import cluster SNAPSHOT.json -o SCENARIO.yaml (kubectl)"},
    {"diff", cmd_diff, "compare two runs per class and pool, gate: diff A B [--fail-on EXPR]"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: slicesim COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        fprintf(out, "  %-13s %s\n", commands[i].name, commands[i].summary);
    }
    fprintf(out, "\n`slicesim COMMAND --help` (or `slicesim help COMMAND`) describes one command;\n"
                 "`slicesim --version` prints the version, git revision and build flavour.\n");
}

static const cli_cmd *find_command(const char *name)
{
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        if (!strcmp(name, commands[i].name)) {
            return &commands[i];
        }
    }
    return NULL;
}

/* "unknown command 'X'; expected one of: ..." on stderr; returns CLI_EXIT_INPUT. */
static int unknown_command(const char *name)
{
    fprintf(stderr, "slicesim: error: unknown command '%s'; expected one of:", name);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
        fprintf(stderr, " %s", commands[i].name);
    }
    fputc('\n', stderr);
    return CLI_EXIT_INPUT;
}

int main(int argc, char **argv)
{
    sim_gsl_install_handler();    /* a GSL error is a bug: print it and abort */
    if (cleanup_install() != 0) { /* SIGINT/SIGTERM remove staged outputs, exit 130/143 */
        perror("slicesim: sigaction");
        return CLI_EXIT_ENV;
    }
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_INPUT;
    }
    if (!strcmp(argv[1], "help") && argc >= 3) { /* help CMD = CMD --help */
        const cli_cmd *c = find_command(argv[2]);
        char help_flag[] = "--help";
        char *help_argv[] = {argv[2], help_flag, NULL};
        return c ? c->fn(2, help_argv) : unknown_command(argv[2]);
    }
    if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
        printf("slicesim %s (%s%s, %s build: %s)\n", buildinfo_version(),
               buildinfo_has_git_rev() ? "git " : "", buildinfo_git_rev(), buildinfo_flavour(),
               buildinfo_opt_flags());
        return CLI_EXIT_OK;
    }
    const cli_cmd *c = find_command(argv[1]);
    return c ? c->fn(argc - 1, argv + 1) : unknown_command(argv[1]);
}
