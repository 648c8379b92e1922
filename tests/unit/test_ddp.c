/* Unit tests for model/ddp.h on the synthetic TEST-GPU (phys_fixture.h) with hand-chosen link
 * parameters: placement checks, the bucketed step time worked out by hand, and an OOM. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "model/ddp.h"
#include "phys_fixture.h"
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
    p.nccl_buffer_bytes = 64 << 20;
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
    /* G_t = 1 SM-s / 100 SMs = 0.01 s: forward 0.01/3, backward 0.02/3. Buckets 25, 25, 10 MB.
     * 25 MB > 16.78 MB: Simple, 2*1*8e-6 + 25e6/10e9 = 2.516e-3 s; 10 MB: LL, 2*1*7e-6 +
     * 10e6/5e9 = 2.014e-3 s. Ready at F + B*25/60, F + B*50/60, F + B. */
    double F = 0.01 / 3, B = 0.02 / 3;
    double c1 = F + B * 25 / 60 + 2.516e-3;
    double c2 = fmax(F + B * 50 / 60, c1) + 2.516e-3;
    double c3 = fmax(F + B, c2) + 2.014e-3;
    double step = 0.01 + fmax(0.01, c3);
    cr_assert(fabs(r.step_s - step) < 1e-12, "%.12g != %.12g", r.step_s, step);
    cr_assert_eq(r.n_buckets, 3);
    cr_assert(fabs(r.comm_s - (2 * 2.516e-3 + 2.014e-3)) < 1e-12);
    cr_assert(fabs(r.exposed_s - (c3 - 0.01)) < 1e-12);
    /* two workers of batch 1: 2 iterations per step */
    cr_assert(fabs(r.throughput - 2 / step) < 1e-9);
    comm_ring_fini(&ring);
}

Test(ddp, oom_when_buckets_do_not_fit)
{
    gpu_type g = pcie_gpu();
    /* 1g.5gb holds 5 GiB. 4.5 GiB of model and activations fit one worker; with 2 workers DDP
     * adds 0.5 GiB of bucket copies and 64 MiB of NCCL buffers: 5.0625 GiB > 5 GiB */
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
    cr_assert(fabs(r.mem_bytes - 5.0625 * 1073741824.0) < 1);
    cr_assert(strstr(r.reason, "partition's 5 GiB"), "%s", r.reason);
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

/* Bucket i of G = 60 MB (25, 25, 10 MB) ready at F + B g_i / G; all-reduces back to back, each
 * stretched by s; the step of ddp.h with host time H. Costs on the 2-node NIC ring of hand_job
 * at rate x: Simple above 16.78 MB (alpha 8 us), LL below (alpha 7 us, half the rate). */
static double hand_step(double H, double G_t, double x, double s)
{
    double F = G_t / 3, B = 2 * G_t / 3;
    double big = s * (2 * 8e-6 + 25e6 / x), small = s * (2 * 7e-6 + 10e6 / (0.5 * x));
    double c1 = F + B * 25 / 60 + big;
    double c2 = fmax(F + B * 50 / 60, c1) + big;
    double c3 = fmax(F + B, c2) + small;
    return H + fmax(G_t, c3);
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
    double want_excl = hand_step(0, 0.01, 10e9, 1);
    cr_assert(fabs(excl.step_s - want_excl) < 1e-12, "%.12g != %.12g", excl.step_s, want_excl);
    partition_cfg share;
    partition_cfg_init(&share, &g);
    share.sharing = SHARE_TIMESLICE;
    share.peers = 2;
    j.share = &share;
    ddp_step(&j, &cp, &m, &ring, 5e9, &ts);
    cr_assert_eq(ts.outcome, SPEED_OK, "%s", ts.reason);
    cr_assert(fabs(ts.gpu_s - 0.025) < 1e-12, "%.12g", ts.gpu_s);
    double want_ts = hand_step(0, 0.025, 5e9, 2.5);
    cr_assert(fabs(ts.step_s - want_ts) < 1e-12, "%.12g != %.12g", ts.step_s, want_ts);
    /* 0.0504 s against 0.0134 s exclusive: each gang is slower than alone, and the two gangs
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
    double want = hand_step(0, 0.02, 10e9, 1);
    cr_assert(fabs(alone.step_s - want) < 1e-12, "%.12g != %.12g", alone.step_s, want);
    share.peers = 2;
    ddp_step(&j, &cp, &m, &ring, 5e9, &two);
    cr_assert_eq(two.outcome, SPEED_OK, "%s", two.reason);
    want = hand_step(0, 0.02, 5e9, 1);
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
    cr_assert(strstr(r.reason, "co-runners 11.6 GiB > partition's 20 GiB"), "%s", r.reason);
    comm_ring_fini(&ring);
}
