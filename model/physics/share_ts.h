/* model/physics/share_ts.h - time-slicing: how co-located jobs slow each other when the GPU's contexts
 * take turns on one partition (DESIGN.md §4 "Sharing"; limits and memory in model/physics/share.h, MPS
 * in model/physics/share_mps.h).
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
 * the H100 by calib/tslice.cu, model/physics/physics.yaml ts_quantum_s, ts_switch_s). Processor sharing
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
 * Time-slicing (per-iteration mode): tests/unit/oracle_share_rr.h is an explicit event
 * simulation of the same k processes under round-robin with a finite quantum, the oracle the
 * tests hold these solutions against (tests/unit/test_share.c states by how much they agree);
 * nothing in the program runs it.
 *
 * Units: seconds, iterations/s. Ownership: the caller owns every array passed in (eta borrowed)
 * and out; nothing is kept after a call. No I/O; no global state.
 */
#ifndef SIMPROJ_MODEL_SHARE_TS_H
#define SIMPROJ_MODEL_SHARE_TS_H

#include <stdbool.h>
#include <stdint.h>

#include "model/physics/share.h"

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
    double overlap; /* host_overlap o of the profile (model/physics/speed.h); 0 = phases alternate */
    bool rounds;    /* an iteration is one real round of launches and a synchronisation (the
                       speed_iter_is_round of model/physics/speed.h), so the scheduler's return wait
                       applies to it; false for a fluid unit (a particle, a sample) */
    double share;   /* guaranteed share of the GPU's time of each job of the class (a
                       fractional GPU's milli / 1000, see share_ts_solve); 0 = round robin's
                       equal shares */
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

/* Round limit and tolerance of the mean field: numerical choices, not physics
 * (the tolerance is on b, a fraction of time, near double precision). A round moves b
 * by a factor (1 + d) / 2 of the last move (d: the slope of the undamped map), so mixes where d
 * nears 1 settle slowly. Of 1.5 million random mean-field mixes of 2-3 classes (1-21 jobs
 * each, flat eta 0.02-1, H and G log-uniform 1e-5-10 s, the measured q and s) 99 % settle
 * within 100 rounds, 116 needed more than 500 (the limit was 500: they returned their last
 * iterate), the slowest 2194, and none failed to settle within 100000; 10000 leaves room above
 * that. Every mix that settled within 500 rounds gets the same iterates as before. A mix that
 * does not settle gets SIM_ENOCONV, not its last iterate. */
#define SHARE_TS_MAX_ITER 10000
#define SHARE_TS_TOL 1e-12

/* Steady state for mixed classes. When every class has overlap 0: exact (product form, every
 * state enumerated; the product of (n_c + 1) over classes must not exceed 1e6). When a class
 * overlaps its host time with its own GPU work (o > 0) the network is not product form; then a
 * mean-field fixed point: a job of class c has GPU work a fraction b_c of the time; while it
 * has, n = 1 + (expected others with work) contexts share the GPU, so its GPU time stretches by
 * S_c = n / eta(n) (eta interpolated linearly between whole n), and its iteration takes
 * (1 - o) H + max(o H, G S_c) (model/physics/speed.h), which gives b_c = G S_c / iteration; the
 * fixed point is iterated with each new b averaged half and half with the old, at most
 * SHARE_TS_MAX_ITER rounds, until no b_c moves by SHARE_TS_TOL.
 * x_per_job[c] gets the throughput of one job of class c (iterations/s). eta[n] for n = 1..total
 * jobs. Returns 0, SIM_ERANGE when too many states or jobs, or SIM_ENOCONV when the mean field
 * did not settle (x_per_job and gpu_busy are then not set). */
int share_ts_solve(int n_cls, const share_ts_class *cls, const double *eta, double *x_per_job,
                   double *gpu_busy);
/* share_ts_solve with the scheduler's return wait in the mean field (rr may be NULL: none).
 * Guaranteed shares (every class's share > 0, not all equal: fractional GPUs, openb's gpu_milli;
 * alibaba/clusterdata issue 193: 0.6 GPU is at least 60 % of the compute time): the GPU is
 * shared in proportion to the shares of the contexts that want it (weighted processor sharing,
 * work-conserving: what an idle context leaves goes to the others, so a context gets at least
 * its share of eta(n) and more while others are in host phases). That is not product form;
 * the mean field above takes it with the weighted stretch
 * S_c = (w_c + sum over other jobs of b_j w_j) / (w_c eta(n)), which is n / eta(n) when the
 * shares are equal and exact when every job is GPU-bound (b = 1: each gets eta(n) w_c / sum w).
 * Equal shares keep the solutions above (processor sharing). */
int share_ts_solve_rr(int n_cls, const share_ts_class *cls, const double *eta,
                      const share_ts_rr *rr, double *x_per_job, double *gpu_busy);

#endif
