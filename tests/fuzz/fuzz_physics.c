/* tests/fuzz/fuzz_physics.c - libFuzzer target: arbitrary bytes read as a physics file
 * (physics_load_buffer); when it loads, one solo and one time-sliced speed query run under the
 * loaded loss factors on a synthetic GPU. A crash, a sanitizer report or a leak is a bug. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "experiments/physics_load.h"
#include "model/physics/predict.h"
#include "model/physics/speed.h"
#include "sim/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    diag *d = diag_create();
    phys_params m;
    if (physics_load_buffer("fuzz.yaml", data, size, d, &m) == 0) {
        gpu_type g;
        memset(&g, 0, sizeof g);
        g.name = "FUZZ-GPU";
        g.sms_total = 100;
        g.memory_slices = 8;
        g.mem_bytes = 1ull << 34;
        g.mem_bw_bytes_per_s = 1e12;
        g.tdp_w = 300;
        wl_profile p = {.name = "f", .host_s_fixed = 0.01, .mem_traffic_bytes_fixed = 1e9};
        p.compute_sm_s_fixed[WL_CLASS_TENSOR] = 1.0;
        partition_cfg c;
        partition_cfg_init(&c, &g);
        speed_result r;
        predict_unit_time(&p, 1, &c, &m, &r);
        c.sharing = SHARE_TIMESLICE;
        c.peers = 4;
        predict_unit_time(&p, 1, &c, &m, &r);
    }
    diag_destroy(d);
    return 0;
}
