/* model/physics/comm.h - collective communication of data-parallel jobs (DESIGN.md §5): alpha-beta
 * costs of all-reduce, reduce-scatter and all-gather, the links a ring actually crosses, and
 * max-min sharing of those links between concurrent collectives (sim/maxmin's solver).
 *
 * Closed forms (n ranks, S bytes, per-step latency alpha, bus bandwidth beta of one flow):
 *   ring all-reduce      2(n-1) alpha + 2(n-1)/n * S / beta      (over several nodes, 2(nodes-1)
 *                        of the steps at the network's alpha, the rest at the node's; a tree's
 *                        log2(nodes) steps each way likewise: see "per-step latency" below)
 *   ring reduce-scatter  (n-1) alpha + (n-1)/n * S / beta      (all-gather: the same)
 *   tree all-reduce      2 d alpha + 2 S / beta                (double binary tree: reduce then
 *                        broadcast, pipelined; every rank moves S each way in each phase), d the
 *                        depth: ceil(log2 n) for a tree over n ranks; NCCL builds its trees
 *                        between nodes only and chains the ranks inside a node ("there are only
 *                        inter-node trees, and intra-node is connected using chains", NVIDIA/nccl
 *                        issue #545), so a ring's tree has d = (most ranks on a node - 1) +
 *                        ceil(log2 nodes): on one node the tree costs the ring's latency and
 *                        never wins
 *   NVLS all-reduce      l + (n+1)/n * S / beta             (one node with NVLink SHARP
 *                        multicast, NCCL's NVLS algorithm, Simple protocol only: each GPU's
 *                        reduce-scatter pulls its 1/n share through the switch with
 *                        multimem.ld_reduce, sending S (its part of every share) and receiving
 *                        S/n, and its all-gather pushes the S/n result with multimem.st, which
 *                        the switch copies to all n: S/n out, S in; NVIDIA/nccl v2.28.9-1
 *                        src/device/all_reduce.h RunWorkColl<..., NCCL_ALGO_NVLS, ...>). beta
 *                        is the ring's per-hop rate (a GPU's NVLink port each way), l the
 *                        tuner's NVLS latency (comm_params.nccl_nvls_s)
 * First loop (a Simple ring whose hops are all NVLink on one node, costed from the catalog): NCCL
 *                        splits the message over C channels (comm_params.nccl_channels, one
 *                        thread block each) and moves each channel's part in loops of n chunks
 *                        of at most c_max (ring_chunk_bytes, 2 MiB; a message under one loop per
 *                        channel in n chunks of S/(C n): NVIDIA/nccl src/device/all_reduce.h
 *                        runRing, src/enqueue.cc calcCollChunking). The ring pays, on top of
 *                        2(n-1)/n S / beta, rho x one chunk of the first loop at a channel's
 *                        rate: rho C min(c_max, S/(C n)) / beta (rho = ring_first_loop_idle,
 *                        0.90, fitted on a framework sweep of 4 H200; the form is read from the
 *                        sweeps: below one loop per channel the bandwidth is beta / (1 +
 *                        rho/(2(n-1))), above it the fixed part stops growing and the bandwidth
 *                        climbs toward beta, as the 2x and 4x H200 sweeps do between 16 MiB and
 *                        1 GiB). A calibrated NVLink (comm_node nvl_cal_*) pays nothing more:
 *                        its fitted bandwidth holds its sweep's pipeline.
 * Protocol: NCCL moves messages up to `ll_max_bytes` (per link class) with its low-latency protocol (LL: small
 * alpha, a fraction `ll_bw_frac` of the bandwidth, because half of every 8-byte word is a flag)
 * and larger ones with Simple (larger alpha, full bandwidth). The switch point is NCCL's tuner's
 * choice, not the crossing of the two cost lines, so it is a parameter (model/physics/comm.yaml).
 *
 * Link classes and what crosses them (one ring hop = rank i sends to rank i+1):
 *   NVLINK  GPU to GPU on one node when both are whole GPUs with NVLink in one NVLink domain
 *           (the node, behind NVSwitch; or a bridged pair) (per-GPU port, each way);
 *   PCIE    GPU to GPU through PCIe peer-to-peer (whole GPUs, no NVLink): the GPU's x16 link
 *           each way, and the root (a PCIe switch or root port shared by `gpus_per_root` GPUs)
 *           uplink when the two GPUs sit under different roots;
 *   HOST    staging through host memory (NCCL's SHM transport): MIG instances have no P2P, so
 *           every hop from or to a MIG instance goes device -> host memory -> device: up the
 *           GPU's PCIe link and its root's uplink, twice through host memory (write, read), down
 *           the other GPU's root and link. Instances of one GPU share that GPU's one PCIe link;
 *   NIC     a hop between nodes: up the GPU's link and root, out of the sending node's NIC, into
 *           the receiving node's NIC, down; the fabric is taken as non-blocking. A node with k
 *           NICs (k >= 2, a GPUDirect node with a NIC per GPU or pair) carries the hop over k of
 *           the ring's GPUs on that node, as NCCL runs a channel per NIC, each leaving the node
 *           at the GPU nearest its NIC: each of those GPUs' links and roots carries 1/k of it
 *           (k = min(NICs, the ring's GPUs on the node), the GPUs evenly spaced among them). A MIG rank is
 *           also staged through host memory (no GPUDirect RDMA from a MIG instance is assumed).
 * A ring's hops progress together, so a ring is one flow whose rate x (bytes/s per
 * hop) consumes c*x of every resource c of its hops cross; alone, x = min(capacity / c). Its
 * per-step latency inside a node is the largest alpha of the classes its hops there use; a step
 * between nodes pays the NIC class's alpha instead, as NCCL's tuner costs them apart
 * (src/graph/tuning.cc: a ring's 2(n-1) steps are 2(nodes-1) network steps at the network's
 * latency and the rest at the intra-node one; a tree's 2((ranks per node - 1) intra + log2(nodes)
 * network) steps; NCCL picks the cheaper). Concurrent rings (several
 * jobs, or neighbours on a shared NIC or PCIe root) get the max-min fair rates of sim/maxmin
 * (comm_share), a pure solver: the physics creates no engine.
 *
 * Parameters (comm_params) come from model/physics/comm.yaml (loaded by experiments/comm_load.h), every
 * value with its source. This module does no I/O.
 * Units: seconds, bytes, bytes/s. Ownership: plain data; comm_ring owns its arrays
 * (comm_ring_fini); every pointer argument is borrowed for the call.
 */
#ifndef SIMPROJ_MODEL_COMM_H
#define SIMPROJ_MODEL_COMM_H

#include <stdbool.h>
#include <stddef.h>

typedef enum comm_link {
    COMM_LINK_NVLINK,
    COMM_LINK_PCIE,
    COMM_LINK_HOST,
    COMM_LINK_NIC,
    COMM_LINK_COUNT
} comm_link;

typedef enum comm_proto { COMM_PROTO_LL, COMM_PROTO_SIMPLE, COMM_PROTO_COUNT } comm_proto;


#define COMM_MAX_NETS 8
#define COMM_MAX_TOPOS 8
#define COMM_NAME_MAX 24
#define COMM_MAX_ARCHS 8

/* An inter-node network (what `interconnect:` names). */
typedef struct comm_net {
    char name[COMM_NAME_MAX];
    double line_bytes_per_s; /* one node's NIC line rate, each way (all its NICs together) */
    int nics;                /* NICs per node (>= 1): NCCL spreads its channels over them */
} comm_net;

/* How the GPUs of a node are wired (what a node group's `topology:` names). */
typedef enum comm_nvlink {
    COMM_NVLINK_SWITCH, /* every pair of GPUs over NVLink (NVSwitch: HGX/DGX boards) */
    COMM_NVLINK_PAIRS,  /* GPUs 2k and 2k+1 bridged by NVLink; other hops over PCIe */
    COMM_NVLINK_NONE,   /* no NVLink: GPU to GPU over PCIe peer-to-peer */
} comm_nvlink;

typedef struct comm_topo {
    char name[COMM_NAME_MAX];
    comm_nvlink nvlink;
    bool multicast;    /* NVLink SHARP multicast on (NVLS; COMM_NVLINK_SWITCH only) */
    int gpus_per_root; /* GPUs under one PCIe root (switch or root port), >= 1 */
} comm_topo;

/* The model's parameters (model/physics/comm.yaml). */
typedef struct comm_params {
    double alpha_s[COMM_LINK_COUNT][COMM_PROTO_COUNT]; /* per ring step */
    double eff[COMM_LINK_COUNT];   /* achieved bus bandwidth / line rate of one flow */
    double ll_max_bytes[COMM_LINK_COUNT]; /* NCCL's tuner uses LL up to this message size on a
                                             ring whose slowest class is this one */
    double ll_bw_frac;             /* LL bandwidth / Simple bandwidth */
    /* NCCL's tuner's ring latency (src/graph/tuning.cc): a base per call and a latency per
     * step over NVLink, per protocol; only their ratio is used, to split a calibrated NVLink
     * all-reduce latency into a per-call cost and a per-step latency (comm_node) */
    double nccl_ring_base_s[COMM_PROTO_COUNT];
    double nccl_nvlink_step_s[COMM_PROTO_COUNT];
    double nccl_nvls_s;            /* NCCL's tuner's NVLS latency on one node (Simple) */
    double nccl_ll_max_busbw[2];   /* LL's bus bandwidth cap over [0] 2 nodes, [1] more */
    double nccl_tree_ll_bw_frac;   /* a tree's LL bandwidth / its Simple bandwidth */
    double ring_chunk_bytes;       /* NCCL's ring Simple chunk per channel (a loop: n of them) */
    double ring_first_loop_idle;   /* NVLink idle in a ring's first loop, in chunk-times */
    double host_mem_bytes_per_s;   /* a node's host-memory copy bandwidth (SHM staging) */
    int gpus_per_root;             /* default GPUs under one PCIe root (>= 1) */
    int n_nets;
    comm_net nets[COMM_MAX_NETS];
    int default_net;               /* index into nets */
    int n_topos;
    comm_topo topos[COMM_MAX_TOPOS]; /* node topologies (their NVLink rate is the GPU type's) */
    int n_nvls_archs;              /* GPU architectures (gpu_type.arch) whose NVSwitch nodes can */
    char nvls_archs[COMM_MAX_ARCHS][COMM_NAME_MAX]; /* run NVLS: a multicast topology needs one */
    /* DDP (model/physics/ddp.h) */
    double bucket_bytes;           /* gradient bucket size (PyTorch DDP bucket_cap_mb) */
    double backward_frac;          /* share of the GPU time of an iteration spent in backward */
    double grad_copy_frac;         /* extra device memory for buckets, as a fraction of G */
    double nccl_ll_buffer_bytes;   /* NCCL's FIFO of one connection per protocol (LL, LL128, */
    double nccl_ll128_buffer_bytes; /* Simple): NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE, */
    double nccl_simple_buffer_bytes; /* NCCL_BUFFSIZE defaults */
    double nccl_alloc_granule_bytes; /* NCCL rounds each device allocation up to this */
    double nccl_channel_peer_bytes; /* device state per rank of the world per channel */
    double nccl_channel_allocs;    /* device allocations of a channel's state */
    double nccl_channels_other;    /* channels of a ring not all NVLink inside its nodes */
    double host_launch_s;          /* host time of one launch DDP's reducer makes (bucket copy) */
    double host_collective_s;      /* host time of one collective DDP issues (bucket, broadcast) */
    double host_spread;            /* relative sd of a worker's host time between processes:
                                      the gang waits for its slowest (model/physics/ddp.h) */
    double buffer_broadcasts;      /* collectives of DDP's buffer broadcast (one per dtype) */
    double nccl_channels;          /* channels of an NVLink ring: SMs NCCL's ring all-reduce
                                      kernel holds (a block each), and its memory's channels */
    double overlap_comm_frac;      /* all-reduce rate beside a busy kernel / alone */
} comm_params;

/* Index of the network named `name` in p, or -1. */
int comm_net_find(const comm_params *p, const char *name);
/* The networks' names, ", "-separated, into buf (size n; truncated to fit). */
void comm_net_names(const comm_params *p, char *buf, size_t n);

/* Index of the topology named `name` in p, or -1. */
int comm_topo_find(const comm_params *p, const char *name);
/* The topologies' names, ", "-separated, into buf (size n; truncated to fit). */
void comm_topo_names(const comm_params *p, char *buf, size_t n);

/* Whether GPU architecture `arch` (gpu_type.arch; NULL: none) is one of p's nvls_archs. */
bool comm_nvls_arch(const comm_params *p, const char *arch);
/* p's nvls_archs as words ("A", "A or B", "A, B or C") into buf (size n; truncated to fit). */
void comm_nvls_arch_words(const comm_params *p, char *buf, size_t n);

/* One measured ring size of a node's NVLink all-reduce calibration (comm_node.nvl_cal). */
#define COMM_MAX_NVL_CAL 4
typedef struct comm_nvl_cal {
    int ranks;
    bool has[COMM_PROTO_COUNT]; /* the protocol was measured at this size */
    double latency_s[COMM_PROTO_COUNT];
    double busbw[COMM_PROTO_COUNT];
    double ll_max_bytes; /* 0: model/physics/comm.yaml's nvlink.ll_max_bytes */
} comm_nvl_cal;

/* A node as the links see it. Line rates are each way; 0 = no such link. */
typedef struct comm_node {
    int gpus;                   /* GPUs on the node */
    int gpus_per_root;          /* GPUs under one PCIe root */
    double nvlink_bytes_per_s;  /* per GPU, to the NVLink fabric (0: none) */
    double pcie_bytes_per_s;    /* per GPU x16 link, and per root uplink */
    double host_bytes_per_s;    /* host-memory copy bandwidth */
    double nic_bytes_per_s;     /* the node's NIC */
    int nvlink_group;           /* GPUs per NVLink domain: a hop between whole GPUs uses NVLink
                                   only when both are in one (GPU index / nvlink_group equal);
                                   0 = the whole node (NVSwitch) */
    int nics;                   /* NICs of the node (0 or 1: one) */
    bool nvls;                  /* NVLink SHARP multicast on (nvlink_group 0): NCCL's NVLS */
    /* All-reduce calibrations of this node's NVLink (gpu_type.meas.ar; none when
     * n_nvl_cal = 0), one per measured ring size, ascending in ranks: per protocol the
     * latency L of one all-reduce on `ranks` ranks and the bus bandwidth B. A ring whose
     * NVLink hops are on such a node takes, per protocol, the calibration of the measured size
     * nearest to its own ranks on that node (comm_nvl_cal_pick), costs those hops at its B (Simple: the
     * hop's capacity; LL: B_LL / B_Simple of the ring's rate when every hop is calibrated
     * NVLink, else ll_bw_frac) and pays a per-call cost c plus a per-step latency a with
     * L = c + 2(n-1) a split in the ratio of NCCL's tuner, c : a = base : nvlink step
     * (comm_params.nccl_*): one sweep cannot tell the two apart. */
    int n_nvl_cal;
    comm_nvl_cal nvl_cal[COMM_MAX_NVL_CAL];
} comm_node;

/* The calibration of nd's NVLink for protocol pr of a ring with `ranks` ranks on that node: of
 * the ring sizes measured with that protocol, the nearest (a tie goes to the smaller size), or
 * NULL when nd has none. The ll_max_bytes of the LL pick is the switch point. The bus
 * bandwidth is the figure NCCL reports as comparable across rank counts (NVIDIA/nccl-tests
 * doc/PERFORMANCE.md: busbw = algbw x 2(n-1)/n for all-reduce), so a ring of another size
 * keeps it; the 2(n-1)/n of the bytes and the 2(n-1) steps of the ring are its own. A
 * measured size's bandwidth is not interpolated or extrapolated: its growth between sizes
 * (the 2x and 4x H200 sweeps: 304 -> 339 GB/s, calib/ddp/NOTES.md) has no sourced form. */
const comm_nvl_cal *comm_nvl_cal_pick(const comm_node *nd, int ranks, comm_proto pr);

/* Where one rank runs. */
typedef struct comm_rank {
    int node;  /* index into the node array given to comm_ring_build */
    int gpu;   /* GPU index on its node */
    bool mig;  /* on a MIG instance (no P2P, staged through host memory) */
} comm_rank;

/* One resource a ring uses: a key identifying the link and how many hops cross it. */
typedef struct comm_use {
    int kind;  /* internal resource kind (link and direction) */
    int node;
    int index; /* GPU or root index on the node (0 for node-wide resources) */
    double coeff;
    double capacity; /* bytes/s */
} comm_use;

/* A ring over placed ranks, with the resources it crosses. */
typedef struct comm_ring {
    int n_ranks;
    double alpha_s[COMM_PROTO_COUNT]; /* per-step latency of a step inside a node (largest of
                                         the classes crossed there) */
    double alpha_net_s[COMM_PROTO_COUNT]; /* per-step latency of a step between nodes (the NIC
                                             class's; 0 when the ring stays on one node) */
    double call_s[COMM_PROTO_COUNT];  /* fixed cost per call (calibrated NVLink; else 0: the
                                         model/physics/comm.yaml alphas hold it) */
    double ll_bw_frac;                /* LL bandwidth / Simple bandwidth on this ring */
    double ll_max_bytes;              /* largest LL message: of the classes crossed, the largest */
    bool nvls;                        /* every rank on one node whose NVSwitch multicasts */
    bool first_loop;                  /* every hop uncalibrated NVLink on one node: a Simple
                                         ring pays its first loop's idle time (see header) */
    int nodes;                        /* nodes the ranks span (runs of one node's ranks) */
    double nvls_s;                    /* NVLS latency (nccl_nvls_s, scaled as call_s) */
    int hops[COMM_LINK_COUNT];        /* hops per link class */
    int tree_depth;                   /* depth of NCCL's tree over these ranks (chain inside a
                                         node, tree between nodes); 0 = ceil(log2 n_ranks) */
    size_t n_uses;
    comm_use *uses; /* owned */
} comm_ring;

/* Closed forms (see the header). n >= 1 ranks; n = 1 costs 0. */
double comm_ring_allreduce_s(int n, double bytes, double alpha_s, double beta_bytes_per_s);

/* Protocol NCCL uses for a message of `bytes` on ring r. */
comm_proto comm_protocol(const comm_ring *r, double bytes);

/* Build the ring through ranks[0..n) in that order (rank n-1 sends back to rank 0) over
 * nodes[]. Ranks on one GPU are adjacent, as NCCL orders them (node by node, GPU by GPU).
 * Capacities: nvlink and pcie line rates times eff[], host memory and NIC as given (NIC times
 * eff[NIC]). Returns 0, or -1 with a reason in why (a rank on a node or GPU that does not exist,
 * or two adjacent ranks on one GPU that is not MIG-partitioned). O(n x resources). */
int comm_ring_build(const comm_params *p, const comm_node *nodes, int n_nodes,
                    const comm_rank *ranks, int n, comm_ring *out, char *why, size_t why_len);
void comm_ring_fini(comm_ring *r);

/* Rate (bytes/s per hop) of the ring alone: min over its resources of capacity / coeff;
 * +infinity for a ring of one rank. */
double comm_ring_alone_rate(const comm_ring *r);

/* Max-min fair rates (bytes/s per hop) of n rings running at once, sharing every resource they
 * have in common (same kind, node and index), solved by sim/maxmin's progressive filling.
 * rates[i] for rings[i]; a one-rank ring gets +infinity. */
void comm_share(const comm_ring *const *rings, size_t n, double *rates);

/* Time of an all-reduce of `bytes` over ring r's ranks when its hops move `rate` bytes/s under
 * the Simple protocol (LL: rate * r->ll_bw_frac), plus the ring's per-call cost: the cheapest
 * of the ring, NVLS where r->nvls (Simple, at any size, as NCCL's tuner weighs every
 * algorithm and protocol) and the tree (of depth
 * r->tree_depth) closed forms,
 * as NCCL's tuner picks the algorithm it predicts fastest (the tree is costed at the ring's
 * per-hop rate and latency: a simplification, its links are not rebuilt). The tree wins only
 * where latency dominates: many ranks, small messages. */
double comm_ring_allreduce_time(const comm_params *p, const comm_ring *r, double bytes,
                                double rate);

#endif
