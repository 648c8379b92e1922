/* model/physics/share_ts.c - time-slicing: exact MVA, product form, mean field with the scheduler's
 * return wait. See share_ts.h for the models and their assumptions. */
#include "model/physics/share_ts.h"

#include <math.h>
#include <string.h>

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

/* eta at a fractional number of contexts x >= 1: linear between whole numbers (eta(1) = 1). */
static double eta_at(const double *eta, double x, int n_max)
{
    if (x <= 1) {
        return 1.0;
    }
    if (x >= n_max) {
        return eta[n_max];
    }
    int k = (int)floor(x);
    double lo = k <= 1 ? 1.0 : eta[k], hi = eta[k + 1];
    return lo + (hi - lo) * (x - k);
}

void share_ts_eta_phases(int k, const double *eta, double host_s, double gpu_s,
                         const share_ts_rr *rr, double *out)
{
    bool sw = rr && rr->switch_s > 0 && host_s > 0 && gpu_s > 0;
    for (int n = 0; n <= k; n++) {
        double e = n <= 1 ? 1.0 : eta[n];
        out[n] = sw && n >= 2 ? fmin(e, gpu_s / (gpu_s + rr->switch_s)) : e;
    }
}

double share_ts_return_wait(double back_s, double holder_gpu_s, const share_ts_rr *rr)
{
    if (!rr || !(rr->quantum_s > 0) || !(holder_gpu_s > 0)) {
        return 0;
    }
    double d = fmin(rr->quantum_s, holder_gpu_s);
    return fmax(d - back_s, d * d / (2 * holder_gpu_s));
}

/* True when every class states a guaranteed share and they are not all equal (share_ts.h). */
static bool shares_differ(int n_cls, const share_ts_class *cls)
{
    bool differ = false;
    for (int c = 0; c < n_cls; c++) {
        if (!(cls[c].share > 0)) {
            return false;
        }
        differ = differ || cls[c].share != cls[0].share;
    }
    return differ;
}

/* Mean-field solution when some class overlaps host and GPU time or the classes' guaranteed
 * shares differ (see share_ts.h), with the
 * scheduler's return wait when rr is given. Returns 0, or SIM_ENOCONV (outputs not set) when no
 * round within SHARE_TS_MAX_ITER moves every b by less than SHARE_TS_TOL. */
static int ts_overlap_solve(int n_cls, const share_ts_class *cls, int total, const double *eta,
                             const share_ts_rr *rr, double *x_per_job, double *gpu_busy)
{
    /* ret[c][j]: what a job of class c back from its serial host phase waits for a job of
     * class j that holds the GPU, its switch included (0 without a serial host phase); such a
     * visit costs j two switches of GPU time */
    double ret[SHARE_MAX_CLASSES][SHARE_MAX_CLASSES];
    for (int c = 0; c < n_cls; c++) {
        double back = (1.0 - cls[c].overlap) * cls[c].host_s;
        for (int j = 0; j < n_cls; j++) {
            ret[c][j] = back > 0 && rr && j != c && cls[c].rounds && cls[j].rounds
                            ? share_ts_return_wait(back, cls[j].gpu_s, rr) + rr->switch_s
                            : 0.0;
        }
    }
    double b[SHARE_MAX_CLASSES], t[SHARE_MAX_CLASSES];
    for (int c = 0; c < n_cls; c++) {
        t[c] = wl_iter_time(cls[c].host_s, cls[c].overlap, cls[c].gpu_s);
        b[c] = t[c] > 0 ? cls[c].gpu_s / t[c] : 0;
    }
    double w[SHARE_MAX_CLASSES]; /* guaranteed shares as weights; 1 each when equal */
    bool weighted = shares_differ(n_cls, cls);
    for (int c = 0; c < n_cls; c++) {
        w[c] = weighted ? cls[c].share : 1.0;
    }
    bool settled = false;
    for (int it = 0; it < SHARE_TS_MAX_ITER && !settled; it++) {
        double max_change = 0, all = 0, all_w = 0;
        for (int c = 0; c < n_cls; c++) {
            all += cls[c].n * b[c];
            all_w += cls[c].n * b[c] * w[c];
        }
        for (int c = 0; c < n_cls; c++) {
            double n_eff = 1.0 + (all - b[c]);
            /* weighted processor sharing: c's share of the GPU is w_c over the weights of the
             * jobs that want it (n_eff when the weights are equal) */
            double stretch = (w[c] + (all_w - b[c] * w[c])) / w[c] / eta_at(eta, n_eff, total);
            double g = cls[c].gpu_s * stretch, wait = 0, lost = 0;
            for (int j = 0; j < n_cls; j++) {
                wait += cls[j].n * b[j] * ret[c][j];
                /* a job of class j back while c holds the GPU: two switches of GPU time lost */
                lost += ret[j][c] > 0 && t[j] > 0 ? cls[j].n * b[c] * 2 * rr->switch_s / t[j] : 0;
            }
            g /= 1.0 - fmin(0.5, lost);
            t[c] = wl_iter_time(cls[c].host_s, cls[c].overlap, g) + wait;
            double nb = t[c] > 0 ? g / t[c] : 0;
            nb = 0.5 * b[c] + 0.5 * nb;
            max_change = fmax(max_change, fabs(nb - b[c]));
            b[c] = nb;
        }
        settled = max_change < SHARE_TS_TOL;
    }
    if (!settled) {
        return SIM_ENOCONV;
    }
    double idle = 1.0;
    for (int c = 0; c < n_cls; c++) {
        x_per_job[c] = t[c] > 0 ? 1.0 / t[c] : HUGE_VAL;
        idle *= pow(1.0 - fmin(1.0, b[c]), cls[c].n);
    }
    if (gpu_busy) {
        *gpu_busy = 1.0 - idle;
    }
    return 0;
}

int share_ts_solve(int n_cls, const share_ts_class *cls, const double *eta, double *x_per_job,
                   double *gpu_busy)
{
    return share_ts_solve_rr(n_cls, cls, eta, NULL, x_per_job, gpu_busy);
}

/* Product form of a closed network with a delay station (think time Z_c) and a processor-sharing
 * station of capacity beta(n) = eta(n) (total rate with n jobs present; BCMP 1975):
 *   pi(n_1..n_C) ∝ n! / prod(n_c!) * prod(D_c^{n_c}) / prod_{j=1..n} beta(j)
 *                  * prod(Z_c^{N_c - n_c} / (N_c - n_c)!)
 * Class c completes GPU phases at rate beta(n) * (n_c / n) / D_c in that state. Weights are
 * kept in logarithms; Z = 0 admits only n_c = N_c. Classes that overlap host and GPU work, or
 * whose guaranteed shares differ (weighted sharing is not product form), go to ts_overlap_solve
 * instead. */
int share_ts_solve_rr(int n_cls, const share_ts_class *cls, const double *eta,
                      const share_ts_rr *rr, double *x_per_job, double *gpu_busy)
{
    if (n_cls < 1 || n_cls > SHARE_MAX_CLASSES) {
        return SIM_ERANGE;
    }
    int n_jobs = 0;
    bool overlap = false;
    for (int c = 0; c < n_cls; c++) {
        n_jobs += cls[c].n;
        overlap = overlap || cls[c].overlap > 0;
    }
    if (n_jobs > SHARE_MAX_JOBS) {
        return SIM_ERANGE;
    }
    if (overlap || shares_differ(n_cls, cls)) {
        return ts_overlap_solve(n_cls, cls, n_jobs, eta, rr, x_per_job, gpu_busy);
    }
    double states = 1;
    for (int c = 0; c < n_cls; c++) {
        states *= cls[c].n + 1;
    }
    if (states > 1e6) {
        return SIM_ERANGE;
    }
    double log_beta_fact[SHARE_MAX_JOBS + 1] = {0}; /* sum_{j<=n} log beta(j) */
    for (int j = 1; j <= n_jobs; j++) {
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
