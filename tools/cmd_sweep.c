/* tools/cmd_sweep.c - `slicesim sweep FILE [-o DIR] [-j N] [--set PATH=VALUE]...` (also under
 * mpirun). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/cli.h"
#include "tools/sweep_mpi.h"
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

#define SWEEP_USAGE "expected: sweep FILE [-o DIR] [-j N] [--set PATH=VALUE]..."

int cmd_sweep(int argc, char **argv)
{
    sweep_run_opts o = {.jobs = 1, .out = stdout};
    const char **sets = xcalloc((size_t)argc, sizeof *sets, "--set list");
    int rc = CLI_EXIT_OK;
    bool has_j = false;
    for (int i = 1; i < argc && rc == CLI_EXIT_OK; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage_text, stdout);
            free(sets);
            return CLI_EXIT_OK;
        }
        bool takes_value = !strcmp(a, "-o") || !strcmp(a, "-j") || !strcmp(a, "--set");
        if (takes_value && i + 1 >= argc) {
            rc = cli_usage_error("sweep", "option '%s' needs a value; %s", a, SWEEP_USAGE);
        } else if (!strcmp(a, "-o")) {
            if (o.out_dir) {
                rc = cli_usage_error("sweep", "option '-o' given twice; expected one output "
                                              "directory");
            }
            o.out_dir = argv[++i];
        } else if (!strcmp(a, "-j")) {
            uint64_t j;
            if (has_j) {
                rc = cli_usage_error("sweep", "option '-j' given twice; expected one count");
            } else if (!cli_parse_u64(argv[i + 1], 1, 1024, &j)) {
                rc = cli_usage_error("sweep",
                                     "-j: not a worker count; expected an integer from 1 "
                                     "to 1024, got '%s'",
                                     argv[i + 1]);
            } else {
                o.jobs = (unsigned)j;
            }
            has_j = true;
            i++;
        } else if (!strcmp(a, "--set")) {
            rc = cli_add_set("sweep", argv[++i], sets, &o.n_sets);
        } else if (a[0] == '-' && a[1] != '\0') {
            rc = cli_usage_error("sweep", "unknown option '%s'; %s", a, SWEEP_USAGE);
        } else if (o.scenario) {
            rc = cli_usage_error("sweep", "unexpected argument '%s' after the scenario '%s'; %s", a,
                                 o.scenario, SWEEP_USAGE);
        } else {
            o.scenario = a;
        }
    }
    if (rc == CLI_EXIT_OK && !o.scenario) {
        rc = cli_usage_error("sweep", "missing scenario FILE; %s", SWEEP_USAGE);
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
    int st = sweep_run(&o);
    sweep_mpi_finalize(&mpi);
    free(line);
    free(sets);
    return st == 0 ? CLI_EXIT_OK : st == SIM_EINPUT ? CLI_EXIT_INPUT : CLI_EXIT_ENV;
}
