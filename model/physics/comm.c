/* model/physics/comm.c - collective costs and link sharing (see comm.h). */
#include "model/physics/comm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/maxmin.h"
#include "sim/xalloc.h"

int comm_net_find(const comm_params *p, const char *name)
{
    for (int i = 0; i < p->n_nets; i++) {
        if (!strcmp(p->nets[i].name, name)) {
            return i;
        }
    }
    return -1;
}

/* Names (stride bytes apart, each starting with its name) ", "-separated into buf. */
static void names_list(const char *first, size_t stride, int count, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < count && used < n; i++) {
        used += (size_t)snprintf(buf + used, n - used, "%s%s", i ? ", " : "",
                                 first + (size_t)i * stride);
    }
}

void comm_net_names(const comm_params *p, char *buf, size_t n)
{
    names_list(p->nets[0].name, sizeof p->nets[0], p->n_nets, buf, n);
}

int comm_topo_find(const comm_params *p, const char *name)
{
    for (int i = 0; i < p->n_topos; i++) {
        if (!strcmp(p->topos[i].name, name)) {
            return i;
        }
    }
    return -1;
}

void comm_topo_names(const comm_params *p, char *buf, size_t n)
{
    names_list(p->topos[0].name, sizeof p->topos[0], p->n_topos, buf, n);
}

bool comm_nvls_arch(const comm_params *p, const char *arch)
{
    for (int i = 0; arch && i < p->n_nvls_archs; i++) {
        if (!strcmp(p->nvls_archs[i], arch)) {
            return true;
        }
    }
    return false;
}

void comm_nvls_arch_words(const comm_params *p, char *buf, size_t n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < p->n_nvls_archs && used < n; i++) {
        const char *sep = i == 0 ? "" : i + 1 == p->n_nvls_archs ? " or " : ", ";
        used += (size_t)snprintf(buf + used, n - used, "%s%s", sep, p->nvls_archs[i]);
    }
}

/* ---- closed forms ---- */

double comm_ring_allreduce_s(int n, double bytes, double alpha_s, double beta_bytes_per_s)
{
    if (n <= 1) {
        return 0;
    }
    return 2.0 * (n - 1) * alpha_s + 2.0 * (n - 1) / n * bytes / beta_bytes_per_s;
}

/* ceil(log2 n) for n >= 1 */
static int log2_ceil(int n)
{
    int depth = 0;
    while ((1 << depth) < n) {
        depth++;
    }
    return depth;
}

/* Tree all-reduce of depth d over `nodes` nodes: reduce up, broadcast down, pipelined. NCCL's
 * double binary tree over more than 2 nodes has every node an inner node of one tree (2
 * children) and a leaf of the other: 2S each way through its NIC; over 2 nodes each node is the
 * root of one tree and the other's leaf, one child each: S each way, half the ring's 2(n-1)/n S
 * ("tree can go beyond the network bottleneck", NVIDIA/nccl-tests issue #196; the tuner takes the
 * intra-node bandwidth for trees of 2 nodes, src/graph/tuning.cc). On one node the tree is a
 * chain through the ranks (costed 2S, as before: it never beats the ring there). */
static double tree_s(int depth, int nodes, double bytes, double alpha_s, double beta_bytes_per_s)
{
    return 2.0 * depth * alpha_s + (nodes == 2 ? 1.0 : 2.0) * bytes / beta_bytes_per_s;
}

comm_proto comm_protocol(const comm_ring *r, double bytes)
{
    return bytes <= r->ll_max_bytes ? COMM_PROTO_LL : COMM_PROTO_SIMPLE;
}

/* ---- rings over links ---- */

enum {
    K_PCIE_UP,
    K_PCIE_DN,
    K_ROOT_UP,
    K_ROOT_DN,
    K_HOST,
    K_NVL_OUT,
    K_NVL_IN,
    K_NIC_OUT,
    K_NIC_IN,
};

static void add_use(comm_ring *r, size_t *cap, int kind, int node, int index, double coeff,
                    double capacity);

/* The GPUs (ascending, distinct) that ranks[] puts on `node`, into out (size >= n); the count. */
static int ring_gpus_on(const comm_rank *ranks, int n, int node, int *out)
{
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (ranks[i].node != node) {
            continue;
        }
        int j = 0;
        while (j < k && out[j] < ranks[i].gpu) {
            j++;
        }
        if (j < k && out[j] == ranks[i].gpu) {
            continue;
        }
        memmove(out + j + 1, out + j, (size_t)(k - j) * sizeof *out);
        out[j] = ranks[i].gpu;
        k++;
    }
    return k;
}

/* The PCIe side of a node-crossing hop at `node` (up: leaving it; else entering it): through the
 * rank's own GPU, or spread over k of the ring's GPUs on the node when it has k >= 2 NICs. */
static void nic_side(comm_ring *out, size_t *cap, const comm_node *nd, const comm_rank *ranks,
                     int n, const comm_rank *at, bool up, double pcie)
{
    int gpr = nd->gpus_per_root > 0 ? nd->gpus_per_root : 1;
    int kind_link = up ? K_PCIE_UP : K_PCIE_DN, kind_root = up ? K_ROOT_UP : K_ROOT_DN;
    int k = 1, *gpus = NULL, count = 0;
    if (nd->nics >= 2 && !at->mig) {
        gpus = xcalloc((size_t)n, sizeof *gpus, "ring GPUs");
        count = ring_gpus_on(ranks, n, at->node, gpus);
        k = nd->nics < count ? nd->nics : count;
    }
    if (k <= 1) {
        add_use(out, cap, kind_link, at->node, at->gpu, 1, pcie);
        add_use(out, cap, kind_root, at->node, at->gpu / gpr, 1, pcie);
    }
    for (int j = 0; k > 1 && j < k; j++) {
        int g = gpus[j * count / k];
        add_use(out, cap, kind_link, at->node, g, 1.0 / k, pcie);
        add_use(out, cap, kind_root, at->node, g / gpr, 1.0 / k, pcie);
    }
    free(gpus);
}

static void add_use(comm_ring *r, size_t *cap, int kind, int node, int index, double coeff,
                    double capacity)
{
    for (size_t i = 0; i < r->n_uses; i++) {
        comm_use *u = &r->uses[i];
        if (u->kind == kind && u->node == node && u->index == index) {
            u->coeff += coeff;
            return;
        }
    }
    if (r->n_uses == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        r->uses = xrealloc(r->uses, *cap * sizeof *r->uses, "comm ring uses");
    }
    r->uses[r->n_uses++] = (comm_use){kind, node, index, coeff, capacity};
}

/* Where use u is (into buf) and the figure that sets its rate, for messages. */
static const char *use_words(const comm_use *u, char *buf, size_t n)
{
    switch (u->kind) {
    case K_PCIE_UP:
    case K_PCIE_DN:
        snprintf(buf, n, "the PCIe link of node %d GPU %d", u->node, u->index);
        return "the GPU type's PCIe rate (pcie_gb_s_per_direction)";
    case K_ROOT_UP:
    case K_ROOT_DN:
        snprintf(buf, n, "the uplink of node %d PCIe root %d", u->node, u->index);
        return "the GPU type's PCIe rate (pcie_gb_s_per_direction)";
    case K_NVL_OUT:
    case K_NVL_IN:
        snprintf(buf, n, "the NVLink port of node %d GPU %d", u->node, u->index);
        return "the GPU type's NVLink rate (nvlink_gb_s_total)";
    case K_HOST:
        snprintf(buf, n, "host memory of node %d", u->node);
        return "the node's host-memory bandwidth (host_mem_bytes_per_s)";
    default:
        snprintf(buf, n, "the NIC of node %d", u->node);
        return "the interconnect's line rate";
    }
}

/* The uses from `first` on (those hop i added) must have a positive, finite capacity: a link
 * of rate 0 (a figure the catalog leaves unsourced) would make every collective take forever.
 * Returns 0, or -1 with the reason. */
static int check_rates(const comm_ring *r, size_t first, const comm_rank *ranks, int n, int i,
                       char *why, size_t why_len)
{
    for (size_t u = first; u < r->n_uses; u++) {
        double c = r->uses[u].capacity;
        if (c > 0 && isfinite(c)) {
            continue;
        }
        char where[96];
        const char *figure = use_words(&r->uses[u], where, sizeof where);
        int j = (i + 1) % n;
        snprintf(why, why_len,
                 "the ring's hop from rank %d (node %d GPU %d) to rank %d (node %d GPU %d) "
                 "crosses %s at %g bytes/s; expected a positive rate, but %s is missing "
                 "(unsourced) or 0",
                 i, ranks[i].node, ranks[i].gpu, j, ranks[j].node, ranks[j].gpu, where, c,
                 figure);
        return -1;
    }
    return 0;
}

/* What the calibrated NVLink hops of a ring add up to (the largest of each figure). */
typedef struct nvl_cal {
    int hops;
    double call_s[COMM_PROTO_COUNT], alpha_s[COMM_PROTO_COUNT];
    double ll_max_bytes;
    double ll_frac; /* the smallest B_LL / B_Simple */
} nvl_cal;

const comm_nvl_cal *comm_nvl_cal_pick(const comm_node *nd, int ranks, comm_proto pr)
{
    const comm_nvl_cal *best = NULL;
    for (int i = 0; i < nd->n_nvl_cal; i++) {
        const comm_nvl_cal *c = &nd->nvl_cal[i];
        /* ascending in ranks: a later size wins only when strictly nearer */
        if (c->ranks >= 2 && c->has[pr] &&
            (!best || abs(c->ranks - ranks) < abs(best->ranks - ranks))) {
            best = c;
        }
    }
    return best;
}

/* An NVLink hop leaving calibrated node nd, on a ring with `ranks` ranks there: per protocol
 * the nearest measured size's latency L = c + 2(m-1) a (m its ranks), split in NCCL's tuner's
 * ratio c : a = base : step (see comm_node). Returns the Simple pick's bus bandwidth, the
 * hop's capacity. */
static double cal_hop(const comm_params *p, const comm_node *nd, int ranks, nvl_cal *c)
{
    const comm_nvl_cal *pk[COMM_PROTO_COUNT];
    for (int pr = 0; pr < COMM_PROTO_COUNT; pr++) {
        pk[pr] = comm_nvl_cal_pick(nd, ranks, (comm_proto)pr);
        double steps = 2.0 * (pk[pr]->ranks - 1);
        double base = p->nccl_ring_base_s[pr], step = p->nccl_nvlink_step_s[pr];
        double lat = pk[pr]->latency_s[pr];
        double call = lat * base / (base + steps * step);
        c->call_s[pr] = fmax(c->call_s[pr], call);
        c->alpha_s[pr] = fmax(c->alpha_s[pr], (lat - call) / steps);
    }
    c->ll_max_bytes = fmax(c->ll_max_bytes, pk[COMM_PROTO_LL]->ll_max_bytes);
    double frac = pk[COMM_PROTO_LL]->busbw[COMM_PROTO_LL] /
                  pk[COMM_PROTO_SIMPLE]->busbw[COMM_PROTO_SIMPLE];
    c->ll_frac = c->hops == 0 ? frac : fmin(c->ll_frac, frac);
    c->hops++;
    return pk[COMM_PROTO_SIMPLE]->busbw[COMM_PROTO_SIMPLE];
}

/* Whether nd holds an NVLink calibration of both protocols (comm_nvl_cal_pick finds each). */
static bool calibrated(const comm_node *nd)
{
    return comm_nvl_cal_pick(nd, 2, COMM_PROTO_LL) && comm_nvl_cal_pick(nd, 2, COMM_PROTO_SIMPLE);
}

int comm_ring_build(const comm_params *p, const comm_node *nodes, int n_nodes,
                    const comm_rank *ranks, int n, comm_ring *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    out->n_ranks = n;
    for (int i = 0; i < n; i++) {
        const comm_rank *a = &ranks[i];
        if (a->node < 0 || a->node >= n_nodes || a->gpu < 0 || a->gpu >= nodes[a->node].gpus) {
            snprintf(why, why_len, "rank %d on node %d GPU %d: no such node or GPU", i, a->node,
                     a->gpu);
            return -1;
        }
        const comm_rank *b = i > 0 ? &ranks[i - 1] : NULL;
        if (b && b->node == a->node && b->gpu == a->gpu && (!a->mig || !b->mig)) {
            snprintf(why, why_len,
                     "ranks %d and %d share GPU %d of node %d; expected one rank per whole "
                     "GPU (several ranks on one GPU need MIG instances)",
                     i - 1, i, a->gpu, a->node);
            return -1;
        }
    }
    size_t cap = 0;
    bool used[COMM_LINK_COUNT] = {false};
    nvl_cal cal = {0};
    /* the ring's ranks on each node: the ring size a calibrated NVLink is looked up by */
    int *on_node = xcalloc((size_t)(n_nodes > 0 ? n_nodes : 1), sizeof *on_node, "ring nodes");
    for (int i = 0; i < n; i++) {
        on_node[ranks[i].node]++;
    }
    for (int i = 0; i < n && n > 1; i++) {
        const comm_rank *a = &ranks[i], *b = &ranks[(i + 1) % n];
        const comm_node *na = &nodes[a->node], *nb = &nodes[b->node];
        size_t first = out->n_uses;
        int gpr_a = na->gpus_per_root > 0 ? na->gpus_per_root : 1;
        int gpr_b = nb->gpus_per_root > 0 ? nb->gpus_per_root : 1;
        int ra = a->gpu / gpr_a, rb = b->gpu / gpr_b;
        double pcie_a = na->pcie_bytes_per_s * p->eff[COMM_LINK_PCIE];
        double pcie_b = nb->pcie_bytes_per_s * p->eff[COMM_LINK_PCIE];
        bool staged = a->mig || b->mig;
        int grp = na->nvlink_group;
        bool nvl = na->nvlink_bytes_per_s > 0 && (grp <= 0 || a->gpu / grp == b->gpu / grp);
        comm_link cls;
        if (a->node != b->node) {
            cls = COMM_LINK_NIC;
            nic_side(out, &cap, na, ranks, n, a, true, pcie_a);
            add_use(out, &cap, K_NIC_OUT, a->node, 0, 1,
                    na->nic_bytes_per_s * p->eff[COMM_LINK_NIC]);
            add_use(out, &cap, K_NIC_IN, b->node, 0, 1,
                    nb->nic_bytes_per_s * p->eff[COMM_LINK_NIC]);
            nic_side(out, &cap, nb, ranks, n, b, false, pcie_b);
            if (a->mig) {
                add_use(out, &cap, K_HOST, a->node, 0, 2, na->host_bytes_per_s);
            }
            if (b->mig) {
                add_use(out, &cap, K_HOST, b->node, 0, 2, nb->host_bytes_per_s);
            }
        } else if (staged) {
            cls = COMM_LINK_HOST;
            add_use(out, &cap, K_PCIE_UP, a->node, a->gpu, 1, pcie_a);
            add_use(out, &cap, K_ROOT_UP, a->node, ra, 1, pcie_a);
            add_use(out, &cap, K_HOST, a->node, 0, 2, na->host_bytes_per_s);
            add_use(out, &cap, K_ROOT_DN, b->node, rb, 1, pcie_b);
            add_use(out, &cap, K_PCIE_DN, b->node, b->gpu, 1, pcie_b);
        } else if (nvl) {
            cls = COMM_LINK_NVLINK;
            double nv = calibrated(na) ? cal_hop(p, na, on_node[a->node], &cal)
                                       : na->nvlink_bytes_per_s * p->eff[COMM_LINK_NVLINK];
            add_use(out, &cap, K_NVL_OUT, a->node, a->gpu, 1, nv);
            add_use(out, &cap, K_NVL_IN, b->node, b->gpu, 1, nv);
        } else {
            cls = COMM_LINK_PCIE;
            add_use(out, &cap, K_PCIE_UP, a->node, a->gpu, 1, pcie_a);
            if (ra != rb) {
                add_use(out, &cap, K_ROOT_UP, a->node, ra, 1, pcie_a);
                add_use(out, &cap, K_ROOT_DN, b->node, rb, 1, pcie_b);
            }
            add_use(out, &cap, K_PCIE_DN, b->node, b->gpu, 1, pcie_b);
        }
        out->hops[cls]++;
        used[cls] = true;
        if (check_rates(out, first, ranks, n, i, why, why_len)) {
            free(on_node);
            comm_ring_fini(out);
            return -1;
        }
    }
    free(on_node);
    /* NCCL's tree: a chain through the ranks of each node, a binary tree between nodes (ranks
     * come node by node, so a node's ranks are contiguous runs) */
    int node_runs = 0, most = 0, run = 0;
    for (int i = 0; i < n; i++) {
        bool same = i > 0 && ranks[i].node == ranks[i - 1].node;
        run = same ? run + 1 : 1;
        node_runs += !same;
        most = run > most ? run : most;
    }
    out->tree_depth = n > 1 ? (most - 1) + log2_ceil(node_runs) : 0;
    out->nodes = node_runs;
    /* NVLS: every hop NVLink on one node that multicasts, through its NVSwitch */
    const comm_node *n0 = &nodes[ranks[0].node];
    out->nvls = n > 1 && out->hops[COMM_LINK_NVLINK] == n && node_runs == 1 && n0->nvls &&
                n0->nvlink_group <= 0;
    /* a calibrated NVLink's latencies and switch point stand for the NVLink class's; when
     * every hop is one, its LL bandwidth share too; the NVLS latency is scaled as the call's */
    out->first_loop = n > 1 && out->hops[COMM_LINK_NVLINK] == n && node_runs == 1 &&
                      cal.hops == 0;
    bool all_cal = cal.hops > 0 && cal.hops == n;
    double base = p->nccl_ring_base_s[COMM_PROTO_SIMPLE];
    out->nvls_s = p->nccl_nvls_s * (cal.hops > 0 && base > 0 ? cal.call_s[COMM_PROTO_SIMPLE] / base
                                                              : 1.0);
    out->ll_bw_frac = all_cal ? cal.ll_frac : p->ll_bw_frac;
    for (int pr = 0; pr < COMM_PROTO_COUNT; pr++) {
        out->call_s[pr] = cal.call_s[pr];
        for (int l = 0; l < COMM_LINK_COUNT; l++) {
            if (used[l]) {
                bool c = l == COMM_LINK_NVLINK && cal.hops > 0;
                double a = c ? cal.alpha_s[pr] : p->alpha_s[l][pr];
                double ll = c && cal.ll_max_bytes > 0 ? cal.ll_max_bytes : p->ll_max_bytes[l];
                if (l == COMM_LINK_NIC && node_runs > 1) {
                    out->alpha_net_s[pr] = a; /* the steps between nodes */
                } else {
                    out->alpha_s[pr] = fmax(out->alpha_s[pr], a);
                }
                out->ll_max_bytes = fmax(out->ll_max_bytes, ll);
            }
        }
    }
    return 0;
}

void comm_ring_fini(comm_ring *r)
{
    free(r->uses);
    memset(r, 0, sizeof *r);
}

double comm_ring_alone_rate(const comm_ring *r)
{
    double x = (double)INFINITY;
    for (size_t i = 0; i < r->n_uses; i++) {
        x = fmin(x, r->uses[i].capacity / r->uses[i].coeff);
    }
    return x;
}

/* ---- sharing: max-min fair rates (sim/maxmin) ---- */

typedef struct res_key {
    int kind, node, index;
    double capacity;
} res_key;

void comm_share(const comm_ring *const *rings, size_t n, double *rates)
{
    /* One flow per ring that crosses a link (a one-rank ring runs at +infinity); resources
     * numbered in order of first use, a resource's flows in ring order. */
    size_t n_keys = 0, cap_keys = 0, n_uses = 0;
    res_key *keys = NULL;
    for (size_t j = 0; j < n; j++) {
        n_uses += rings[j]->n_uses;
    }
    uint32_t *flow_of = xcalloc(n ? n : 1, sizeof *flow_of, "comm flows");
    uint32_t *flow_start = xcalloc(n + 1, sizeof *flow_start, "comm flows");
    uint32_t *flow_res = xcalloc(n_uses ? n_uses : 1, sizeof *flow_res, "comm uses");
    double *flow_coeff = xcalloc(n_uses ? n_uses : 1, sizeof *flow_coeff, "comm uses");
    uint32_t n_flows = 0, u_at = 0;
    for (size_t j = 0; j < n; j++) {
        const comm_ring *r = rings[j];
        if (r->n_uses == 0) {
            continue;
        }
        flow_of[j] = n_flows;
        for (size_t i = 0; i < r->n_uses; i++) {
            const comm_use *u = &r->uses[i];
            size_t k = 0;
            while (k < n_keys && !(keys[k].kind == u->kind && keys[k].node == u->node &&
                                   keys[k].index == u->index)) {
                k++;
            }
            if (k == n_keys) {
                if (n_keys == cap_keys) {
                    cap_keys = cap_keys ? 2 * cap_keys : 32;
                    keys = xrealloc(keys, cap_keys * sizeof *keys, "comm resources");
                }
                keys[n_keys++] = (res_key){u->kind, u->node, u->index, u->capacity};
            }
            for (uint32_t m = flow_start[n_flows]; m < u_at; m++) {
                SIM_ASSERT(flow_res[m] != k); /* comm_ring_build merges a ring's uses */
            }
            flow_res[u_at] = (uint32_t)k;
            flow_coeff[u_at] = u->coeff;
            u_at++;
        }
        flow_start[++n_flows] = u_at;
    }
    /* the same uses by resource, each resource's flows in flow order */
    uint32_t *res_start = xcalloc(n_keys + 1, sizeof *res_start, "comm resources");
    uint32_t *res_flow = xcalloc(u_at ? u_at : 1, sizeof *res_flow, "comm uses");
    double *res_coeff = xcalloc(u_at ? u_at : 1, sizeof *res_coeff, "comm uses");
    double *capacity = xcalloc(n_keys ? n_keys : 1, sizeof *capacity, "comm resources");
    double *bound = xcalloc(n_flows ? n_flows : 1, sizeof *bound, "comm flows");
    double *rate = xcalloc(n_flows ? n_flows : 1, sizeof *rate, "comm flows");
    for (uint32_t k = 0; k < u_at; k++) {
        res_start[flow_res[k] + 1]++;
    }
    for (size_t k = 0; k < n_keys; k++) {
        res_start[k + 1] += res_start[k];
        capacity[k] = keys[k].capacity;
    }
    uint32_t *fill = xcalloc(n_keys ? n_keys : 1, sizeof *fill, "comm resources");
    for (uint32_t f = 0; f < n_flows; f++) {
        bound[f] = (double)INFINITY;
        for (uint32_t k = flow_start[f]; k < flow_start[f + 1]; k++) {
            uint32_t at = res_start[flow_res[k]] + fill[flow_res[k]]++;
            res_flow[at] = f;
            res_coeff[at] = flow_coeff[k];
        }
    }
    maxmin_problem p = {n_flows,    (uint32_t)n_keys, bound,    capacity, flow_start,
                        flow_res,   flow_coeff,       res_start, res_flow, res_coeff};
    maxmin_ws ws = {0};
    maxmin_solve(&p, &ws, rate);
    maxmin_ws_fini(&ws);
    for (size_t j = 0; j < n; j++) {
        rates[j] = rings[j]->n_uses == 0 ? (double)INFINITY : rate[flow_of[j]];
    }
    free(fill);
    free(rate);
    free(bound);
    free(capacity);
    free(res_coeff);
    free(res_flow);
    free(res_start);
    free(flow_coeff);
    free(flow_res);
    free(flow_start);
    free(flow_of);
    free(keys);
}

double comm_ring_allreduce_time(const comm_params *p, const comm_ring *r, double bytes,
                                double rate)
{
    comm_proto pr = comm_protocol(r, bytes);
    bool ll = pr == COMM_PROTO_LL;
    double beta = ll ? rate * r->ll_bw_frac : rate, beta_tree = ll ? rate * p->nccl_tree_ll_bw_frac
                                                                      : rate;
    if (ll && r->nodes >= 2) { /* NCCL's LL over the network: the tuner's cap */
        double cap = p->nccl_ll_max_busbw[r->nodes > 2];
        beta = fmin(beta, cap);
        beta_tree = fmin(beta_tree, cap);
    }
    int n = r->n_ranks;
    double ring = comm_ring_allreduce_s(n, bytes, r->alpha_s[pr], beta);
    if (n <= 1) {
        return ring;
    }
    if (!ll && r->first_loop) {
        /* NCCL's first loop over its channels: rho chunk-times at a channel's rate (comm.h) */
        double ch = p->nccl_channels;
        ring += p->ring_first_loop_idle * ch * fmin(p->ring_chunk_bytes, bytes / (ch * n)) / rate;
    }
    int depth = r->tree_depth > 0 ? r->tree_depth : log2_ceil(n);
    double tree = tree_s(depth, r->nodes, bytes, r->alpha_s[pr], beta_tree);
    if (r->nodes >= 2) {
        /* steps between nodes at the network's latency, the others at the node's (NCCL's
         * tuner: a ring's 2(nodes-1) network steps, a tree's log2(nodes) each way); NCCL's
         * tree moves its bytes at half its bus bandwidth, so LL's cap on that bus bandwidth
         * holds its time to at least 2S / cap */
        int net = 2 * (r->nodes - 1), up = log2_ceil(r->nodes);
        ring = (2.0 * (n - 1) - net) * r->alpha_s[pr] + net * r->alpha_net_s[pr] +
               2.0 * (n - 1) / n * bytes / beta;
        tree = 2.0 * ((depth - up) * r->alpha_s[pr] + up * r->alpha_net_s[pr]) +
               (r->nodes == 2 ? 1.0 : 2.0) * bytes / beta_tree;
        if (ll) {
            tree = fmax(tree, 2.0 * ((depth - up) * r->alpha_s[pr] + up * r->alpha_net_s[pr]) +
                                  2.0 * bytes / p->nccl_ll_max_busbw[r->nodes > 2]);
        }
    }
    double t = r->call_s[pr] + (tree < ring ? tree : ring);
    if (r->nvls) {
        t = fmin(t, r->nvls_s + (n + 1.0) / n * bytes / rate);
    }
    return t;
}
