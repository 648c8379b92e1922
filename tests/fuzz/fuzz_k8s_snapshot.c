/* tests/fuzz/fuzz_k8s_snapshot.c - libFuzzer target: arbitrary bytes read as a kubectl snapshot
 * (kubectl get nodes,pods -A -o json) against the built-in catalog. A crash, a sanitizer report
 * or a leak is a bug. The catalog is loaded once, in LLVMFuzzerInitialize, and kept for the whole
 * run (state of this harness only). */
#include <stddef.h>
#include <stdint.h>

#include "experiments/catalog_load.h"
#include "experiments/k8s_snapshot.h"
#include "sim/arena.h"
#include "sim/diag.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    arena *a = arena_create();
    diag *d = diag_create();
    k8s_snapshot s;
    k8s_snapshot_load_buffer("fuzz.json", (const char *)data, size, &cat, a, d, &s);
    diag_destroy(d);
    arena_destroy(a);
    return 0;
}
