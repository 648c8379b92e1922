/* tests/fuzz/fuzz_k8s_snapshot.c - libFuzzer target: arbitrary bytes read as a kubectl snapshot
 * (kubectl get nodes,pods -A -o json) against the built-in catalog. A crash, a sanitizer report
 * or a leak is a bug. The catalog:
 * fuzz_default_catalog.h. */
#include <stddef.h>
#include <stdint.h>

#include "experiments/k8s_snapshot.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "tests/fuzz/fuzz_default_catalog.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
