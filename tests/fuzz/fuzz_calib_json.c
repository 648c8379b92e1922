/* tests/fuzz/fuzz_calib_json.c - libFuzzer target: arbitrary bytes read as a calibration JSON
 * (calib_json_load_buffer, and its first MIG device with calib_json_load_buffer_mig), as a model
 * file (calmodel_load_buffer), and, when the calibration reads cleanly, fitted (calfit_all,
 * calfit_holdout, calfit_ts_gap_check). Every allocation is released: a crash, a
 * sanitizer report or a leak is a bug. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "experiments/calib_json.h"
#include "model/calfit.h"
#include "sim/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
    calmodel_load_buffer("fuzz.json", (const char *)data, size, f, dg);
    diag_destroy(dg);
    free(f);
    free(d);
    return 0;
}
