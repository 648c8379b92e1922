/* tests/fuzz/fuzz_scenario.c - libFuzzer target: arbitrary bytes loaded as a scenario.
 *
 * The input is a scenario YAML; if it starts with a line "--set PATH=VALUE", that line is applied
 * as an override first (exercising yamlx_set, and with a VALUE opening with { or [ its YAML
 * flow values; the sweep: and plan: sections are walked by the scenario loader too). Referenced
 * files are resolved but never opened (SCENARIO_NO_FILES), so the fuzzer cannot reach the file
 * system; a spec that loads and names no mig-parted file is then validated against the embedded
 * GPU catalog (loaded once, kept for the process). Every other allocation is released: a crash, a sanitizer report or a leak is a bug.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "experiments/physics_load.h"
#include "experiments/scenario.h"
#include "sim/arena.h"
#include "sim/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char *set = NULL;
    const char *sets[1];
    size_t n_sets = 0;
    if (size > 6 && !memcmp(text, "--set ", 6)) {
        const char *nl = memchr(text, '\n', size);
        size_t len = nl ? (size_t)(nl - text) : size;
        set = malloc(len - 6 + 1);
        memcpy(set, text + 6, len - 6);
        set[len - 6] = '\0';
        sets[n_sets++] = set;
        size_t skip = nl ? len + 1 : len;
        text += skip;
        size -= skip;
    }
    arena *a = arena_create();
    diag *d = diag_create();
    scenario_spec *s = NULL;
    scenario_load_buffer("fuzz.yaml", ".", text, size, sets, n_sets, SCENARIO_NO_FILES, a, d, &s);
    static arena *cat_arena;
    static gpu_catalog cat;
    static phys_params phys;
    if (!cat_arena) {
        cat_arena = arena_create();
        diag *cd = diag_create();
        if (catalog_load_default(cat_arena, &cat, cd) != 0 || physics_load_default(cd, &phys) != 0) {
            abort(); /* the shipped catalog must load */
        }
        diag_destroy(cd);
    }
    bool has_mig = false;
    for (size_t i = 0; s && i < s->cluster.n_groups; i++) {
        has_mig = has_mig || s->cluster.groups[i].sharing.is_mig;
    }
    if (s && !has_mig) {
        scenario_validate(s, &cat, &phys, a, d);
    }
    diag_destroy(d);
    arena_destroy(a);
    free(set);
    return 0;
}
