/* tools/cmd_run.c - `slicesim run FILE [-o DIR] [--force] [--seed N] [--set PATH=VALUE]...` and
 * `slicesim check FILE [--set PATH=VALUE]...`: one argument parser, one tools/run.h pipeline
 * (check stops before running, so it loads and checks exactly what a run loads). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/cli.h"
#include "tools/gate.h"
#include "tools/run.h"
#include "tools/sweep_run.h"

static const char usage_text[] =
    "usage: slicesim run FILE [-o DIR] [--force] [--seed N] [--set PATH=VALUE]...\n"
    "\n"
    "Runs the scenario FILE and writes run.json, run_info.json, jobs.csv and timeseries.csv\n"
    "(those its outputs.files names) into DIR (default: the scenario's outputs.dir), then prints\n"
    "a short summary. Nothing is written when the input is bad.\n"
    "  -o DIR            output directory (created when missing; default: outputs.dir, or\n"
    "                    results/NAME)\n"
    "  --force           replace an earlier run's files in DIR (without it such a directory\n"
    "                    is refused); files of it this run does not write are removed\n"
    "  --seed N          master seed (0 .. 2^64-1), replaces the scenario's seed\n"
    "  --set PATH=VALUE  override one scenario field, e.g. --set cluster.nodes[0].count=4\n"
    "                    (repeatable)\n"
    "  --fail-on EXPR    after the run, exit 3 when a figure violates EXPR, e.g. wait_p95>900s,\n"
    "                    class=train/jct_mean>2h, pool=mig/alloc<0.5 (repeatable; slicesim diff\n"
    "                    --help lists the figures)\n"
    "  --slo-wait D      a job meets its SLO when it starts within D: defines slo_attainment\n"
    "Exit status: 0 done, 1 a file could not be read or written, 2 bad input or usage, 3 a\n"
    "--fail-on gate violated.\n";

#define RUN_USAGE "expected: run FILE [-o DIR] [--force] [--seed N] [--set PATH=VALUE]..."

static const char check_usage_text[] =
    "usage: slicesim check FILE [--set PATH=VALUE]...\n"
    "\n"
    "Loads and checks everything `slicesim run FILE` would load (the scenario, the files it\n"
    "names, workload profiles, calibrations, the policy and the cluster), estimates the run's\n"
    "jobs, timeseries rows, events, CPU time, output bytes and memory (jobs, cluster, faults,\n"
    "service requests, autoscaler and re-partitioner steps), and refuses it when the estimate\n"
    "exceeds the scenario's limits (`limits:`). Runs nothing and writes nothing.\n"
    "  --set PATH=VALUE  override one scenario field, e.g. --set limits.jobs=20000000\n"
    "                    (repeatable)\n"
    "Exit status: 0 ok, 1 a file could not be read, 2 bad input or usage.\n";

#define CHECK_USAGE "expected: check FILE [--set PATH=VALUE]..."

/* run (check false) or check (true): parse, then run_scenario. */
static int run_or_check(int argc, char **argv, bool check)
{
    const char *cmd = check ? "check" : "run", *expect = check ? CHECK_USAGE : RUN_USAGE;
    run_opts o = {.summary = stdout, .errors = stderr, .check_only = check};
    gate_expr gates[GATE_MAX];
    size_t n_gates = 0;
    double slo_wait_s = 0;
    char dir_used[4096];
    o.dir_used = dir_used;
    o.dir_used_len = sizeof dir_used;
    const char **sets = xcalloc((size_t)argc, sizeof *sets, "--set list");
    int rc = CLI_EXIT_OK;
    for (int i = 1; i < argc && rc == CLI_EXIT_OK; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(check ? check_usage_text : usage_text, stdout);
            free(sets);
            return CLI_EXIT_OK;
        }
        if (!check && !strcmp(a, "--force")) {
            o.force = true;
            continue;
        }
        int g = check ? 0 : gate_option(cmd, argc, argv, &i, gates, &n_gates, &slo_wait_s, false);
        if (g != 0) {
            rc = g < 0 ? CLI_EXIT_INPUT : rc;
            continue;
        }
        bool run_only = !strcmp(a, "-o") || !strcmp(a, "--seed");
        bool takes_value = run_only;
        if (check && run_only) {
            rc = cli_usage_error(cmd, "unknown option '%s'; %s", a, expect);
        } else if (takes_value && i + 1 >= argc) {
            rc = cli_usage_error(cmd, "option '%s' needs a value; %s", a, expect);
        } else if (!strcmp(a, "-o")) {
            if (o.out_dir) {
                rc = cli_usage_error("run",
                                     "option '-o' given twice; expected one output "
                                     "directory, got '%s' and '%s'",
                                     o.out_dir, argv[i + 1]);
            } else {
                rc = cli_nonempty(cmd, a, argv[i + 1]);
            }
            o.out_dir = argv[++i];
        } else if (!strcmp(a, "--seed")) {
            if (o.has_seed) {
                rc = cli_usage_error("run", "option '--seed' given twice; expected one seed");
            } else if (!cli_parse_u64(argv[i + 1], 0, UINT64_MAX, &o.seed)) {
                rc = cli_usage_error("run",
                                     "--seed: not a seed; expected an integer from 0 to "
                                     "18446744073709551615, got '%s'",
                                     argv[i + 1]);
            }
            o.has_seed = true;
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
    if (rc != CLI_EXIT_OK) {
        free(sets);
        return rc;
    }
    o.sets = sets;
    char *line = cli_join_args(argc, argv);
    o.command_line = line;
    /* check: the summary is held back until every combination of a sweep checked too */
    char *held = NULL;
    size_t held_len = 0;
    FILE *hold = check ? open_memstream(&held, &held_len) : NULL;
    if (hold) {
        o.summary = hold;
    }
    int st = run_scenario(&o);
    sweep_check_info ci = {0};
    if (check && st == 0) {
        st = sweep_check(o.scenario, sets, o.n_sets, stderr, &ci);
    }
    if (hold) {
        fclose(hold);
        if (st == 0) {
            fwrite(held, 1, held_len, stdout);
            sweep_check_print(stdout, o.scenario, &ci);
        }
        free(held);
    }
    free(line);
    free(sets);
    if (st == 0 && n_gates > 0) {
        return gate_check_run(cmd, dir_used, gates, n_gates, slo_wait_s);
    }
    return cli_exit_status(st);
}

int cmd_run(int argc, char **argv)
{
    return run_or_check(argc, argv, false);
}

int cmd_check(int argc, char **argv)
{
    return run_or_check(argc, argv, true);
}
