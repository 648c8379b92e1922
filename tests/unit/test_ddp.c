/* Unit tests for model/physics/ddp.h on the synthetic TEST-GPU (phys_fixture.h) with hand-chosen link
 * parameters: placement checks, the bucketed step time worked out by hand, and an OOM. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "experiments/comm_load.h"
#include "model/physics/ddp.h"
#include "phys_fixture.h"
#include "sim/diag.h"
#include "sim/xalloc.h"

static comm_params hand_comm(void)
{
    comm_params p;
    memset(&p, 0, sizeof p);
    for (int l = 0; l < COMM_LINK_COUNT; l++) {
        p.eff[l] = 0.8;
        p.ll_max_bytes[l] = 1 << 20;
        p.alpha_s[l][COMM_PROTO_LL] = 7e-6;
        p.alpha_s[l][COMM_PROTO_SIMPLE] = 8e-6;
    }
    p.ll_max_bytes[COMM_LINK_NIC] = 16 << 20; /* 16.78 MB */
    p.ll_bw_frac = 0.5;
    p.host_mem_bytes_per_s = 100e9;
    p.gpus_per_root = 2;
    p.bucket_bytes = 25e6;
    p.backward_frac = 2.0 / 3.0;
    p.grad_copy_frac = 1;
    p.nccl_ll_buffer_bytes = 1 << 20; /* NCCL's memory: 2 MiB granules, 2 channels off NVLink */
    p.nccl_ll128_buffer_bytes = 1 << 20;
    p.nccl_simple_buffer_bytes = 2 << 20;
    p.nccl_alloc_granule_bytes = 2 << 20;
    p.nccl_channel_peer_bytes = 1024;
    p.nccl_channel_allocs = 3;
    p.nccl_channels_other = 2;
    p.overlap_comm_frac = 1; /* the terms of ddp_terms_by_hand off: all-reduces at full rate */
    p.buffer_broadcasts = 2;
    return p;
}

/* 0.01 s host, 1 SM-second of fp32 work: 0.01 s of GPU on 100 SMs (no memory traffic) */
static wl_profile hand_profile(double footprint)
{
    wl_profile w;
    memset(&w, 0, sizeof w);
    w.name = "hand";
    w.host_s_fixed = 0.01;
    w.compute_sm_s_fixed[WL_CLASS_FP32] = 1.0;
    w.mem_footprint_bytes_fixed = footprint;
    return w;
}

/* TEST-GPU with x16 links of 32 GB/s each way (x 0.8 = 25.6 GB/s: never the bottleneck below) */
static gpu_type pcie_gpu(void)
{
    gpu_type g = fixture_gpu();
    g.pcie_bytes_per_s = 32e9;
    return g;
}

/* DDP's bucket copy of G bytes each way on the whole TEST-GPU: read + write at its bandwidth */
static double copy_s(const gpu_type *g, const phys_params *m, double G)
{
    partition_cfg c;
    partition_cfg_init(&c, g);
    return 2 * G / speed_partition_bandwidth(&c, speed_partition_sms(&c), m);
}

static ddp_job hand_job(const gpu_type *g, const wl_profile *w, int workers, int gpn)
{
    ddp_job j;
    memset(&j, 0, sizeof j);
    SIM_ASSERT(g->pcie_bytes_per_s > 0);
    j.profile = w;
    j.batch = 1;
    j.gpu = g;
    j.workers = workers;
    j.per_gpu = 1;
    j.gpus_per_node = gpn;
    j.gpus_per_root = 2;
    j.nic_bytes_per_s = 12.5e9; /* x 0.8 = 10 GB/s */
    return j;
}

Test(ddp, shape_fills_nodes_and_spans_them)
{
    gpu_type g = pcie_gpu();
    wl_profile w = hand_profile(1e9);
    ddp_job j = hand_job(&g, &w, 16, 4);
    char why[256];
    cr_assert_eq(ddp_shape(&j, why, sizeof why), 0, "%s", why);
    /* 16 workers, 4 per node: a gang over 4 nodes [4, 4, 4, 4] */
    cr_assert_eq(j.n_nodes, 4);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(j.topology[i], 4);
    }
    /* [3, 3, 3, 3, 4] is accepted as given */
    ddp_job k = hand_job(&g, &w, 16, 4);
    k.n_nodes = 5;
    int t[5] = {3, 3, 3, 3, 4};
    memcpy(k.topology, t, sizeof t);
    cr_assert_eq(ddp_shape(&k, why, sizeof why), 0, "%s", why);
    /* the ring over it crosses every node's NIC: 5 NIC hops */
    comm_params cp = hand_comm();
    comm_ring ring;
    cr_assert_eq(ddp_ring(&k, &cp, &ring, why, sizeof why), 0, "%s", why);
    cr_assert_eq(ring.hops[COMM_LINK_NIC], 5);
    cr_assert_eq(ring.hops[COMM_LINK_PCIE], 11);
    comm_ring_fini(&ring);
}

Test(ddp, bad_shapes)
{
    gpu_type g = pcie_gpu();
    wl_profile w = hand_profile(1e9);
    char why[256];
    ddp_job j = hand_job(&g, &w, 16, 4);
    j.n_nodes = 3;
    j.topology[0] = j.topology[1] = j.topology[2] = 4;
    cr_assert_eq(ddp_shape(&j, why, sizeof why), -1);
    cr_assert(strstr(why, "topology places 12 workers over 3 nodes"), "%s", why);
    ddp_job k = hand_job(&g, &w, 6, 4);
    k.mig = &g.profiles[1]; /* 3g.20gb: at most 2 per GPU */
    k.per_gpu = 3;
    cr_assert_eq(ddp_shape(&k, why, sizeof why), -1);
    cr_assert(strstr(why, "at most 2 3g.20gb instances"), "%s", why);
    ddp_job m = hand_job(&g, &w, 4, 4);
    m.per_gpu = 2;
    cr_assert_eq(ddp_shape(&m, why, sizeof why), -1);
    cr_assert(strstr(why, "a whole GPU holds one worker"), "%s", why);
}

Test(ddp, bucketed_step_by_hand)
{
    gpu_type g = pcie_gpu();
    wl_profile w = hand_profile(1e9);
    phys_params m = fixture_params();
    comm_params cp = hand_comm();
    ddp_job j = hand_job(&g, &w, 2, 1); /* 2 nodes of 1 GPU: a NIC ring at 10 GB/s */
    j.grad_bytes = 60e6;
    char why[256];
    cr_assert_eq(ddp_shape(&j, why, sizeof why), 0, "%s", why);
    comm_ring ring;
    cr_assert_eq(ddp_ring(&j, &cp, &ring, why, sizeof why), 0, "%s", why);
    ddp_result r;
    ddp_step(&j, &cp, &m, &ring, 0, &r);
    cr_assert_eq(r.outcome, SPEED_OK, "%s", r.reason);
    /* G_t = 1 SM-s / 100 SMs = 0.01 s: forward 0.01/3, backward 0.02/3 + the bucket copy 2G/BW.
     * Three buckets of 20 MB (> 16.78 MB: Simple), 2*1*8e-6 + 20e6/10e9 = 2.016e-3 s each,
     * ready at F + B/3, F + 2B/3, F + B; the copy back after the last, then the step. */
    double cp_s = copy_s(&g, &m, 60e6);
    double F = 0.01 / 3, B = 0.02 / 3 + cp_s;
    double c1 = F + B / 3 + 2.016e-3;
    double c2 = fmax(F + 2 * B / 3, c1) + 2.016e-3;
    double c3 = fmax(F + B, c2) + 2.016e-3;
    double step = 0.01 + fmax(F + B, c3) + cp_s;
    cr_assert(fabs(r.step_s - step) < 1e-12, "%.12g != %.12g", r.step_s, step);
    cr_assert_eq(r.n_buckets, 3);
    cr_assert(fabs(r.comm_s - 3 * 2.016e-3) < 1e-12);
    cr_assert(fabs(r.exposed_s - (step - 0.02)) < 1e-12);
    /* two workers of batch 1: 2 iterations per step */
    cr_assert(fabs(r.throughput - 2 / step) < 1e-9);
    comm_ring_fini(&ring);
}

/* What DDP and NCCL hold per worker with model/physics/comm.yaml's figures, by hand (MiB = 2^20):
 * a connection's three FIFOs, 0.5 + 4.6875 + 4 = 9.1875 MiB, take 5 granules of 2 MiB = 10 MiB,
 * its send side one granule: 12 MiB a channel; the channel's state 3 granules (6 MiB) until the
 * world's peers (608 B each) pass 2 MiB. An NVLink ring (24 channels): 24 x 18 = 432 MiB; on
 * MIG (staged, 2 channels, FIFOs in host memory): 2 x 6 = 12 MiB; at 4 096 workers the peers
 * take 2 490 368 B = 2 granules, so 2 x 8 = 16 MiB on MIG and 24 x 20 = 480 MiB over NVLink. */
Test(ddp, nccl_memory_by_hand)
{
    comm_params cp;
    diag *d = diag_create();
    cr_assert_eq(comm_load_default(d, &cp), 0);
    diag_destroy(d);
    const double mib = 1048576.0;
    gpu_type g = pcie_gpu();
    g.nvlink_bytes_per_s = 600e9;
    wl_profile w = hand_profile(1e9);
    ddp_job j = hand_job(&g, &w, 2, 8);
    j.grad_bytes = 1e8;
    char why[256];
    cr_assert_eq(ddp_shape(&j, why, sizeof why), 0, "%s", why);
    comm_ring ring;
    cr_assert_eq(ddp_ring(&j, &cp, &ring, why, sizeof why), 0, "%s", why);
    ddp_mem m;
    ddp_worker_mem(&j, &cp, &ring, &m);
    comm_ring_fini(&ring);
    cr_assert_eq(m.channels, 24);
    cr_assert_eq(m.nccl_buffer_bytes, 24 * 12 * mib);
    cr_assert_eq(m.nccl_state_bytes, 24 * 6 * mib);
    cr_assert_eq(m.bucket_bytes, 1e8);
    cr_assert_eq(m.total_bytes, 1e9 + 1e8 + 432 * mib);
    ddp_mem before; /* before placement: the same on a type with NVLink */
    ddp_worker_mem(&j, &cp, NULL, &before);
    cr_assert_eq(before.total_bytes, m.total_bytes);
    j.workers = 4096;
    ddp_worker_mem(&j, &cp, NULL, &m);
    cr_assert_eq(m.nccl_buffer_bytes + m.nccl_state_bytes, 480 * mib);
    j.mig = &g.profiles[0];
    ddp_worker_mem(&j, &cp, NULL, &m);
    cr_assert_eq(m.channels, 2);
    cr_assert_eq(m.nccl_buffer_bytes, 0);
    cr_assert_eq(m.nccl_state_bytes, 16 * mib);
    j.workers = 2;
    ddp_worker_mem(&j, &cp, NULL, &m);
    cr_assert_eq(m.nccl_state_bytes, 12 * mib);
    j.workers = 1; /* no DDP: the profile alone */
    ddp_worker_mem(&j, &cp, NULL, &m);
    cr_assert_eq(m.total_bytes, 1e9);
    cr_assert_eq(m.channels, 0);
}

Test(ddp, oom_when_buckets_do_not_fit)
{
    gpu_type g = pcie_gpu();
    /* 1g.5gb holds 5 GiB. 4.5 GiB of model and activations fit one worker; with 2 workers DDP
     * adds 0.5 GiB of bucket copies and NCCL 12 MiB: 2 channels (off NVLink) x 3 allocations of
     * state of one 2 MiB granule each, its FIFOs staged in host memory (MIG): 5.0117 GiB > 5 GiB */
    wl_profile w = hand_profile(4.5 * 1073741824.0);
    phys_params m = fixture_params();
    comm_params cp = hand_comm();
    ddp_job j = hand_job(&g, &w, 2, 1);
    j.mig = &g.profiles[0];
    j.grad_bytes = 0.5 * 1073741824.0;
    char why[256];
    cr_assert_eq(ddp_shape(&j, why, sizeof why), 0, "%s", why);
    comm_ring ring;
    cr_assert_eq(ddp_ring(&j, &cp, &ring, why, sizeof why), 0, "%s", why);
    ddp_result r;
    ddp_step(&j, &cp, &m, &ring, 0, &r);
    cr_assert_eq(r.outcome, SPEED_OOM);
    cr_assert(fabs(r.mem_bytes - (5.0 * 1073741824.0 + 12 * 1048576.0)) < 1);
    cr_assert(strstr(r.reason, "NCCL 12 MiB: 2 channels x (0 MiB buffers + 6 MiB state)) > "
                               "partition's 5 GiB"),
              "%s", r.reason);
    comm_ring_fini(&ring);
    /* one worker: no DDP buffers, it fits */
    ddp_job one = j;
    one.workers = 1;
    one.n_nodes = 0;
    cr_assert_eq(ddp_shape(&one, why, sizeof why), 0, "%s", why);
    cr_assert_eq(ddp_ring(&one, &cp, &ring, why, sizeof why), 0, "%s", why);
    ddp_step(&one, &cp, &m, &ring, 0, &r);
    cr_assert_eq(r.outcome, SPEED_OK, "%s", r.reason);
    comm_ring_fini(&ring);
}

/* Shape job j and build its ring into *ring (both must succeed). */
static void shape_and_ring(ddp_job *j, const comm_params *cp, comm_ring *ring)
{
    char why[256];
    cr_assert_eq(ddp_shape(j, why, sizeof why), 0, "%s", why);
    cr_assert_eq(ddp_ring(j, cp, ring, why, sizeof why), 0, "%s", why);
}

/* Three buckets of G = 60 MB (20 MB each) ready at F + B i / 3 (B with the bucket copy cp);
 * all-reduces back to back, each stretched by s; the copy back after the last; the step of
 * ddp.h with host time H (host_overlap 0). Costs on the 2-node NIC ring of hand_job at rate x:
 * Simple above 16.78 MB (alpha 8 us). */
static double hand_step(double H, double G_t, double x, double s, double cp)
{
    double F = G_t / 3, B = 2 * G_t / 3 + cp;
    double t = s * (2 * 8e-6 + 20e6 / x);
    double c1 = F + B / 3 + t;
    double c2 = fmax(F + 2 * B / 3, c1) + t;
    double c3 = fmax(F + B, c2) + t;
    return H + fmax(F + B, c3) + cp;
}

/* A GPU-bound worker (no host time, 1 SM-s: 0.01 s alone on 100 SMs) time-sliced with one
 * identical gang's worker: round-robin gives each eta(2)/2 = 0.4 of the GPU, so G_t = 0.025 s,
 * and NCCL's kernels, in the same context, are stretched by 0.025 / 0.01 = 2.5; the two rings
 * share the NIC, so each moves 5 GB/s. Exclusive: G_t = 0.01 s at 10 GB/s. */
Test(ddp, timesliced_worker_by_hand)
{
    gpu_type g = pcie_gpu();
    wl_profile w = hand_profile(1e9);
    w.host_s_fixed = 0;
    phys_params m = fixture_params();
    comm_params cp = hand_comm();
    ddp_job j = hand_job(&g, &w, 2, 1);
    j.grad_bytes = 60e6;
    comm_ring ring;
    shape_and_ring(&j, &cp, &ring);
    ddp_result excl, ts;
    ddp_step(&j, &cp, &m, &ring, 0, &excl);
    cr_assert_eq(excl.outcome, SPEED_OK, "%s", excl.reason);
    double want_excl = hand_step(0, 0.01, 10e9, 1, copy_s(&g, &m, 60e6));
    cr_assert(fabs(excl.step_s - want_excl) < 1e-12, "%.12g != %.12g", excl.step_s, want_excl);
    partition_cfg share;
    partition_cfg_init(&share, &g);
    share.sharing = SHARE_TIMESLICE;
    share.peers = 2;
    j.share = &share;
    ddp_step(&j, &cp, &m, &ring, 5e9, &ts);
    cr_assert_eq(ts.outcome, SPEED_OK, "%s", ts.reason);
    cr_assert(fabs(ts.gpu_s - 0.025) < 1e-12, "%.12g", ts.gpu_s);
    double want_ts = hand_step(0, 0.025, 5e9, 2.5, copy_s(&g, &m, 60e6));
    cr_assert(fabs(ts.step_s - want_ts) < 1e-12, "%.12g != %.12g", ts.step_s, want_ts);
    /* about 0.05 s against 0.014 s exclusive: each gang is slower than alone, and the two gangs
     * together take longer than one exclusive gang doing both steps one after the other */
    cr_assert_gt(ts.step_s, 2 * excl.step_s);
    comm_ring_fini(&ring);
}

/* The same worker as an MPS client capped at 50 %: 50 of the 100 SMs, so G_t = 0.02 s alone and
 * beside an identical client on the other 50 SMs (no memory traffic, so no bandwidth
 * contention); NCCL's kernels are not time-sliced (no stretch), the rings share the NIC. */
Test(ddp, mps_worker_by_hand)
{
    gpu_type g = pcie_gpu();
    wl_profile w = hand_profile(1e9);
    w.host_s_fixed = 0;
    phys_params m = fixture_params();
    m.mps_sm_granule = 1;
    m.mps_min_sms = 1;
    comm_params cp = hand_comm();
    ddp_job j = hand_job(&g, &w, 2, 1);
    j.grad_bytes = 60e6;
    comm_ring ring;
    shape_and_ring(&j, &cp, &ring);
    partition_cfg share;
    partition_cfg_init(&share, &g);
    share.sharing = SHARE_MPS;
    share.mps_percent = 50;
    j.share = &share;
    ddp_result alone, two;
    ddp_step(&j, &cp, &m, &ring, 10e9, &alone);
    cr_assert_eq(alone.outcome, SPEED_OK, "%s", alone.reason);
    double want = hand_step(0, 0.02, 10e9, 1, copy_s(&g, &m, 60e6));
    cr_assert(fabs(alone.step_s - want) < 1e-12, "%.12g != %.12g", alone.step_s, want);
    share.peers = 2;
    ddp_step(&j, &cp, &m, &ring, 5e9, &two);
    cr_assert_eq(two.outcome, SPEED_OK, "%s", two.reason);
    want = hand_step(0, 0.02, 5e9, 1, copy_s(&g, &m, 60e6));
    cr_assert(fabs(two.step_s - want) < 1e-12, "%.12g != %.12g", two.step_s, want);
    comm_ring_fini(&ring);
}

/* Two gangs' workers on one 20 GiB 3g.20gb instance (time-sliced): each needs 9 GiB of model
 * and activations + 0.5 GiB of buckets + 64 MiB of NCCL buffers = 9.5625 GiB; two of them fit,
 * a third co-runner of 2 GiB does not (21.125 GiB). */
Test(ddp, shared_memory_holds_every_corunner)
{
    gpu_type g = pcie_gpu();
    wl_profile w = hand_profile(9 * 1073741824.0);
    wl_profile other = hand_profile(2 * 1073741824.0);
    phys_params m = fixture_params();
    comm_params cp = hand_comm();
    ddp_job j = hand_job(&g, &w, 2, 1);
    j.mig = &g.profiles[1];
    j.grad_bytes = 0.5 * 1073741824.0;
    comm_ring ring;
    shape_and_ring(&j, &cp, &ring);
    partition_cfg share;
    partition_cfg_init(&share, &g);
    share.mig = j.mig;
    share.sharing = SHARE_TIMESLICE;
    share.peers = 2;
    j.share = &share;
    ddp_result r;
    ddp_step(&j, &cp, &m, &ring, 0, &r);
    cr_assert_eq(r.outcome, SPEED_OK, "%s", r.reason);
    share.n_with = 1;
    share.with[0] = &other;
    share.with_batch[0] = 1;
    ddp_step(&j, &cp, &m, &ring, 0, &r);
    cr_assert_eq(r.outcome, SPEED_OOM);
    cr_assert(strstr(r.reason, "co-runners 11.51 GiB > partition's 20 GiB"), "%s", r.reason);
    comm_ring_fini(&ring);
}

/* ddp_overlap worked out: forward 1, backward 4, two buckets of 1 s (alone). Beside an
 * all-reduce backward runs at 0.5 and the all-reduce at 0.5: bucket 0 ready at 1 + 2 = 3; both
 * run 2 s (the all-reduce's 1 s at 0.5; backward does 1 of its remaining 2), t = 5; backward
 * alone to its end, t = 6; bucket 1 alone, t = 7. With f = 0, q = 1: the old back-to-back rule
 * c1 = 1 + 2 + 1 = 4, c2 = max(1 + 4, 4) + 1 = 6. */
Test(ddp, overlap_by_hand)
{
    cr_assert(fabs(ddp_overlap(1, 4, 2, 1, 0.5, 0.5) - 7) < 1e-12);
    cr_assert(fabs(ddp_overlap(1, 4, 2, 1, 0, 1) - 6) < 1e-12);
    /* no backward: every all-reduce after the forward, back to back */
    cr_assert(fabs(ddp_overlap(1, 0, 3, 1, 0.5, 0.5) - 4) < 1e-12);
    /* more buckets than DDP_OVERLAP_MAX_BUCKETS are walked as that many equal groups: 10^5
     * buckets of 1 us are 256 groups of 390.625 us (the same total); hidden behind a 4 s
     * backward but for the last group, which runs alone after it: t = 1 + 4 + 390.625e-6 at
     * f = 0, q = 1 (the last of 10^5 buckets alone would be 1 us: the bound bwd / 256 holds) */
    cr_assert_eq(DDP_OVERLAP_MAX_BUCKETS, 256);
    cr_assert_eq(ddp_overlap(1, 4, 100000, 1e-6, 0.5, 0.5),
                 ddp_overlap(1, 4, 256, 1e-6 * 100000 / 256, 0.5, 0.5));
    cr_assert(fabs(ddp_overlap(1, 4, 100000, 1e-6, 0, 1) - (5 + 390.625e-6)) < 1e-12,
              "%.15g", ddp_overlap(1, 4, 100000, 1e-6, 0, 1));
}

/* Every DDP term of ddp.h: 100 gradient tensors, 50 buffers, 2 buckets, optimiser 20 % of G_t,
 * backward 75 % of the rest; NCCL on 50 of the 100 SMs, all-reduce at half rate beside
 * backward; 10 us per launch, 100 us per collective. */
/* The hand profile with DDP's counts: 100 gradient tensors, 50 buffers, 2 buckets. */
static wl_profile terms_profile(void)
{
    wl_profile w = hand_profile(1e9);
    w.grad_tensors = 100;
    w.buffer_tensors = 50;
    w.grad_buckets = 2;
    return w;
}

/* The hand links with DDP's host costs: 10 us per launch, 100 us per collective. */
static comm_params terms_comm(void)
{
    comm_params cp = hand_comm();
    cp.host_launch_s = 1e-5;
    cp.host_collective_s = 1e-4;
    return cp;
}

Test(ddp, ddp_terms_by_hand)
{
    gpu_type g = pcie_gpu();
    wl_profile w = terms_profile();
    w.optimizer_frac = 0.2;
    w.backward_frac = 0.75;
    phys_params m = fixture_params();
    comm_params cp = terms_comm();
    cp.nccl_channels = 50;
    cp.overlap_comm_frac = 0.5;
    ddp_job j = hand_job(&g, &w, 2, 1);
    j.grad_bytes = 60e6;
    comm_ring ring;
    shape_and_ring(&j, &cp, &ring);
    ddp_result r;
    ddp_step(&j, &cp, &m, &ring, 0, &r);
    cr_assert_eq(r.outcome, SPEED_OK, "%s", r.reason);
    /* G_t 0.01: O 0.002, F 0.002, B 0.006 + copy; buckets of 30 MB: 16e-6 + 30e6/10e9 s */
    double cps = copy_s(&g, &m, 60e6), t = 2 * 8e-6 + 30e6 / 10e9;
    double end = ddp_overlap(0.002, 0.006 + cps, 2, t, 0.5, 0.5);
    /* host: 1e-5 (2 x 100 + 50) + 1e-4 (2 buckets + 2 broadcasts) = 2.9e-3 s, launches issued
     * ahead of the GPU's queue: hidden behind the GPU path; the loop's own host (0.01 s,
     * host_overlap 0) stays before it */
    cr_assert(fabs(r.ddp_host_s - 2.9e-3) < 1e-12, "%.12g", r.ddp_host_s);
    double path = end + cps + 0.002;
    cr_assert_gt(path, 2.9e-3);
    double step = 0.01 + path;
    cr_assert(fabs(r.step_s - step) < 1e-12, "%.12g != %.12g", r.step_s, step);
    cr_assert_eq(r.n_buckets, 2);
    /* 10 ms per collective: DDP's host (2.5e-3 + 4e-2 s) outlasts the GPU path and sets the
     * step */
    cp.host_collective_s = 1e-2;
    ddp_result slow;
    ddp_step(&j, &cp, &m, &ring, 0, &slow);
    cr_assert(fabs(slow.step_s - (0.01 + 0.0425)) < 1e-12, "%.12g", slow.step_s);
    cp.host_collective_s = 1e-4;
    /* without the SM share and at full rate beside backward the step is shorter */
    cp.nccl_channels = 0;
    cp.overlap_comm_frac = 1;
    ddp_result fast;
    ddp_step(&j, &cp, &m, &ring, 0, &fast);
    cr_assert_lt(fast.step_s, r.step_s);
    comm_ring_fini(&ring);
}

/* e_n, the expected maximum of n standard normals: exact for n = 2 and 3 (1/sqrt(pi),
 * 3/(2 sqrt(pi))), and the tabulated values of Harter (1961, "Expected values of normal order
 * statistics", Biometrika 48: 151-165) for n = 4, 8, 100: 1.02938, 1.42360, 2.50759. */
Test(ddp, expected_max_of_normals)
{
    cr_assert_eq(ddp_expected_max(1), 0);
    cr_assert(fabs(ddp_expected_max(2) - 1 / sqrt(3.14159265358979323846)) < 1e-9, "%.12g", ddp_expected_max(2));
    cr_assert(fabs(ddp_expected_max(3) - 1.5 / sqrt(3.14159265358979323846)) < 1e-9, "%.12g", ddp_expected_max(3));
    cr_assert(fabs(ddp_expected_max(4) - 1.02938) < 1e-5, "%.12g", ddp_expected_max(4));
    cr_assert(fabs(ddp_expected_max(8) - 1.42360) < 1e-5, "%.12g", ddp_expected_max(8));
    cr_assert(fabs(ddp_expected_max(100) - 2.50759) < 1e-5, "%.12g", ddp_expected_max(100));
    cr_assert_gt(ddp_expected_max(DDP_MAX_WORKERS), ddp_expected_max(100));
}

/* The gang waits for its slowest host: the DDP terms of ddp_terms_by_hand with a host spread of
 * 10 %: the host part (0.01 + 2.9e-3 s) grows by 0.1 e_n; the GPU path is unchanged, and DDP's
 * part of the host (2.9e-3 (1 + 0.1 e_n)) stays behind it, so at 2 and 4 workers the step is
 * longer by the loop's own part's growth, 0.01 x 0.1 e_n, and one worker has none. e_n is the
 * one ddp_shape cached in the job, or computed when the job has none. */
Test(ddp, straggler_by_hand)
{
    gpu_type g = pcie_gpu();
    wl_profile w = terms_profile();
    phys_params m = fixture_params();
    comm_params cp = terms_comm();
    for (int n = 2; n <= 4; n += 2) {
        ddp_job j = hand_job(&g, &w, n, 1);
        j.grad_bytes = 60e6;
        comm_ring ring;
        shape_and_ring(&j, &cp, &ring);
        ddp_result still, spread;
        cp.host_spread = 0;
        ddp_step(&j, &cp, &m, &ring, 0, &still);
        cp.host_spread = 0.1;
        ddp_step(&j, &cp, &m, &ring, 0, &spread);
        cr_assert_eq(spread.outcome, SPEED_OK, "%s", spread.reason);
        double wait = (0.01 + 2.9e-3) * 0.1 * ddp_expected_max(n);
        cr_assert(fabs(spread.straggler_s - wait) < 1e-12, "%.12g", spread.straggler_s);
        cr_assert(fabs(spread.step_s - still.step_s - 0.01 * 0.1 * ddp_expected_max(n)) < 1e-12,
                  "%.12g %.12g", spread.step_s, still.step_s);
        /* ddp_shape cached e_n; a job built without it (max_normal 0) computes the same */
        cr_assert_eq(j.max_normal, ddp_expected_max(n));
        ddp_job plain = j;
        plain.max_normal = 0;
        ddp_result again;
        ddp_step(&plain, &cp, &m, &ring, 0, &again);
        cr_assert_eq(again.step_s, spread.step_s);
        comm_ring_fini(&ring);
    }
    ddp_job one = hand_job(&g, &w, 1, 1);
    comm_ring ring;
    shape_and_ring(&one, &cp, &ring);
    ddp_result r;
    ddp_step(&one, &cp, &m, &ring, 0, &r);
    cr_assert_eq(r.straggler_s, 0);
    comm_ring_fini(&ring);
}

/* A profile's step-to-step spread (step_cv, measured on its solo run) adds to the spread between
 * processes in quadrature: each worker's host time in a step is normal with relative sd
 * sqrt(host_spread^2 + step_cv^2), and the gang waits for the slowest, (H + dH) s e_n. By hand
 * on the same job as above (H + dH = 0.01 + 2.9e-3 s): host_spread 0.06 and step_cv 0.08 give
 * s = 0.1 exactly; step_cv alone gives 0.08; one worker waits for nobody. */
/* The straggler wait of n workers of w on the hand links with 60 MB of gradients. */
static double hand_straggler_s(const gpu_type *g, const wl_profile *w, const comm_params *cp,
                               const phys_params *m, int n)
{
    ddp_job j = hand_job(g, w, n, 1);
    j.grad_bytes = 60e6;
    comm_ring ring;
    shape_and_ring(&j, cp, &ring);
    ddp_result r;
    ddp_step(&j, cp, m, &ring, 0, &r);
    comm_ring_fini(&ring);
    cr_assert_eq(r.outcome, SPEED_OK, "%s", r.reason);
    return r.straggler_s;
}

Test(ddp, step_cv_adds_to_the_spread_between_processes)
{
    gpu_type g = pcie_gpu();
    wl_profile w = terms_profile();
    phys_params m = fixture_params();
    comm_params cp = terms_comm();
    w.step_cv = 0.08;
    const double spread[] = {0.06, 0}, s_by_hand[] = {0.1, 0.08};
    for (int i = 0; i < 2; i++) {
        cp.host_spread = spread[i];
        for (int n = 1; n <= 8; n *= 2) {
            double got = hand_straggler_s(&g, &w, &cp, &m, n);
            double wait = n < 2 ? 0 : (0.01 + 2.9e-3) * s_by_hand[i] * ddp_expected_max(n);
            cr_assert(fabs(got - wait) < 1e-12, "n %d: %.12g against %.12g", n, got, wait);
        }
    }
}

/* Where DDP's host work falls (calib/ddp/NOTES.md): a GPU-bound loop whose own host overlaps its
 * GPU (host_overlap 0.8, H 0.01 s against G 0.1 s: alone t = 0.002 + max(0.008, 0.1)) keeps its
 * solo idle (1 - o) H in a DDP step and no more: DDP's host launches (2.9e-3 s) and the own
 * part's overlapped host run beside the GPU path, so the step is 0.002 + that path; before,
 * (1 - o)(H + dH) = 2.58e-3 s idled. */
Test(ddp, ddp_host_work_runs_beside_a_gpu_bound_path)
{
    gpu_type g = pcie_gpu();
    wl_profile w = terms_profile();
    w.compute_sm_s_fixed[WL_CLASS_FP32] = 10.0;
    w.host_overlap = 0.8;
    phys_params m = fixture_params();
    comm_params cp = terms_comm();
    ddp_job j = hand_job(&g, &w, 2, 1);
    j.grad_bytes = 60e6;
    comm_ring ring;
    shape_and_ring(&j, &cp, &ring);
    ddp_result r;
    ddp_step(&j, &cp, &m, &ring, 0, &r);
    cr_assert_eq(r.outcome, SPEED_OK, "%s", r.reason);
    double path = r.step_s - 0.2 * 0.01;
    cr_assert_gt(path, 0.8 * 0.01 + r.ddp_host_s, "GPU-bound: the path outlasts the host");
    /* the path is the GPU's alone: a larger DDP host below it changes nothing */
    cp.host_collective_s = 2e-4;
    ddp_result more;
    ddp_step(&j, &cp, &m, &ring, 0, &more);
    cr_assert_gt(more.ddp_host_s, r.ddp_host_s);
    cr_assert_eq(more.step_s, r.step_s);
    comm_ring_fini(&ring);
}
