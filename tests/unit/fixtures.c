/* tests/unit/fixtures.c - shared test fixtures (see fixtures.h). */
#include "tests/unit/fixtures.h"

#include <string.h>

gpu_type test_gpu(void)
{
    gpu_type g;
    memset(&g, 0, sizeof g);
    g.name = "TEST-GPU";
    g.sms_total = 100;
    g.compute_slices = 7;
    g.memory_slices = 8;
    g.mem_bytes = 8000;
    g.n_profiles = 3;
    g.profiles[0] = (mig_profile){
        .name = "1g.x", .compute_slices = 1, .mem_slices = 1, .sms = 10, .mem_bytes = 1000};
    g.profiles[1] = (mig_profile){
        .name = "2g.y", .compute_slices = 2, .mem_slices = 2, .sms = 20, .mem_bytes = 2000};
    g.profiles[2] = (mig_profile){.name = "1g.x+me",
                                  .compute_slices = 1,
                                  .mem_slices = 1,
                                  .sms = 10,
                                  .mem_bytes = 1000,
                                  .is_media_extension = true};
    return g;
}
