/* tools/gate.c - --fail-on expressions (see gate.h). */
#include "tools/gate.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sim/diag.h"
#include "sim/err.h"
#include "tools/cli.h"
#include "tools/runfig.h"

#define EXPECT                                                                                     \
    "[class=NAME/|pool=NAME/][delta.]FIGURE(<|<=|>|>=)NUMBER[s|m|h|d|%], like wait_p95>900s"

const gate_figures gate_run_figures = {runfig_names, RF_COUNT, runfig_time, {"class", "pool"},
                                       EXPECT};

bool gate_parse(const char *text, gate_expr *out, char *why, size_t why_len)
{
    return gate_parse_in(&gate_run_figures, text, out, why, why_len);
}

/* The scope before '/': one of fs's kinds, "KIND=NAME". Returns the text after it, or NULL. */
static const char *parse_scope(const gate_figures *fs, const char *text, gate_expr *out,
                               char *why, size_t why_len)
{
    const char *slash = strchr(text, '/');
    if (!slash) {
        return text;
    }
    size_t n = (size_t)(slash - text);
    for (int k = 0; k < 2 && fs->scopes[k]; k++) {
        size_t kn = strlen(fs->scopes[k]);
        if (n > kn + 1 && !strncmp(text, fs->scopes[k], kn) && text[kn] == '=' &&
            n - kn - 1 < sizeof out->scope) {
            snprintf(out->kind, sizeof out->kind, "%s", fs->scopes[k]);
            snprintf(out->scope, sizeof out->scope, "%.*s", (int)(n - kn - 1), text + kn + 1);
            return slash + 1;
        }
    }
    snprintf(why, why_len, "expected %s, got '%s' (a scope is %s=NAME%s%s%s)", fs->expect, text,
             fs->scopes[0], fs->scopes[1] ? " or " : "", fs->scopes[1] ? fs->scopes[1] : "",
             fs->scopes[1] ? "=NAME" : "");
    return NULL;
}

bool gate_parse_in(const gate_figures *fs, const char *text, gate_expr *out, char *why,
                   size_t why_len)
{
    memset(out, 0, sizeof *out);
    out->text = text;
    out->fs = fs;
    snprintf(out->kind, sizeof out->kind, "all");
    const char *p = parse_scope(fs, text, out, why, why_len);
    if (!p) {
        return false;
    }
    if (!strncmp(p, "delta.", 6)) {
        out->delta = true;
        p += 6;
    }
    size_t flen = strcspn(p, "<>");
    out->fig = -1;
    for (int i = 0; i < fs->n; i++) {
        if (strlen(fs->names[i]) == flen && !strncmp(fs->names[i], p, flen)) {
            out->fig = i;
        }
    }
    if (out->fig < 0 || !p[flen]) {
        char names[512] = "";
        for (int i = 0; i < fs->n; i++) {
            strcat(names, i ? ", " : "");
            strcat(names, fs->names[i]);
        }
        snprintf(why, why_len, "expected %s with FIGURE one of [%s], got '%s'", fs->expect, names,
                 text);
        return false;
    }
    bool is_time = fs->is_time[out->fig];
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
    if (end != p && is_time) {
        mult = !strcmp(end, "") || !strcmp(end, "s") ? 1
               : !strcmp(end, "m")                   ? 60
               : !strcmp(end, "h")                   ? 3600
               : !strcmp(end, "d")                   ? 86400
                                                     : (double)NAN;
    } else if (end != p) {
        mult = !strcmp(end, "") ? 1 : !strcmp(end, "%") ? 0.01 : (double)NAN;
    }
    if (end == p || errno || !isfinite(v) || isnan(mult) || (*p == '-' && !out->delta)) {
        snprintf(why, why_len, "expected %s: a number%s after the operator, got '%s'", fs->expect,
                 is_time ? " with a time unit s, m, h or d" : " or a percentage", text);
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

int gate_option_in(const gate_figures *fs, const char *cmd, int argc, char **argv, int *i,
                   gate_expr *g, size_t *n_g)
{
    if (strcmp(argv[*i], "--fail-on")) {
        return 0;
    }
    if (*i + 1 >= argc) {
        cli_usage_error(cmd, "option '--fail-on' needs a value; expected %s", fs->expect);
        return -1;
    }
    const char *v = argv[++*i];
    char why[640];
    if (*n_g == GATE_MAX) {
        cli_usage_error(cmd, "--fail-on: expected at most %d gates, got more", GATE_MAX);
        return -1;
    }
    if (!gate_parse_in(fs, v, &g[*n_g], why, sizeof why) || g[*n_g].delta) {
        if (g[*n_g].delta) {
            snprintf(why, sizeof why, "expected %s (no delta.), got '%s'", fs->expect, v);
        }
        cli_usage_error(cmd, "--fail-on: %s", why);
        return -1;
    }
    (*n_g)++;
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
                g[k].delta ? "change of " : "", g[k].fs->names[g[k].fig], values[k],
                g[k].fs->is_time[g[k].fig] ? " s" : "");
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

static bool is_dir(const char *p)
{
    struct stat st;
    return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static int by_rep(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

int gate_load_runs(const char *cmd, const char *arg, double slo_wait_s, diag *d, struct runfig_set *reps,
                   size_t *n_reps)
{
    *n_reps = 0;
    char dir[512];
    if (strlen(arg) >= sizeof dir) {
        return cli_usage_error(cmd, "'%.40s...': expected a path of at most 511 bytes", arg);
    }
    snprintf(dir, sizeof dir, "%s", arg);
    long combo = -1;
    char *colon = strrchr(dir, ':');
    if (colon && colon[1] && strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
        combo = strtol(colon + 1, NULL, 10);
        *colon = 0;
    }
    char points[520];
    snprintf(points, sizeof points, "%s/points", dir);
    static char paths[GATE_MAX_REPS][800]; /* the CLI is single-threaded */
    static int rep_no[GATE_MAX_REPS];
    size_t n = 0;
    if (!is_dir(points)) {
        if (combo >= 0) {
            return cli_usage_error(cmd,
                                   "'%s': expected a sweep directory (with points/) for "
                                   ":C, got a directory without points/",
                                   arg);
        }
        snprintf(paths[n++], sizeof paths[0], "%s", dir);
        rep_no[0] = 0;
    } else {
        DIR *dp = opendir(points);
        struct dirent *de;
        long max_c = -1;
        while (dp && (de = readdir(dp))) {
            long c, r;
            char tail;
            if (strlen(de->d_name) > 200 || sscanf(de->d_name, "c%ld-r%ld%c", &c, &r, &tail) != 2) {
                continue;
            }
            max_c = c > max_c ? c : max_c;
            if (c == (combo < 0 ? 0 : combo) && n < GATE_MAX_REPS) {
                rep_no[n] = (int)r;
                snprintf(paths[n++], sizeof paths[0], "%s/%s", points, de->d_name);
            }
        }
        if (dp) {
            closedir(dp);
        }
        if (combo < 0 && max_c > 0) {
            return cli_usage_error(cmd,
                                   "'%s' holds %ld combinations; expected DIR:C naming one, "
                                   "got DIR",
                                   arg, max_c + 1);
        }
        if (n == 0) {
            return cli_usage_error(cmd, "'%s': no finished point of combination %ld", arg,
                                   combo < 0 ? 0 : combo);
        }
        /* order by replication: the pairing */
        for (size_t i = 1; i < n; i++) {
            for (size_t j = i; j > 0 && by_rep(&rep_no[j - 1], &rep_no[j]) > 0; j--) {
                int t = rep_no[j];
                rep_no[j] = rep_no[j - 1];
                rep_no[j - 1] = t;
                char tmp[sizeof paths[0]];
                memcpy(tmp, paths[j], sizeof tmp);
                memcpy(paths[j], paths[j - 1], sizeof tmp);
                memcpy(paths[j - 1], tmp, sizeof tmp);
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        int rc = runfig_load(paths[i], slo_wait_s, d, &reps[i]);
        if (rc == SIM_ENOENT) {
            *n_reps = i;
            return cli_usage_error(cmd,
                                   "'%s' lacks run.json or jobs.csv; expected both among the "
                                   "scenario's outputs.files (the figures are read from them)",
                                   paths[i]);
        }
        if (rc) {
            *n_reps = i;
            char p[sizeof paths[0] + 32];
            snprintf(p, sizeof p, "%.*s/run.json and jobs.csv", (int)sizeof paths[0] - 1, paths[i]);
            return cli_load_status(cmd, p, rc, d);
        }
    }
    *n_reps = n;
    return CLI_EXIT_OK;
}


int gate_check_runs(const char *cmd, const char *arg, const gate_expr *g, size_t n_g,
                    double slo_wait_s)
{
    static runfig_set reps[GATE_MAX_REPS];
    size_t n = 0;
    diag *d = diag_create();
    int st = gate_load_runs(cmd, arg, slo_wait_s, d, reps, &n);
    double values[GATE_MAX];
    for (size_t k = 0; st == CLI_EXIT_OK && k < n_g; k++) {
        double sum = 0;
        for (size_t r = 0; r < n; r++) {
            const runfig_scope *sc = runfig_get(&reps[r], g[k].kind, g[k].scope);
            if (!sc) {
                st = cli_usage_error(cmd, "--fail-on %s: the runs have no %s '%s'", g[k].text,
                                     g[k].kind, g[k].scope);
                break;
            }
            sum += sc->v[g[k].fig];
        }
        values[k] = sum / (double)n;
    }
    if (st == CLI_EXIT_OK) {
        st = gate_report(g, n_g, values, stdout);
    }
    for (size_t r = 0; r < n; r++) {
        runfig_free(&reps[r]);
    }
    diag_destroy(d);
    return st;
}
