/* tests/fuzz/fuzz_combos.h - what the sweep and plan fuzz targets share: the scenario of each of a
 * sweep's first combinations loaded from the same bytes with the combination's values put in
 * place (sweep_apply through a scenario edit), referenced files never opened
 * (SCENARIO_NO_FILES). Ownership: what it loads lives in arena a; its diagnostics are released.
 */
#ifndef SIMPROJ_TESTS_FUZZ_COMBOS_H
#define SIMPROJ_TESTS_FUZZ_COMBOS_H

#include <stddef.h>
#include <stdint.h>

#include "experiments/scenario.h"
#include "experiments/sweep.h"
#include "sim/arena.h"
#include "sim/diag.h"

static inline void fuzz_load_combos(const sweep_spec *sw, const uint8_t *data, size_t size,
                                    arena *a)
{
    for (size_t c = 0; c < sw->n_combos && c < 4; c++) {
        sweep_combo ce = {sw, c};
        scenario_edit edit = {sweep_combo_edit, &ce};
        scenario_spec *s = NULL;
        diag *pd = diag_create();
        scenario_load_buffer_edit("fuzz.yaml", ".", data, size, NULL, 0, &edit, SCENARIO_NO_FILES,
                                  a, pd, &s);
        diag_destroy(pd);
    }
}

#endif
