/* tools/cmd_sweep.c - `slicesim sweep FILE [-o DIR] [-j N] [--set PATH=VALUE]...` and
 * `slicesim plan FILE ...` (the same options; both also under mpirun). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/cli.h"
#include "tools/sweep_mpi.h"
#include "tools/plan_run.h"
#include "tools/sweep_run.h"

static const char usage_text[] =
    "usage: slicesim sweep FILE [-o DIR] [-j N] [--set PATH=VALUE]...\n"
    "       mpirun -np K slicesim sweep FILE [-o DIR] [-j N] [--set PATH=VALUE]...\n"
    "\n"
    "Runs every point of the scenario's sweep: section (each combination of the axes' values,\n"
    "each replication) into DIR/points/cC-rR/, then writes DIR/summary.csv and summary.json:\n"
    "per combination the mean of each figure over the replications and its 95 % confidence\n"
    "half-width. Points already done (their point.json exists) are not run again, so an\n"
    "interrupted sweep resumes. Every combination is validated before anything runs.\n"
    "  -o DIR            output directory (default: the scenario's outputs.dir)\n"
    "  -j N              run up to N points at once in worker processes (default 1)\n"
    "  --set PATH=VALUE  override one scenario field at every point (repeatable)\n"
    "Under mpirun the points are dealt to the ranks; results are identical to -j 1.\n"
    "Exit status: 0 done, 1 a file could not be read or written, 2 bad input or usage.\n";

static const char plan_usage_text[] =
    "usage: slicesim plan FILE [-o DIR] [-j N] [--set PATH=VALUE]...\n"
    "       mpirun -np K slicesim plan FILE [-o DIR] [-j N] [--set PATH=VALUE]...\n"
    "\n"
    "Capacity planning: runs every candidate of the scenario's plan: section (each combination\n"
    "of its axes, e.g. node counts x layouts, with its replications) as a sweep into DIR, then\n"
    "picks the cheapest candidate whose SLOs hold at the upper end of their 95 % confidence\n"
    "intervals, and writes DIR/plan.csv, plan.json, plan.html (the Pareto frontier of cost\n"
    "against each SLO), and the answer as mig-parted.yaml and device-plugin-config.yaml.\n"
    "  -o DIR            output directory (default: the scenario's outputs.dir)\n"
    "  -j N              run up to N candidates' runs at once in worker processes (default 1)\n"
    "  --set PATH=VALUE  override one scenario field in every run (repeatable)\n"
    "Exit status: 0 done (also when no candidate meets the SLOs), 1 a file could not be read\n"
    "or written, 2 bad input or usage.\n";

#define SWEEP_USAGE "expected: sweep FILE [-o DIR] [-j N] [--set PATH=VALUE]..."
#define PLAN_USAGE "expected: plan FILE [-o DIR] [-j N] [--set PATH=VALUE]..."

/* sweep (plan false) or plan (true): parse, join MPI when launched by mpirun, run. */
static int sweep_or_plan(int argc, char **argv, bool plan)
{
    const char *cmd = plan ? "plan" : "sweep", *expect = plan ? PLAN_USAGE : SWEEP_USAGE;
    sweep_run_opts o = {.jobs = 1, .out = stdout};
    const char **sets = xcalloc((size_t)argc, sizeof *sets, "--set list");
    int rc = CLI_EXIT_OK;
    bool has_j = false;
    for (int i = 1; i < argc && rc == CLI_EXIT_OK; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(plan ? plan_usage_text : usage_text, stdout);
            free(sets);
            return CLI_EXIT_OK;
        }
        bool takes_value = !strcmp(a, "-o") || !strcmp(a, "-j");
        if (takes_value && i + 1 >= argc) {
            rc = cli_usage_error(cmd, "option '%s' needs a value; %s", a, expect);
        } else if (!strcmp(a, "-o")) {
            if (o.out_dir) {
                rc = cli_usage_error(cmd, "option '-o' given twice; expected one output "
                                          "directory");
            } else {
                rc = cli_nonempty(cmd, a, argv[i + 1]);
            }
            o.out_dir = argv[++i];
        } else if (!strcmp(a, "-j")) {
            uint64_t j;
            if (has_j) {
                rc = cli_usage_error(cmd, "option '-j' given twice; expected one count");
            } else if (!cli_parse_u64(argv[i + 1], 1, 1024, &j)) {
                rc = cli_usage_error(cmd,
                                     "-j: not a worker count; expected an integer from 1 "
                                     "to 1024, got '%s'",
                                     argv[i + 1]);
            } else {
                o.jobs = (unsigned)j;
            }
            has_j = true;
            i++;
        } else {
            rc = cli_scenario_arg(cmd, argc, argv, &i, sets, &o.n_sets, &o.scenario, expect);
        }
    }
    if (rc == CLI_EXIT_OK && !o.scenario) {
        rc = cli_usage_error(cmd, "missing scenario FILE; %s", expect);
    }
    sweep_mpi mpi;
    if (rc == CLI_EXIT_OK && sweep_mpi_init(&argc, &argv, &mpi) != 0) {
        rc = CLI_EXIT_INPUT;
    }
    if (rc != CLI_EXIT_OK) {
        free(sets);
        return rc;
    }
    o.sets = sets;
    o.mpi = &mpi;
    o.progress = isatty(STDERR_FILENO);
    o.out = mpi.rank == 0 ? stdout : NULL;
    char *line = cli_join_args(argc, argv);
    o.command_line = line;
    int st = plan ? plan_run(&o) : sweep_run(&o);
    sweep_mpi_finalize(&mpi);
    free(line);
    free(sets);
    return cli_exit_status(st);
}

int cmd_sweep(int argc, char **argv)
{
    return sweep_or_plan(argc, argv, false);
}

int cmd_plan(int argc, char **argv)
{
    return sweep_or_plan(argc, argv, true);
}
