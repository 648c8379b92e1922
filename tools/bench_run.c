/* tools/bench_run.c - `slicesim bench run FILE -o DIR [--set PATH=VALUE]... [--target-s S]
 * [--target-mb M]`: one whole run (load, simulate, write every output file) as `slicesim run`
 * does it, timed, with the process's peak resident memory, printed beside the targets.
 *
 * Prints one line of key=value pairs, e.g.
 *   bench=run scenario=experiments/bench/synth-10k-1m.yaml jobs=999687 events=3968750
 *   wall_s=14.21 cpu_s=13.05 out_cpu_s=2.10 out_share=0.16 max_rss_mb=388 pages_spilled=653 target_s=30
 *   target_mb=2048 verdict=within
 * wall_s is the wall time of the run; cpu_s its user + system time, which is what the time target
 * is compared with: a run is one thread, so on an idle machine the two agree, while on a shared one
 * wall time also counts the waits for a CPU. out_cpu_s is the part of cpu_s spent writing the
 * output files (after the last event), out_share its fraction of cpu_s. max_rss_mb is getrusage's
 * peak resident set of the whole process, so run one benchmark per process. verdict: within (both
 * targets met), over, or untargeted. The output directory is replaced (as --force): a benchmark
 * overwrites its own earlier files. pages_spilled: pages of JOB_PAGE ended jobs the run moved out of
 * memory to its spill file (model/cluster/job.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/bench.h"
#include "tools/cli.h"
#include "tools/run.h"

#define USAGE                                                                                      \
    "usage: slicesim bench run FILE -o DIR [--set PATH=VALUE]... [--target-s S] [--target-mb M]"

static double cpu_s(const struct rusage *u)
{
    return (double)u->ru_utime.tv_sec + 1e-6 * (double)u->ru_utime.tv_usec +
           (double)u->ru_stime.tv_sec + 1e-6 * (double)u->ru_stime.tv_usec;
}

/* A positive finite number for option `flag`; false (message printed) otherwise. */
static bool positive(const char *flag, const char *v, double *out)
{
    if (!cli_parse_double(v, out) || !(*out > 0)) {
        cli_usage_error("bench", "%s: expected a positive number, got '%s'", flag, v);
        return false;
    }
    return true;
}

int bench_run_cmd(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("%s\n  runs FILE as `slicesim run FILE -o DIR --force` does and prints its wall "
               "and CPU time and peak memory beside the targets\n",
               USAGE);
        return CLI_EXIT_OK;
    }
    run_opts o = {.force = true, .errors = stderr};
    const char **sets = xcalloc((size_t)argc, sizeof *sets, "--set list");
    double target_s = 0, target_mb = 0;
    int rc = CLI_EXIT_OK;
    for (int i = 1; i < argc && rc == CLI_EXIT_OK; i++) {
        const char *a = argv[i];
        bool takes_value = !strcmp(a, "-o") || !strcmp(a, "--set") || !strcmp(a, "--target-s") ||
                           !strcmp(a, "--target-mb");
        if (takes_value && i + 1 >= argc) {
            rc = cli_usage_error("bench", "option '%s' needs a value; %s", a, USAGE);
        } else if (!strcmp(a, "-o")) {
            rc = cli_nonempty("bench", a, argv[i + 1]);
            o.out_dir = argv[++i];
        } else if (!strcmp(a, "--set")) {
            sets[o.n_sets++] = argv[++i];
        } else if (!strcmp(a, "--target-s")) {
            rc = positive(a, argv[++i], &target_s) ? rc : CLI_EXIT_INPUT;
        } else if (!strcmp(a, "--target-mb")) {
            rc = positive(a, argv[++i], &target_mb) ? rc : CLI_EXIT_INPUT;
        } else if (a[0] == '-' || o.scenario) {
            rc = cli_usage_error("bench", "unexpected argument '%s'; %s", a, USAGE);
        } else {
            o.scenario = a;
        }
    }
    if (rc == CLI_EXIT_OK && (!o.scenario || !o.out_dir)) {
        rc = cli_usage_error("bench", "missing %s; %s", o.scenario ? "-o DIR" : "FILE", USAGE);
    }
    if (rc != CLI_EXIT_OK) {
        free(sets);
        return rc;
    }
    o.sets = sets;
    run_stats st = {0};
    o.stats = &st;
    struct rusage u0, u1;
    getrusage(RUSAGE_SELF, &u0);
    double t0 = bench_now_s();
    int run_rc = run_scenario(&o);
    double wall = bench_now_s() - t0;
    getrusage(RUSAGE_SELF, &u1);
    free(sets);
    if (run_rc != 0) {
        return run_rc == SIM_EINPUT ? CLI_EXIT_INPUT : CLI_EXIT_ENV;
    }
    double rss_mb = (double)u1.ru_maxrss / 1024.0; /* Linux: kilobytes */
    double cpu = cpu_s(&u1) - cpu_s(&u0);
    const char *verdict = "untargeted";
    if (target_s > 0 || target_mb > 0) {
        bool ok = (target_s <= 0 || cpu <= target_s) && (target_mb <= 0 || rss_mb <= target_mb);
        verdict = ok ? "within" : "over";
    }
    printf("bench=run scenario=%s jobs=%zu events=%llu wall_s=%.2f cpu_s=%.2f out_cpu_s=%.2f "
           "out_share=%.2f max_rss_mb=%.0f pages_spilled=%zu target_s=%g target_mb=%g verdict=%s\n",
           o.scenario, st.n_jobs, (unsigned long long)st.n_events, wall, cpu, st.out_cpu_s,
           cpu > 0 ? st.out_cpu_s / cpu : 0, rss_mb, st.n_spilled, target_s, target_mb, verdict);
    return CLI_EXIT_OK;
}
