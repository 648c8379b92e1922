/* experiments/comm_load.c - model/physics/comm.yaml -> comm_params (see comm_load.h). */
#include "experiments/comm_load.h"

#include <stdio.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "experiments/cfg.h"
#include "experiments/embedded.h"
#include "sim/err.h"

typedef struct num {
    double value;
    const char *src;
    const char *note;
    src_loc at;
} num;

typedef struct link_doc {
    num alpha_ll_s, alpha_simple_s, eff, ll_max_bytes;
} link_doc;

typedef struct net_doc {
    const char *name;
    double line_gbit_s;
    int64_t nics;
    const char *src;
    src_loc at;
} net_doc;

typedef struct topo_doc {
    const char *name, *src;
    int nvlink; /* comm_nvlink */
    bool multicast;
    int64_t gpus_per_root;
    src_loc at;
} topo_doc;

typedef struct ddp_doc {
    num bucket_bytes, backward_frac, grad_copy_frac;
    num nccl_ll_buffer_bytes, nccl_ll128_buffer_bytes, nccl_simple_buffer_bytes;
    num nccl_alloc_granule_bytes, nccl_channel_peer_bytes, nccl_channel_allocs;
    num nccl_channels_other;
    num host_launch_s, host_collective_s, host_spread, buffer_broadcasts, nccl_channels, overlap_comm_frac;
} ddp_doc;

typedef struct tuning_doc {
    num ring_base_ll_s, ring_base_simple_s, nvlink_ring_step_ll_s, nvlink_ring_step_simple_s;
    num nvls_simple_s, ll_max_busbw_2nodes, ll_max_busbw_nodes, tree_ll_bw_frac;
} tuning_doc;

typedef struct pipe_doc {
    num chunk_bytes, first_loop_idle;
} pipe_doc;

typedef struct archs_doc {
    const char **value;
    size_t n;
    const char *src;
    src_loc at;
} archs_doc;

typedef struct comm_doc {
    int version;
    archs_doc nvls;
    pipe_doc pipe;
    tuning_doc tuning;
    link_doc links[COMM_LINK_COUNT];
    num ll_bw_frac, host_mem_bytes_per_s, gpus_per_root;
    net_doc *nets;
    size_t n_nets;
    const char *default_net;
    src_loc default_net_at;
    topo_doc *topos;
    size_t n_topos;
    ddp_doc ddp;
} comm_doc;

#define NUM_TABLE(tag, lo, hi)                                                                 \
    static const cfg_field num_##tag[] = {                                                     \
        CFG_SELF(num, at),                                                                     \
        {"value", CFG_DOUBLE, .required = true, CFG_MIN(lo), CFG_MAX(hi),                      \
         .off = offsetof(num, value)},                                                         \
        {"src", CFG_STRING, .required = true, .off = offsetof(num, src)},                      \
        {"note", CFG_STRING, .off = offsetof(num, note)},                                      \
        {0},                                                                                   \
    };
NUM_TABLE(frac, 0.001, 1)
NUM_TABLE(lat, 0, 1)
NUM_TABLE(big, 1, 1e15)

#define NUM(key, st, tag) {#key, CFG_MAP, .required = true, .sub = num_##tag, .off = offsetof(st, key)}

static const cfg_field link_fields[] = {
    NUM(alpha_ll_s, link_doc, lat),
    NUM(alpha_simple_s, link_doc, lat),
    NUM(eff, link_doc, frac),
    NUM(ll_max_bytes, link_doc, big),
    {0},
};

#define LINK(key, l)                                                                           \
    {#key, CFG_MAP, .required = true, .sub = link_fields,                                      \
     .off = offsetof(comm_doc, links) + (l) * sizeof(link_doc)}

static const cfg_field links_fields[] = {
    LINK(nvlink, COMM_LINK_NVLINK),
    LINK(pcie, COMM_LINK_PCIE),
    LINK(host, COMM_LINK_HOST),
    LINK(nic, COMM_LINK_NIC),
    {0},
};

static const cfg_field net_fields[] = {
    CFG_SELF(net_doc, at),
    {"name", CFG_STRING, .required = true, .off = offsetof(net_doc, name)},
    {"line_gbit_s", CFG_DOUBLE, .required = true, CFG_ABOVE(0), CFG_MAX(1e6),
     .off = offsetof(net_doc, line_gbit_s)},
    {"nics", CFG_I64, CFG_MIN(1), CFG_MAX(64), .dflt = "1", .off = offsetof(net_doc, nics)},
    {"src", CFG_STRING, .required = true, .off = offsetof(net_doc, src)},
    {0},
};

static const char *const nvlink_names[] = {"switch", "pairs", "none", NULL}; /* comm_nvlink */

static const cfg_field topo_fields[] = {
    CFG_SELF(topo_doc, at),
    {"name", CFG_STRING, .required = true, .off = offsetof(topo_doc, name)},
    {"nvlink", CFG_ENUM, .required = true, .names = nvlink_names,
     .off = offsetof(topo_doc, nvlink)},
    {"multicast", CFG_BOOL, .dflt = "false", .off = offsetof(topo_doc, multicast)},
    {"gpus_per_root", CFG_I64, .required = true, CFG_MIN(1), CFG_MAX(64),
     .off = offsetof(topo_doc, gpus_per_root)},
    {"src", CFG_STRING, .required = true, .off = offsetof(topo_doc, src)},
    {0},
};

static const cfg_field ddp_fields[] = {
    NUM(bucket_bytes, ddp_doc, big),
    NUM(backward_frac, ddp_doc, frac),
    {"grad_copy_frac", CFG_MAP, .required = true, .sub = num_lat,
     .off = offsetof(ddp_doc, grad_copy_frac)},
    NUM(nccl_ll_buffer_bytes, ddp_doc, big),
    NUM(nccl_ll128_buffer_bytes, ddp_doc, big),
    NUM(nccl_simple_buffer_bytes, ddp_doc, big),
    NUM(nccl_alloc_granule_bytes, ddp_doc, big),
    NUM(nccl_channel_peer_bytes, ddp_doc, big),
    NUM(nccl_channel_allocs, ddp_doc, big),
    NUM(nccl_channels_other, ddp_doc, big),
    NUM(host_launch_s, ddp_doc, lat),
    NUM(host_collective_s, ddp_doc, lat),
    NUM(host_spread, ddp_doc, lat),
    NUM(buffer_broadcasts, ddp_doc, big),
    NUM(nccl_channels, ddp_doc, big),
    NUM(overlap_comm_frac, ddp_doc, frac),
    {0},
};

static const cfg_field tuning_fields[] = {
    NUM(ring_base_ll_s, tuning_doc, lat),
    NUM(ring_base_simple_s, tuning_doc, lat),
    NUM(nvlink_ring_step_ll_s, tuning_doc, lat),
    NUM(nvlink_ring_step_simple_s, tuning_doc, lat),
    NUM(nvls_simple_s, tuning_doc, lat),
    NUM(ll_max_busbw_2nodes, tuning_doc, big),
    NUM(ll_max_busbw_nodes, tuning_doc, big),
    NUM(tree_ll_bw_frac, tuning_doc, frac),
    {0},
};

static const cfg_field pipe_fields[] = {
    NUM(chunk_bytes, pipe_doc, big),
    NUM(first_loop_idle, pipe_doc, lat),
    {0},
};

static const cfg_field archs_fields[] = {
    CFG_SELF(archs_doc, at),
    {"value", CFG_SEQ, .required = true, CFG_MIN(1), CFG_MAX(COMM_MAX_ARCHS), .elem = CFG_STRING,
     .names = catalog_arch_names, .off = offsetof(archs_doc, value),
     .count_off = offsetof(archs_doc, n)},
    {"src", CFG_STRING, .required = true, .off = offsetof(archs_doc, src)},
    {0},
};

static const cfg_field doc_fields[] = {
    {"version", CFG_INT, .required = true, CFG_MIN(1), CFG_MAX(1),
     .off = offsetof(comm_doc, version)},
    {"links", CFG_MAP, .required = true, .sub = links_fields, .off = 0},
    NUM(ll_bw_frac, comm_doc, frac),
    {"nccl_tuning", CFG_MAP, .required = true, .sub = tuning_fields,
     .off = offsetof(comm_doc, tuning)},
    {"ring_pipeline", CFG_MAP, .required = true, .sub = pipe_fields,
     .off = offsetof(comm_doc, pipe)},
    NUM(host_mem_bytes_per_s, comm_doc, big),
    NUM(gpus_per_root, comm_doc, big),
    {"networks", CFG_SEQ, .required = true, CFG_MIN(1), CFG_MAX(COMM_MAX_NETS),
     CFG_SEQ_OF(comm_doc, nets, n_nets, net_doc, net_fields)},
    {"default_network", CFG_STRING, .required = true, .off = offsetof(comm_doc, default_net),
     CFG_LOC(comm_doc, default_net_at)},
    {"topologies", CFG_SEQ, .required = true, CFG_MIN(1), CFG_MAX(COMM_MAX_TOPOS),
     CFG_SEQ_OF(comm_doc, topos, n_topos, topo_doc, topo_fields)},
    {"nvls_archs", CFG_MAP, .required = true, .sub = archs_fields,
     .off = offsetof(comm_doc, nvls)},
    {"ddp", CFG_MAP, .required = true, .sub = ddp_fields, .off = offsetof(comm_doc, ddp)},
    {0},
};

static void check_src(const num *n, diag *d)
{
    if (n->src && !n->src[0]) {
        diag_error(d, n->at, "src", "empty source; expected where the value comes from, got ''");
    }
}

/* Entry i of a named list (networks, topologies): its name fits COMM_NAME_MAX, and `first`, the
 * index of the first entry of that name (entries from i on are not filled yet), is not earlier. */
static void check_name(diag *d, src_loc at, const char *list, const char *what, const char *name,
                       int first, size_t i)
{
    char field[32];
    snprintf(field, sizeof field, "%s.name", list);
    if (strlen(name) >= COMM_NAME_MAX) {
        diag_error(d, at, field, "name too long; expected at most %d characters, got '%s'",
                   COMM_NAME_MAX - 1, name);
    }
    if (first >= 0 && first < (int)i) {
        diag_error(d, at, field, "duplicate %s; expected a new name, got '%s'", what, name);
    }
}

/* cfg_finish_fn: checks the schema cannot express; fills the comm_params (ctx) when sound. */
static void finish(const void *dst, void *ctx, diag *d)
{
    const comm_doc *cd = dst;
    comm_params *out = ctx;
    for (int l = 0; l < COMM_LINK_COUNT; l++) {
        const link_doc *ld = &cd->links[l];
        check_src(&ld->alpha_ll_s, d);
        check_src(&ld->alpha_simple_s, d);
        check_src(&ld->eff, d);
        check_src(&ld->ll_max_bytes, d);
        out->alpha_s[l][COMM_PROTO_LL] = ld->alpha_ll_s.value;
        out->alpha_s[l][COMM_PROTO_SIMPLE] = ld->alpha_simple_s.value;
        out->eff[l] = ld->eff.value;
        out->ll_max_bytes[l] = ld->ll_max_bytes.value;
    }
    const num *all[] = {&cd->ll_bw_frac, &cd->host_mem_bytes_per_s, &cd->gpus_per_root,
                        &cd->ddp.bucket_bytes, &cd->ddp.backward_frac, &cd->ddp.grad_copy_frac,
                        &cd->ddp.nccl_ll_buffer_bytes, &cd->ddp.nccl_ll128_buffer_bytes,
                        &cd->ddp.nccl_simple_buffer_bytes, &cd->ddp.nccl_alloc_granule_bytes,
                        &cd->ddp.nccl_channel_peer_bytes, &cd->ddp.nccl_channel_allocs,
                        &cd->ddp.nccl_channels_other, &cd->ddp.host_launch_s,
                        &cd->ddp.host_collective_s, &cd->ddp.host_spread,
                        &cd->ddp.buffer_broadcasts,
                        &cd->ddp.nccl_channels, &cd->ddp.overlap_comm_frac,
                        &cd->tuning.ring_base_ll_s, &cd->tuning.ring_base_simple_s,
                        &cd->tuning.nvlink_ring_step_ll_s, &cd->tuning.nvlink_ring_step_simple_s,
                        &cd->tuning.nvls_simple_s, &cd->tuning.ll_max_busbw_2nodes,
                        &cd->tuning.ll_max_busbw_nodes, &cd->tuning.tree_ll_bw_frac,
                        &cd->pipe.chunk_bytes, &cd->pipe.first_loop_idle};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        check_src(all[i], d);
    }
    if (cd->gpus_per_root.value != (int)cd->gpus_per_root.value ||
        cd->gpus_per_root.value > 64) {
        diag_error(d, cd->gpus_per_root.at, "gpus_per_root.value",
                   "not a GPU count; expected an integer from 1 to 64, got '%g'",
                   cd->gpus_per_root.value);
    }
    const num *counts[] = {&cd->ddp.nccl_channels, &cd->ddp.nccl_channels_other,
                           &cd->ddp.nccl_channel_allocs};
    const char *count_keys[] = {"ddp.nccl_channels.value", "ddp.nccl_channels_other.value",
                                "ddp.nccl_channel_allocs.value"};
    for (int i = 0; i < 3; i++) {
        if (counts[i]->value != (int)counts[i]->value || counts[i]->value > 1024) {
            diag_error(d, counts[i]->at, count_keys[i],
                       "not a count; expected an integer from 1 to 1024, got '%g'",
                       counts[i]->value);
        }
    }
    out->ll_bw_frac = cd->ll_bw_frac.value;
    out->nccl_ring_base_s[COMM_PROTO_LL] = cd->tuning.ring_base_ll_s.value;
    out->nccl_ring_base_s[COMM_PROTO_SIMPLE] = cd->tuning.ring_base_simple_s.value;
    out->nccl_nvlink_step_s[COMM_PROTO_LL] = cd->tuning.nvlink_ring_step_ll_s.value;
    out->nccl_nvlink_step_s[COMM_PROTO_SIMPLE] = cd->tuning.nvlink_ring_step_simple_s.value;
    out->nccl_nvls_s = cd->tuning.nvls_simple_s.value;
    out->nccl_ll_max_busbw[0] = cd->tuning.ll_max_busbw_2nodes.value;
    out->nccl_ll_max_busbw[1] = cd->tuning.ll_max_busbw_nodes.value;
    out->nccl_tree_ll_bw_frac = cd->tuning.tree_ll_bw_frac.value;
    out->ring_chunk_bytes = cd->pipe.chunk_bytes.value;
    out->ring_first_loop_idle = cd->pipe.first_loop_idle.value;
    out->host_mem_bytes_per_s = cd->host_mem_bytes_per_s.value;
    out->gpus_per_root = (int)cd->gpus_per_root.value;
    out->bucket_bytes = cd->ddp.bucket_bytes.value;
    out->backward_frac = cd->ddp.backward_frac.value;
    out->grad_copy_frac = cd->ddp.grad_copy_frac.value;
    out->nccl_ll_buffer_bytes = cd->ddp.nccl_ll_buffer_bytes.value;
    out->nccl_ll128_buffer_bytes = cd->ddp.nccl_ll128_buffer_bytes.value;
    out->nccl_simple_buffer_bytes = cd->ddp.nccl_simple_buffer_bytes.value;
    out->nccl_alloc_granule_bytes = cd->ddp.nccl_alloc_granule_bytes.value;
    out->nccl_channel_peer_bytes = cd->ddp.nccl_channel_peer_bytes.value;
    out->nccl_channel_allocs = cd->ddp.nccl_channel_allocs.value;
    out->nccl_channels_other = cd->ddp.nccl_channels_other.value;
    out->host_launch_s = cd->ddp.host_launch_s.value;
    out->host_collective_s = cd->ddp.host_collective_s.value;
    out->host_spread = cd->ddp.host_spread.value;
    out->buffer_broadcasts = cd->ddp.buffer_broadcasts.value;
    out->nccl_channels = cd->ddp.nccl_channels.value;
    out->overlap_comm_frac = cd->ddp.overlap_comm_frac.value;
    out->n_nets = (int)cd->n_nets;
    for (size_t i = 0; i < cd->n_nets; i++) {
        const net_doc *nd = &cd->nets[i];
        check_name(d, nd->at, "networks", "network", nd->name, comm_net_find(out, nd->name), i);
        snprintf(out->nets[i].name, sizeof out->nets[i].name, "%s", nd->name);
        out->nets[i].line_bytes_per_s = nd->line_gbit_s * 1e9 / 8;
        out->nets[i].nics = (int)nd->nics;
    }
    out->n_topos = (int)cd->n_topos;
    for (size_t i = 0; i < cd->n_topos; i++) {
        const topo_doc *td = &cd->topos[i];
        check_name(d, td->at, "topologies", "topology", td->name, comm_topo_find(out, td->name),
                   i);
        if (!td->src[0]) {
            diag_error(d, td->at, "topologies.src",
                       "empty source; expected where the wiring comes from, got ''");
        }
        comm_topo *t = &out->topos[i];
        snprintf(t->name, sizeof t->name, "%s", td->name);
        t->nvlink = (comm_nvlink)td->nvlink; /* nvlink_names is in comm_nvlink's order */
        t->gpus_per_root = (int)td->gpus_per_root;
        t->multicast = td->multicast;
        if (td->multicast && td->nvlink != COMM_NVLINK_SWITCH) {
            diag_error(d, td->at, "topologies.multicast",
                       "multicast needs an NVSwitch; expected nvlink: switch with it, got "
                       "nvlink: %s",
                       nvlink_names[td->nvlink]);
        }
    }
    if (cd->nvls.src && !cd->nvls.src[0]) {
        diag_error(d, cd->nvls.at, "nvls_archs.src",
                   "empty source; expected where the value comes from, got ''");
    }
    out->n_nvls_archs = (int)cd->nvls.n;
    for (size_t i = 0; i < cd->nvls.n; i++) {
        snprintf(out->nvls_archs[i], sizeof out->nvls_archs[i], "%s", cd->nvls.value[i]);
    }
    out->default_net = comm_net_find(out, cd->default_net);
    if (out->default_net < 0) {
        diag_error(d, cd->default_net_at, "default_network",
                   "unknown network; expected a name under networks, got '%s'", cd->default_net);
    }
}

int comm_load_buffer(const char *name, const void *buf, size_t len, diag *d, comm_params *out)
{
    memset(out, 0, sizeof *out);
    comm_doc cd;
    memset(&cd, 0, sizeof cd);
    return cfg_load_buffer(name, buf, len, doc_fields, &cd, finish, out, d);
}

int comm_load_net(const comm_params *p, const char *name, src_loc at, const char *field,
                  diag *d)
{
    if (!name) {
        return p->default_net;
    }
    int i = comm_net_find(p, name);
    if (i < 0) {
        char names[256];
        comm_net_names(p, names, sizeof names);
        diag_error(d, at, field, "unknown network; expected one of [%s], got '%s'", names, name);
    }
    return i;
}

int comm_load_default(diag *d, comm_params *out)
{
    const unsigned char *data;
    size_t len;
    if (!embedded_get("model/physics/comm.yaml", &data, &len)) {
        diag_error(d, (src_loc){"model/physics/comm.yaml", 0, 0}, "", "not embedded in this build");
        return SIM_EINPUT;
    }
    return comm_load_buffer("model/physics/comm.yaml", data, len, d, out);
}
