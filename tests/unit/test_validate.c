/* Validation against the published tables (experiments/validation, DESIGN.md §10): every table's
 * error on its predicted rows must stay within the target its scenario states. Every table ships
 * in experiments/validation/data (the seed tables as copies of ../shared/validation), so the
 * tests read them with a shared directory that does not exist: no table can pass by skipping. */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiments/catalog_load.h"
#include "experiments/physics_load.h"
#include "experiments/validation.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"

#define SHARED "/nonexistent/shared/validation" /* the shipped copies must be used */

typedef struct env {
    diag *d;
    arena *a;
    gpu_catalog cat;
    phys_params m;
} env;

static void env_open(env *e)
{
    e->d = diag_create();
    e->a = arena_create();
    cr_assert_eq(catalog_load_default(e->a, &e->cat, e->d), 0);
    cr_assert_eq(physics_load_default(e->d, &e->m), 0);
}

static void env_close(env *e)
{
    arena_destroy(e->a);
    diag_destroy(e->d);
}

static void check_table(const char *scenario, int min_predicted)
{
    env e;
    env_open(&e);
    val_table t;
    int rc = val_run_file(scenario, SHARED, &e.cat, &e.m, e.d, &t);
    if (rc != 0) {
        diag_print(e.d, stderr);
    }
    cr_assert_eq(rc, 0, "%s", scenario);
    cr_assert_eq(t.skipped[0], '\0', "%s", t.skipped);
    cr_assert_geq(t.n_predicted, min_predicted);
    cr_assert_lt(t.n_fitted, t.n_predicted, "fitted rows must be a minority");
    cr_assert_leq(t.mape_pct, t.target_mape_pct, "%s: mape %.2f%% > target %.1f%%", t.name,
                  t.mape_pct, t.target_mape_pct);
    val_table_fini(&t);
    env_close(&e);
}

Test(validate, cern_simpletrack)
{
    check_table("experiments/validation/cern-simpletrack.yaml", 10);
}

Test(validate, chep_timeslicing)
{
    check_table("experiments/validation/chep-timeslicing.yaml", 10);
}

Test(validate, cern_mig_flops)
{
    check_table("experiments/validation/cern-mig-flops.yaml", 10);
}

Test(validate, cern_finetune)
{
    check_table("experiments/validation/cern-finetune.yaml", 10);
}

Test(validate, migprofiler_resnet50_train)
{
    check_table("experiments/validation/migprofiler-resnet50-train.yaml", 20);
}

Test(validate, migprofiler_resnet50_infer)
{
    check_table("experiments/validation/migprofiler-resnet50-infer.yaml", 20);
}

Test(validate, migprofiler_vit_infer)
{
    check_table("experiments/validation/migprofiler-vit-infer.yaml", 20);
}

Test(validate, nos_yolos_sharing)
{
    check_table("experiments/validation/nos-yolos-sharing.yaml", 6);
}

Test(validate, bad_scenario_is_reported)
{
    static const char path[] = "build/test-bad-validation.yaml";
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("table: cern-simpletrack\ncsv: x.csv\ngpu: A100-PCIE-40GB\ntarget_mape_pct: 5\n"
          "fit: [a/b]\nfitt: 1\n", f);
    fclose(f);
    env e;
    env_open(&e);
    val_table t;
    cr_assert_eq(val_run_file(path, SHARED, &e.cat, &e.m, e.d, &t), SIM_EINPUT);
    cr_assert_str_eq(diag_message(e.d, 0),
                     "build/test-bad-validation.yaml:6:1: error: fitt: unknown key; expected one "
                     "of [table, csv, gpu, target_mape_pct, fit, exclude, note, base, calibration, "
                     "model, class, ranks, ll_max_bytes, min_bytes], "
                     "got 'fitt'");
    val_table_fini(&t);
    env_close(&e);
}

/* Each excluded figure carries its own reason (cern-finetune excludes four figures for two
 * different reasons), and a figure named in `exclude` that the table lacks is reported at the
 * figure's line and column (value column: `  - {figure: ` is 13 characters). */
Test(validate, excluded_figures_have_their_own_reasons)
{
    env e;
    env_open(&e);
    val_table t;
    cr_assert_eq(val_run_file("experiments/validation/cern-finetune.yaml", SHARED, &e.cat, &e.m,
                              e.d, &t),
                 0);
    int n_ex = 0;
    for (int k = 0; k < t.n_figures; k++) {
        const val_figure *f = &t.figures[k];
        if (!f->excluded) {
            continue;
        }
        n_ex++;
        bool dup = strstr(f->label, "7g_vs_3g/5000/") == f->label;
        bool run = strstr(f->label, "full_vs_7g/15000/") == f->label;
        cr_assert(dup || run, "unexpected excluded figure %s", f->label);
        cr_assert_eq(strstr(f->reason, "7g_vs_3g") != NULL, dup, "%s: %s", f->label, f->reason);
    }
    cr_assert_eq(n_ex, 4);
    val_table_fini(&t);
    env_close(&e);
}

Test(validate, unknown_excluded_figure_has_line_and_col)
{
    static const char path[] = "build/test-bad-validation-exclude.yaml";
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("table: cern-simpletrack\ncsv: cern-simpletrack.csv\ngpu: A100-PCIE-40GB\n"
          "target_mape_pct: 5\nfit: [\"5000000/full\", \"nope/full\"]\n"
          "exclude:\n  - {figure: \"1/2\", reason: r}\n",
          f);
    fclose(f);
    env e;
    env_open(&e);
    val_table t;
    /* the CSV from the shipped copies (the scenario is not beside them) */
    cr_assert_eq(val_run_file(path, "experiments/validation/data", &e.cat, &e.m, e.d, &t),
                 SIM_EINPUT);
    cr_assert_eq(diag_error_count(e.d), 2);
    cr_assert_str_eq(diag_message(e.d, 0),
                     "build/test-bad-validation-exclude.yaml:5:6: error: fit: no such figure in "
                     "the table; expected ROW/COLUMN, got 'nope/full'");
    cr_assert_str_eq(diag_message(e.d, 1),
                     "build/test-bad-validation-exclude.yaml:7:14: error: exclude[0].figure: no "
                     "such figure in the table; expected ROW/COLUMN, got '1/2'");
    val_table_fini(&t);
    env_close(&e);
}

/* `slicesim validate` run from another directory finds its scenarios beside the binary. */
Test(validate, runs_outside_the_repository_root, .timeout = 120)
{
    char cwd[1024], cmd[1200];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    snprintf(cmd, sizeof cmd, "cd / && %s/slicesim validate > /dev/null 2>&1", cwd);
    cr_assert_eq(system(cmd), 0, "validate failed when run from /");
}
