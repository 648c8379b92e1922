/* tests/fuzz/fuzz_calib_json.c - libFuzzer target: arbitrary bytes read as a calibration JSON
 * (calib_json_load_buffer, and its first MIG device with calib_json_load_buffer_mig), as a model
 * file (calmodel_load_source_buffer; one that reads is applied to its catalog GPU type through
 * model/fit/calapply.h and queried), and, when the calibration reads cleanly, fitted (calfit_all,
 * calfit_holdout, calfit_ts_gap_check), and as a time-slice probe file (tslice_json_load_buffer;
 * one that reads is analysed by tsp_analyse). Every allocation is released: a crash, a
 * sanitizer report or a leak is a bug. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "experiments/calib_json.h"
#include "experiments/catalog_load.h"
#include "experiments/physics_load.h"
#include "model/fit/calapply.h"
#include "model/fit/calfit.h"
#include "model/physics/speed.h"
#include "sim/arena.h"
#include "sim/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Put a model that loaded in place of its catalog type and query the result. */
static void apply(const cal_fit *f, const calapply_source *src, diag *dg)
{
    arena *a = arena_create();
    gpu_catalog cat;
    phys_params m;
    char why[512];
    const gpu_type *g = NULL;
    if (catalog_load_default(a, &cat, dg) == 0 && physics_load_default(dg, &m) == 0 &&
        (g = calmodel_target(f, src, NULL, &cat, why, sizeof why)) != NULL) {
        gpu_type out;
        if (calapply_gpu(g, f, &m, &out, why, sizeof why) == 0 && out.sms_total > 0) {
            volatile double sink = speed_bandwidth(&out, out.sms_total / 2.0 + 1, 1, 8, &m);
            for (int c = 0; c < m.n_ts; c++) {
                sink += speed_eta(&out, &m, c, 3);
            }
            (void)sink;
        }
    }
    arena_destroy(a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    cal_data *d = calloc(1, sizeof *d);
    cal_fit *f = calloc(1, sizeof *f);
    if (!d || !f) {
        free(d);
        free(f);
        return 0;
    }
    diag *dg = diag_create();
    if (calib_json_load_buffer("fuzz.json", (const char *)data, size, d, dg) == 0) {
        double mape, mx;
        int n;
        calfit_all(d, f);
        calfit_holdout(d, &mape, &mx, &n);
        calfit_ts_gap_check(d, &mape, &mx, &n);
    }
    diag_clear(dg);
    calib_json_load_buffer_mig("fuzz.json", (const char *)data, size, 0, d, dg);
    diag_clear(dg);
    tsp_data *t = calloc(1, sizeof *t);
    if (t && tslice_json_load_buffer("fuzz.json", (const char *)data, size, t, dg) == 0) {
        tsp_result r;
        tsp_analyse(t, &r);
        tsp_free(t);
    }
    free(t);
    diag_clear(dg);
    calapply_source src;
    if (calmodel_load_source_buffer("fuzz.json", (const char *)data, size, f, &src, dg) == 0) {
        apply(f, &src, dg);
    }
    diag_destroy(dg);
    free(f);
    free(d);
    return 0;
}
