/* tools/cmd_validate.c - `slicesim validate`: reproduce the published tables (DESIGN.md §10).
 *
 * Runs every scenario in every experiments/validation/NAME.yaml (sorted by name), prints every figure
 * (table, row, published value, prediction, error, fitted or predicted), the fitted parameters
 * with their standard errors (an all-reduce table is followed by its NAME-from-data table:
 * the same rows predicted from model/comm.yaml alone), then one summary line per table in the
 * fixed form
 *   table NAME rows_fitted=N rows_predicted=M mape_predicted=X.X% max_predicted=Y.Y%
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
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/cli.h"

#include <unistd.h>

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* KIND of a figure labelled WORKLOAD/KIND[:WITH], its digits dropped (ts2, ts4 -> ts;
 * cap50-mps2 -> cap-mps), into kind (size 16); false when the label has no '/'. */
static bool label_kind(const char *label, char kind[16])
{
    const char *sl = strchr(label, '/');
    if (!sl) {
        return false;
    }
    int len = 0;
    for (const char *c = sl + 1; *c && *c != ':' && len < 15; c++) {
        if (*c < '0' || *c > '9') {
            kind[len++] = *c;
        }
    }
    kind[len] = '\0';
    return true;
}

/* Error of the predicted figures per KIND of a table whose labels are WORKLOAD/KIND[:WITH]
 * (digits dropped, so ts2, ts4 and ts8 are one kind), in the order the kinds first appear:
 *   kind TABLE KIND rows_predicted=N mape_predicted=X% max_predicted=Y%[ noise_mean=Z%
 *        within_2sd=W/V]
 * where the table states its rows' measured noise (figure.noise_pct, one standard deviation):
 * noise_mean is the kind's mean noise and W of its V rows miss by at most two standard
 * deviations. A figure line then ends in noise=Z% and, for a predicted row that close,
 * "(within 2 sd)". */
static void print_kinds(const val_table *t)
{
    if (!t->by_kind || t->skipped[0]) {
        return;
    }
    char kinds[16][16];
    int n_k = 0;
    for (int k = 0; k < t->n_figures; k++) {
        char kind[16];
        if (n_k == 16 || !label_kind(t->figures[k].label, kind)) {
            continue;
        }
        int found = 0;
        for (int j = 0; j < n_k; j++) {
            found |= !strcmp(kinds[j], kind);
        }
        if (!found) {
            memcpy(kinds[n_k++], kind, sizeof kind);
        }
    }
    for (int j = 0; j < n_k; j++) {
        int n = 0, n_noise = 0, n_within = 0;
        double sum = 0, max = 0, noise = 0;
        for (int k = 0; k < t->n_figures; k++) {
            const val_figure *f = &t->figures[k];
            char kind[16];
            if (f->fitted || f->excluded || !label_kind(f->label, kind) || strcmp(kind, kinds[j])) {
                continue;
            }
            double err = fabs(f->predicted - f->published) / fabs(f->published) * 100.0;
            err = isfinite(err) ? err : 100.0;
            n++;
            sum += err;
            max = err > max ? err : max;
            if (f->noise_pct > 0) {
                n_noise++;
                noise += f->noise_pct;
                n_within += err <= 2 * f->noise_pct;
            }
        }
        if (n > 0) {
            printf("kind %s %s rows_predicted=%d mape_predicted=%.1f%% max_predicted=%.1f%%", t->name,
                   kinds[j], n, sum / n, max);
            if (n_noise > 0) {
                printf(" noise_mean=%.1f%% within_2sd=%d/%d", noise / n_noise, n_within, n_noise);
            }
            printf("\n");
        }
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
    if (t->mape_pct > t->target_mape_pct) {
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
        double err = fabs(f->predicted - f->published) / fabs(f->published) * 100.0;
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

int cmd_validate(int argc, char **argv)
{
    const char *dir = "experiments/validation";
    const char *shared = "../shared/validation";
    char root[PATH_MAX], dir_buf[PATH_MAX + 32], shared_buf[PATH_MAX + 32];
    bool dir_given = false, shared_given = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc) {
            dir = argv[++i];
            dir_given = true;
        } else if (!strcmp(argv[i], "--shared") && i + 1 < argc) {
            shared = argv[++i];
            shared_given = true;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            printf("usage: slicesim validate [--dir SCENARIO_DIR] [--shared CSV_DIR]\n"
                   "  Runs every experiments/validation/*.yaml and prints, for each published\n"
                   "  figure, the published value, the prediction and the error; a summary line\n"
                   "  per table. Run outside the repository, the directories are found beside\n"
                   "  the slicesim binary. Tables ship in experiments/validation/data; a CSV in\n"
                   "  CSV_DIR (default ../shared/validation) takes precedence.\n");
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
    for (size_t i = 0; status == CLI_EXIT_OK && i < n; i++) {
        print_range(&tables[i]);
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
