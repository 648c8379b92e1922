/* tests/fuzz/fuzz_telemetry.c - libFuzzer target: arbitrary bytes read as GPU telemetry
 * (experiments/telemetry.h). The first byte picks the form (dcgm-exporter text, Prometheus
 * JSON, nvidia-smi CSV, or detected) and whether a MIG instance and a window are asked for; the
 * rest is the file. A crash, a sanitizer report or a leak is a bug. */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "experiments/telemetry.h"
#include "sim/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    tel_query q = {.format = (tel_format)(data[0] & 3),
                   .gpu = 0,
                   .instance = data[0] & 4 ? 1 : -1,
                   .from_s = data[0] & 8 ? 1.7e9 : -HUGE_VAL,
                   .to_s = HUGE_VAL};
    diag *d = diag_create();
    tel_result r;
    tel_load_buffer("fuzz", (const char *)data + 1, size - 1, &q, d, &r);
    diag_destroy(d);
    return 0;
}
