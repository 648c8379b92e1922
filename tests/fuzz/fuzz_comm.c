/* tests/fuzz/fuzz_comm.c - libFuzzer target: arbitrary bytes read as a communication-model file
 * (comm_load_buffer); when it loads, a MIG ring and a two-node ring are built, shared and costed
 * under the loaded parameters (two NICs per node), and a 4-GPU ring on a node wired as each
 * loaded topology. A crash, a sanitizer report or a leak is a bug. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "experiments/comm_load.h"
#include "model/physics/comm.h"
#include "model/physics/ddp.h"
#include "sim/diag.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    diag *d = diag_create();
    comm_params p;
    if (comm_load_buffer("fuzz.yaml", data, size, d, &p) == 0) {
        comm_node nd[2] = {{4, p.gpus_per_root, 0, 32e9, p.host_mem_bytes_per_s, 12.5e9, 0, 2},
                           {4, p.gpus_per_root, 0, 32e9, p.host_mem_bytes_per_s, 12.5e9, 0, 2}};
        comm_rank mig[3] = {{0, 0, true}, {0, 0, true}, {0, 1, true}};
        comm_rank net[3] = {{0, 2, false}, {0, 3, false}, {1, 0, false}};
        comm_ring g[2];
        memset(g, 0, sizeof g);
        char why[128];
        if (comm_ring_build(&p, nd, 2, mig, 3, &g[0], why, sizeof why) == 0 &&
            comm_ring_build(&p, nd, 2, net, 3, &g[1], why, sizeof why) == 0) {
            const comm_ring *rings[2] = {&g[0], &g[1]};
            double x[2];
            comm_share(rings, 2, x);
            (void)comm_ring_allreduce_time(&p, &g[0], p.bucket_bytes, x[0]);
            (void)comm_ring_allreduce_time(&p, &g[1], 1024, x[1]);
        }
        comm_ring_fini(&g[0]);
        comm_ring_fini(&g[1]);
        gpu_type gt = {.nvlink_bytes_per_s = 600e9, .pcie_bytes_per_s = 32e9};
        comm_rank whole[4] = {{0, 0, false}, {0, 1, false}, {0, 2, false}, {0, 3, false}};
        for (int i = 0; i < p.n_topos; i++) {
            comm_node tn = ddp_node(&p, &p.topos[i], &gt, 4, 12.5e9, 4);
            comm_ring r;
            if (comm_ring_build(&p, &tn, 1, whole, 4, &r, why, sizeof why) == 0) {
                (void)comm_ring_allreduce_time(&p, &r, p.bucket_bytes, comm_ring_alone_rate(&r));
            }
            comm_ring_fini(&r);
        }
    }
    diag_destroy(d);
    return 0;
}
