/* tests/fuzz/fuzz_sweep.c - libFuzzer target: arbitrary bytes loaded as a scenario with a sweep:
 * section (experiments/sweep.h), then the scenario of each of its first combinations loaded from
 * the same bytes with the combination's values put in place (sweep_apply through a scenario
 * edit). Referenced files are never opened (SCENARIO_NO_FILES). Everything is released: a crash,
 * a sanitizer report or a leak is a bug.
 */
#include <stddef.h>
#include <stdint.h>

#include "experiments/scenario.h"
#include "experiments/sweep.h"
#include "sim/arena.h"
#include "sim/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    arena *a = arena_create();
    diag *d = diag_create();
    sweep_spec *sw = NULL;
    if (sweep_load_buffer("fuzz.yaml", data, size, a, d, &sw) == 0 && sw) {
        for (size_t c = 0; c < sw->n_combos && c < 4; c++) {
            sweep_combo ce = {sw, c};
            scenario_edit edit = {sweep_combo_edit, &ce};
            scenario_spec *s = NULL;
            diag *pd = diag_create();
            scenario_load_buffer_edit("fuzz.yaml", ".", data, size, NULL, 0, &edit,
                                      SCENARIO_NO_FILES, a, pd, &s);
            diag_destroy(pd);
        }
    }
    diag_destroy(d);
    arena_destroy(a);
    return 0;
}
