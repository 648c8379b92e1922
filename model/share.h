/* model/share.h - how co-located jobs slow each other on one partition (DESIGN.md §4 "Sharing").
 *
 * Time-slicing (fluid mode): k jobs alternate a host phase (H seconds, runs on the CPU, overlaps
 * other jobs' GPU phases) and a GPU phase (G seconds when alone). While n >= 2 contexts want the
 * GPU it delivers a fraction η(n) of its time as useful work, shared equally (processor
 * sharing); η(1) = 1. This is a closed queueing network with a delay station (H) and a
 * load-dependent processor-sharing station (G, capacity η(n)); its steady state is solved
 * exactly, by mean-value analysis for identical jobs (share_ts_mva) and by summing the
 * product-form distribution for mixed jobs (share_ts_solve). Both are insensitive to the
 * distribution of H and G (BCMP), so they hold for any phase-length distribution.
 *
 * Time-slicing, the scheduler's round robin (share_ts_rr; quantum q and switch gap s measured on
 * the H100 by calib/tslice.cu, model/physics.yaml ts_quantum_s, ts_switch_s). Processor sharing
 * hands a context that comes back to the GPU its share at once; the scheduler lets the context
 * that holds the GPU finish its slice first. Two terms, both 0 with q = s = 0:
 *  - Switch per phase (identical jobs whose host and GPU phases alternate, o = 0, H > 0: each GPU
 *    phase ends with the context idle, so while others wait every phase costs a switch): a phase
 *    of G <= q runs in one slice and then a switch, G + s; a longer one runs in slices of q, each
 *    followed by a switch, G / eta with eta = q / (q + s) back to back. So with n >= 2 at the GPU
 *    the phase's efficiency is min(eta(n), G / (G + s)) (share_ts_eta_phases). The node
 *    calibration's 0.1 ms kernels with a host sleep after each (calib-h100-timeslice gap-ts):
 *    from 4 processes each kernel costs 0.227 ms, 0.091 ms of kernel and 0.136 ms of switch.
 *  - Return wait (mixed classes, mean field): a job of class c with a serial host phase
 *    B_c = (1 - o_c) H_c > 0 (it synchronised, then works on the CPU: its context leaves the GPU)
 *    comes back while a job of another class j holds the GPU with probability b_j (its running
 *    share), and waits for the rest of j's burst and a switch (share_ts_return_wait): j runs
 *    bursts of D_j = min(q, G_j) (a slice, or its whole phase when shorter); j started one when c
 *    left, so c back after B_c < D_j waits D_j - B_c; later it meets j at a random point of a
 *    burst: D_j^2 / (2 G_j) (the rest of the slice when j's phase is long, 0 for a context busy
 *    throughout: the probe's spinning kernel lets a process back after u > q run after one
 *    switch). W_c = sum over other classes' jobs of b_j (wait_j + s), serial (the launches queue
 *    behind it and it holds no GPU), added to c's iteration. Each such visit costs the holder
 *    two switches (into c and back): j's GPU time stretches by 1 / (1 - sum over visiting jobs
 *    of b_j 2 s / t_c) (at most 2x). A job that never leaves the GPU
 *    (B_c = 0: back to back, or host time hidden under its own kernels) never waits: its share
 *    is processor sharing's.
 *   The product form (mixed classes, every o = 0) and the round-robin simulation below keep
 *   processor sharing.
 *
 * Time-slicing (per-iteration mode): share_rr_simulate is an explicit event simulation of the
 * same k processes under round-robin with a finite quantum; random phase lengths (gamma with a
 * given coefficient of variation) come from a seeded GSL generator, so the run is reproducible.
 * With phase CV 1 it agrees with the fluid mode (tests/unit/test_share.c states by how much);
 * with deterministic phases (CV 0) processes can lock into a schedule that the mean-value
 * solution does not describe.
 *
 * MPS: clients' kernels run at the same time on disjoint SMs. A client in its GPU phase asks for
 * d = min(cap, P) SMs (cap: its thread percentage of the partition's SMs in whole TPCs,
 * speed_mps_sms of model/speed.h; P: its kernels' parallelism); the SMs are shared max-min fairly (water-filling) among the clients in their GPU
 * phase, so a client's idle phases (host time, launch gaps) and the SMs its kernels leave idle
 * (P below the SM count) go to the others. Its GPU time on s SMs is the solo formula at s SMs
 * (model/speed.h: the SM-count curve of its kernels, so a cap of p % alone follows that curve).
 * Memory bandwidth is one pool: the rates the active clients' kernels draw when they run
 * unhindered (M / GPU time on the SMs they ask for: a kernel moves its bytes while it runs,
 * whatever share of the SMs it got) are water-filled into the partition's bandwidth, divided by
 * 1 + mps_bw_contention per other active client (L2 and DRAM conflicts); a client whose share is
 * below its demand moves M at its share, beside its compute (the roofline g of speed.h). So two
 * clients that each saturate the memory take twice their solo time, as on the H100 (ResNet-50
 * inference at batch 128, calib/coloc). Who is active is a mean field: each client's kernels run
 * a fraction b of its iteration (waiting in the queue below excluded), others count with
 * weight b (share_mps_solve).
 * Kernel queueing: the GPU dispatches kernels in arrival order, so the kernels of two classes (both
 * with kernels_per_iter K) wait for each other where both cannot hold the SMs they ask for at once:
 * in the share ser = min(1, max(0, a_i + a_j - SMs) / min(a_i, a_j)) (a: SMs asked for) of them;
 * clients whose thread caps put them side by side (50 % + 50 %) never wait, as the MPS
 * calibration's compute + memory pair shows (calib/results/2026-11-22-h100-sxm*.json: capped at
 * 50 %, each takes its capped solo time within 5 %). How long a kernel waits depends on how it
 * arrives. A client issues a share beta of its kernels back to back, while its previous kernel is
 * still queued or running: beta = 1 when its solo GPU work outlasts the host time that issues it
 * (g >= o H, the host runs ahead), else g / (o H). Such a kernel becomes ready when its predecessor
 * ends, behind the kernel the other client queued meanwhile, so it waits for the WHOLE of that
 * kernel (d_j = its GPU time on the SMs it asks for / K_j) and then runs alone (the other's next
 * kernel queues behind it: no SM, bandwidth or power split with that client). Client i thus waits
 * for every kernel such a client starts while i has kernels in flight (rate K_j / t_j times i's GPU
 * time with waits), at most one per kernel of i: two clients that both launch back to back
 * alternate whole kernels, t_i = K_i (d_i + d_j) for equal kernel rates, the sum of the solo times
 * for the calibration's uncapped pair (measured 0.96-0.97x that sum). A kernel issued after a
 * launch gap (1 - beta) arrives at a random moment: it waits mps_kernel_wait x d_j (the mean
 * residual, 1/2 for kernels of one length) if a kernel of j runs then (expected count w_j: j's
 * running share b) and shares the SMs with it as before. Each wait is weighted by the share of the
 * SMs the other's kernel holds, min(1, a_j / SMs), and by ser. beta leaves out the time a client
 * waits for others: with it, a launch-bound loop beside the memory stream would queue every kernel
 * behind a whole stream kernel and run several times slower than measured (calib/coloc;
 * experiments/validation/README.md). The client's GPU time grows by the waits: a memory stream's
 * 0.26 ms kernels cost a training loop of ~900 kernels ~0.12 s per iteration (measured 4-5x slower,
 * calib/coloc), while the stream barely notices. Identical clients are left to the SM split (their
 * kernels alternate, which that split already describes); profiles without kernels_per_iter neither
 * wait nor make others wait.
 *
 * Memory: time-sliced and MPS co-runners share one memory capacity (share_mem_fits).
 * Units: seconds, iterations/s. No I/O; no global state.
 */
#ifndef SIMPROJ_MODEL_SHARE_H
#define SIMPROJ_MODEL_SHARE_H

#include <stdint.h>

#include "model/speed.h"

#define SHARE_MAX_JOBS 64  /* jobs on one partition */
#define SHARE_MAX_CLASSES (PART_MAX_WITH + 1)

/* Exact MVA for k identical time-sliced jobs: host time host_s, solo GPU time gpu_s, GPU
 * efficiency eta[n] for n = 1..k jobs at the GPU (eta[1] = 1). Returns the throughput of ONE job
 * (iterations/s); *gpu_busy (may be NULL) gets the fraction of time the GPU is occupied.
 * k in 1..SHARE_MAX_JOBS. */
double share_ts_mva(int k, double host_s, double gpu_s, const double *eta, double *gpu_busy);

/* One class of identical time-sliced jobs. */
typedef struct share_ts_class {
    int n;          /* jobs of this class (>= 1) */
    double host_s;  /* H per iteration */
    double gpu_s;   /* solo GPU time per iteration */
    double overlap; /* host_overlap o of the profile (model/speed.h); 0 = phases alternate */
    bool rounds;    /* an iteration is one real round of launches and a synchronisation (the
                       profile states its kernels_per_iter), so the scheduler's return wait
                       applies to it; false for a fluid unit (a particle, a sample) */
} share_ts_class;

/* The time-slice scheduler's round robin (see the top); q = s = 0 is processor sharing. */
typedef struct share_ts_rr {
    double quantum_s; /* q: a context's slice while another waits */
    double switch_s;  /* s: GPU time lost per context switch */
} share_ts_rr;

/* eta of identical jobs with host time host_s and GPU phases of gpu_s: out[n] = min(eta[n],
 * G / (G + s)) for n = 2..k when host_s > 0 (out[0] = out[1] = 1), else eta (copied). rr may be
 * NULL (a copy). */
void share_ts_eta_phases(int k, const double *eta, double host_s, double gpu_s,
                         const share_ts_rr *rr, double *out);

/* Wait of a context back after back_s off the GPU for a context whose solo GPU phase is
 * holder_gpu_s and which holds the GPU, without the switch: max(D - back_s, D^2 / (2 G)),
 * D = min(q, G); 0 when q or G is 0. */
double share_ts_return_wait(double back_s, double holder_gpu_s, const share_ts_rr *rr);

/* Steady state for mixed classes. When every class has overlap 0: exact (product form, every
 * state enumerated; the product of (n_c + 1) over classes must not exceed 1e6). When a class
 * overlaps its host time with its own GPU work (o > 0) the network is not product form; then a
 * mean-field fixed point: a job of class c has GPU work a fraction b_c of the time; while it
 * has, n = 1 + (expected others with work) contexts share the GPU, so its GPU time stretches by
 * S_c = n / eta(n) (eta interpolated linearly between whole n), and its iteration takes
 * (1 - o) H + max(o H, G S_c) (model/speed.h), which gives b_c = G S_c / iteration.
 * x_per_job[c] gets the throughput of one job of class c (iterations/s). eta[n] for n = 1..total
 * jobs. Returns 0, or SIM_ERANGE when too many states or jobs. */
int share_ts_solve(int n_cls, const share_ts_class *cls, const double *eta, double *x_per_job,
                   double *gpu_busy);
/* share_ts_solve with the scheduler's return wait in the mean field (rr may be NULL: none). */
int share_ts_solve_rr(int n_cls, const share_ts_class *cls, const double *eta,
                      const share_ts_rr *rr, double *x_per_job, double *gpu_busy);

/* Configuration of the per-iteration round-robin simulation. */
typedef struct share_rr_cfg {
    int k;              /* processes, 1..SHARE_MAX_JOBS */
    double host_s;      /* mean host phase */
    double gpu_s;       /* mean solo GPU phase */
    const double *eta;  /* eta[n], n = 1..k; borrowed */
    double quantum_s;   /* round-robin time slice */
    double phase_cv;    /* coefficient of variation of both phases; 0 = deterministic */
    long n_iters;       /* GPU phases to complete (all processes together) */
    uint64_t seed;      /* generator seed */
} share_rr_cfg;

/* Run the simulation; *throughput_per_job gets the steady throughput of one process
 * (iterations/s, the first 10 % of iterations discarded), *gpu_busy (may be NULL) the fraction of
 * time some context held the GPU. Returns 0 or SIM_EINPUT on a bad configuration. */
int share_rr_simulate(const share_rr_cfg *c, double *throughput_per_job, double *gpu_busy);

/* One class of identical MPS clients. */
typedef struct share_mps_class {
    const wl_profile *p; /* borrowed */
    double batch;
    int n;               /* clients of this class */
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

/* True when the footprints of everyone sharing the partition fit its memory; *need_bytes gets
 * the total. */
bool share_mem_fits(const wl_profile *p, double batch, const partition_cfg *c,
                    double *need_bytes);

#endif
