/* tests/fuzz/fuzz_sweep.c - libFuzzer target: arbitrary bytes loaded as a scenario with a sweep:
 * section (experiments/sweep.h), then the scenario of each of its first combinations loaded from
 * the same bytes with the combination's values put in place (sweep_apply through a scenario
 * edit). Referenced files are never opened (SCENARIO_NO_FILES). Everything is released: a crash,
 * a sanitizer report or a leak is a bug.
 */
#include <stddef.h>
#include <stdint.h>

#include "experiments/sweep.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "tests/fuzz/fuzz_combos.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    arena *a = arena_create();
    diag *d = diag_create();
    sweep_spec *sw = NULL;
    if (sweep_load_buffer("fuzz.yaml", data, size, a, d, &sw) == 0 && sw) {
        fuzz_load_combos(sw, data, size, a);
    }
    diag_destroy(d);
    arena_destroy(a);
    return 0;
}
