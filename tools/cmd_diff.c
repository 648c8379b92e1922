/* tools/cmd_diff.c - `slicesim diff A B [--slo-wait D] [--fail-on EXPR]...`: what changes from
 * run A (the baseline) to run B (the candidate), per job class and per pool, with confidence
 * intervals over replications run under common random numbers; and the gates on B.
 *
 * A and B are each the output directory of `slicesim run`, or of `slicesim sweep` (DIR, or
 * DIR:C for combination C of a sweep with several; its replications cC-r0, cC-r1, ... are the
 * samples). Replication r of A is paired with replication r of B: a sweep's replication r runs
 * with the same seed at every combination and in every sweep of the same scenario seed, so the
 * difference of a pair is the change alone, not the workload's noise. The 95 % interval of the
 * mean change is Student's t with n - 1 degrees of freedom over the n paired differences (none
 * with one replication). Figures and scopes: tools/runfig.h. Exit 0; 3 when a --fail-on gate is
 * violated (tools/gate.h; a figure is B's mean over its replications, a `delta.` figure the mean
 * change); 2 on bad usage or input; 1 when a file cannot be read. */
#include "tools/cli.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "sim/diag.h"
#include "sim/err.h"
#include "tools/gate.h"
#include "tools/runfig.h"

#define CMD "diff"

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: slicesim diff A B [--slo-wait DURATION] [--fail-on EXPR]...\n"
        "  Compares run B with run A (output directories of `slicesim run`, or of\n"
        "  `slicesim sweep`: DIR, or DIR:C for its combination C), per job class and per pool:\n"
        "  wait, JCT, slowdown, allocation, OOMs and SLO attainment; with replications, the\n"
        "  95%% confidence interval of the change over pairs of replications run with the\n"
        "  same seeds (common random numbers).\n"
        "  --slo-wait D   a job meets its SLO when it starts within D (e.g. 15m): adds\n"
        "                 slo_attainment\n"
        "  --fail-on EXPR exit 3 when B's figure violates EXPR, e.g. wait_p95>900s,\n"
        "                 slo_attainment<0.99, class=train/delta.jct_mean>10m (repeatable)\n");
}

typedef struct side {
    const char *arg;
    size_t n; /* replications */
    runfig_set rep[GATE_MAX_REPS];
} side;

static int load_side(side *s, double slo_wait_s, diag *d)
{
    return gate_load_runs(CMD, s->arg, slo_wait_s, d, s->rep, &s->n);
}

/* Mean over the replications of one figure of one scope (NaN where a replication lacks it). */
static double side_mean(const side *s, const char *kind, const char *name, int fig)
{
    double sum = 0;
    for (size_t r = 0; r < s->n; r++) {
        const runfig_scope *sc = runfig_get(&s->rep[r], kind, name);
        sum += sc ? sc->v[fig] : (double)NAN;
    }
    return s->n ? sum / (double)s->n : (double)NAN;
}

/* Mean of the paired differences B - A and the half-width of its 95 % interval (NaN for one
 * pair). */
static void change(const side *a, const side *b, const char *kind, const char *name, int fig,
                   double *mean, double *half)
{
    double sum = 0, sum2 = 0;
    size_t n = a->n;
    for (size_t r = 0; r < n; r++) {
        const runfig_scope *x = runfig_get(&a->rep[r], kind, name);
        const runfig_scope *y = runfig_get(&b->rep[r], kind, name);
        double dlt = (y ? y->v[fig] : (double)NAN) - (x ? x->v[fig] : (double)NAN);
        sum += dlt;
        sum2 += dlt * dlt;
    }
    *mean = sum / (double)n;
    *half = (double)NAN;
    if (n >= 2 && isfinite(*mean)) {
        double var = (sum2 - (double)n * *mean * *mean) / (double)(n - 1);
        *half =
            gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * sqrt(var > 0 ? var : 0) / sqrt((double)n);
    }
}

static void put_value(double v, int fig)
{
    if (isnan(v)) {
        printf(" %12s", "-");
    } else if (fig == RF_ALLOC || fig == RF_SLO) {
        printf(" %11.2f%%", 100 * v);
    } else if (fig == RF_SLOWDOWN_MEAN) {
        printf(" %12.3f", v);
    } else {
        printf(" %12.1f", v);
    }
}

static void print_scope(const side *a, const side *b, const char *kind, const char *name)
{
    bool all = !strcmp(kind, "all");
    for (int f = 0; f < RF_COUNT; f++) {
        double va = side_mean(a, kind, name, f), vb = side_mean(b, kind, name, f);
        /* a class or pool shows what changes for it; its counts of jobs stand in "all" */
        if ((isnan(va) && isnan(vb)) ||
            (!all && (f == RF_JOBS || f == RF_DONE || f == RF_JCT_P95))) {
            continue;
        }
        double m, h;
        change(a, b, kind, name, f, &m, &h);
        char label[160];
        snprintf(label, sizeof label, "%s%s%s", kind, name[0] ? " " : "", name);
        char fname[32];
        snprintf(fname, sizeof fname, "%s%s", runfig_names[f], runfig_time[f] ? "_s" : "");
        printf("%-28s %-16s", label, fname);
        put_value(va, f);
        put_value(vb, f);
        put_value(m, f);
        if (a->n == 1) {
            printf("  n=1\n"); /* one pair: no spread to estimate */
        } else if (isnan(h)) {
            printf("  -\n");
        } else {
            printf("  +-");
            put_value(h, f);
            printf("\n");
        }
    }
}

static bool scope_seen(const runfig_set *done, size_t upto, const runfig_scope *sc)
{
    for (size_t i = 0; i < upto; i++) {
        if (!strcmp(done->s[i].kind, sc->kind) && !strcmp(done->s[i].name, sc->name)) {
            return true;
        }
    }
    return false;
}

/* The gates on B: a figure is B's mean over its replications, a `delta.` one the mean change. */
static int check_gates(const side *a, const side *b, const gate_expr *g, size_t n_g)
{
    double values[GATE_MAX];
    for (size_t i = 0; i < n_g; i++) {
        double h;
        if (g[i].delta) {
            change(a, b, g[i].kind, g[i].scope, g[i].fig, &values[i], &h);
        } else {
            values[i] = side_mean(b, g[i].kind, g[i].scope, g[i].fig);
        }
    }
    return gate_report(g, n_g, values, stdout) ? GATE_EXIT_VIOLATED : CLI_EXIT_OK;
}

int cmd_diff(int argc, char **argv)
{
    static side a, b; /* large: off the stack */
    gate_expr gates[GATE_MAX];
    size_t n_gates = 0;
    double slo_wait_s = 0;
    const char *args[2] = {NULL, NULL};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return CLI_EXIT_OK;
        }
        int g = gate_option(CMD, argc, argv, &i, gates, &n_gates, &slo_wait_s, true);
        if (g < 0) {
            return CLI_EXIT_INPUT;
        }
        if (g > 0) {
            continue;
        }
        if (argv[i][0] == '-' || (args[0] && args[1])) {
            return cli_usage_error(CMD, "unexpected argument '%s'; expected: diff A B [options]",
                                   argv[i]);
        } else {
            args[args[0] ? 1 : 0] = argv[i];
        }
    }
    if (!args[1]) {
        return cli_usage_error(CMD, "expected: diff A B (two run or sweep output directories)");
    }
    if (gate_options_done(CMD, gates, n_gates, slo_wait_s) != CLI_EXIT_OK) {
        return CLI_EXIT_INPUT;
    }
    a = (side){.arg = args[0]};
    b = (side){.arg = args[1]};
    diag *d = diag_create();
    int st = load_side(&a, slo_wait_s, d);
    if (st == CLI_EXIT_OK) {
        st = load_side(&b, slo_wait_s, d);
    }
    if (st == CLI_EXIT_OK && a.n != b.n) {
        st = cli_usage_error(CMD,
                             "A has %zu replications and B %zu; expected as many (pairs of "
                             "the same seeds)",
                             a.n, b.n);
    }
    if (st == CLI_EXIT_OK) {
        printf("diff %s -> %s: %zu replication%s%s\n", a.arg, b.arg, a.n, a.n == 1 ? "" : "s",
               a.n > 1 ? ", paired by seed (common random numbers), 95% CI of the change"
                       : " (n=1: no confidence interval of the change; the replications of a "
                         "sweep give one)");
        printf("%-28s %-16s %12s %12s %12s  %s\n", "scope", "figure", "A", "B", "change", "95% CI");
        for (int pass = 0; pass < 2; pass++) { /* A's scopes, then those only B has */
            const runfig_set *src = pass ? &b.rep[0] : &a.rep[0];
            for (size_t i = 0; i < src->n; i++) {
                if (pass && scope_seen(&a.rep[0], a.rep[0].n, &src->s[i])) {
                    continue;
                }
                print_scope(&a, &b, src->s[i].kind, src->s[i].name);
            }
        }
        for (size_t i = 0; i < n_gates; i++) {
            if (strcmp(gates[i].kind, "all") &&
                !runfig_get(&b.rep[0], gates[i].kind, gates[i].scope)) {
                st = cli_usage_error(CMD, "--fail-on %s: B has no %s '%s'", gates[i].text,
                                     gates[i].kind, gates[i].scope);
            }
        }
        if (st == CLI_EXIT_OK) {
            st = check_gates(&a, &b, gates, n_gates);
        }
    }
    for (size_t r = 0; r < a.n; r++) {
        runfig_free(&a.rep[r]);
    }
    for (size_t r = 0; r < b.n; r++) {
        runfig_free(&b.rep[r]);
    }
    diag_destroy(d);
    return st;
}
