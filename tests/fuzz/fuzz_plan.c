/* tests/fuzz/fuzz_plan.c - libFuzzer target: arbitrary bytes loaded as a scenario with a plan:
 * section (experiments/plan.h), then the scenario of each of its first candidates loaded from the
 * same bytes with the candidate's values put in place. Referenced files are never opened
 * (SCENARIO_NO_FILES). Everything is released: a crash, a sanitizer report or a leak is a bug.
 */
#include <stddef.h>
#include <stdint.h>

#include "experiments/plan.h"
#include "experiments/scenario.h"
#include "sim/arena.h"
#include "sim/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    arena *a = arena_create();
    diag *d = diag_create();
    plan_spec *ps = NULL;
    if (plan_load_buffer("fuzz.yaml", data, size, a, d, &ps) == 0 && ps) {
        for (size_t c = 0; c < ps->sw.n_combos && c < 4; c++) {
            sweep_combo ce = {&ps->sw, c};
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
