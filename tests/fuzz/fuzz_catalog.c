/* tests/fuzz/fuzz_catalog.c - libFuzzer target: arbitrary bytes loaded as a GPU catalog
 * (model/hw/gpus.yaml format), then every loaded GPU's layouts enumerated, so that whatever the
 * loader accepts is safe for model/hw/mig.c too. A crash, a sanitizer report or a leak is a bug. */
#include <stddef.h>
#include <stdint.h>

#include "experiments/catalog_load.h"
#include "model/hw/mig.h"
#include "sim/arena.h"
#include "sim/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    arena *a = arena_create();
    diag *d = diag_create();
    gpu_catalog c;
    if (catalog_load_buffer("fuzz.yaml", data, size, a, &c, d) == 0) {
        for (size_t i = 0; i < c.n_gpus; i++) {
            mig_enum_opts o = {.maximal_only = true};
            mig_enumerate(&c.gpus[i], &o, NULL, NULL);
        }
    }
    diag_destroy(d);
    arena_destroy(a);
    return 0;
}
