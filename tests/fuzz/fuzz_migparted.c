/* tests/fuzz/fuzz_migparted.c - libFuzzer target: arbitrary bytes loaded as a mig-parted config,
 * then every named config applied to GPUs 0 and 1 of each type of the built-in catalog (newest
 * driver and R470). A crash, a sanitizer report or a leak is a bug. The catalog:
 * fuzz_default_catalog.h. */
#include <stddef.h>
#include <stdint.h>

#include "experiments/migparted.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "tests/fuzz/fuzz_default_catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    arena *a = arena_create();
    diag *d = diag_create();
    migparted_config cfg;
    if (migparted_load_buffer("fuzz.yaml", data, size, a, &cfg, d) == 0) {
        for (size_t k = 0; k < cfg.n_configs; k++) {
            for (size_t g = 0; g < cat.n_gpus; g++) {
                for (int idx = 0; idx < 2; idx++) {
                    migparted_result r;
                    diag_clear(d);
                    migparted_apply(&cat, &cat.gpus[g], &cfg, cfg.configs[k].name, idx,
                                    idx ? 470 : 0, &r, d);
                    migparted_not_for(&cat.gpus[g], &cfg.configs[k], idx, NULL);
                }
            }
        }
    }
    diag_destroy(d);
    arena_destroy(a);
    return 0;
}
