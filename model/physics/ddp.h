/* model/physics/ddp.h - a data-parallel (DDP) training job: where its workers sit, how long a step takes
 * and whether a worker fits its partition (DESIGN.md §5).
 *
 * Placement: `workers` ranks, `per_gpu` of them on each GPU (MIG instances of one profile, or one
 * whole GPU each), spread over nodes as `topology` says (workers per node; default: as few nodes
 * as hold them, filled in order). Ranks are ordered node by node, GPU by GPU, as NCCL builds its
 * ring; the ring's links and their sharing are model/physics/comm.h's.
 *
 * Step time of one worker (all workers are alike, so the slowest is any of them), from real
 * DDP measured on 4x H200 (calib/ddp/, NOTES.md; constants in model/physics/comm.yaml's ddp: section):
 *   H, G_t  host and GPU time of one iteration on the worker's partition (model/physics/speed.h), o its
 *           host overlap: alone the iteration is t = (1 - o) H + max(o H, G_t)
 *   O = optimizer_frac G_t the optimiser step, F + B = G_t - O split by backward_frac (the
 *           profile's, else model/physics/comm.yaml's); both from the profile's CUDA-event split
 *   K buckets (the profile's grad_buckets, else G / bucket_bytes, at most one per gradient
 *           tensor) of G / K bytes, bucket i ready when backward has done (i + 1) / K of its
 *           work; their all-reduces run one after another (model/physics/comm.h's ring cost at the
 *           ring's rate). While an all-reduce runs beside backward, NCCL's nccl_channels
 *           thread blocks hold that many SMs, so backward runs at 1 - channels / SMs of its
 *           speed and the all-reduce at overlap_comm_frac of its rate (the overlap probe);
 *           after backward it runs alone at its full rate (ddp_overlap).
 *   The reducer copies each gradient into its bucket during backward and back after the last
 *           all-reduce: 2 G bytes of device traffic each way at the partition's bandwidth.
 *   GPU path = F + [backward beside the all-reduces] + copy back + O: the optimiser waits for
 *           the last all-reduce (DDP's finalize makes the default stream wait on NCCL's).
 *   Host: dH = host_launch_s (2 grad_tensors + buffer_tensors) + host_collective_s (K +
 *           buffer_broadcasts when the model has buffers): the reducer's launches and the
 *           collectives DDP issues, on the host of every step; or the profile's ddp_host_s
 *           where a measured DDP run fitted it.
 *   Stragglers: the gang waits at every step for that step's slowest worker (a worker's last
 *           all-reduces wait for every other's, and its step ends when they are done), and a
 *           worker's host time varies between processes (CPU scheduling: solo runs of one model
 *           at the same time on one node differ by a relative sd of host_spread, calib/ddp,
 *           NOTES.md) and from step to step (the profile's step_cv, measured on its solo run;
 *           independent of the first). With n workers, each host time in a step normal around
 *           H + dH with relative sd s = sqrt(host_spread^2 + step_cv^2) (ddp_host_sd), the
 *           gang's host time is the expected maximum, Hn = (H + dH)(1 + s e_n), e_n = E[max of
 *           n standard normals] (ddp_expected_max: e_2 = 0.564, e_4 = 1.029, e_8 = 1.424,
 *           growing as sqrt(2 ln n)). The GPU side is not spread.
 *   Step = (1 - o) H' + max(o H' + dH', GPU path), H' = H (1 + s e_n), dH' = dH (1 + s e_n):
 *           the loop's own host part the GPU waits for stays before the path; DDP's host work is
 *           launches inside forward and backward, issued ahead of the GPU's queue (calib/ddp's
 *           per-rank phases, NOTES.md 'Where DDP's host work falls'), so it runs beside the GPU
 *           path with the overlapped host. Host-bound (o H' + dH' above the path) this is Hn;
 *           one worker: t itself. Exposed = step - t.
 * On a shared GPU (job.share: time-slicing or MPS replicas, DESIGN.md §4): H and G_t are the
 *   worker's under that sharing (model/physics/predict.h's entry point, as for any job: an MPS client
 *   capped at its thread percentage, contending for bandwidth; a time-sliced context getting
 *   its round-robin share), G_t being the iteration time under sharing minus H. Under
 *   time-slicing NCCL's kernels belong to the worker's context and run only in its slices, so
 *   every bucket's all-reduce is stretched by the same factor as the worker's GPU work
 *   (G_t shared / G_t alone on the same partition: a mean-field assumption, the slices of
 *   the ranks on other GPUs taken as independent); under MPS they run beside the co-runners'
 *   kernels and are not stretched. The ring's rate is the caller's (co-located gangs share
 *   their links, comm_share). The slowest worker sets the step: the caller gives the
 *   partition of the worker that is slowest.
 * Memory per worker (ddp_worker_mem): the profile's footprint at the batch (weights, gradients,
 * optimiser state, activations, as measured) and, for two or more workers, what DDP and NCCL
 * allocate beside it (model/physics/comm.yaml's ddp: section, each read in PyTorch's or NCCL's
 * source):
 *   buckets  grad_copy_frac * G: DDP's buckets are flat copies of the gradients
 *            (gradient_as_bucket_view=False, the default)
 *   NCCL     per channel C (nccl_channels when every hop inside a node is NVLink, else
 *            nccl_channels_other): a ring rank's receive connection holds three FIFOs (LL,
 *            LL128, Simple: 9.19 MiB, rounded up to the 2 MiB allocation granule: 10 MiB) and its
 *            send connection one granule, on the device unless the rank is staged through host
 *            memory (a MIG instance: NCCL's SHM transport keeps them in host memory); and the
 *            channel's state: one device peer (nccl_channel_peer_bytes) per rank of the world
 *            plus two small arrays, each allocation rounded to the granule, so it grows with the
 *            world size only beyond ~3 450 ranks (NCCL's maintainers: ring memory does not grow
 *            with scale, NVIDIA/nccl issue #986). Worked: 2 H200 over NVLink, 24 channels x
 *            (12 + 6 MiB) = 432 MiB; a MIG worker, 2 channels x 6 MiB = 12 MiB (16 MiB at
 *            4 096 workers). Not counted: the tree's connections, channels NCCL sets up for
 *            send/receive only, the CUDA context (in the profile's footprint when measured with
 *            nvidia-smi).
 * More than the partition holds is an OOM at start. On a shared GPU the
 * partition's memory holds share->peers such workers (peers: identical gangs placed on the same
 * GPUs, one worker of each per GPU) and every co-runner's footprint (share->with).
 * Ownership: every pointer is borrowed for the call; results are plain data. Units: seconds,
 * bytes, bytes/s.
 */
#ifndef SIMPROJ_MODEL_DDP_H
#define SIMPROJ_MODEL_DDP_H

#include <stdbool.h>
#include <stddef.h>

#include "model/physics/comm.h"
#include "model/physics/speed.h"

#define DDP_MAX_NODES 256
#define DDP_MAX_WORKERS 4096 /* largest world size modelled */

/* A DDP job's shape and where it runs. */
typedef struct ddp_job {
    const wl_profile *profile; /* per-worker profile */
    double batch;              /* per worker */
    double grad_bytes;         /* G; 0 = unknown (only one worker can then be evaluated) */
    const gpu_type *gpu;
    const mig_profile *mig;    /* NULL = whole GPUs */
    int workers, per_gpu;
    int n_nodes;               /* nodes used */
    int topology[DDP_MAX_NODES]; /* workers per node */
    int gpus_per_node;
    int gpus_per_root;
    double nic_bytes_per_s;    /* each node's NIC line rate (all its NICs) */
    int nics;                  /* NICs per node (comm_net.nics); 0 = one */
    const comm_topo *topo;     /* how each node's GPUs are wired (borrowed); NULL = as the GPU
                                  type says (ddp_node) */
    int mig_busy;              /* busy MIG instances on each worker's GPU, for the power model
                                  (model/physics/speed.h partition_cfg.mig_busy); 0 = alone. ddp_shape
                                  sets per_gpu on MIG; a caller that gives share puts it
                                  there */
    double max_normal;         /* ddp_expected_max(workers), set by ddp_shape: a job stepped
                                  many times (a fit's searches) pays the integral once; 0 =
                                  ddp_step computes it */
    const partition_cfg *share; /* the slowest worker's GPU as the sharing physics sees it
                                   (sharing, peers, with, mps_percent, mig_busy; gpu and mig as
                                   above), borrowed; NULL = gpu/mig exclusive with mig_busy */
} ddp_job;

/* Fill job->topology when n_nodes is 0: as few nodes of gpus_per_node GPUs as hold the workers,
 * filled in order; when n_nodes > 0 and topology[] is all 0: the workers spread evenly over the
 * nodes (the first ones get one more). Then check the shape. Returns 0, or -1 with the reason in
 * why: topology does not add up to workers, per_gpu above what the partition holds per GPU (1 for
 * a whole GPU, the profile's instance count for MIG), a node with more workers than per_gpu x
 * gpus_per_node, more than DDP_MAX_NODES nodes or DDP_MAX_WORKERS workers. On success also sets
 * job->max_normal. */
int ddp_shape(ddp_job *job, char *why, size_t why_len);

/* A node of `gpus` GPUs of type g as the links see it, wired as topo says (its NVLink domain and
 * PCIe roots; NVLink at g's rate, none for nvlink: none) or, with topo NULL, as the GPU type
 * says: NVLink between every pair when g has an NVLink rate (else PCIe), cp->gpus_per_root GPUs
 * per root. Host memory from cp, `nics` NICs (0: one) at nic_bytes_per_s together. */
comm_node ddp_node(const comm_params *cp, const comm_topo *topo, const gpu_type *g, int gpus,
                   double nic_bytes_per_s, int nics);

/* The comm_node of each of the job's nodes (n_nodes of them) and its ranks (workers of them), in
 * NCCL's ring order. nodes and ranks must hold n_nodes and workers entries. */
void ddp_layout(const ddp_job *job, const comm_params *cp, comm_node *nodes, comm_rank *ranks);

/* The job's ring. Returns 0, or -1 with a reason (see comm_ring_build). */
int ddp_ring(const ddp_job *job, const comm_params *cp, comm_ring *out, char *why,
             size_t why_len);

/* Device memory one worker holds, by part (bytes; see the top). */
typedef struct ddp_mem {
    double profile_bytes;     /* the profile's footprint at the batch */
    double bucket_bytes;      /* DDP's bucket copies */
    double nccl_buffer_bytes; /* NCCL's connection FIFOs on the device, all channels */
    double nccl_state_bytes;  /* NCCL's per-channel state, all channels */
    int channels;             /* NCCL channels counted (0 for one worker) */
    double total_bytes;
} ddp_mem;

/* Memory one worker of job needs on its ring (the channels and where its FIFOs sit follow from
 * the ring's links), or with ring NULL before placement the most a placement can need: whole
 * GPUs of a type with NVLink (unless job->topo has none) count NVLink's channels. */
void ddp_worker_mem(const ddp_job *job, const comm_params *cp, const comm_ring *ring,
                    ddp_mem *out);

typedef struct ddp_result {
    speed_outcome outcome;
    char reason[256];
    double step_s;        /* one iteration of every worker */
    double host_s, gpu_s; /* H and G_t */
    double comm_s;        /* all-reduce time of all buckets, back to back */
    double exposed_s;     /* step_s - host_s - gpu_s */
    double rate_bytes_per_s; /* ring rate used */
    int n_buckets;
    double ddp_host_s;    /* dH: DDP's host time per step */
    double straggler_s;   /* (H + dH) s e_n: the wait for the slowest worker's host (see the top) */
    double mem_bytes, mem_cap_bytes; /* per worker: need and partition */
    ddp_mem mem;          /* the need by part */
    double throughput;    /* the job's units of work per second (all workers) */
} ddp_result;

#define DDP_MAX_SM_FRAC 0.9 /* at most this share of the SMs taken by NCCL (keeps B finite) */

/* e_n, the expected maximum of n independent standard normal variables (0 for n < 2):
 * integral of x n phi(x) Phi(x)^(n-1) dx, by the trapezoidal rule (within 1e-9 of the exact
 * e_2 = 1/sqrt(pi) and e_3 = 3/(2 sqrt(pi))). */
double ddp_expected_max(int n);

/* DDP's buckets for p's gradient of grad_bytes (>= 1; see the top). */
int ddp_buckets(const wl_profile *p, const comm_params *cp, double grad_bytes);

/* The most buckets ddp_overlap walks one event at a time: more (a stated grad_buckets up to
 * 10^6, or a gradient of tens of GB) are walked as this many equal groups, each ready with its
 * last bucket and all-reduced as one (k / DDP_OVERLAP_MAX_BUCKETS x t_ar), so a step costs
 * O(DDP_OVERLAP_MAX_BUCKETS) and a fit's thousands of steps stay bounded; the end moves by at
 * most one group's share of backward (bwd / 256) and of the all-reduces. */
#define DDP_OVERLAP_MAX_BUCKETS 256

/* End of backward and of the last of k all-reduces of t_ar seconds each (alone), starting at
 * fwd, backward taking bwd alone: beside an all-reduce backward runs at 1 - f_sm of its speed
 * and the all-reduce at q of its rate (see the top). O(min(k, DDP_OVERLAP_MAX_BUCKETS)). */
double ddp_overlap(double fwd, double bwd, int k, double t_ar, double f_sm, double q);

/* Step time of the job when its ring moves `ring_rate` bytes/s per hop (<= 0: the ring alone,
 * comm_ring_alone_rate). Outcome OOM when a worker does not fit; INVALID when the profile
 * cannot be evaluated on the partition or G is unknown for two or more workers. */
void ddp_step(const ddp_job *job, const comm_params *cp, const phys_params *m,
              const comm_ring *ring, double ring_rate, ddp_result *out);

#endif
