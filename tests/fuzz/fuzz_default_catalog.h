/* tests/fuzz/fuzz_default_catalog.h - what the targets that apply their input to the built-in
 * GPU catalog share (k8s snapshot, mig-parted): LLVMFuzzerInitialize loads the catalog once
 * into `cat` and keeps it, with its arena, for the whole run (state of the including harness
 * only; include it from one target's .c file). */
#ifndef SIMPROJ_TESTS_FUZZ_DEFAULT_CATALOG_H
#define SIMPROJ_TESTS_FUZZ_DEFAULT_CATALOG_H

#include "experiments/catalog_load.h"
#include "sim/arena.h"
#include "sim/diag.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

static arena *cat_arena;
static gpu_catalog cat;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    cat_arena = arena_create();
    diag *d = diag_create();
    int rc = catalog_load_default(cat_arena, &cat, d);
    diag_destroy(d);
    return rc;
}

#endif
