/* tests/fuzz/fuzz_timeslicing.c - libFuzzer target: arbitrary bytes loaded as a k8s device
 * plugin config (sharing.timeSlicing / sharing.mps), then queried. A crash, a sanitizer report or
 * a leak is a bug. */
#include <stddef.h>
#include <stdint.h>

#include "experiments/timeslicing.h"
#include "sim/arena.h"
#include "sim/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    arena *a = arena_create();
    diag *d = diag_create();
    timeslicing_config c;
    if (timeslicing_load_buffer("fuzz.yaml", data, size, a, &c, d) == 0) {
        const timeslicing_replicated *rs = timeslicing_active(&c);
        for (size_t i = 0; rs && i < rs->n_resources; i++) {
            char buf[128];
            timeslicing_advertised(rs, &rs->resources[i], buf, sizeof buf);
            timeslicing_replicas(&c, rs->resources[i].name);
        }
    }
    diag_destroy(d);
    arena_destroy(a);
    return 0;
}
