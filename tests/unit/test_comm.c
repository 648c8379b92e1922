/* Unit tests for model/physics/comm.h and experiments/comm_load.h. The parameters here are chosen by
 * hand (not the data file), and every expected value is worked out in the comment beside it. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/comm_load.h"
#include "experiments/embedded.h"
#include "model/physics/comm.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "tests/unit/diagfx.h"

static comm_params hand_params(void)
{
    comm_params p;
    memset(&p, 0, sizeof p);
    /* per class: alpha LL / Simple distinct, so the test sees which class set the latency */
    p.alpha_s[COMM_LINK_NVLINK][COMM_PROTO_LL] = 1e-6;
    p.alpha_s[COMM_LINK_NVLINK][COMM_PROTO_SIMPLE] = 2e-6;
    p.alpha_s[COMM_LINK_PCIE][COMM_PROTO_LL] = 3e-6;
    p.alpha_s[COMM_LINK_PCIE][COMM_PROTO_SIMPLE] = 4e-6;
    p.alpha_s[COMM_LINK_HOST][COMM_PROTO_LL] = 5e-6;
    p.alpha_s[COMM_LINK_HOST][COMM_PROTO_SIMPLE] = 6e-6;
    p.alpha_s[COMM_LINK_NIC][COMM_PROTO_LL] = 7e-6;
    p.alpha_s[COMM_LINK_NIC][COMM_PROTO_SIMPLE] = 8e-6;
    p.eff[COMM_LINK_NVLINK] = 0.8;
    p.eff[COMM_LINK_PCIE] = 0.75;
    p.eff[COMM_LINK_HOST] = 0.75;
    p.eff[COMM_LINK_NIC] = 0.8;
    for (int l = 0; l < COMM_LINK_COUNT; l++) {
        p.ll_max_bytes[l] = 1 << 20;
    }
    p.ll_max_bytes[COMM_LINK_NIC] = 16 << 20;
    p.ll_bw_frac = 0.5;
    p.nccl_tree_ll_bw_frac = 0.5; /* tests below set NCCL's own figures where they use them */
    p.nccl_ll_max_busbw[0] = p.nccl_ll_max_busbw[1] = 1e300;
    return p;
}

/* 4 GPUs, 2 per PCIe root, x16 links of 32 GB/s each way, host memory 100 GB/s, NIC 12.5 GB/s */
static comm_node hand_node(double nvlink)
{
    /* one NVLink domain, one NIC */
    return (comm_node){.gpus = 4, .gpus_per_root = 2, .nvlink_bytes_per_s = nvlink,
                       .pcie_bytes_per_s = 32e9, .host_bytes_per_s = 100e9,
                       .nic_bytes_per_s = 12.5e9, .nvlink_group = 0, .nics = 1};
}

#define NEAR(a, b) cr_assert(fabs((a) - (b)) <= 1e-9 * fabs(b), "%.12g != %.12g", (a), (b))

Test(comm, closed_forms)
{
    /* n = 4, S = 1 MB, alpha = 10 us, beta = 1 GB/s:
     * ring all-reduce 2*3*1e-5 + 2*3/4 * 1e6/1e9 = 6e-5 + 1.5e-3 = 1.56e-3 s
     * (the tree is tested through comm_ring_allreduce_time, its one caller) */
    NEAR(comm_ring_allreduce_s(4, 1e6, 1e-5, 1e9), 1.56e-3);
    cr_assert_eq(comm_ring_allreduce_s(1, 1e6, 1e-5, 1e9), 0);
}

Test(comm, nvlink_ring)
{
    comm_params p = hand_params();
    comm_node nd = hand_node(100e9);
    comm_rank r[4] = {{0, 0, false}, {0, 1, false}, {0, 2, false}, {0, 3, false}};
    comm_ring ring;
    char why[128];
    cr_assert_eq(comm_ring_build(&p, &nd, 1, r, 4, &ring, why, sizeof why), 0);
    /* every GPU port carries one hop each way: 100 GB/s * 0.8 = 80 GB/s */
    NEAR(comm_ring_alone_rate(&ring), 80e9);
    cr_assert_eq(ring.hops[COMM_LINK_NVLINK], 4);
    /* 100 MB (Simple): 2*3*2e-6 + 1.5 * 1e8 / 80e9 = 1.2e-5 + 1.875e-3 */
    NEAR(comm_ring_allreduce_time(&p, &ring, 1e8, 80e9), 1.887e-3);
    /* 512 KiB (LL): alpha 1e-6, half the bandwidth: 6e-6 + 1.5 * 524288 / 40e9 */
    NEAR(comm_ring_allreduce_time(&p, &ring, 524288, 80e9), 6e-6 + 1.5 * 524288 / 40e9);
    comm_ring_fini(&ring);
}

/* A node whose NVLink carries an all-reduce calibration measured on 2 ranks: LL latency 12 us
 * at 100 GB/s, Simple 20 us at 300 GB/s, LL up to 512 KiB; NCCL's ratios base : step are
 * LL 6 : 1 and Simple 8 : 2 (hand values). On 2 ranks (2 steps) the latency splits into
 * LL call 12 x 6/8 = 9 us + 2 x 1.5 us, Simple 20 x 8/12 = 13.333 us + 2 x 3.333 us; so a
 * 2-rank ring pays the calibrated latency and a 4-rank ring (6 steps) the call plus 6 steps:
 * Simple 13.333 + 20 = 33.333 us, LL 9 + 9 = 18 us. The hops run at the calibrated bus
 * bandwidth (not the line rate x eff), LL at 100/300 of the ring's rate. */
Test(comm, calibrated_nvlink_pays_a_call_and_its_steps)
{
    comm_params p = hand_params();
    p.nccl_tree_ll_bw_frac = 0.25; /* NCCL's chain is slower on LL: the ring wins below */
    p.nccl_ring_base_s[COMM_PROTO_LL] = 6e-6;
    p.nccl_nvlink_step_s[COMM_PROTO_LL] = 1e-6;
    p.nccl_ring_base_s[COMM_PROTO_SIMPLE] = 8e-6;
    p.nccl_nvlink_step_s[COMM_PROTO_SIMPLE] = 2e-6;
    comm_node nd = hand_node(100e9);
    nd.n_nvl_cal = 1;
    nd.nvl_cal[0] = (comm_nvl_cal){.ranks = 2,
                                   .has = {true, true},
                                   .latency_s = {12e-6, 20e-6},
                                   .busbw = {100e9, 300e9},
                                   .ll_max_bytes = 524288};
    comm_rank r[4] = {{0, 0, false}, {0, 1, false}, {0, 2, false}, {0, 3, false}};
    comm_ring two, four;
    char why[128];
    cr_assert_eq(comm_ring_build(&p, &nd, 1, r, 2, &two, why, sizeof why), 0);
    cr_assert_eq(comm_ring_build(&p, &nd, 1, r, 4, &four, why, sizeof why), 0);
    NEAR(comm_ring_alone_rate(&two), 300e9);
    NEAR(two.ll_max_bytes, 524288.0);
    NEAR(two.ll_bw_frac, 1.0 / 3);
    /* 2 ranks, 100 MB (Simple): 20 us + 1e8 / 300e9; 1 KB (LL): 12 us + 1e3 / 100e9 */
    NEAR(comm_ring_allreduce_time(&p, &two, 1e8, 300e9), 20e-6 + 1e8 / 300e9);
    NEAR(comm_ring_allreduce_time(&p, &two, 1e3, 300e9), 12e-6 + 1e3 / 100e9);
    /* 4 ranks: the call plus 6 steps, 1.5 S / B */
    NEAR(comm_ring_allreduce_time(&p, &four, 1e8, 300e9), 40e-6 / 1.2 + 1.5 * 1e8 / 300e9);
    NEAR(comm_ring_allreduce_time(&p, &four, 1e3, 300e9), 18e-6 + 1.5 * 1e3 / 100e9);
    /* 768 KiB is above the calibrated switch point (model/physics/comm.yaml's would say LL) */
    cr_assert_eq(comm_protocol(&four, 786432), COMM_PROTO_SIMPLE);
    comm_ring_fini(&two);
    comm_ring_fini(&four);
    /* an uncalibrated node: no per-call cost, the class's alphas, LL at ll_bw_frac */
    comm_node plain = hand_node(100e9);
    cr_assert_eq(comm_ring_build(&p, &plain, 1, r, 4, &four, why, sizeof why), 0);
    cr_assert_eq(four.call_s[COMM_PROTO_SIMPLE], 0);
    NEAR(four.ll_bw_frac, 0.5);
    NEAR(comm_ring_allreduce_time(&p, &four, 1e8, 80e9), 6 * 2e-6 + 1.5 * 1e8 / 80e9);
    /* NCCL's first loop (hand: 4 channels, 2 MB chunks, rho 0.5) on the uncalibrated NVLink
     * ring: 1e8 B is above one loop per channel (4 x 4 x 2e6 = 3.2e7 B): 0.5 x 4 x 2e6 / 80e9;
     * 1e7 B is one loop of chunks 1e7 / 16 = 625000 B: 0.5 x 4 x 625000 / 80e9; LL pays none */
    p.nccl_channels = 4;
    p.ring_chunk_bytes = 2e6;
    p.ring_first_loop_idle = 0.5;
    cr_assert(four.first_loop);
    NEAR(comm_ring_allreduce_time(&p, &four, 1e8, 80e9),
         6 * 2e-6 + 1.5 * 1e8 / 80e9 + 0.5 * 4 * 2e6 / 80e9);
    NEAR(comm_ring_allreduce_time(&p, &four, 1e7, 80e9),
         6 * 2e-6 + 1.5 * 1e7 / 80e9 + 0.5 * 4 * 625000 / 80e9);
    NEAR(comm_ring_allreduce_time(&p, &four, 1e3, 80e9), 6 * 1e-6 + 1.5 * 1e3 / 40e9);
    comm_ring_fini(&four);
    /* the calibrated node's fitted bandwidth holds its sweep's pipeline: no first loop */
    cr_assert_eq(comm_ring_build(&p, &nd, 1, r, 2, &two, why, sizeof why), 0);
    cr_assert(!two.first_loop);
    NEAR(comm_ring_allreduce_time(&p, &two, 1e8, 300e9), 20e-6 + 1e8 / 300e9);
    comm_ring_fini(&two);
}

/* NVLS on one node whose NVSwitch multicasts (hand NVLS latency 20 us): 4 GPUs at 80 GB/s per
 * port. 100 MB: NVLS 20e-6 + (5/4) 1e8 / 80e9 = 1.5825e-3 s beats the ring's Simple
 * 6 * 2e-6 + 1.5 * 1e8 / 80e9 = 1.887e-3 s; 1 kB: the ring's LL 6 * 1e-6 + 1.5e3 / 40e9 =
 * 6.0375e-6 s beats NVLS's 20 us. Without multicast, or over two nodes, the ring as before. On a
 * calibrated NVLink (Simple per-call cost c from a base of 8 us) the NVLS latency scales by
 * c / 8 us: calibrated Simple latency 20 us on 2 ranks, base : step = 8 : 2 -> c = 13.333 us,
 * NVLS latency 20 x 13.333 / 8 = 33.333 us. */
Test(comm, nvls_on_a_multicast_node)
{
    comm_params p = hand_params();
    p.nccl_nvls_s = 20e-6;
    comm_node nd = hand_node(100e9);
    nd.nvls = true;
    comm_rank r[4] = {{0, 0, false}, {0, 1, false}, {0, 2, false}, {0, 3, false}};
    comm_ring ring;
    char why[128];
    cr_assert_eq(comm_ring_build(&p, &nd, 1, r, 4, &ring, why, sizeof why), 0);
    cr_assert(ring.nvls);
    NEAR(comm_ring_allreduce_time(&p, &ring, 1e8, 80e9), 20e-6 + 1.25 * 1e8 / 80e9);
    NEAR(comm_ring_allreduce_time(&p, &ring, 1e3, 80e9), 6e-6 + 1.5e3 / 40e9);
    comm_ring_fini(&ring);
    nd.nvls = false;
    cr_assert_eq(comm_ring_build(&p, &nd, 1, r, 4, &ring, why, sizeof why), 0);
    cr_assert(!ring.nvls);
    NEAR(comm_ring_allreduce_time(&p, &ring, 1e8, 80e9), 1.887e-3);
    comm_ring_fini(&ring);
    comm_node two[2] = {hand_node(100e9), hand_node(100e9)};
    two[0].nvls = two[1].nvls = true;
    comm_rank r2[4] = {{0, 0, false}, {0, 1, false}, {1, 0, false}, {1, 1, false}};
    cr_assert_eq(comm_ring_build(&p, two, 2, r2, 4, &ring, why, sizeof why), 0);
    cr_assert(!ring.nvls);
    comm_ring_fini(&ring);
    p.nccl_ring_base_s[COMM_PROTO_SIMPLE] = 8e-6;
    p.nccl_nvlink_step_s[COMM_PROTO_SIMPLE] = 2e-6;
    p.nccl_ring_base_s[COMM_PROTO_LL] = 8e-6;
    p.nccl_nvlink_step_s[COMM_PROTO_LL] = 2e-6;
    nd.nvls = true;
    nd.n_nvl_cal = 1;
    nd.nvl_cal[0] = (comm_nvl_cal){
        .ranks = 2, .has = {true, true}, .latency_s = {20e-6, 20e-6}, .busbw = {300e9, 300e9}};
    cr_assert_eq(comm_ring_build(&p, &nd, 1, r, 4, &ring, why, sizeof why), 0);
    NEAR(ring.nvls_s, 20e-6 * (20e-6 * 8 / 12) / 8e-6);
    comm_ring_fini(&ring);
}

/* NCCL's LL over the network runs at most at the tuner's cap (llMaxBws, a bus bandwidth): 2
 * nodes x 2 GPUs, NIC 12.5 x 0.8 = 10 GB/s, caps 3 GB/s (2 nodes) / 1.5 GB/s (more), tree LL at
 * 1/4 of its rate; a step inside a node costs NVLink's alpha (LL 1 us), one between nodes the
 * NIC's (7 us). 1 kB: ring 2(4-1) = 6 steps, 2 of them between nodes: 4 x 1e-6 + 2 x 7e-6 +
 * 1.5 x 1e3 / min(5e9, 3e9) = 18.5 us; tree (1 step inside, 1 between, each way) 2 x (1e-6 +
 * 7e-6) + 1e3 / min(2.5e9, 3e9), but a tree moves its bytes at half its bus bandwidth, so at
 * least 2 x 1e3 / 3e9: 16 + 0.667 = 16.667 us: the tree. Over 4 nodes of 1 GPU every step is
 * between nodes and the cap is 1.5 GB/s: ring 6 x 7e-6 + 1.5e3 / 1.5e9 = 43 us, tree (2 steps
 * each way, 2S) 4 x 7e-6 + 2e3 / 1.5e9 = 29.333 us. */
Test(comm, ll_over_the_network_is_capped)
{
    comm_params p = hand_params();
    p.nccl_ll_max_busbw[0] = 3e9;
    p.nccl_ll_max_busbw[1] = 1.5e9;
    p.nccl_tree_ll_bw_frac = 0.25;
    comm_node nd[4] = {hand_node(100e9), hand_node(100e9), hand_node(100e9), hand_node(100e9)};
    comm_rank r[4] = {{0, 0, false}, {0, 1, false}, {1, 0, false}, {1, 1, false}};
    comm_ring ring;
    char why[128];
    cr_assert_eq(comm_ring_build(&p, nd, 2, r, 4, &ring, why, sizeof why), 0);
    NEAR(comm_ring_alone_rate(&ring), 10e9);
    cr_assert_eq(ring.nodes, 2);
    NEAR(comm_ring_allreduce_time(&p, &ring, 1e3, 10e9), 16e-6 + 2e3 / 3e9);
    comm_ring_fini(&ring);
    comm_rank r4[4] = {{0, 0, false}, {1, 0, false}, {2, 0, false}, {3, 0, false}};
    cr_assert_eq(comm_ring_build(&p, nd, 4, r4, 4, &ring, why, sizeof why), 0);
    cr_assert_eq(ring.nodes, 4);
    NEAR(comm_ring_allreduce_time(&p, &ring, 1e3, 10e9), 28e-6 + 2e3 / 1.5e9);
    comm_ring_fini(&ring);
}

Test(comm, pcie_ring)
{
    comm_params p = hand_params();
    comm_node nd = hand_node(0);
    comm_rank r[4] = {{0, 0, false}, {0, 1, false}, {0, 2, false}, {0, 3, false}};
    comm_ring ring;
    char why[128];
    cr_assert_eq(comm_ring_build(&p, &nd, 1, r, 4, &ring, why, sizeof why), 0);
    /* hops 0->1 and 2->3 stay under one root; 1->2 and 3->0 cross both roots' uplinks once
     * each way: every resource has coefficient 1, so the rate is 32 GB/s * 0.75 = 24 GB/s */
    NEAR(comm_ring_alone_rate(&ring), 24e9);
    cr_assert_eq(ring.hops[COMM_LINK_PCIE], 4);
    NEAR(ring.alpha_s[COMM_PROTO_SIMPLE], 4e-6);
    comm_ring_fini(&ring);
}

Test(comm, nvlink_pairs_ring)
{
    comm_params p = hand_params();
    comm_node nd = hand_node(100e9);
    nd.nvlink_group = 2; /* NVLink bridges between GPUs 0-1 and 2-3 */
    comm_rank r[4] = {{0, 0, false}, {0, 1, false}, {0, 2, false}, {0, 3, false}};
    comm_ring ring;
    char why[128];
    cr_assert_eq(comm_ring_build(&p, &nd, 1, r, 4, &ring, why, sizeof why), 0);
    /* 0->1 and 2->3 over NVLink (100 * 0.8 = 80 GB/s); 1->2 and 3->0 leave the pair: PCIe through
     * both roots (each resource crossed once, 24 GB/s); alpha the larger of the two classes */
    cr_assert_eq(ring.hops[COMM_LINK_NVLINK], 2);
    cr_assert_eq(ring.hops[COMM_LINK_PCIE], 2);
    NEAR(comm_ring_alone_rate(&ring), 24e9);
    NEAR(ring.alpha_s[COMM_PROTO_SIMPLE], 4e-6);
    comm_ring_fini(&ring);
}

/* NCCL's tree chains the ranks of a node and is a tree between nodes only (NVIDIA/nccl #545):
 * depth = (most ranks on a node - 1) + ceil(log2 nodes). One node of 4: depth 3, so the tree's
 * latency 2*3 alpha equals the ring's 2(n-1) alpha and its bandwidth term 2 S/x exceeds the
 * ring's 1.5 S/x: the ring always. Two nodes of 4 (8 ranks): depth 3 + 1 = 4 (a flat tree over
 * 8 ranks would be 3): 1 kB at 10 GB/s on LL (5 GB/s; a step inside a node 1e-6, between
 * nodes 7e-6, the NIC's): ring 12*1e-6 + 2*7e-6 + 1.75*1000/5e9 = 2.635e-5 s; tree over 2
 * nodes (3 steps inside and 1 between, each way; each node a root of one of NCCL's two trees
 * and a leaf of the other: S through each NIC, not 2S) 2*(3*1e-6 + 7e-6) + 1000/5e9 =
 * 2.02e-5 s. */
Test(comm, tree_is_a_chain_inside_a_node)
{
    comm_params p = hand_params();
    comm_node nd[2] = {hand_node(100e9), hand_node(100e9)};
    comm_rank one[4] = {{0, 0, false}, {0, 1, false}, {0, 2, false}, {0, 3, false}};
    comm_rank two[8] = {{0, 0, false}, {0, 1, false}, {0, 2, false}, {0, 3, false},
                        {1, 0, false}, {1, 1, false}, {1, 2, false}, {1, 3, false}};
    comm_ring r;
    char why[128];
    cr_assert_eq(comm_ring_build(&p, nd, 2, one, 4, &r, why, sizeof why), 0);
    cr_assert_eq(r.tree_depth, 3);
    for (double b = 8; b < 1e10; b *= 16) {
        comm_proto pr = comm_protocol(&r, b);
        double x = pr == COMM_PROTO_LL ? 80e9 * 0.5 : 80e9;
        NEAR(comm_ring_allreduce_time(&p, &r, b, 80e9),
             comm_ring_allreduce_s(4, b, r.alpha_s[pr], x));
    }
    comm_ring_fini(&r);
    cr_assert_eq(comm_ring_build(&p, nd, 2, two, 8, &r, why, sizeof why), 0);
    cr_assert_eq(r.tree_depth, 4);
    NEAR(comm_ring_allreduce_time(&p, &r, 1000, 10e9), 2.02e-5);
    comm_ring_fini(&r);
}

/* A node with several NICs carries a node-crossing hop over several of the ring's GPUs (NCCL runs
 * a channel per NIC). 2 nodes x 4 GPUs with NVLink inside (100 x 0.8 = 80 GB/s), NICs of
 * 100 GB/s x 0.8 = 80 GB/s, ring (0,0..3) -> (1,0..3). One NIC: each crossing goes up or down one
 * GPU link (32 x 0.75 = 24 GB/s, coefficient 1): 24 GB/s. Four NICs: spread over the 4 GPUs of
 * each node, each GPU link carries 1/4 (96 GB/s) and each root, 2 GPUs, 1/2 (48 GB/s): 48 GB/s.
 * Two NICs: GPUs 0 and 2, one per root, 1/2 each: 48 GB/s as well. */
Test(comm, nics_spread_the_node_crossing)
{
    comm_params p = hand_params();
    comm_rank r[8] = {{0, 0, false}, {0, 1, false}, {0, 2, false}, {0, 3, false},
                      {1, 0, false}, {1, 1, false}, {1, 2, false}, {1, 3, false}};
    const struct {
        int nics;
        double rate;
    } cases[] = {{1, 24e9}, {4, 48e9}, {2, 48e9}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        comm_node nd[2] = {hand_node(100e9), hand_node(100e9)};
        for (int k = 0; k < 2; k++) {
            nd[k].nic_bytes_per_s = 100e9;
            nd[k].nics = cases[i].nics;
        }
        comm_ring ring;
        char why[128];
        cr_assert_eq(comm_ring_build(&p, nd, 2, r, 8, &ring, why, sizeof why), 0);
        cr_assert_eq(ring.hops[COMM_LINK_NIC], 2);
        NEAR(comm_ring_alone_rate(&ring), cases[i].rate);
        comm_ring_fini(&ring);
    }
}

Test(comm, mig_ring_through_host_memory)
{
    comm_params p = hand_params();
    comm_node nd = hand_node(100e9); /* NVLink present but unusable: MIG has no P2P */
    comm_rank r[4] = {{0, 0, true}, {0, 0, true}, {0, 1, true}, {0, 1, true}};
    comm_ring ring;
    char why[128];
    cr_assert_eq(comm_ring_build(&p, &nd, 1, r, 4, &ring, why, sizeof why), 0);
    /* all 4 hops are staged: each goes up a GPU link, up root 0 (GPUs 0 and 1 share it), twice
     * through host memory, down root 0 and down a GPU link. Coefficients: GPU links 2 each way,
     * root 4 each way, host memory 8. Rates: 24/2 = 12, 24/4 = 6, 100/8 = 12.5 GB/s -> 6 GB/s */
    NEAR(comm_ring_alone_rate(&ring), 6e9);
    cr_assert_eq(ring.hops[COMM_LINK_HOST], 4);
    cr_assert_eq(ring.hops[COMM_LINK_NVLINK], 0);
    NEAR(ring.alpha_s[COMM_PROTO_SIMPLE], 6e-6);
    comm_ring_fini(&ring);
}

Test(comm, nic_ring)
{
    comm_params p = hand_params();
    comm_node nd[2] = {hand_node(100e9), hand_node(100e9)};
    comm_rank r[2] = {{0, 0, false}, {1, 0, false}};
    comm_ring ring;
    char why[128];
    cr_assert_eq(comm_ring_build(&p, nd, 2, r, 2, &ring, why, sizeof why), 0);
    /* each NIC carries one hop each way: 12.5 GB/s * 0.8 = 10 GB/s (PCIe 24 does not bind) */
    NEAR(comm_ring_alone_rate(&ring), 10e9);
    cr_assert_eq(ring.hops[COMM_LINK_NIC], 2);
    /* NIC rings keep LL up to 16 MiB: 8 MiB uses alpha 7e-6 and 5 GB/s:
     * 2*1*7e-6 + 2*1/2 * 8388608 / 5e9 */
    NEAR(comm_ring_allreduce_time(&p, &ring, 8388608, 10e9), 1.4e-5 + 8388608 / 5e9);
    comm_ring_fini(&ring);
}

Test(comm, two_whole_ranks_on_one_gpu_refused)
{
    comm_params p = hand_params();
    comm_node nd = hand_node(0);
    comm_rank r[2] = {{0, 1, false}, {0, 1, false}};
    comm_ring ring;
    char why[160];
    cr_assert_eq(comm_ring_build(&p, &nd, 1, r, 2, &ring, why, sizeof why), -1);
    cr_assert(strstr(why, "share GPU 1 of node 0"), "%s", why);
}

/* A link of rate 0 (a figure the catalog leaves unsourced) is refused with the hop and the
 * figure named, instead of a ring at rate 0 whose collectives never end; the ring is left
 * empty (nothing to free). */
Test(comm, link_without_rate_refused)
{
    comm_params p = hand_params();
    comm_node nd = hand_node(0);
    nd.pcie_bytes_per_s = 0; /* no NVLink, no PCIe rate: GPU 0 -> GPU 1 has no link */
    comm_rank r[2] = {{0, 0, false}, {0, 1, false}};
    comm_ring ring;
    char why[320];
    cr_assert_eq(comm_ring_build(&p, &nd, 1, r, 2, &ring, why, sizeof why), -1);
    cr_assert_str_eq(why, "the ring's hop from rank 0 (node 0 GPU 0) to rank 1 (node 0 GPU 1) "
                          "crosses the PCIe link of node 0 GPU 0 at 0 bytes/s; expected a "
                          "positive rate, but the GPU type's PCIe rate (pcie_gb_s_per_direction) "
                          "is missing (unsourced) or 0");
    cr_assert_eq(ring.n_uses, 0);
    cr_assert_null(ring.uses);
    /* two nodes joined by NVLink inside and a NIC of rate 0 between them: the NIC is named */
    comm_node two[2] = {hand_node(100e9), hand_node(100e9)};
    two[1].nic_bytes_per_s = 0;
    comm_rank r2[2] = {{0, 0, false}, {1, 0, false}};
    cr_assert_eq(comm_ring_build(&p, two, 2, r2, 2, &ring, why, sizeof why), -1);
    cr_assert(strstr(why, "crosses the NIC of node 1 at 0 bytes/s") &&
                  strstr(why, "the interconnect's line rate is missing"),
              "%s", why);
    /* the same nodes with their NIC: built */
    two[1].nic_bytes_per_s = 12.5e9;
    cr_assert_eq(comm_ring_build(&p, two, 2, r2, 2, &ring, why, sizeof why), 0);
    NEAR(comm_ring_alone_rate(&ring), 10e9); /* 12.5 GB/s x 0.8 */
    comm_ring_fini(&ring);
}

Test(comm, concurrent_rings_max_min)
{
    comm_params p = hand_params();
    comm_node nd[4] = {hand_node(0), hand_node(0), hand_node(0), hand_node(0)};
    /* NIC capacity 10 GB/s each way on every node (12.5 * 0.8); PCIe 24 never binds below.
     * ring 1: A0 -> B0 -> A0        NIC A out 1, in 1; NIC B out 1, in 1
     * ring 2: A1 -> B1 -> A2 -> C0  NIC A out 2, in 2; B 1, 1; C 1, 1
     * ring 3: C1 -> D0              NIC C out 1, in 1; D 1, 1
     * Max-min: all rise together; NIC A saturates first at x + 2x = 10 -> rings 1 and 2 freeze
     * at 10/3. Ring 3 then rises alone until NIC C: 10/3 + x3 = 10 -> x3 = 20/3. */
    comm_rank r1[2] = {{0, 0, false}, {1, 0, false}};
    comm_rank r2[4] = {{0, 1, false}, {1, 1, false}, {0, 2, false}, {2, 0, false}};
    comm_rank r3[2] = {{2, 1, false}, {3, 0, false}};
    comm_ring g[3];
    char why[128];
    cr_assert_eq(comm_ring_build(&p, nd, 4, r1, 2, &g[0], why, sizeof why), 0);
    cr_assert_eq(comm_ring_build(&p, nd, 4, r2, 4, &g[1], why, sizeof why), 0);
    cr_assert_eq(comm_ring_build(&p, nd, 4, r3, 2, &g[2], why, sizeof why), 0);
    const comm_ring *rings[3] = {&g[0], &g[1], &g[2]};
    double x[3];
    comm_share(rings, 3, x);
    cr_assert(fabs(x[0] - 10e9 / 3) < 1, "%.12g", x[0]);
    cr_assert(fabs(x[1] - 10e9 / 3) < 1, "%.12g", x[1]);
    cr_assert(fabs(x[2] - 20e9 / 3) < 1, "%.12g", x[2]);
    /* alone, ring 2 is bound by NIC A's coefficient 2: 10/2 = 5 GB/s */
    NEAR(comm_ring_alone_rate(&g[1]), 5e9);
    for (int i = 0; i < 3; i++) {
        comm_ring_fini(&g[i]);
    }
}

Test(comm_load, default_file_loads)
{
    diag *d = diag_create();
    comm_params p;
    cr_assert_eq(comm_load_default(d, &p), 0);
    for (int l = 0; l < COMM_LINK_COUNT; l++) {
        cr_assert(p.eff[l] > 0 && p.eff[l] <= 1);
        cr_assert(p.alpha_s[l][COMM_PROTO_LL] > 0);
    }
    cr_assert(comm_net_find(&p, "eth-100g") >= 0);
    cr_assert_eq(p.default_net, comm_net_find(&p, "eth-100g"));
    /* 100 Gb/s = 12.5 GB/s */
    NEAR(p.nets[comm_net_find(&p, "eth-100g")].line_bytes_per_s, 12.5e9);
    /* the node topologies a scenario's node group may name */
    int sw = comm_topo_find(&p, "nvswitch"), pairs = comm_topo_find(&p, "nvlink-pairs");
    int pcie = comm_topo_find(&p, "pcie");
    cr_assert(sw >= 0 && pairs >= 0 && pcie >= 0);
    cr_assert_eq(p.topos[sw].nvlink, COMM_NVLINK_SWITCH);
    cr_assert_eq(p.topos[pairs].nvlink, COMM_NVLINK_PAIRS);
    cr_assert_eq(p.topos[pcie].nvlink, COMM_NVLINK_NONE);
    cr_assert_eq(comm_topo_find(&p, "nvlnk"), -1);
    char names[128];
    comm_topo_names(&p, names, sizeof names);
    cr_assert_str_eq(names, "nvswitch, nvswitch-multicast, nvlink-pairs, pcie");
    cr_assert(!p.topos[sw].multicast);
    cr_assert(p.topos[comm_topo_find(&p, "nvswitch-multicast")].multicast);
    diag_destroy(d);
}

/* The shipped model/physics/comm.yaml with one more topology line `extra` must be refused with
 * one error whose message holds `want`. */
static void extra_topology_refused(const char *extra, const char *want)
{
    const unsigned char *data;
    size_t len;
    cr_assert(embedded_get("model/physics/comm.yaml", &data, &len));
    char *y = malloc(len + strlen(extra));
    memcpy(y, data, len);
    char *at = strstr(y, "\nddp:");
    cr_assert_not_null(at);
    size_t head = (size_t)(at - y) + 1;
    memmove(y + head + strlen(extra), y + head, len - head);
    memcpy(y + head, extra, strlen(extra));
    diag *d = diag_create();
    comm_params p;
    cr_assert_eq(comm_load_buffer("c.yaml", y, len + strlen(extra), d, &p), SIM_EINPUT);
    cr_assert_eq(diag_error_count(d), 1);
    cr_assert(strstr(fx_diag_message(d, 0), want), "%s", fx_diag_message(d, 0));
    diag_destroy(d);
    free(y);
}

/* The architectures whose NVSwitch nodes run NVLS come from model/physics/comm.yaml, and a name
 * that is no catalog arch is refused at its line and column. */
Test(comm_load, nvls_archs_are_data)
{
    diag *d = diag_create();
    comm_params p;
    cr_assert_eq(comm_load_default(d, &p), 0);
    cr_assert_eq(p.n_nvls_archs, 2);
    cr_assert(comm_nvls_arch(&p, "Hopper") && comm_nvls_arch(&p, "Blackwell"));
    cr_assert(!comm_nvls_arch(&p, "Ampere") && !comm_nvls_arch(&p, NULL));
    char words[64];
    comm_nvls_arch_words(&p, words, sizeof words);
    cr_assert_str_eq(words, "Hopper or Blackwell");
    p.n_nvls_archs = 3;
    snprintf(p.nvls_archs[2], sizeof p.nvls_archs[2], "Volta");
    comm_nvls_arch_words(&p, words, sizeof words);
    cr_assert_str_eq(words, "Hopper, Blackwell or Volta");
    const unsigned char *data;
    size_t len;
    cr_assert(embedded_get("model/physics/comm.yaml", &data, &len));
    char *y = malloc(len + 1);
    memcpy(y, data, len);
    y[len] = '\0';
    char *at = strstr(y, "value: [Hopper, Blackwell]");
    cr_assert_not_null(at);
    memcpy(at, "value: [Hopper, Blackwel_]", strlen("value: [Hopper, Blackwell]"));
    int line = 1;
    for (const char *c = y; c < at; c++) {
        line += *c == '\n';
    }
    cr_assert_eq(comm_load_buffer("c.yaml", y, len, d, &p), SIM_EINPUT);
    char want[256];
    snprintf(want, sizeof want,
             "c.yaml:%d:19: error: nvls_archs.value[1]: unknown value; expected one of [Pascal, "
             "Volta, Turing, Ampere, Hopper, Blackwell], got 'Blackwel_'",
             line);
    cr_assert_str_eq(fx_diag_message(d, 0), want);
    diag_destroy(d);
    free(y);
}

/* A topology named twice is refused at the second entry's line. */
Test(comm_load, duplicate_topology_refused)
{
    extra_topology_refused("  - {name: pcie, nvlink: none, gpus_per_root: 4, src: again}\n",
                           "topologies.name: duplicate topology; expected a new name, got 'pcie'");
}

/* Multicast (NVLink SHARP) is an NVSwitch's: a topology of bridged pairs with it is refused at
 * its line. */
Test(comm_load, multicast_without_a_switch_refused)
{
    extra_topology_refused(
        "  - {name: mc-pairs, nvlink: pairs, multicast: true, gpus_per_root: 2, src: a}\n",
        "topologies.multicast: multicast needs an NVSwitch; expected nvlink: switch with it, got "
        "nvlink: pairs");
}

Test(comm_load, empty_source_refused)
{
    const char *y = "version: 1\n"
                    "links:\n"
                    "  nvlink: {alpha_ll_s: {value: 1e-6, src: ''}, alpha_simple_s: {value: 1e-6, "
                    "src: a}, eff: {value: 0.8, src: a}, ll_max_bytes: {value: 1048576, src: a}}\n";
    diag *d = diag_create();
    comm_params p;
    cr_assert_eq(comm_load_buffer("c.yaml", y, strlen(y), d, &p), SIM_EINPUT);
    cr_assert(diag_error_count(d) > 0);
    diag_destroy(d);
}

Test(comm, tree_when_latency_dominates)
{
    comm_params p = hand_params();
    comm_ring r;
    memset(&r, 0, sizeof r);
    r.n_ranks = 64;
    r.alpha_s[COMM_PROTO_LL] = r.alpha_s[COMM_PROTO_SIMPLE] = 1e-5;
    r.ll_max_bytes = 0; /* Simple */
    /* 100 kB at 1 GB/s: ring 2*63*1e-5 + 2*63/64*1e5/1e9 = 1.456875e-3 s; tree (depth 6)
     * 2*6*1e-5 + 2*1e5/1e9 = 3.2e-4 s: the tree is cheaper */
    NEAR(comm_ring_allreduce_time(&p, &r, 1e5, 1e9), 3.2e-4);
    /* 1 GB: ring 1.26e-3 + 1.96875 = 1.970135 s; tree 1.2e-4 + 2 = 2.00012 s: the ring */
    NEAR(comm_ring_allreduce_time(&p, &r, 1e9, 1e9), 1.26e-3 + 2.0 * 63 / 64);
}

/* A node calibrated at 2 ranks (both protocols) and at 4 (Simple only): a ring takes, per
 * protocol, the measured size nearest to its ranks on the node (a tie to the smaller), that
 * size's bus bandwidth as its hop capacity and that size's latency split by the tuner's ratio
 * (hand: Simple base 8 us, step 2 us; LL base 6 us, step 1 us) over its own 2(n-1) steps.
 * 4 ranks: Simple L = 30 us = 12 + 6 x 3 us at 360 GB/s; LL from the 2-rank fit, 12 us = 9 + 2 x
 * 1.5 us, so 9 + 6 x 1.5 = 18 us at 100 GB/s; 8 ranks (nearest 4): Simple 12 + 14 x 3 = 54 us. */
Test(comm, calibrated_nvlink_takes_the_nearest_ring_size)
{
    comm_params p = hand_params();
    p.nccl_tree_ll_bw_frac = 0.25;
    p.nccl_ring_base_s[COMM_PROTO_LL] = 6e-6;
    p.nccl_nvlink_step_s[COMM_PROTO_LL] = 1e-6;
    p.nccl_ring_base_s[COMM_PROTO_SIMPLE] = 8e-6;
    p.nccl_nvlink_step_s[COMM_PROTO_SIMPLE] = 2e-6;
    comm_node nd = hand_node(100e9);
    nd.gpus = 8;
    nd.n_nvl_cal = 2;
    nd.nvl_cal[0] = (comm_nvl_cal){.ranks = 2,
                                   .has = {true, true},
                                   .latency_s = {12e-6, 20e-6},
                                   .busbw = {100e9, 300e9},
                                   .ll_max_bytes = 524288};
    nd.nvl_cal[1] = (comm_nvl_cal){
        .ranks = 4, .has = {false, true}, .latency_s = {0, 30e-6}, .busbw = {0, 360e9}};
    cr_assert_eq(comm_nvl_cal_pick(&nd, 2, COMM_PROTO_SIMPLE), &nd.nvl_cal[0]);
    cr_assert_eq(comm_nvl_cal_pick(&nd, 3, COMM_PROTO_SIMPLE), &nd.nvl_cal[0]);
    cr_assert_eq(comm_nvl_cal_pick(&nd, 4, COMM_PROTO_SIMPLE), &nd.nvl_cal[1]);
    cr_assert_eq(comm_nvl_cal_pick(&nd, 8, COMM_PROTO_SIMPLE), &nd.nvl_cal[1]);
    cr_assert_eq(comm_nvl_cal_pick(&nd, 4, COMM_PROTO_LL), &nd.nvl_cal[0]);
    comm_node none = hand_node(100e9);
    cr_assert_null(comm_nvl_cal_pick(&none, 4, COMM_PROTO_SIMPLE));
    comm_rank r[8];
    for (int i = 0; i < 8; i++) {
        r[i] = (comm_rank){0, i, false};
    }
    comm_ring two, four, eight;
    char why[128];
    cr_assert_eq(comm_ring_build(&p, &nd, 1, r, 2, &two, why, sizeof why), 0);
    cr_assert_eq(comm_ring_build(&p, &nd, 1, r, 4, &four, why, sizeof why), 0);
    cr_assert_eq(comm_ring_build(&p, &nd, 1, r, 8, &eight, why, sizeof why), 0);
    NEAR(comm_ring_alone_rate(&two), 300e9);
    NEAR(comm_ring_alone_rate(&four), 360e9);
    NEAR(comm_ring_allreduce_time(&p, &two, 1e8, 300e9), 20e-6 + 1e8 / 300e9);
    NEAR(comm_ring_allreduce_time(&p, &four, 1e8, 360e9), 30e-6 + 1.5 * 1e8 / 360e9);
    NEAR(four.ll_max_bytes, 524288.0);
    NEAR(four.ll_bw_frac, 100.0 / 360);
    NEAR(comm_ring_allreduce_time(&p, &four, 1e3, 360e9), 18e-6 + 1.5 * 1e3 / 100e9);
    NEAR(comm_ring_allreduce_time(&p, &eight, 1e8, 360e9), 54e-6 + 1.75 * 1e8 / 360e9);
    comm_ring_fini(&two);
    comm_ring_fini(&four);
    comm_ring_fini(&eight);
}
