/* tools/cmd_validate.c - `slicesim validate`: reproduce the published tables (DESIGN.md §10).
 *
 * Runs every scenario in every experiments/validation/NAME.yaml (sorted by name), prints every figure
 * (table, row, published value, prediction, error, fitted or predicted), the fitted parameters
 * with their standard errors (an all-reduce table is followed by its NAME-from-data table:
 * the same rows predicted from model/physics/comm.yaml alone), then one summary line per table in the
 * fixed form
 *   table NAME rows_fitted=N rows_predicted=M mape_predicted=X.X% max_predicted=Y.Y%
 * then, for tables labelled by kind, one `kind` line per kind and one `pooled` line per kind of
 * each pool (scenarios naming the same `pool:`), each followed by a line for the MPS rows of 4 or
 * more clients (kind mps4+) where there are such rows. A table whose predicted MAPE is above its
 * target_mape_pct prints "NAME MISSES its target: ..."; one with a shared_target_mape_pct is
 * judged per kind instead, one "NAME KIND meets|MISSES its target: ..." line per kind
 * (val_kind_target).
 * A table whose CSV is absent (no ../shared) is skipped with a message. Exit 0 when every table
 * ran or was skipped, 2 on a bad scenario, 1 when a file cannot be read.
 */
#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "experiments/physics_load.h"
#include "experiments/validation.h"
#include "experiments/valkinds.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/cli.h"
#include "tools/gate.h"

#include <unistd.h>

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One per-kind line: PREFIX NAME KIND rows_predicted=N mape_predicted=X% max_predicted=Y%[
 * noise_mean=Z% within_2sd=W/V]. */
static void print_kind_line(const char *prefix, const char *name, const val_kind_stat *s)
{
    printf("%s %s %s rows_predicted=%d mape_predicted=%.1f%% max_predicted=%.1f%%", prefix, name,
           s->kind, s->n, s->mape, s->max);
    if (s->n_noise > 0) {
        printf(" noise_mean=%.1f%% within_2sd=%d/%d", s->noise_mean, s->n_within, s->n_noise);
    }
    printf("\n");
}

/* MPS rows with at least this many clients get a line of their own after the kinds (kind
 * mps4+): issue 25's target for many clients, which the mps kind's mean (2-8 clients) hides. */
#define MANY_CLIENTS 4

/* Error of the predicted figures per KIND of a table whose labels are WORKLOAD/KIND[:WITH]
 * (experiments/valkinds.h: digits dropped, so ts2, ts4 and ts8 are one kind), in the order the
 * kinds first appear:
 *   kind TABLE KIND rows_predicted=N mape_predicted=X% max_predicted=Y%[ noise_mean=Z%
 *        within_2sd=W/V]
 * (then, where the table has MPS rows of MANY_CLIENTS or more clients, the same line for them
 * alone, KIND mps4+) where the table states its rows' measured noise (figure.noise_pct, one
 * standard deviation):
 * noise_mean is the kind's mean noise and W of its V rows miss by at most two standard
 * deviations. A figure line then ends in noise=Z% and, for a predicted row that close,
 * "(within 2 sd)". */
static void print_kinds(const val_table *t)
{
    val_kind_stat st[VAL_MAX_KINDS];
    int n_k = val_kinds(&t, 1, st);
    for (int j = 0; j < n_k; j++) {
        print_kind_line("kind", t->name, &st[j]);
    }
    val_kind_stat many;
    if (val_kind_at_least(&t, 1, "mps", MANY_CLIENTS, &many)) {
        print_kind_line("kind", t->name, &many);
    }
}

/* The kinds pooled over the tables whose scenarios name the same `pool` (two or more tables,
 * taken in the order of their names; each figure predicted by its own table's fit), pools in the
 * order their first table runs:
 *   pooled TABLE1+TABLE2[+...] KIND rows_predicted=N mape_predicted=X% ... (as a kind line) */
static void print_pools(const val_table *tables, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const val_table *t = &tables[i];
        bool first = t->pool[0] && !t->skipped[0];
        for (size_t j = 0; first && j < i; j++) {
            first = tables[j].skipped[0] || strcmp(tables[j].pool, t->pool);
        }
        if (!first) {
            continue;
        }
        const val_table *members[64];
        int m = 0;
        for (size_t j = i; j < n && m < 64; j++) {
            if (!tables[j].skipped[0] && !strcmp(tables[j].pool, t->pool)) {
                int at = m++; /* members sorted by table name */
                for (; at > 0 && strcmp(members[at - 1]->name, tables[j].name) > 0; at--) {
                    members[at] = members[at - 1];
                }
                members[at] = &tables[j];
            }
        }
        char name[256] = "";
        for (int j = 0; j < m; j++) {
            size_t len = strlen(name);
            snprintf(name + len, sizeof name - len, "%s%s", j ? "+" : "", members[j]->name);
        }
        val_kind_stat st[VAL_MAX_KINDS];
        int n_k = m > 1 ? val_kinds(members, m, st) : 0;
        for (int k = 0; k < n_k; k++) {
            print_kind_line("pooled", name, &st[k]);
        }
        val_kind_stat many;
        if (m > 1 && val_kind_at_least(members, m, "mps", MANY_CLIENTS, &many)) {
            print_kind_line("pooled", name, &many);
        }
    }
}

/* A table with a shared target (val_table.shared_target_mape_pct) is judged per kind, each kind
 * against its own target (val_kind_target: shared kinds ts and mps against the shared one, the
 * others against target_mape_pct), in the order val_kinds gives:
 *   NAME KIND meets its target: mape X.X% <= T.T%
 *   NAME KIND MISSES its target: mape X.X% > T.T% */
static void print_kind_verdicts(const val_table *t)
{
    val_kind_stat st[VAL_MAX_KINDS];
    int n_k = val_kinds(&t, 1, st);
    for (int j = 0; j < n_k; j++) {
        double target = val_kind_target(t, st[j].kind);
        bool miss = st[j].mape > target;
        printf("%s %s %s its target: mape %.1f%% %s %.1f%%\n", t->name, st[j].kind,
               miss ? "MISSES" : "meets", st[j].mape, miss ? ">" : "<=", target);
    }
}

static void print_table(const val_table *t)
{
    if (t->skipped[0]) {
        printf("skip %s: %s\n", t->name, t->skipped);
        return;
    }
    for (int i = 0; i < t->n_figures; i++) {
        const val_figure *f = &t->figures[i];
        double e = (f->predicted / f->published - 1) * 100;
        printf("%s %s published=%.6g %s predicted=%.6g error=%+.1f%% %s", t->name, f->label,
               f->published, f->unit, f->predicted, e,
               f->excluded ? "excluded" : f->fitted ? "fitted" : "predicted");
        if (f->noise_pct > 0) {
            printf(" noise=%.1f%%%s", f->noise_pct,
                   !f->fitted && !f->excluded && fabs(e) <= 2 * f->noise_pct ? " (within 2 sd)"
                                                                             : "");
        }
        printf("\n");
    }
    for (int i = 0; i < t->n_figures; i++) { /* one reason per excluded figure */
        const val_figure *f = &t->figures[i];
        if (f->excluded && f->reason[0]) {
            printf("%s excluded %s because: %s\n", t->name, f->label, f->reason);
        }
    }
    if (t->excluded_reason[0]) {
        printf("%s excluded because: %s\n", t->name, t->excluded_reason);
    }
    for (int i = 0; i < t->fit.n_params; i++) {
        const wfit_param_result *p = &t->fit.params[i];
        printf("%s fit %s = %.6g +- %.2g%s%s\n", t->name, p->name, p->value, p->std_err,
               p->pinned ? "" : "  NOT PINNED, assumed ", p->pinned ? "" : p->assumed);
    }
    if (t->shared_target_mape_pct > 0) {
        print_kind_verdicts(t);
    } else if (t->mape_pct > t->target_mape_pct) {
        printf("%s MISSES its target: mape %.1f%% > %.1f%%\n", t->name, t->mape_pct,
               t->target_mape_pct);
    }
}

/* How many predicted figures lie inside the range their prediction spans over the fit's family
 * of profiles (printed for tables whose fit left a family: a parameter it could not pin). */
static void print_range(const val_table *t)
{
    if (t->skipped[0] || t->fit.n_family < 2 || t->n_predicted == 0) {
        return;
    }
    printf("range %s family=%d in_range=%d/%d (published value inside the predictions of every "
           "profile set that fits the fitted rows as well)\n",
           t->name, t->fit.n_family, t->n_in_range, t->n_predicted);
}

/* The summary line of a table (the fixed form of the file's header). */
static void print_summary(const val_table *t)
{
    if (!t->skipped[0]) {
        printf("table %s rows_fitted=%d rows_predicted=%d mape_predicted=%.1f%% "
               "max_predicted=%.1f%%\n",
               t->name, t->n_fitted, t->n_predicted, t->mape_pct, t->max_pct);
    }
}

/* The errors a table would have if its excluded figures counted as predictions. */
static void print_excluded_note(const val_table *t)
{
    int n_ex = 0, n_all = 0;
    double sum = 0.0, max = 0.0;
    for (int k = 0; k < t->n_figures; k++) {
        const val_figure *f = &t->figures[k];
        if (f->fitted || t->skipped[0]) {
            continue;
        }
        double err = val_figure_error_pct(f);
        n_ex += f->excluded;
        n_all++;
        sum += err;
        max = err > max ? err : max;
    }
    if (n_ex > 0) {
        printf("note %s: %d figures excluded (reasons above); counted as predictions: "
               "rows_predicted=%d mape_predicted=%.1f%% max_predicted=%.1f%%\n",
               t->name, n_ex, n_all, sum / n_all, max);
    }
}

/* The directory holding the running binary (./slicesim is built at the repository root), into
 * buf; false when /proc/self/exe cannot be read. */
static bool binary_dir(char *buf, size_t n)
{
    ssize_t k = readlink("/proc/self/exe", buf, n - 1);
    if (k <= 0) {
        return false;
    }
    buf[k] = '\0';
    char *slash = strrchr(buf, '/');
    if (!slash) {
        return false;
    }
    *slash = '\0';
    return true;
}

/* --fail-on: a table's MAPE or largest error of its predicted figures, as fractions (5% = 0.05);
 * without `table=NAME/`, the worst table. */
static const char *const val_gate_names[] = {"mape_predicted", "max_predicted"};
static const bool val_gate_time[] = {false, false};
static const gate_figures val_gates = {
    val_gate_names, 2, val_gate_time, {"table", NULL},
    "[table=NAME/](mape_predicted|max_predicted)(<|<=|>|>=)NUMBER[%], like mape_predicted>5%"};

/* The gates on the tables (n files, each a chain of tables): the report, and GATE_EXIT_VIOLATED
 * when one fails; a table the run lacks is a usage error. */
static int check_val_gates(const val_table *tables, size_t n, const gate_expr *g, size_t n_g)
{
    double values[GATE_MAX];
    for (size_t k = 0; k < n_g; k++) {
        bool scoped = !strcmp(g[k].kind, "table"), found = false;
        values[k] = scoped ? (double)NAN : 0;
        for (size_t i = 0; i < n; i++) {
            for (const val_table *t = &tables[i]; t; t = t->from_data) {
                if (t->skipped[0] || (scoped && strcmp(t->name, g[k].scope))) {
                    continue;
                }
                double v = (g[k].fig == 0 ? t->mape_pct : t->max_pct) / 100;
                values[k] = found && values[k] > v ? values[k] : v;
                found = true;
            }
        }
        if (scoped && !found) {
            return cli_usage_error("validate", "--fail-on %s: no table '%s' was validated",
                                   g[k].text, g[k].scope);
        }
    }
    return gate_report(g, n_g, values, stdout);
}

int cmd_validate(int argc, char **argv)
{
    gate_expr gates[GATE_MAX];
    size_t n_gates = 0;
    const char *dir = "experiments/validation";
    const char *shared = "../shared/validation";
    char root[PATH_MAX], dir_buf[PATH_MAX + 32], shared_buf[PATH_MAX + 32];
    bool dir_given = false, shared_given = false;
    for (int i = 1; i < argc; i++) {
        int gi = gate_option_in(&val_gates, "validate", argc, argv, &i, gates, &n_gates);
        if (gi < 0) {
            return CLI_EXIT_INPUT;
        }
        if (gi > 0) {
            continue;
        }
        if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
            dir = argv[++i];
            dir_given = true;
        } else if (!strcmp(argv[i], "--shared") && i + 1 < argc) {
            shared = argv[++i];
            shared_given = true;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: slicesim validate [--dir SCENARIO_DIR] [--shared CSV_DIR] "
                   "[--fail-on EXPR]...\n"
                   "  Runs every experiments/validation/*.yaml and prints, for each published\n"
                   "  figure, the published value, the prediction and the error; a summary line\n"
                   "  per table. Run outside the repository, the directories are found beside\n"
                   "  the slicesim binary. Tables ship in experiments/validation/data; a CSV in\n"
                   "  CSV_DIR (default ../shared/validation) takes precedence.\n"
                   "  --fail-on EXPR  exit 3 when a table's error passes a limit, e.g.\n"
                   "                  mape_predicted>5%% (the worst table), table=NAME/"
                   "max_predicted>10%%\n");
            return CLI_EXIT_OK;
        } else {
            return cli_usage_error("validate", "unknown argument '%s'; expected --dir DIR or "
                                               "--shared DIR", argv[i]);
        }
    }
    DIR *dh = opendir(dir);
    if (!dh && !dir_given && binary_dir(root, sizeof root)) { /* run outside the repository */
        snprintf(dir_buf, sizeof dir_buf, "%s/experiments/validation", root);
        dir = dir_buf;
        if (!shared_given) {
            snprintf(shared_buf, sizeof shared_buf, "%s/../shared/validation", root);
            shared = shared_buf;
        }
        dh = opendir(dir);
    }
    if (!dh) {
        fprintf(stderr, "slicesim validate: %s: cannot open scenario directory\n", dir);
        return CLI_EXIT_ENV;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(dh))) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".yaml")) {
            names = xrealloc(names, (n + 1) * sizeof *names, "scenario names");
            names[n++] = xstrdup(e->d_name, "scenario name");
        }
    }
    closedir(dh);
    qsort(names, n, sizeof *names, cmp_str);
    diag *d = diag_create();
    arena *a = arena_create();
    gpu_catalog cat;
    phys_params m;
    int status = CLI_EXIT_OK;
    if (catalog_load_default(a, &cat, d) != 0 || physics_load_default(d, &m) != 0) {
        diag_print(d, stderr);
        status = CLI_EXIT_INPUT;
    }
    val_table *tables = xcalloc(n ? n : 1, sizeof *tables, "tables");
    char (*paths)[PATH_MAX + 320] = xcalloc(n ? n : 1, sizeof *paths, "paths");
    for (size_t i = 0; status == CLI_EXIT_OK && i < n; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s", dir, names[i]);
        int rc = val_run_file(paths[i], shared, &cat, &m, d, &tables[i]);
        if (rc == SIM_EINPUT) {
            diag_print(d, stderr);
            status = CLI_EXIT_INPUT;
        } else if (rc != 0) {
            fprintf(stderr, "slicesim validate: %s: %s\n", paths[i], sim_strerror(rc));
            status = CLI_EXIT_ENV;
        } else {
            for (const val_table *t = &tables[i]; t; t = t->from_data) {
                print_table(t);
            }
        }
    }
    for (size_t i = 0; status == CLI_EXIT_OK && i < n; i++) {
        for (const val_table *t = &tables[i]; t; t = t->from_data) {
            print_summary(t);
        }
    }
    /* Excluded figures stay visible: what the error would be if they counted as predictions. */
    for (size_t i = 0; status == CLI_EXIT_OK && i < n; i++) {
        for (const val_table *t = &tables[i]; t; t = t->from_data) {
            print_excluded_note(t);
        }
    }
    for (size_t i = 0; status == CLI_EXIT_OK && i < n; i++) {
        print_kinds(&tables[i]);
    }
    if (status == CLI_EXIT_OK) {
        print_pools(tables, n);
    }
    for (size_t i = 0; status == CLI_EXIT_OK && i < n; i++) {
        print_range(&tables[i]);
    }
    if (status == CLI_EXIT_OK && n_gates > 0) {
        status = check_val_gates(tables, n, gates, n_gates);
    }
    for (size_t i = 0; i < n; i++) {
        val_table_fini(&tables[i]);
        free(names[i]);
    }
    free(tables);
    free(paths);
    free(names);
    arena_destroy(a);
    diag_destroy(d);
    return status;
}
