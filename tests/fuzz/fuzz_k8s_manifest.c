/* tests/fuzz/fuzz_k8s_manifest.c - libFuzzer target: arbitrary bytes read as Kubernetes
 * manifests (experiments/k8s_manifest.h: several YAML documents of Job, Pod, PyTorchJob,
 * PriorityClass). A crash, a sanitizer report or a leak is a bug. */
#include <stddef.h>
#include <stdint.h>

#include "experiments/k8s_manifest.h"
#include "sim/arena.h"
#include "sim/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    arena *a = arena_create();
    diag *d = diag_create();
    k8s_workload w;
    k8s_manifests_load_buffer("fuzz.yaml", (const char *)data, size, a, d, &w);
    diag_destroy(d);
    arena_destroy(a);
    return 0;
}
