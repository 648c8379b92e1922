/* tests/fuzz/fuzz_validation.c - libFuzzer target: arbitrary bytes through the validation loaders
 * (experiments/validation.h): the scenario schema and the CSV table with every table's builder.
 *
 * The input is a validation scenario (experiments/validation/NAME.yaml), a NUL byte, then its
 * table's CSV (the scenario's csv key is not looked up; without a NUL the table is empty).
 * val_run_buffer opens no file (calibration, base and calib_runs are not read). Small tables
 * (at most 800 bytes of CSV, as the smallest shipped ones) are also fitted and predicted; larger
 * ones stop once their figures are built (a fit of the larger shipped tables takes 1 to 4 s
 * in this build). The catalog and physics are the built-in ones, loaded once.
 * Every other allocation is released: a crash, a sanitizer report or a leak is a bug.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "experiments/physics_load.h"
#include "experiments/validation.h"
#include "sim/arena.h"
#include "sim/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static arena *cat_arena;
    static gpu_catalog cat;
    static phys_params phys;
    if (!cat_arena) {
        cat_arena = arena_create();
        diag *cd = diag_create();
        if (catalog_load_default(cat_arena, &cat, cd) != 0 || physics_load_default(cd, &phys)) {
            abort(); /* the shipped catalog and physics must load */
        }
        diag_destroy(cd);
    }
    const char *text = (const char *)data;
    const char *nul = memchr(text, '\0', size);
    size_t yaml_len = nul ? (size_t)(nul - text) : size;
    val_mem mem = {.csv_path = "fuzz.csv", .csv = nul ? nul + 1 : "", .csv_len = 0};
    mem.csv_len = nul ? size - yaml_len - 1 : 0;
    mem.fit = mem.csv_len <= 800;
    diag *d = diag_create();
    val_table t;
    val_run_buffer("fuzz.yaml", text, yaml_len, &mem, &cat, &phys, d, &t);
    val_table_fini(&t);
    diag_destroy(d);
    return 0;
}
