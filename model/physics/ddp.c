/* model/physics/ddp.c - DDP placement, step time and memory (see ddp.h). */
#include "model/physics/ddp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include "model/physics/predict.h"

static int per_gpu_max(const ddp_job *job)
{
    return job->mig ? job->mig->max_instances : 1;
}

int ddp_shape(ddp_job *job, char *why, size_t why_len)
{
    if (job->workers < 1 || job->per_gpu < 1 || job->gpus_per_node < 1) {
        snprintf(why, why_len, "workers, per_gpu and gpus_per_node must be >= 1");
        return -1;
    }
    if (job->workers > DDP_MAX_WORKERS) {
        snprintf(why, why_len, "%d workers; at most %d are modelled", job->workers,
                 DDP_MAX_WORKERS);
        return -1;
    }
    int cap = per_gpu_max(job);
    if (job->per_gpu > cap) {
        if (job->mig) {
            snprintf(why, why_len,
                     "per_gpu %d: a GPU holds at most %d %s instances; expected per_gpu <= %d",
                     job->per_gpu, cap, job->mig->name, cap);
        } else {
            snprintf(why, why_len,
                     "per_gpu %d on whole GPUs: a whole GPU holds one worker; expected per_gpu "
                     "1, or a MIG partition",
                     job->per_gpu);
        }
        return -1;
    }
    int per_node = job->per_gpu * job->gpus_per_node;
    if (job->n_nodes == 0) {
        int n = (job->workers + per_node - 1) / per_node;
        if (n > DDP_MAX_NODES) {
            snprintf(why, why_len, "%d workers need %d nodes; at most %d are modelled",
                     job->workers, n, DDP_MAX_NODES);
            return -1;
        }
        job->n_nodes = n;
        for (int i = 0; i < n; i++) {
            int left = job->workers - i * per_node;
            job->topology[i] = left < per_node ? left : per_node;
        }
    } else {
        if (job->n_nodes > DDP_MAX_NODES) {
            snprintf(why, why_len, "%d nodes; at most %d are modelled", job->n_nodes,
                     DDP_MAX_NODES);
            return -1;
        }
        int sum = 0;
        for (int i = 0; i < job->n_nodes; i++) {
            sum += job->topology[i];
        }
        if (sum == 0) {
            for (int i = 0; i < job->n_nodes; i++) {
                job->topology[i] = job->workers / job->n_nodes +
                                   (i < job->workers % job->n_nodes ? 1 : 0);
            }
            sum = job->workers;
        }
        if (sum != job->workers) {
            snprintf(why, why_len,
                     "topology places %d workers over %d nodes; expected it to add up to "
                     "workers = %d",
                     sum, job->n_nodes, job->workers);
            return -1;
        }
    }
    job->mig_busy = job->mig ? job->per_gpu : 0;
    for (int i = 0; i < job->n_nodes; i++) {
        if (job->topology[i] < 1 || job->topology[i] > per_node) {
            snprintf(why, why_len,
                     "topology[%d] = %d workers; expected 1 to per_gpu x gpus_per_node = %d", i,
                     job->topology[i], per_node);
            return -1;
        }
    }
    job->max_normal = ddp_expected_max(job->workers);
    return 0;
}

comm_node ddp_node(const comm_params *cp, const comm_topo *topo, const gpu_type *g, int gpus,
                   double nic_bytes_per_s, int nics)
{
    comm_node n = {
        .gpus = gpus,
        .gpus_per_root = topo ? topo->gpus_per_root : cp->gpus_per_root,
        .nvlink_bytes_per_s = g->nvlink_bytes_per_s / 2, /* the catalog's total is both ways */
        .pcie_bytes_per_s = g->pcie_bytes_per_s,
        .host_bytes_per_s = cp->host_mem_bytes_per_s,
        .nic_bytes_per_s = nic_bytes_per_s,
        .nvlink_group = 0,
        .nics = nics,
    };
    const gpu_measured *ms = &g->meas;
    for (int i = 0; i < ms->n_ar && i < COMM_MAX_NVL_CAL; i++) {
        comm_nvl_cal *c = &n.nvl_cal[n.n_nvl_cal++];
        c->ranks = ms->ar[i].gpus;
        for (int pr = 0; pr < COMM_PROTO_COUNT; pr++) {
            c->has[pr] = ms->ar[i].has[pr];
            c->latency_s[pr] = ms->ar[i].latency_s[pr];
            c->busbw[pr] = ms->ar[i].busbw_bytes_per_s[pr];
        }
        c->ll_max_bytes = ms->ar[i].ll_max_bytes;
    }
    n.nvls = topo && topo->multicast;
    if (topo && topo->nvlink == COMM_NVLINK_NONE) {
        n.nvlink_bytes_per_s = 0;
    } else if (topo && topo->nvlink == COMM_NVLINK_PAIRS) {
        n.nvlink_group = 2;
    }
    return n;
}

void ddp_layout(const ddp_job *job, const comm_params *cp, comm_node *nodes, comm_rank *ranks)
{
    int k = 0;
    for (int n = 0; n < job->n_nodes; n++) {
        nodes[n] = ddp_node(cp, job->topo, job->gpu, job->gpus_per_node, job->nic_bytes_per_s,
                            job->nics);
        if (job->gpus_per_root > 0) {
            nodes[n].gpus_per_root = job->gpus_per_root;
        }
        for (int w = 0; w < job->topology[n]; w++) {
            ranks[k++] = (comm_rank){n, w / job->per_gpu, job->mig != NULL};
        }
    }
}

int ddp_ring(const ddp_job *job, const comm_params *cp, comm_ring *out, char *why,
             size_t why_len)
{
    comm_node nodes[DDP_MAX_NODES];
    comm_rank *ranks = calloc((size_t)job->workers, sizeof *ranks);
    if (!ranks) {
        snprintf(why, why_len, "out of memory");
        memset(out, 0, sizeof *out);
        return -1;
    }
    ddp_layout(job, cp, nodes, ranks);
    int rc = comm_ring_build(cp, nodes, job->n_nodes, ranks, job->workers, out, why, why_len);
    free(ranks);
    return rc;
}

/* x rounded up to whole granules of g bytes (g > 0). */
static double granules(double x, double g)
{
    return ceil(x / g) * g;
}

void ddp_worker_mem(const ddp_job *job, const comm_params *cp, const comm_ring *ring,
                    ddp_mem *out)
{
    memset(out, 0, sizeof *out);
    out->profile_bytes = wl_mem_footprint_bytes(job->profile, job->batch);
    out->total_bytes = out->profile_bytes;
    if (job->workers < 2) {
        return;
    }
    out->bucket_bytes = cp->grad_copy_frac * job->grad_bytes;
    /* channels: NVLink's count when every hop inside a node is NVLink; before placement the
     * most a placement can give (whole GPUs of a type with NVLink that the node's wiring may
     * join) */
    bool nvlink;
    if (ring) {
        nvlink = ring->hops[COMM_LINK_NVLINK] > 0 && ring->hops[COMM_LINK_PCIE] == 0 &&
                 ring->hops[COMM_LINK_HOST] == 0;
    } else {
        nvlink = !job->mig && job->gpu->nvlink_bytes_per_s > 0 &&
                 !(job->topo && job->topo->nvlink == COMM_NVLINK_NONE);
    }
    double ch = nvlink ? cp->nccl_channels : cp->nccl_channels_other;
    out->channels = (int)ch;
    double g = cp->nccl_alloc_granule_bytes;
    /* a ring connection each way per channel: the receiver's three FIFOs, the sender's
     * granule; a MIG instance is staged through host memory (SHM), its FIFOs there */
    if (!job->mig) {
        double fifos = cp->nccl_ll_buffer_bytes + cp->nccl_ll128_buffer_bytes +
                       cp->nccl_simple_buffer_bytes;
        out->nccl_buffer_bytes = ch * (granules(fifos, g) + g);
    }
    /* the channel's state: one device peer per rank, and the other arrays a granule each */
    out->nccl_state_bytes =
        ch * (granules(job->workers * cp->nccl_channel_peer_bytes, g) +
              (cp->nccl_channel_allocs - 1) * g);
    out->total_bytes += out->bucket_bytes + out->nccl_buffer_bytes + out->nccl_state_bytes;
}

/* Memory the co-runners of a shared worker hold on its partition (bytes): share->peers - 1 more
 * workers like it, and every with[i] co-runner's footprint (with_n of them; none for a co-runner
 * without a profile). */
static double corunner_mem_bytes(const partition_cfg *share, double worker_bytes)
{
    double b = (share->peers > 1 ? share->peers - 1 : 0) * worker_bytes;
    for (int i = 0; i < share->n_with && i < PART_MAX_WITH; i++) {
        if (share->with[i]) {
            int n = share->with_n[i] > 0 ? share->with_n[i] : 1;
            b += n * wl_mem_footprint_bytes(share->with[i], share->with_batch[i]);
        }
    }
    return b;
}

/* True when the worker's GPU is shared with someone (time-slicing or MPS co-runners). */
static bool is_shared(const partition_cfg *share)
{
    return share && share->sharing != SHARE_EXCLUSIVE && (share->peers > 1 || share->n_with > 0);
}

double ddp_expected_max(int n)
{
    if (n < 2) {
        return 0;
    }
    /* E[max] = integral of x n phi(x) Phi(x)^(n-1) dx by the trapezoidal rule over [-L, L] at
     * step h: for a smooth integrand that decays like a Gaussian it converges geometrically in
     * 1/h (within 1e-12 of the exact e_2 and e_3 at h = 1/8), and beyond L = 9 the integrand is
     * below 1e-15 for every n up to DDP_MAX_WORKERS. 145 evaluations: ddp_step is in fits' loops */
    const double lim = 9.0, h = 0.125;
    const int steps = (int)(2 * lim / h);
    double sum = 0;
    for (int i = 1; i < steps; i++) { /* both ends are 0 to double precision */
        double x = -lim + i * h;
        sum += x * n * gsl_ran_ugaussian_pdf(x) * pow(gsl_cdf_ugaussian_P(x), n - 1);
    }
    return sum * h;
}

/* s, the relative sd of one worker's host time in one step (ddp.h): sqrt(host_spread^2 +
 * step_cv^2), the spread between processes (cp) and p's from step to step; host_spread alone
 * when p states no step_cv. */
static double ddp_host_sd(const comm_params *cp, const wl_profile *p)
{
    double c = p->step_cv > 0 ? p->step_cv : 0;
    return sqrt(cp->host_spread * cp->host_spread + c * c);
}

int ddp_buckets(const wl_profile *p, const comm_params *cp, double grad_bytes)
{
    if (p->grad_buckets >= 1) {
        return (int)p->grad_buckets;
    }
    double k = ceil(grad_bytes / cp->bucket_bytes);
    if (p->grad_tensors >= 1 && k > p->grad_tensors) {
        k = p->grad_tensors;
    }
    return k >= 1 ? (int)k : 1;
}

double ddp_overlap(double fwd, double bwd, int k, double t_ar, double f_sm, double q)
{
    if (k > DDP_OVERLAP_MAX_BUCKETS) { /* walked as that many equal groups (ddp.h) */
        t_ar *= (double)k / DDP_OVERLAP_MAX_BUCKETS;
        k = DDP_OVERLAP_MAX_BUCKETS;
    }
    double t = fwd, w = 0, left = 0; /* clock, backward done, all-reduce left (alone s) */
    int started = 0;                   /* buckets whose all-reduce has started */
    for (;;) {
        /* bucket i is ready once backward has done (i + 1) / k of its work */
        int ready = bwd > 0 ? (int)floor(w / bwd * k + 1e-9) : k;
        ready = ready > k ? k : ready;
        if (!(left > 0) && started < ready) {
            left = t_ar;
            started++;
        }
        bool busy = w < bwd;
        if (!(left > 0)) {
            if (!busy) {
                return t;
            }
            double next = (double)(ready + 1) / k * bwd;
            t += fmin(next, bwd) - w;
            w = fmin(next, bwd);
            continue;
        }
        if (!busy) {
            t += left;
            left = 0;
            continue;
        }
        /* both: backward at 1 - f_sm of its speed, the all-reduce at q of its rate */
        double next = fmin((double)(ready + 1) / k * bwd, bwd);
        double dt_w = (next - w) / (1 - f_sm), dt_c = left / q;
        double dt = fmin(dt_w, dt_c);
        t += dt;
        w = dt == dt_w ? next : w + dt * (1 - f_sm);
        left = dt == dt_c ? 0 : left - dt * q;
    }
}

void ddp_step(const ddp_job *job, const comm_params *cp, const phys_params *m,
              const comm_ring *ring, double ring_rate, ddp_result *out)
{
    memset(out, 0, sizeof *out);
    partition_cfg c;
    partition_cfg_init(&c, job->gpu);
    c.mig = job->mig;
    c.mig_busy = job->mig ? job->mig_busy : 0;
    ddp_mem mem;
    ddp_worker_mem(job, cp, ring, &mem);
    out->mem = mem;
    out->mem_bytes = mem.total_bytes;
    out->mem_cap_bytes = speed_partition_mem_bytes(&c);
    double others = job->share ? corunner_mem_bytes(job->share, out->mem_bytes) : 0;
    if (out->mem_bytes + others > out->mem_cap_bytes) {
        const double gib = 1073741824.0, mib = 1048576.0;
        int len = snprintf(out->reason, sizeof out->reason,
                           "worker needs %.4g GiB (profile %.4g GiB at batch %g",
                           mem.total_bytes / gib, mem.profile_bytes / gib, job->batch);
        if (job->workers > 1 && len > 0 && (size_t)len < sizeof out->reason) {
            len += snprintf(out->reason + len, sizeof out->reason - (size_t)len,
                            " + DDP buckets %.3g GiB + NCCL %.0f MiB: %d channels x (%.0f MiB "
                            "buffers + %.0f MiB state)",
                            mem.bucket_bytes / gib,
                            (mem.nccl_buffer_bytes + mem.nccl_state_bytes) / mib, mem.channels,
                            mem.nccl_buffer_bytes / mem.channels / mib,
                            mem.nccl_state_bytes / mem.channels / mib);
        }
        if (len > 0 && (size_t)len < sizeof out->reason) {
            double over = out->mem_bytes + others - out->mem_cap_bytes;
            if (others > 0) {
                snprintf(out->reason + len, sizeof out->reason - (size_t)len,
                         "), co-runners %.4g GiB > partition's %.4g GiB (%.0f MiB over)",
                         others / gib, out->mem_cap_bytes / gib, ceil(over / mib));
            } else {
                snprintf(out->reason + len, sizeof out->reason - (size_t)len,
                         ") > partition's %.4g GiB (%.0f MiB over)", out->mem_cap_bytes / gib,
                         ceil(over / mib));
            }
        }
        out->outcome = SPEED_OOM;
        return;
    }
    if (job->workers > 1 && !(job->grad_bytes > 0)) {
        snprintf(out->reason, sizeof out->reason,
                 "gradient size unknown: the profile needs grad_bytes for %d workers",
                 job->workers);
        out->outcome = SPEED_INVALID;
        return;
    }
    const partition_cfg *pc = job->share ? job->share : &c;
    speed_result r;
    predict_unit_estimate(job->profile, job->batch, pc, m, &r);
    if (r.outcome != SPEED_OK) {
        out->outcome = r.outcome;
        snprintf(out->reason, sizeof out->reason, "%s", r.reason);
        return;
    }
    double upi = wl_units_per_iter(job->profile, job->batch);
    double iter = r.unit_time_s * upi;
    const wl_profile *p = job->profile;
    double o = p->host_overlap < 0 ? 0 : p->host_overlap > 1 ? 1 : p->host_overlap;
    out->host_s = r.iter_host_s;
    /* G_t: the GPU time that gives the (possibly shared) iteration time with this H and o;
     * the model's own G where the host sets the iteration */
    double g_t = iter - (1 - o) * r.iter_host_s;
    out->gpu_s = g_t > o * r.iter_host_s ? g_t : r.iter_gpu_s;
    if (job->workers < 2) {
        out->step_s = iter;
        out->throughput = job->workers * upi / out->step_s;
        out->outcome = SPEED_OK;
        return;
    }
    /* time-slicing: NCCL's kernels run in the worker's slices, stretched as its GPU work is */
    double stretch = 1;
    if (is_shared(job->share) && job->share->sharing == SHARE_TIMESLICE) {
        partition_cfg solo = *job->share;
        solo.sharing = SHARE_EXCLUSIVE;
        solo.peers = 1;
        solo.n_with = 0;
        speed_result rs;
        predict_unit_estimate(job->profile, job->batch, &solo, m, &rs);
        double g_solo = rs.outcome == SPEED_OK ? rs.iter_gpu_s : 0;
        stretch = g_solo > 0 && out->gpu_s > g_solo ? out->gpu_s / g_solo : 1;
    }
    double x = ring_rate > 0 ? ring_rate : comm_ring_alone_rate(ring);
    out->rate_bytes_per_s = x;
    double G = job->grad_bytes;
    int k = ddp_buckets(p, cp, G);
    /* the GPU path: forward, backward with the bucket all-reduces beside it, the copy of the
     * buckets back into the gradients, the optimiser step */
    double opt = fmin(fmax(p->optimizer_frac, 0), 1) * out->gpu_s;
    double bf = p->backward_frac > 0 && p->backward_frac < 1 ? p->backward_frac
                                                               : cp->backward_frac;
    double sms = speed_partition_sms(&c);
    double bw = speed_partition_bandwidth(&c, sms, m);
    double copy = bw > 0 ? 2 * G / bw : 0; /* read the gradient, write its copy (and back) */
    double fwd = (1 - bf) * (out->gpu_s - opt), bwd = bf * (out->gpu_s - opt) + copy;
    double f_sm = sms > 0 ? fmin(cp->nccl_channels / sms, DDP_MAX_SM_FRAC) : 0;
    double t_ar = stretch * comm_ring_allreduce_time(cp, ring, G / k, x);
    double end = ddp_overlap(fwd, bwd, k, t_ar, f_sm, cp->overlap_comm_frac);
    out->comm_s = k * t_ar;
    out->n_buckets = k;
    double gpu_path = end + copy + opt;
    /* the host: the reducer's launches (two per gradient tensor, one per broadcast buffer)
     * and one collective per bucket and per buffer broadcast */
    out->ddp_host_s = p->ddp_host_s > 0
                          ? p->ddp_host_s
                          : cp->host_launch_s * (2 * p->grad_tensors + p->buffer_tensors) +
                                cp->host_collective_s *
                                    (k + (p->buffer_tensors > 0 ? cp->buffer_broadcasts : 0));
    double host = out->host_s + out->ddp_host_s;
    double e_n = job->max_normal > 0 ? job->max_normal : ddp_expected_max(job->workers);
    out->straggler_s = host * ddp_host_sd(cp, p) * e_n;
    /* the loop's own host part keeps its overlap with the GPU; DDP's host work is launches
     * inside forward and backward, issued ahead of the GPU's queue: it overlaps the GPU path
     * (calib/ddp/NOTES.md 'Where DDP's host work falls') */
    double grow = 1 + ddp_host_sd(cp, p) * e_n;
    double own = out->host_s * grow;
    out->step_s = (1 - o) * own + fmax(o * own + out->ddp_host_s * grow, gpu_path);
    out->exposed_s = out->step_s - iter;
    out->throughput = job->workers * upi / out->step_s;
    out->outcome = SPEED_OK;
}
