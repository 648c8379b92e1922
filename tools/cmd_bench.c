/* tools/cmd_bench.c - `slicesim bench KIND --pending N --events M [--seed S]`.
 *
 * Prints one line of key=value pairs ending in events_per_s=<number> (per wall second), e.g.
 *   bench=engine pending=1000 events=2000000 seconds=0.081 cpu_s=0.080 events_per_cpu_s=25000000
 *   events_per_s=24691358
 * (one line); cpu_s is the CPU time of the measured steps and events_per_cpu_s divides by it
 * (`bench fluid` adds solves= and rerated=, the solver's work, before events_per_cpu_s).
 * KIND: engine (hold model through the real engine), heap (the same on a bare binary heap of
 * doubles, the reference), fluid (activity churn through the fluid solver); `bench run` (a whole
 * scenario run with its peak memory) is tools/bench_run.c.
 * Usage errors exit 2 with a precise message; defaults: pending 1000, events 1000000, seed 1.
 */
#include "tools/bench.h"
#include "tools/cli.h"

#include <stdio.h>
#include <string.h>

typedef bench_result bench_fn(uint64_t pending, uint64_t events, uint64_t seed);

typedef struct bench_kind {
    const char *name;
    bench_fn *fn;
    const char *summary;
} bench_kind;

static const bench_kind kinds[] = {
    {"engine", bench_hold_engine, "hold model through the engine's event queue and run loop"},
    {"heap", bench_hold_heap, "hold model on a bare binary heap of doubles (reference)"},
    {"fluid", bench_fluid, "fluid activity churn, 10 activities per fair-shared link"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: slicesim bench KIND [--pending N] [--events M] [--seed S]\n"
                 "  --pending N  events (or activities) kept pending, 1..100000000 (default 1000)\n"
                 "  --events M   measured steps, 1..10^12 (default 1000000)\n"
                 "  --seed S     master seed of the random stream (default 1)\n"
                 "       slicesim bench run FILE -o DIR [--set PATH=VALUE]... [--target-s S] "
                 "[--target-mb M]\n"
                 "  a whole run of scenario FILE (outputs written to DIR, replaced): wall and CPU "
                 "time,\n"
                 "  peak memory, beside the targets\n"
                 "kinds:\n");
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        fprintf(out, "  %-7s %s\n", kinds[i].name, kinds[i].summary);
    }
}

typedef struct bench_opt {
    const char *flag;
    uint64_t min, max;
    uint64_t *out;
    bool seen;
} bench_opt;

int cmd_bench(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (argc < 2) {
        usage(stderr);
        return cli_usage_error("bench", "missing KIND; expected one of: engine, heap, fluid, run");
    }
    if (!strcmp(argv[1], "run")) {
        return bench_run_cmd(argc - 1, argv + 1);
    }
    const bench_kind *kind = NULL;
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        if (!strcmp(argv[1], kinds[i].name)) {
            kind = &kinds[i];
        }
    }
    if (!kind) {
        return cli_usage_error("bench",
                               "unknown benchmark '%s'; expected one of: engine, heap, "
                               "fluid, run",
                               argv[1]);
    }
    uint64_t pending = 1000, events = 1000000, seed = 1;
    bench_opt opts[] = {
        {"--pending", 1, 100000000, &pending, false},
        {"--events", 1, 1000000000000ULL, &events, false},
        {"--seed", 0, UINT64_MAX, &seed, false},
    };
    size_t n_opts = sizeof opts / sizeof opts[0];
    for (int i = 2; i < argc; i++) {
        bench_opt *o = NULL;
        for (size_t k = 0; k < n_opts; k++) {
            if (!strcmp(argv[i], opts[k].flag)) {
                o = &opts[k];
            }
        }
        if (!o) {
            return cli_usage_error("bench",
                                   "unknown option '%s'; expected --pending, --events "
                                   "or --seed",
                                   argv[i]);
        }
        if (o->seen) {
            return cli_usage_error("bench", "%s given twice", o->flag);
        }
        o->seen = true;
        if (i + 1 >= argc) {
            return cli_usage_error("bench",
                                   "%s: missing value; expected an integer in "
                                   "[%llu, %llu]",
                                   o->flag, (unsigned long long)o->min, (unsigned long long)o->max);
        }
        const char *v = argv[++i];
        if (!cli_parse_u64(v, o->min, o->max, o->out)) {
            return cli_usage_error("bench", "%s: expected an integer in [%llu, %llu], got '%s'",
                                   o->flag, (unsigned long long)o->min, (unsigned long long)o->max,
                                   v);
        }
    }
    bench_result r = kind->fn(pending, events, seed);
    double rate = r.seconds > 0 ? (double)r.events / r.seconds : 0;
    double cpu_rate = r.cpu_seconds > 0 ? (double)r.events / r.cpu_seconds : 0;
    printf("bench=%s pending=%llu events=%llu seconds=%.6f cpu_s=%.6f", kind->name,
           (unsigned long long)pending, (unsigned long long)r.events, r.seconds, r.cpu_seconds);
    if (r.solves > 0) {
        printf(" solves=%llu rerated=%llu", (unsigned long long)r.solves,
               (unsigned long long)r.rerated);
    }
    printf(" events_per_cpu_s=%.0f events_per_s=%.0f\n", cpu_rate, rate);
    return CLI_EXIT_OK;
}
