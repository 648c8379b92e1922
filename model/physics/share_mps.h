/* model/physics/share_mps.h - MPS: how co-located clients slow each other when their kernels run at
 * the same time on one partition (DESIGN.md §4 "Sharing"; limits and memory in model/physics/share.h,
 * time-slicing in model/physics/share_ts.h).
 *
 * MPS: clients' kernels run at the same time on disjoint SMs. A client in its GPU phase asks for
 * d = min(cap, P) SMs (cap: its thread percentage of the partition's SMs in whole TPCs,
 * speed_mps_sms of model/physics/speed.h; P: its kernels' parallelism); the SMs are shared max-min fairly
 * (water-filling) among the clients in their GPU phase, so a client's idle phases (host time,
 * launch gaps) and the SMs its kernels leave idle (P below the SM count) go to the others. Its GPU
 * time on s SMs is the solo formula at s SMs (model/physics/speed.h: the SM-count curve of its kernels, so
 * a cap of p % alone follows that curve). Memory bandwidth is one pool: the rates the active
 * clients' kernels draw when they run unhindered (M / GPU time on the SMs they ask for: a kernel
 * moves its bytes while it runs, whatever share of the SMs it got) are water-filled into the
 * partition's bandwidth, divided by 1 + mps_bw_contention per other active client (L2 and DRAM
 * conflicts); a client whose share is below its demand moves M at its share, beside its compute
 * (the roofline g of speed.h). So two clients that each saturate the memory take twice their solo
 * time, as on the H100 (ResNet-50 inference at batch 128, calib/coloc). Who is active is a mean
 * field: each client's kernels run a fraction b of its iteration (waiting in the queue below
 * excluded), others count with weight b (share_mps_solve). Kernel queueing: the GPU dispatches
 * kernels in arrival order, so the kernels of two classes (both with kernels_per_iter K) wait for
 * each other where both cannot hold the SMs they ask for at once: in the share ser = min(1, max(0,
 * a_i + a_j - SMs) / min(a_i, a_j)) (a: SMs asked for) of them; clients whose thread caps put them
 * side by side (50 % + 50 %) never wait, as the MPS calibration's compute + memory pair shows
 * (calib/results/2026-11-22-h100-sxm*.json: capped at 50 %, each takes its capped solo time within
 * 5 %). How long a kernel waits depends on how it arrives. A client issues a share beta of its
 * kernels back to back, while its previous kernel is still queued or running: beta = 1 when its
 * solo GPU work outlasts the host time that issues it (g >= o H, the host runs ahead), else g / (o
 * H). Such a kernel becomes ready when its predecessor ends, behind the kernel the other client
 * queued meanwhile, so it waits for the WHOLE of that kernel (d_j = its GPU time on the SMs it asks
 * for / K_j) and then runs alone (the other's next kernel queues behind it: no SM, bandwidth or
 * power split with that client). Client i thus waits for every kernel such a client starts while i
 * has kernels in flight (rate K_j / t_j times i's GPU time with waits), at most one per kernel of
 * i: two clients that both launch back to back alternate whole kernels, t_i = K_i (d_i + d_j) for
 * equal kernel rates, the sum of the solo times for the calibration's uncapped pair (measured
 * 0.96-0.97x that sum). A kernel issued after a launch gap (1 - beta) arrives at a random moment:
 * it waits mps_kernel_wait x d_j (the mean residual, 1/2 for kernels of one length) if a kernel of
 * j runs then (expected count w_j: j's running share b) and shares the SMs with it as before. Each
 * wait is weighted by the share of the SMs the other's kernel holds, min(1, a_j / SMs), and by ser.
 * beta leaves out the time a client waits for others: with it, a launch-bound loop beside the
 * memory stream would queue every kernel behind a whole stream kernel and run several times slower
 * than measured (calib/coloc; docs/validation.md). The client's GPU time grows by the
 * waits: a memory stream's 0.26 ms kernels cost a training loop of ~900 kernels ~0.12 s per
 * iteration (measured 4-5x slower, calib/coloc), while the stream barely notices. Identical clients
 * are left to the SM split (their kernels alternate, which that split already describes); profiles
 * without kernels_per_iter neither wait nor make others wait.
 *
 * Launch gaps: NVML's busy time of a loop alone (its GPU time G) holds, besides its kernels, the
 * gaps between them in which none of its kernels runs (launch latency, the host issuing the next
 * one). A profile with kernel_busy_frac phi (the kernel census' union of kernel intervals over
 * NVML's busy time; calib/coloc/NOTES-h200.md 'mpsconc': training loops 0.82-0.97) keeps the solo's
 * gaps (1 - phi) G at their length under MPS (they hold no SMs, so they neither stretch nor count
 * for others) and stretches only its kernels: GPU time (1 - phi) G + phi g(s), its running share
 * for the others phi g(s) / t and its kernel length phi G / K. So k GPU-bound clients tend to the
 * SM-time the kernels conserve, SMs / (phi P G), where phi = 1 gives 1 / G(SMs) (the launch gaps
 * counted as SM-time: tfm_train held 18-24 % under its measured aggregate). Alone, or capped
 * alone, the client's GPU time is its solo's.
 *
 * SM-time beside peers: a profile with mps_sm_growth a (measured: the SM-time one iteration takes,
 * GPM SM activity x SMs / the aggregate rate, of 2 identical MPS clients over one's, as a of
 * 1 + a ln 2; calib/coloc/table.py sm_growth) is a loop whose kernels keep their SM-time beside
 * peers: the SMs others take stretch its memory part as they stretch its compute (its bandwidth
 * is what its asked-for SMs drive times the share of them it holds), and its kernel time grows by
 * 1 + a ln k with k clients on the partition (their working sets share the L2: the DRAM bytes an
 * iteration grow x1.04-1.55 at k = 2 on tables f-i). Its bandwidth pool water-fills the average
 * rates drawn (bytes over the GPU time, a measured peer's scaled by its SMs held) and gives a
 * client above its level bytes / level, which meets its unhindered time where the pool starts to
 * bind (no step). Fitted on 2 clients, a predicts the growth at k = 3-8 on tables f-i within 0.02
 * (calib/coloc/NOTES-h200.md 'sm growth'); it does not move a lone client, capped or not (ln 1 =
 * 0), which keeps the SM-count curve its GPM shows (cnn_train at cap25: 0.75 SM-s an iteration
 * against 0.89 alone). A profile without it (the node calibration's synthetic kernels, the DDP
 * tables' models, a stream that saturates DRAM on fewer SMs) keeps the SM-count curve beside
 * peers and the pool as above.
 *
 * Exposed tail: a profile with gpu_tail_frac tau (the census' GPU work after the iteration's last
 * launch, over the kernel time; model/physics/speed.h) waits at its closing synchronisation for
 * tau of its kernel time, which no host time hides. Its host time H, fitted to the solo, holds
 * the solo's tail; where its kernels stretch (fewer SMs under a cap, the SM share and bandwidth
 * pool beside peers) the tail stretches with them, and the client's iteration is
 * (1 - o) H + max(o H + tau phi (g - G_ref), its GPU time with waits) (speed_tail_excess_s:
 * GPT-2 inference's LM head, tfm_infer cap50 +24.6 -> +18.6 % in h200-coloc-g;
 * calib/coloc/NOTES-h200.md 'captail'). Not modelled: a client's closing synchronisation
 * waiting behind the kernels identical clients queued ahead of its last ones.
 *
 * Units: seconds, SMs, bytes/s. Ownership: the caller owns the classes (their profiles
 * borrowed), the partition, the parameters and the output arrays; nothing is kept after a call.
 * No I/O; no global state.
 */
#ifndef SIMPROJ_MODEL_SHARE_MPS_H
#define SIMPROJ_MODEL_SHARE_MPS_H

#include "model/physics/share.h"
#include "model/physics/speed.h"

/* One class of identical MPS clients. */
typedef struct share_mps_class {
    const wl_profile *p; /* borrowed */
    double batch;
    int n; /* clients of this class */
} share_mps_class;

/* Steady iteration time of one client of each class under MPS on partition c (c->mps_percent
 * caps every client's SMs; see the top for the model). Solved by damped fixed-point iteration on
 * the fraction of time each class has GPU work and the rate at which it starts kernels (at most
 * SHARE_MPS_MAX_ITER rounds, until no fraction moves by SHARE_MPS_TOL); within a round, a
 * client's waits for the kernels it meets back to back, which grow with its own time in flight,
 * are solved exactly (bisection), so strong coupling (a client waiting whenever another runs)
 * settles as fast as weak. iter_s[c] receives the wall time per iteration, gpu_frac[c]
 * (may be NULL) that fraction. Returns 0, or SIM_ENOCONV when the iteration did not settle
 * (iter_s then holds the last iterate, which callers must not use as an answer). */
#define SHARE_MPS_MAX_ITER 300
#define SHARE_MPS_TOL 1e-10
int share_mps_solve(int n_cls, const share_mps_class *cls, const partition_cfg *c,
                    const phys_params *m, double *iter_s, double *gpu_frac);

#endif
