/* model/physics/share_mps.c - MPS: SM water-filling, bandwidth pool, kernel queueing.
 * See share_mps.h for the model and its assumptions. */
#include "model/physics/share_mps.h"

#include <math.h>

#include "model/physics/power.h"
#include "sim/err.h"
#include "sim/xalloc.h"

/* Water-filling: the level L with min(d0, L) + sum_j w_j min(d_j, L) = cap (bisection); +inf when
 * everything fits. */
static double fill_level(double d0, int n, const double *w, const double *d, double cap)
{
    double total = d0, hi = d0;
    for (int j = 0; j < n; j++) {
        total += w[j] * d[j];
        hi = fmax(hi, d[j]);
    }
    if (total <= cap) {
        return HUGE_VAL;
    }
    double lo = 0;
    for (int it = 0; it < 100; it++) {
        double mid = 0.5 * (lo + hi), used = fmin(d0, mid);
        for (int j = 0; j < n; j++) {
            used += w[j] * fmin(d[j], mid);
        }
        if (used > cap) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    return lo;
}

/* Whether a profile's SM-time beside MPS peers was measured (mps_sm_growth > 0): its kernels
 * keep their SM-time where peers take SMs and grow by 1 + a ln k (share_mps.h). */
static bool grows(const wl_profile *p)
{
    return p->mps_sm_growth > 0;
}

/* beta: share of a client's kernels issued while its previous kernel is still queued or running
 * (back to back), from its solo GPU time gpu_s: 1 when its own GPU work outlasts the host time
 * that issues it (g >= o H: the host runs ahead), else g / (o H), the share of its launching
 * window during which its own kernels run, i.e. the chance that a launch at a random moment of
 * it finds its predecessor in flight. The time its kernels wait for others is left out on
 * purpose (share_mps.h says why). */
static double back_to_back_share(const share_mps_class *cl, double gpu_s)
{
    double launch_s = cl->p->host_overlap * wl_host_s(cl->p, cl->batch);
    return launch_s > gpu_s ? gpu_s / launch_s : 1.0;
}

/* x, the time per iteration a client's kernels run or wait, solving
 * x = base + sum_j per_kernel[j] min(kernels, rate[j] x): the kernels of j it meets while in
 * flight, at most one per kernel of its own. The right side is concave, increasing and bounded,
 * so the root is unique; bisection finds it to double precision, also where the coupling is
 * strong (sum per_kernel rate near 1), which plain iteration would approach only slowly. */
static double inflight_solve(double base, int n, const double *per_kernel, const double *rate,
                             double kernels)
{
    double lo = base, hi = base;
    for (int j = 0; j < n; j++) {
        hi += per_kernel[j] * kernels;
    }
    for (int it = 0; it < 200 && hi - lo > 1e-15 * hi; it++) {
        double x = 0.5 * (lo + hi), f = base;
        for (int j = 0; j < n; j++) {
            f += per_kernel[j] * fmin(kernels, rate[j] * x);
        }
        if (f > x) {
            lo = x;
        } else {
            hi = x;
        }
    }
    return 0.5 * (lo + hi);
}

/* What the solve knows of each class: fixed by the setup (want, kern_s, b2b, demand, ser) or
 * moved each round (b, rate). */
typedef struct mps_state {
    double part_sms;                  /* SMs of the partition */
    double bw_pool;                   /* its bandwidth, driven by all its SMs */
    double want[SHARE_MAX_CLASSES];   /* SMs a client's kernels ask for: min(cap, P) */
    double b[SHARE_MAX_CLASSES];      /* fraction of its time a client's kernels run */
    double kern_s[SHARE_MAX_CLASSES]; /* d: one kernel's duration on the SMs it asks for */
    double b2b[SHARE_MAX_CLASSES];    /* beta: share of its kernels issued back to back */
    double demand[SHARE_MAX_CLASSES]; /* bandwidth its kernels draw while they run unhindered */
    double ser[SHARE_MAX_CLASSES][SHARE_MAX_CLASSES]; /* share of the kernels of i and j that
                                                         cannot run side by side */
    double rate[SHARE_MAX_CLASSES];                   /* kernels one client starts per second */
    double phi[SHARE_MAX_CLASSES];  /* share of its solo GPU time its kernels run (1: no gaps) */
    double gap_s[SHARE_MAX_CLASSES]; /* its solo's launch gaps per iteration: (1 - phi) G */
    double bw_want[SHARE_MAX_CLASSES]; /* bandwidth the SMs it asks for drive */
    double ln_clients;                 /* ln k, k the clients on the partition (all classes) */
} mps_state;

/* The fixed part of st from each class alone on the SMs it asks for; iter_s[i] starts at that
 * solo time, b at 1. */
static void mps_setup(int n_cls, const share_mps_class *cls, const partition_cfg *c,
                      const phys_params *m, mps_state *st, double *iter_s)
{
    st->part_sms = speed_partition_sms(c);
    double cap = speed_mps_sms((int)st->part_sms, c->mps_percent, m);
    st->bw_pool = speed_partition_bandwidth(c, st->part_sms, m);
    int clients = 0;
    for (int i = 0; i < n_cls; i++) {
        clients += cls[i].n;
    }
    st->ln_clients = log((double)clients);
    for (int i = 0; i < n_cls; i++) {
        st->want[i] = fmin(cap, wl_max_sms(cls[i].p, cls[i].batch));
        st->bw_want[i] = speed_partition_bandwidth(c, st->want[i], m);
        st->b[i] = 1.0;
        speed_result alone;
        speed_solo_iter(cls[i].p, cls[i].batch, c, st->want[i], 1.0, 1.0, m, &alone);
        double bytes = wl_mem_traffic_bytes(cls[i].p, cls[i].batch);
        st->demand[i] = alone.iter_gpu_s > 0 ? bytes / alone.iter_gpu_s : 0;
        st->phi[i] = wl_kernel_share(cls[i].p);
        st->gap_s[i] = (1.0 - st->phi[i]) * alone.iter_gpu_s;
        double kernels = cls[i].p->kernels_per_iter;
        st->kern_s[i] = kernels > 0 ? st->phi[i] * alone.iter_gpu_s / kernels : 0;
        st->b2b[i] = back_to_back_share(&cls[i], alone.iter_gpu_s);
        iter_s[i] = wl_iter_time(wl_host_s(cls[i].p, cls[i].batch), cls[i].p->host_overlap,
                                 alone.iter_gpu_s);
    }
    for (int i = 0; i < n_cls; i++) {
        for (int j = 0; j < n_cls; j++) {
            /* kernels of two classes (both with a kernel count) queue for each other where
             * both cannot hold the SMs they ask for at once: the share of the smaller demand
             * that does not fit beside the other; clients whose demands fit side by side (caps
             * summing to at most 100 %) never wait. Identical clients only share the SMs. */
            bool queue = j != i && st->kern_s[i] > 0 && st->kern_s[j] > 0;
            st->ser[i][j] = queue ? fmin(1.0, fmax(0.0, st->want[i] + st->want[j] - st->part_sms) /
                                                  fmin(st->want[i], st->want[j]))
                                  : 0.0;
        }
    }
}

/* One client of class i in the current state: its iteration time (returned) and, in *gpu_s, the
 * time its kernels run per iteration (waits and launch gaps left out). */
static double client_iter(int i, int n_cls, const share_mps_class *cls, const partition_cfg *c,
                          const phys_params *m, const mps_state *st, double *gpu_s)
{
    /* others in their GPU phase, by expected count; beside: the part of them that shares the
     * SMs, bandwidth and power with i's kernels. A kernel of i issued back to back runs alone:
     * it waited for the pending kernel of a client it queues with, whose next kernel waits
     * behind it (below). A kernel arriving after a launch gap shares them with the other's
     * running kernel, as where nobody queues. */
    double w[SHARE_MAX_CLASSES], beside[SHARE_MAX_CLASSES], n_beside = 0;
    for (int j = 0; j < n_cls; j++) {
        w[j] = (cls[j].n - (j == i ? 1 : 0)) * st->b[j];
        beside[j] = w[j] * (1.0 - st->ser[i][j] * st->b2b[i]);
        n_beside += beside[j];
    }
    double level = fill_level(st->want[i], n_cls, beside, st->want, st->part_sms);
    /* SMs, clock (power drawn by the busy SMs of i and of the clients beside) and GPU times */
    double sms[SHARE_MAX_CLASSES], busy[WL_CLASS_COUNT] = {0};
    for (int j = 0; j < n_cls; j++) {
        sms[j] = fmin(st->want[j], level);
        double tot = wl_compute_total_sm_s(cls[j].p, cls[j].batch);
        double weight = (j == i ? 1.0 : 0.0) + beside[j];
        for (int k = 0; k < WL_CLASS_COUNT && tot > 0; k++) {
            busy[k] += weight * sms[j] * wl_compute_sm_s(cls[j].p, (wl_class)k, cls[j].batch) / tot;
        }
    }
    double f = power_clock_factor(c->gpu, m, busy);
    /* a client whose SM-time beside peers was measured (mps_sm_growth stated, share_mps.h):
     * the SMs peers take stretch its memory part with the compute, at the bandwidth its
     * asked-for SMs drive times the share of them it holds, so its kernels keep their SM-time
     * (and grow, below); SMs a cap withholds keep the SM-count curve (a lone capped client).
     * Without the measurement: the SM-count curve also beside peers. */
    bool conserve = grows(cls[i].p);
    double bw_share = 1.0;
    if (conserve && sms[i] < st->want[i]) {
        bw_share = sms[i] / st->want[i] * st->bw_want[i] / speed_partition_bandwidth(c, sms[i], m);
    }
    speed_result r;
    speed_solo_iter(cls[i].p, cls[i].batch, c, sms[i], f, bw_share, m, &r);
    /* bandwidth pool: water-filled among the demands of the clients running beside (what their
     * kernels draw unhindered: a kernel moves its bytes while it runs, whatever its SM share) */
    double pool = st->bw_pool / (1.0 + m->mps_bw_contention * n_beside);
    double g = r.iter_gpu_s;
    double bytes = wl_mem_traffic_bytes(cls[i].p, cls[i].batch);
    if (conserve) {
        /* the average rates drawn (bytes over the GPU time: a peer that keeps its SM-time
         * draws in proportion to its SMs) water-filled; a client drawing more than its level
         * takes bytes / level, which meets its unhindered time where the pool starts to bind */
        double demand[SHARE_MAX_CLASSES];
        for (int j = 0; j < n_cls; j++) {
            demand[j] = st->demand[j] * (grows(cls[j].p) ? sms[j] / st->want[j] : 1.0);
        }
        double bw_level = fill_level(g > 0 ? bytes / g : 0, n_cls, beside, demand, pool);
        if (bytes > 0 && bw_level > 0 && bytes / bw_level > g) {
            g = bytes / bw_level;
        }
        /* SM-time growth beside peers: 1 + a ln k with k clients on the partition */
        g *= 1.0 + cls[i].p->mps_sm_growth * st->ln_clients;
    } else {
        double bw_level = fill_level(st->demand[i], n_cls, beside, st->demand, pool);
        if (bytes > 0 && bw_level > 0 && bw_level < r.bw_bytes_per_s) {
            g = speed_roofline(r.iter_compute_s, bytes / bw_level, m->roofline_p);
        }
    }
    /* exposed tail (share_mps.h): the kernels after the iteration's last launch stretch with
     * the rest, beyond the solo's tail that H holds */
    double tail = speed_tail_excess_s(cls[i].p, cls[i].batch, c, g, f, m);
    /* launch gaps (share_mps.h): the solo's (1 - phi) G keep their length and hold nothing;
     * only the kernels' share phi of the GPU time stretches with the SMs and bandwidth */
    double kern = st->phi[i] * g;
    g = st->gap_s[i] + kern;
    /* kernel queueing (share_mps.h): a kernel issued back to back waits for the whole of the
     * kernel another client queued meanwhile: i waits for every kernel a client it queues with
     * starts while i has kernels in flight, at most one per kernel of i; a kernel issued after a
     * launch gap arrives at a random moment and waits mps_kernel_wait of the kernel running
     * then, if one is (w_j) */
    double kernels = cls[i].p->kernels_per_iter, random_wait = 0;
    double per_kernel[SHARE_MAX_CLASSES]; /* back-to-back wait per kernel of j met */
    for (int j = 0; j < n_cls; j++) {
        double hold = st->ser[i][j] * fmin(1.0, st->want[j] / st->part_sms) * st->kern_s[j];
        per_kernel[j] = st->b2b[i] * cls[j].n * hold;
        random_wait += (1.0 - st->b2b[i]) * kernels * m->mps_kernel_wait * w[j] * hold;
    }
    double inflight = inflight_solve(g + random_wait, n_cls, per_kernel, st->rate, kernels);
    *gpu_s = kern;
    return wl_iter_time_tail(wl_host_s(cls[i].p, cls[i].batch), cls[i].p->host_overlap, inflight,
                             tail);
}

int share_mps_solve(int n_cls, const share_mps_class *cls, const partition_cfg *c,
                    const phys_params *m, double *iter_s, double *gpu_frac)
{
    SIM_ASSERT(n_cls >= 1 && n_cls <= SHARE_MAX_CLASSES);
    mps_state st;
    mps_setup(n_cls, cls, c, m, &st, iter_s);
    for (int it = 0; it < SHARE_MPS_MAX_ITER; it++) {
        double max_change = 0;
        for (int j = 0; j < n_cls; j++) {
            double r = iter_s[j] > 0 ? cls[j].p->kernels_per_iter / iter_s[j] : 0;
            st.rate[j] = it == 0 ? r : 0.5 * st.rate[j] + 0.5 * r; /* damped as b */
        }
        for (int i = 0; i < n_cls; i++) {
            double g;
            double t = client_iter(i, n_cls, cls, c, m, &st, &g);
            iter_s[i] = t;
            /* b: the share of time its kernels run (hold SMs and bandwidth); waiting does not */
            double nb = t > 0 ? g / t : 0;
            double nb_damped = 0.5 * st.b[i] + 0.5 * nb;
            max_change = fmax(max_change, fabs(nb_damped - st.b[i]));
            st.b[i] = nb_damped;
        }
        if (max_change < SHARE_MPS_TOL) {
            for (int i = 0; gpu_frac && i < n_cls; i++) {
                gpu_frac[i] = st.b[i];
            }
            return 0;
        }
    }
    return SIM_ENOCONV;
}
