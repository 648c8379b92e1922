/* tools/cmd_sweep.c - `slicesim sweep FILE [-o DIR] [-j N] [--set PATH=VALUE]...` and
 * `slicesim plan FILE ...` (the same options; both also under mpirun). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "experiments/fileio.h"
#include "experiments/scenario.h"
#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/cli.h"
#include "tools/gate.h"
#include "tools/sweep_mpi.h"
#include "tools/plan_run.h"
#include "tools/sweep_run.h"

static const char usage_text[] =
    "usage: slicesim sweep FILE [-o DIR] [-j N] [--force] [--set PATH=VALUE]...\n"
    "       mpirun -np K slicesim sweep FILE [-o DIR] [-j N] [--force] [--set PATH=VALUE]...\n"
    "\n"
    "Runs every point of the scenario's sweep: section (each combination of the axes' values,\n"
    "each replication) into DIR/points/cC-rR/, then writes DIR/summary.csv and summary.json:\n"
    "per combination the mean of each figure over the replications and its 95 % confidence\n"
    "half-width. Points already done (their point.json exists) are not run again, so an\n"
    "interrupted sweep resumes; DIR/inputs.json records what they were computed from, and a\n"
    "DIR of other inputs (scenario, seed, --set values, referenced files) is refused.\n"
    "Every combination is validated before anything runs.\n"
    "  -o DIR            output directory (default: the scenario's outputs.dir)\n"
    "  -j N              run up to N points at once in worker processes (default 1)\n"
    "  --force           run every point again when DIR holds points of other inputs\n"
    "  --set PATH=VALUE  override one scenario field at every point (repeatable)\n"
    "Under mpirun the points are dealt to the ranks; results are identical to -j 1.\n"
    "Exit status: 0 done, 1 a file could not be read or written, 2 bad input or usage.\n";

static const char plan_usage_text[] =
    "usage: slicesim plan FILE [-o DIR] [-j N] [--force] [--set PATH=VALUE]...\n"
    "       mpirun -np K slicesim plan FILE [-o DIR] [-j N] [--force] [--set PATH=VALUE]...\n"
    "\n"
    "Capacity planning: runs every candidate of the scenario's plan: section (each combination\n"
    "of its axes, e.g. node counts x layouts, with its replications) as a sweep into DIR, then\n"
    "picks the cheapest candidate whose SLOs hold at the upper end of their 95 % confidence\n"
    "intervals, and writes DIR/plan.csv, plan.json, plan.html (the Pareto frontier of cost\n"
    "against each SLO), and the answer as mig-parted.yaml and device-plugin-config.yaml.\n"
    "  -o DIR            output directory (default: the scenario's outputs.dir)\n"
    "  -j N              run up to N candidates' runs at once in worker processes (default 1)\n"
    "  --force           run every candidate again when DIR holds runs of other inputs\n"
    "                    (without it such a directory is refused, as a sweep's)\n"
    "  --set PATH=VALUE  override one scenario field in every run (repeatable)\n"
    "  --fail-on EXPR    with -o DIR: exit 3 when the answer's figure (its mean over the\n"
    "                    replications) violates EXPR, or when there is no answer, e.g.\n"
    "                    wait_p95>15m (repeatable; slicesim diff --help lists the figures)\n"
    "  --slo-wait D      a job meets its SLO when it starts within D: defines slo_attainment\n"
    "Exit status: 0 done (also when no candidate meets the SLOs), 1 a file could not be read\n"
    "or written, 2 bad input or usage, 3 a --fail-on gate violated.\n";

#define SWEEP_USAGE "expected: sweep FILE [-o DIR] [-j N] [--force] [--set PATH=VALUE]..."
#define PLAN_USAGE "expected: plan FILE [-o DIR] [-j N] [--force] [--set PATH=VALUE]..."

/* plan --fail-on: the gates on the answer's runs (DIR/plan.json chosen.candidate C: the points
 * cC-rR); every gate fails when no candidate met the SLOs. */
static int plan_gates(const char *dir, const gate_expr *g, size_t n_g, double slo_wait_s)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/plan.json", dir);
    char *buf;
    size_t len;
    if (fileio_read_all(path, FILEIO_MAX_BYTES, &buf, &len) != 0) {
        fprintf(stderr, "slicesim plan: error: cannot read '%s'\n", path);
        return CLI_EXIT_ENV;
    }
    cJSON *root = cJSON_ParseWithLength(buf, len);
    free(buf);
    const cJSON *c = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(root, "chosen"), "candidate");
    int st;
    if (!cJSON_IsNumber(c)) {
        double none[GATE_MAX];
        for (size_t k = 0; k < n_g; k++) {
            none[k] = (double)NAN;
        }
        printf("gates: no candidate meets the SLOs; each gate fails\n");
        st = gate_report(g, n_g, none, stdout);
    } else {
        char arg[4200];
        snprintf(arg, sizeof arg, "%.4000s:%d", dir, (int)c->valuedouble);
        printf("gates on the answer (candidate %d):\n", (int)c->valuedouble);
        st = gate_check_runs("plan", arg, g, n_g, slo_wait_s);
    }
    cJSON_Delete(root);
    return st;
}

/* sweep (plan false) or plan (true): parse, join MPI when launched by mpirun, run. */
static int sweep_or_plan(int argc, char **argv, bool plan)
{
    const char *cmd = plan ? "plan" : "sweep", *expect = plan ? PLAN_USAGE : SWEEP_USAGE;
    sweep_run_opts o = {.jobs = 1, .out = stdout};
    const char **sets = xcalloc((size_t)argc, sizeof *sets, "--set list");
    int rc = CLI_EXIT_OK;
    bool has_j = false;
    gate_expr gates[GATE_MAX];
    size_t n_gates = 0;
    double slo_wait_s = 0;
    for (int i = 1; i < argc && rc == CLI_EXIT_OK; i++) {
        int g = plan ? gate_option(cmd, argc, argv, &i, gates, &n_gates, &slo_wait_s, false) : 0;
        if (g != 0) {
            rc = g < 0 ? CLI_EXIT_INPUT : rc;
            continue;
        }
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(plan ? plan_usage_text : usage_text, stdout);
            free(sets);
            return CLI_EXIT_OK;
        }
        if (!strcmp(a, "--force")) {
            o.force = true;
            continue;
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
    if (rc == CLI_EXIT_OK) {
        rc = gate_options_done(cmd, gates, n_gates, slo_wait_s);
    }
    if (rc == CLI_EXIT_OK && n_gates > 0 && !o.out_dir) {
        rc = cli_usage_error(cmd, "--fail-on reads the answer's runs back; expected -o DIR, got "
                                  "none");
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
    o.need_files = n_gates > 0 ? SCN_OUT_RUN_JSON | SCN_OUT_JOBS_CSV : 0;
    o.progress = isatty(STDERR_FILENO);
    o.out = mpi.rank == 0 ? stdout : NULL;
    char *line = cli_join_args(argc, argv);
    o.command_line = line;
    int st = plan ? plan_run(&o) : sweep_run(&o);
    if (st == 0 && n_gates > 0 && mpi.rank == 0) {
        sweep_mpi_finalize(&mpi);
        free(line);
        free(sets);
        return plan_gates(o.out_dir, gates, n_gates, slo_wait_s);
    }
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
