/* model/share.c - time-slicing (MVA, product form, round-robin simulation), MPS, shared memory.
 * See share.h for the models and their assumptions. */
#include "model/share.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "model/power.h"
#include "sim/err.h"
#include "sim/xalloc.h"

/* Exact MVA with one load-dependent station (Reiser & Lavenberg 1980; Lazowska et al.,
 * "Quantitative System Performance", 1984, ch. 20): for population n,
 *   R(n)   = sum_{j=1..n} j / mu(j) * p(j-1 | n-1)        mu(j) = eta(j) / G
 *   X(n)   = n / (H + R(n))
 *   p(j|n) = X(n) / mu(j) * p(j-1 | n-1),  p(0|n) = 1 - sum_{j>=1} p(j|n). */
double share_ts_mva(int k, double host_s, double gpu_s, const double *eta, double *gpu_busy)
{
    SIM_ASSERT(k >= 1 && k <= SHARE_MAX_JOBS);
    if (gpu_s <= 0) {
        if (gpu_busy) {
            *gpu_busy = 0;
        }
        return host_s > 0 ? 1.0 / host_s : HUGE_VAL;
    }
    double p_prev[SHARE_MAX_JOBS + 1] = {1.0};
    double p_cur[SHARE_MAX_JOBS + 1];
    double x = 0;
    for (int n = 1; n <= k; n++) {
        double r = 0;
        for (int j = 1; j <= n; j++) {
            double e = j == 1 ? 1.0 : eta[j];
            r += j * gpu_s / e * p_prev[j - 1];
        }
        x = n / (host_s + r);
        double sum = 0;
        for (int j = 1; j <= n; j++) {
            double e = j == 1 ? 1.0 : eta[j];
            p_cur[j] = x * gpu_s / e * p_prev[j - 1];
            sum += p_cur[j];
        }
        p_cur[0] = fmax(0.0, 1.0 - sum);
        memcpy(p_prev, p_cur, sizeof(double) * (size_t)(n + 1));
    }
    if (gpu_busy) {
        *gpu_busy = 1.0 - p_prev[0];
    }
    return x / k;
}

/* Product form of a closed network with a delay station (think time Z_c) and a processor-sharing
 * station of capacity beta(n) = eta(n) (total rate with n jobs present; BCMP 1975):
 *   pi(n_1..n_C) ∝ n! / prod(n_c!) * prod(D_c^{n_c}) / prod_{j=1..n} beta(j)
 *                  * prod(Z_c^{N_c - n_c} / (N_c - n_c)!)
 * Class c completes GPU phases at rate beta(n) * (n_c / n) / D_c in that state. Weights are
 * kept in logarithms; Z = 0 admits only n_c = N_c. */
int share_ts_solve(int n_cls, const share_ts_class *cls, const double *eta, double *x_per_job,
                   double *gpu_busy)
{
    if (n_cls < 1 || n_cls > SHARE_MAX_CLASSES) {
        return SIM_ERANGE;
    }
    double states = 1;
    int total = 0;
    for (int c = 0; c < n_cls; c++) {
        states *= cls[c].n + 1;
        total += cls[c].n;
    }
    if (states > 1e6 || total > SHARE_MAX_JOBS) {
        return SIM_ERANGE;
    }
    double log_beta_fact[SHARE_MAX_JOBS + 1] = {0}; /* sum_{j<=n} log beta(j) */
    for (int j = 1; j <= total; j++) {
        log_beta_fact[j] = log_beta_fact[j - 1] + (j == 1 ? 0.0 : log(eta[j]));
    }
    int n[SHARE_MAX_CLASSES] = {0};
    double log_w_max = -HUGE_VAL;
    /* two passes: find the largest log weight, then sum scaled weights */
    double z = 0, busy = 0, x[SHARE_MAX_CLASSES] = {0};
    for (int pass = 0; pass < 2; pass++) {
        memset(n, 0, sizeof n);
        for (;;) {
            double lw = 0;
            int tot = 0;
            bool ok = true;
            for (int c = 0; c < n_cls; c++) {
                int out = cls[c].n - n[c];
                tot += n[c];
                lw -= lgamma(n[c] + 1.0);
                if (n[c] > 0) {
                    if (cls[c].gpu_s <= 0) {
                        ok = false;
                    } else {
                        lw += n[c] * log(cls[c].gpu_s);
                    }
                }
                if (out > 0) {
                    if (cls[c].host_s <= 0) {
                        ok = false;
                    } else {
                        lw += out * log(cls[c].host_s) - lgamma(out + 1.0);
                    }
                }
            }
            if (ok) {
                lw += lgamma(tot + 1.0) - log_beta_fact[tot];
                if (pass == 0) {
                    log_w_max = fmax(log_w_max, lw);
                } else {
                    double w = exp(lw - log_w_max);
                    z += w;
                    if (tot > 0) {
                        double beta = tot == 1 ? 1.0 : eta[tot];
                        busy += w;
                        for (int c = 0; c < n_cls; c++) {
                            if (n[c] > 0) {
                                x[c] += w * beta * n[c] / tot / cls[c].gpu_s;
                            }
                        }
                    }
                }
            }
            int c = 0;
            while (c < n_cls && ++n[c] > cls[c].n) {
                n[c] = 0;
                c++;
            }
            if (c == n_cls) {
                break;
            }
        }
    }
    if (!(z > 0)) {
        return SIM_ERANGE;
    }
    for (int c = 0; c < n_cls; c++) {
        /* a class with no GPU work completes iterations at its host rate */
        x_per_job[c] = cls[c].gpu_s > 0 ? x[c] / z / cls[c].n : 1.0 / cls[c].host_s;
    }
    if (gpu_busy) {
        *gpu_busy = busy / z;
    }
    return 0;
}

/* ---- per-iteration round-robin simulation ---- */

static double draw_phase(gsl_rng *r, double mean, double cv)
{
    if (mean <= 0) {
        return 0;
    }
    if (cv <= 0) {
        return mean;
    }
    double shape = 1.0 / (cv * cv);
    return gsl_ran_gamma(r, shape, mean / shape);
}

int share_rr_simulate(const share_rr_cfg *c, double *throughput_per_job, double *gpu_busy)
{
    if (c->k < 1 || c->k > SHARE_MAX_JOBS || !(c->gpu_s > 0) || c->host_s < 0 ||
        !(c->quantum_s > 0) || c->n_iters < 10 || c->phase_cv < 0) {
        return SIM_EINPUT;
    }
    int k = c->k;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, (unsigned long)c->seed);
    double host_end[SHARE_MAX_JOBS]; /* +inf while the process is at the GPU */
    double remaining[SHARE_MAX_JOBS]; /* useful GPU work left in the current phase (s) */
    int queue[SHARE_MAX_JOBS];        /* ready queue, round-robin order; queue[0] runs */
    int nq = 0;
    for (int i = 0; i < k; i++) {
        /* start every process in its host phase, staggered by the random draw */
        host_end[i] = draw_phase(r, c->host_s, c->phase_cv);
        remaining[i] = 0;
    }
    double now = 0, slice_end = HUGE_VAL, t_start = 0, busy_time = 0;
    long done = 0, warm = c->n_iters / 10, counted = 0;
    while (done < c->n_iters) {
        /* next host completion */
        int hi = -1;
        for (int i = 0; i < k; i++) {
            if (isfinite(host_end[i]) && (hi < 0 || host_end[i] < host_end[hi])) {
                hi = i;
            }
        }
        double rate = nq >= 2 ? c->eta[nq] : 1.0; /* useful work per wall second */
        double run_end = nq > 0 ? now + remaining[queue[0]] / rate : HUGE_VAL;
        double t_gpu = fmin(slice_end, run_end);
        double t_next = hi >= 0 ? fmin(host_end[hi], t_gpu) : t_gpu;
        SIM_ASSERT(isfinite(t_next) && t_next >= now);
        if (nq > 0) {
            /* finishing exactly: set 0 rather than subtract (now + r - now != r in floating point) */
            bool finishes = run_end <= slice_end && !(hi >= 0 && host_end[hi] < run_end);
            remaining[queue[0]] = finishes ? 0.0 : remaining[queue[0]] - (t_next - now) * rate;
            if (done >= warm) {
                busy_time += t_next - now;
            }
        }
        now = t_next;
        if (hi >= 0 && host_end[hi] <= now) {
            /* host phase over: join the tail of the ready queue with a new GPU phase */
            host_end[hi] = HUGE_VAL;
            remaining[hi] = draw_phase(r, c->gpu_s, c->phase_cv);
            queue[nq++] = hi;
            if (nq == 1) {
                slice_end = now + c->quantum_s;
            }
            continue;
        }
        if (nq == 0) {
            continue;
        }
        int cur = queue[0];
        if (remaining[cur] <= 0) {
            /* GPU phase complete: back to the host */
            memmove(queue, queue + 1, sizeof(int) * (size_t)(nq - 1));
            nq--;
            host_end[cur] = now + draw_phase(r, c->host_s, c->phase_cv);
            done++;
            if (done == warm) {
                t_start = now;
                busy_time = 0;
            } else if (done > warm) {
                counted++;
            }
            slice_end = nq > 0 ? now + c->quantum_s : HUGE_VAL;
        } else if (now >= slice_end) {
            /* quantum expired: rotate */
            memmove(queue, queue + 1, sizeof(int) * (size_t)(nq - 1));
            queue[nq - 1] = cur;
            slice_end = now + c->quantum_s;
        }
    }
    gsl_rng_free(r);
    double span = now - t_start;
    *throughput_per_job = span > 0 ? (double)counted / span / k : 0;
    if (gpu_busy) {
        *gpu_busy = span > 0 ? busy_time / span : 0;
    }
    return 0;
}

/* ---- MPS ---- */

int share_mps_solve(int n_cls, const share_mps_class *cls, const partition_cfg *c,
                    const phys_params *m, double *iter_s)
{
    SIM_ASSERT(n_cls >= 1 && n_cls <= SHARE_MAX_CLASSES);
    double part_sms = speed_partition_sms(c);
    double cap = part_sms;
    if (c->mps_percent > 0 && c->mps_percent < 100) {
        cap = ceil(part_sms * c->mps_percent / 100.0);
    }
    double u[SHARE_MAX_CLASSES];     /* fraction of time a client of class i is in its GPU phase */
    double want[SHARE_MAX_CLASSES];  /* SMs a client's kernels can use */
    for (int i = 0; i < n_cls; i++) {
        double pmax = wl_max_sms(cls[i].p, cls[i].batch);
        want[i] = fmin(cap, pmax);
        u[i] = 1.0;
    }
    for (int it = 0; it < SHARE_MPS_MAX_ITER; it++) {
        double max_change = 0;
        for (int i = 0; i < n_cls; i++) {
            /* expected co-runners in their GPU phase while this client is in its own */
            double others_sms = 0, others_n = 0;
            for (int j = 0; j < n_cls; j++) {
                double nj = cls[j].n - (j == i ? 1 : 0);
                others_sms += nj * u[j] * want[j];
                others_n += nj * u[j];
            }
            /* SMs: each client keeps what it can use when they fit; otherwise the partition is
             * divided in proportion to what the clients ask for */
            double total_want = want[i] + others_sms;
            double sms = total_want <= part_sms ? want[i] : part_sms * want[i] / total_want;
            /* bandwidth: divided among the clients in their GPU phase, with a contention
             * penalty per co-runner (shared L2 and DRAM page conflicts) */
            double bw_share = 1.0 / ((1.0 + others_n) * (1.0 + m->mps_bw_contention * others_n));
            double busy[WL_CLASS_COUNT] = {0};
            double tot_c = wl_compute_total_sm_s(cls[i].p, cls[i].batch);
            double busy_sms = fmin(part_sms, total_want);
            for (int k = 0; k < WL_CLASS_COUNT; k++) {
                busy[k] = tot_c > 0
                              ? busy_sms * wl_compute_sm_s(cls[i].p, (wl_class)k, cls[i].batch) /
                                    tot_c
                              : 0;
            }
            double f = power_clock_factor(c->gpu, m, busy);
            speed_result r;
            double t = speed_solo_iter(cls[i].p, cls[i].batch, c, sms, f, bw_share, m, &r);
            iter_s[i] = t;
            double nu = t > 0 ? r.iter_gpu_s / t : 0;
            double nu_damped = 0.5 * u[i] + 0.5 * nu;
            max_change = fmax(max_change, fabs(nu_damped - u[i]));
            u[i] = nu_damped;
        }
        if (max_change < SHARE_MPS_TOL) {
            return 0;
        }
    }
    return SIM_ENOCONV;
}

bool share_mem_fits(const wl_profile *p, double batch, const partition_cfg *c,
                    double *need_bytes)
{
    double need = wl_mem_footprint_bytes(p, batch);
    if (c->sharing != SHARE_EXCLUSIVE) {
        need *= c->peers;
        for (int i = 0; i < c->n_with; i++) {
            need += wl_mem_footprint_bytes(c->with[i], c->with_batch[i]);
        }
    }
    if (need_bytes) {
        *need_bytes = need;
    }
    double have = speed_partition_mem_bytes(c);
    return have <= 0 || need <= have;
}
