/* tests/fuzz/fuzz_plan.c - libFuzzer target: arbitrary bytes loaded as a scenario with a plan:
 * section (experiments/plan.h), then the scenario of each of its first candidates loaded from the
 * same bytes with the candidate's values put in place. Referenced files are never opened
 * (SCENARIO_NO_FILES). Everything is released: a crash, a sanitizer report or a leak is a bug.
 */
#include <stddef.h>
#include <stdint.h>

#include "experiments/plan.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "tests/fuzz/fuzz_combos.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    arena *a = arena_create();
    diag *d = diag_create();
    plan_spec *ps = NULL;
    if (plan_load_buffer("fuzz.yaml", data, size, a, d, &ps) == 0 && ps) {
        fuzz_load_combos(&ps->sw, data, size, a);
    }
    diag_destroy(d);
    arena_destroy(a);
    return 0;
}
