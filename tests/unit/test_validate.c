/* Validation against the published tables (experiments/validation, DESIGN.md §10): every table's
 * error on its predicted rows must stay within the target its scenario states. The tables are
 * read from ../shared/validation; without it the test says so and skips. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <unistd.h>

#include "experiments/catalog_load.h"
#include "experiments/physics_load.h"
#include "experiments/validation.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"

#define SHARED "../shared/validation"

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
    if (t.skipped[0] && access(SHARED, R_OK) != 0) {
        /* a seed table without ../shared: say so and skip; a table shipped in the repository
         * (experiments/validation/data) is never skipped */
        val_table_fini(&t);
        env_close(&e);
        cr_skip_test("%s absent: %s", SHARED, scenario);
    }
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
                     "of [table, csv, gpu, target_mape_pct, fit, exclude, note, base, model, class, "
                     "ranks, ll_max_bytes, min_bytes], "
                     "got 'fitt'");
    val_table_fini(&t);
    env_close(&e);
}
