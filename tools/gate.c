/* tools/gate.c - --fail-on expressions (see gate.h). */
#include "tools/gate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/diag.h"
#include "sim/err.h"
#include "tools/cli.h"
#include "tools/runfig.h"

#define EXPECT                                                                                     \
    "[class=NAME/|pool=NAME/][delta.]FIGURE(<|<=|>|>=)NUMBER[s|m|h|d|%], like wait_p95>900s"

bool gate_parse(const char *text, gate_expr *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    out->text = text;
    snprintf(out->kind, sizeof out->kind, "all");
    const char *p = text;
    const char *slash = strchr(p, '/');
    if (slash) {
        size_t n = (size_t)(slash - p);
        bool cls = n > 6 && !strncmp(p, "class=", 6), pool = n > 5 && !strncmp(p, "pool=", 5);
        size_t skip = cls ? 6 : 5;
        if ((!cls && !pool) || n - skip >= sizeof out->scope) {
            snprintf(why, why_len, "expected %s, got '%s' (a scope is class=NAME or pool=NAME)",
                     EXPECT, text);
            return false;
        }
        snprintf(out->kind, sizeof out->kind, "%s", cls ? "class" : "pool");
        snprintf(out->scope, sizeof out->scope, "%.*s", (int)(n - skip), p + skip);
        p = slash + 1;
    }
    if (!strncmp(p, "delta.", 6)) {
        out->delta = true;
        p += 6;
    }
    size_t flen = strcspn(p, "<>");
    char fig[64];
    snprintf(fig, sizeof fig, "%.*s", (int)(flen < 63 ? flen : 63), p);
    out->fig = runfig_find(fig);
    if (out->fig < 0 || !p[flen]) {
        char names[512] = "";
        for (int i = 0; i < RF_COUNT; i++) {
            strcat(names, i ? ", " : "");
            strcat(names, runfig_name(i));
        }
        snprintf(why, why_len, "expected %s with FIGURE one of [%s], got '%s'", EXPECT, names,
                 text);
        return false;
    }
    p += flen;
    out->op = p[0] == '<' ? 0 : 2;
    p++;
    if (*p == '=') {
        out->op++;
        p++;
    }
    errno = 0;
    char *end;
    double v = strtod(p, &end);
    double mult = 1;
    if (end != p && runfig_is_time(out->fig)) {
        mult = !strcmp(end, "") || !strcmp(end, "s") ? 1
               : !strcmp(end, "m")                   ? 60
               : !strcmp(end, "h")                   ? 3600
               : !strcmp(end, "d")                   ? 86400
                                                     : (double)NAN;
    } else if (end != p) {
        mult = !strcmp(end, "") ? 1 : !strcmp(end, "%") ? 0.01 : (double)NAN;
    }
    if (end == p || errno || !isfinite(v) || isnan(mult) || (*p == '-' && !out->delta)) {
        snprintf(why, why_len, "expected %s: a number%s after the operator, got '%s'", EXPECT,
                 runfig_is_time(out->fig) ? " with a time unit s, m, h or d" : " or a percentage",
                 text);
        return false;
    }
    out->value = v * mult;
    return true;
}

bool gate_violated(const gate_expr *g, double value)
{
    if (isnan(value)) {
        return true;
    }
    switch (g->op) {
    case 0:
        return value < g->value;
    case 1:
        return value <= g->value;
    case 2:
        return value > g->value;
    default:
        return value >= g->value;
    }
}

int gate_option(const char *cmd, int argc, char **argv, int *i, gate_expr *g, size_t *n_g,
                double *slo_wait_s, bool allow_delta)
{
    const char *a = argv[*i];
    bool fail_on = !strcmp(a, "--fail-on"), slo = !strcmp(a, "--slo-wait");
    if (!fail_on && !slo) {
        return 0;
    }
    if (*i + 1 >= argc) {
        cli_usage_error(cmd, "option '%s' needs a value; expected %s", a,
                        fail_on ? EXPECT : "a duration like 15m");
        return -1;
    }
    const char *v = argv[++*i];
    char why[640];
    if (fail_on) {
        if (*n_g == GATE_MAX) {
            cli_usage_error(cmd, "--fail-on: expected at most %d gates, got more", GATE_MAX);
            return -1;
        }
        if (!gate_parse(v, &g[*n_g], why, sizeof why)) {
            cli_usage_error(cmd, "--fail-on: %s", why);
            return -1;
        }
        if (g[*n_g].delta && !allow_delta) {
            cli_usage_error(cmd,
                            "--fail-on: a change (delta.) needs a baseline; expected a "
                            "figure of this run (slicesim diff compares two), got '%s'",
                            v);
            return -1;
        }
        (*n_g)++;
        return 1;
    }
    gate_expr t;
    char text[96];
    snprintf(text, sizeof text, "wait_mean>%.80s", v); /* a time as a gate reads one */
    if (!gate_parse(text, &t, why, sizeof why) || t.value <= 0) {
        cli_usage_error(cmd, "--slo-wait: expected a duration like 15m, got '%s'", v);
        return -1;
    }
    *slo_wait_s = t.value;
    return 1;
}

int gate_options_done(const char *cmd, const gate_expr *g, size_t n_g, double slo_wait_s)
{
    for (size_t k = 0; k < n_g; k++) {
        if (g[k].fig == RF_SLO && slo_wait_s <= 0) {
            return cli_usage_error(cmd,
                                   "--fail-on %s: expected --slo-wait D, which defines "
                                   "slo_attainment, got none",
                                   g[k].text);
        }
    }
    return CLI_EXIT_OK;
}

int gate_report(const gate_expr *g, size_t n_g, const double *values, FILE *out)
{
    int violated = 0;
    for (size_t k = 0; k < n_g; k++) {
        bool bad = gate_violated(&g[k], values[k]);
        violated |= bad;
        fprintf(out, "gate %s: %s (%s%s = %.6g%s)\n", g[k].text, bad ? "FAILED" : "passed",
                g[k].delta ? "change of " : "", runfig_name(g[k].fig), values[k],
                runfig_is_time(g[k].fig) ? " s" : "");
    }
    return violated ? GATE_EXIT_VIOLATED : 0;
}

int gate_check_run(const char *cmd, const char *dir, const gate_expr *g, size_t n_g,
                   double slo_wait_s)
{
    if (n_g == 0) {
        return 0;
    }
    diag *d = diag_create();
    runfig_set f;
    int rc = runfig_load(dir, slo_wait_s, d, &f);
    if (rc == SIM_ENOENT) {
        diag_destroy(d);
        return cli_usage_error(cmd,
                               "--fail-on reads run.json and jobs.csv; expected both among "
                               "the outputs in '%s', got a run without them",
                               dir);
    }
    if (rc) {
        char p[4200];
        snprintf(p, sizeof p, "%.4000s/run.json and jobs.csv", dir);
        int st = cli_load_status(cmd, p, rc, d);
        diag_destroy(d);
        return st;
    }
    double values[GATE_MAX];
    int st = 0;
    for (size_t k = 0; k < n_g; k++) {
        const runfig_scope *sc = runfig_get(&f, g[k].kind, g[k].scope);
        if (!sc) {
            st = cli_usage_error(cmd, "--fail-on %s: the run has no %s '%s'", g[k].text, g[k].kind,
                                 g[k].scope);
        }
        values[k] = sc ? sc->v[g[k].fig] : (double)NAN;
    }
    if (st == 0) {
        st = gate_report(g, n_g, values, stdout);
    }
    runfig_free(&f);
    diag_destroy(d);
    return st;
}
