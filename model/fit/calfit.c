/* model/fit/calfit.c - least-squares fits of calibration data (see calfit.h for the forms).
 *
 * Why these forms (chosen by looking at the files in calib/results):
 * - Rates: every format is within ~5 % of proportional to the SM count on the H100 and H200
 *   (green contexts, 8..132 SMs), the per-SM rate rising slightly with SMs (the effective clock
 *   read in the kernels moves by a few %), so the roll-off term is usually not significant.
 * - Bandwidth: close to linear up to ~32 SMs (about 115 GB/s per SM), then flat (2.8 TB/s on
 *   the H100, 4.1 TB/s on the H200 from ~48-64 SMs). A Michaelis-Menten curve bends too early
 *   and too slowly for that corner; the soft minimum of the two lines has a sharpness parameter
 *   that fits it. Both are fitted and the smaller residual wins, so a GPU that saturates
 *   gradually gets the saturating form.
 * - Relative residuals throughout: the series span an order of magnitude or more.
 */
#include "model/fit/calfit.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_vector.h>

#include "model/fit/nlsq.h"
#include "model/physics/share.h"
#include "model/physics/share_ts.h"
#include "sim/err.h"

/* ------------------------------------------------------------------ weighted linear fits */

/* y = X c with weights w; returns coefficients and standard errors scaled by the residual
 * variance (the weights are relative, not absolute variances). */
static int wlinear(const double *xcols, int ncol, const double *y, const double *w, int n,
                   double *c, double *se, double cov01[1], double *chisq_out)
{
    if (n < ncol) {
        return SIM_EINPUT;
    }
    gsl_matrix *X = gsl_matrix_alloc((size_t)n, (size_t)ncol);
    gsl_vector *Y = gsl_vector_alloc((size_t)n), *W = gsl_vector_alloc((size_t)n);
    gsl_vector *C = gsl_vector_alloc((size_t)ncol);
    gsl_matrix *cov = gsl_matrix_alloc((size_t)ncol, (size_t)ncol);
    gsl_multifit_linear_workspace *ws = gsl_multifit_linear_alloc((size_t)n, (size_t)ncol);
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < ncol; j++) {
            gsl_matrix_set(X, (size_t)i, (size_t)j, xcols[j * n + i]);
        }
        gsl_vector_set(Y, (size_t)i, y[i]);
        gsl_vector_set(W, (size_t)i, w[i]);
    }
    double chisq = 0;
    gsl_multifit_wlinear(X, W, Y, C, cov, &chisq, ws);
    double scale = n > ncol ? chisq / (n - ncol) : 0.0;
    for (int j = 0; j < ncol; j++) {
        c[j] = gsl_vector_get(C, (size_t)j);
        se[j] = sqrt(gsl_matrix_get(cov, (size_t)j, (size_t)j) * scale);
    }
    if (cov01 && ncol >= 2) {
        cov01[0] = gsl_matrix_get(cov, 0, 1) * scale;
    }
    if (chisq_out) {
        *chisq_out = chisq;
    }
    gsl_multifit_linear_free(ws);
    gsl_matrix_free(cov);
    gsl_vector_free(C);
    gsl_vector_free(W);
    gsl_vector_free(Y);
    gsl_matrix_free(X);
    return 0;
}

static void rms_max(const double *r, int n, double *rms, double *mx)
{
    double s = 0, m = 0;
    for (int i = 0; i < n; i++) {
        s += r[i] * r[i];
        m = fmax(m, fabs(r[i]));
    }
    *rms = n > 0 ? sqrt(s / n) : 0.0;
    if (mx) {
        *mx = m;
    }
}

/* ------------------------------------------------------------------ rates */

int calfit_rate(const cal_series *s, cal_rate_fit *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", s->name);
    int n = s->n;
    if (n < 1) {
        return SIM_EINPUT;
    }
    double cols[2 * CAL_MAX_PTS], y[CAL_MAX_PTS], w[CAL_MAX_PTS], c[2], se[2], cv = 0;
    for (int i = 0; i < n; i++) {
        cols[i] = s->pts[i].x;
        cols[n + i] = s->pts[i].x * s->pts[i].x;
        y[i] = s->pts[i].median;
        w[i] = 1.0 / (y[i] * y[i]);
    }
    bool keep = false;
    double xmax = s->pts[n - 1].x;
    /* Keep the s^2 term only when it is both statistically significant (2 standard errors) and
     * large enough to matter (0.1 % of the rate over the measured range). */
    if (n >= 4 && wlinear(cols, 2, y, w, n, c, se, &cv, NULL) == 0 && se[1] > 0 &&
        fabs(c[1]) > 2.0 * se[1] && fabs(c[1]) * xmax > 1e-3 * fabs(c[0])) {
        keep = true;
        double a = c[0], b = c[1];
        out->per_sm = (cal_param){a, se[0]};
        double k = -b / a;
        double dka = b / (a * a), dkb = -1.0 / a;
        double var = dka * dka * se[0] * se[0] + dkb * dkb * se[1] * se[1] + 2 * dka * dkb * cv;
        out->rolloff = (cal_param){k, sqrt(fmax(var, 0.0))};
    }
    if (!keep) {
        wlinear(cols, 1, y, w, n, c, se, NULL, NULL);
        out->per_sm = (cal_param){c[0], se[0]};
        out->rolloff = (cal_param){0, 0};
    }
    out->has_rolloff = keep;
    out->n = n;
    for (int i = 0; i < n; i++) {
        double f = calfit_rate_eval(out, s->pts[i].x);
        out->resid_rel[i] = (s->pts[i].median - f) / f;
    }
    rms_max(out->resid_rel, n, &out->rms_rel, NULL);
    return 0;
}

double calfit_rate_eval(const cal_rate_fit *f, double sms)
{
    return f->per_sm.value * sms * (1.0 - f->rolloff.value * sms);
}

/* ------------------------------------------------------------------ non-linear fits */

typedef double nl_model(const double *theta, double x); /* theta = log-parameters */

typedef struct nl_data {
    nl_model *f;
    const cal_series *s;
    size_t p;
} nl_data;

static int nl_resid(const gsl_vector *th, void *vd, gsl_vector *r)
{
    const nl_data *d = vd;
    double t[4];
    for (size_t j = 0; j < d->p; j++) {
        t[j] = gsl_vector_get(th, j);
    }
    for (int i = 0; i < d->s->n; i++) {
        double m = d->f(t, d->s->pts[i].x), y = d->s->pts[i].median;
        double ri = (m - y) / y;
        gsl_vector_set(r, (size_t)i, isfinite(ri) ? ri : 1e6);
    }
    return GSL_SUCCESS;
}

/* Fit log-parameters theta (in: start, out: fit); se in log units; returns the RSS. */
static double nl_fit(nl_model *f, const cal_series *s, size_t p, double *theta, double *se_log)
{
    nl_data d = {f, s, p};
    gsl_multifit_nlinear_fdf fdf = {.f = nl_resid, .df = NULL, .fvv = NULL, .n = (size_t)s->n,
                                    .p = p, .params = &d};
    gsl_vector *x0 = gsl_vector_alloc(p);
    for (size_t j = 0; j < p; j++) {
        gsl_vector_set(x0, j, theta[j]);
    }
    gsl_multifit_nlinear_workspace *w = nlsq_start(&fdf, x0);
    nlsq_iterate(w);
    const gsl_vector *x = gsl_multifit_nlinear_position(w);
    const gsl_vector *r = gsl_multifit_nlinear_residual(w);
    double rss = 0;
    gsl_blas_ddot(r, r, &rss);
    gsl_matrix *J = gsl_multifit_nlinear_jac(w);
    gsl_matrix *cov = gsl_matrix_alloc(p, p);
    gsl_multifit_nlinear_covar(J, 0.0, cov);
    double scale = s->n > (int)p ? rss / (double)(s->n - (int)p) : 0.0;
    for (size_t j = 0; j < p; j++) {
        theta[j] = gsl_vector_get(x, j);
        se_log[j] = sqrt(fmax(gsl_matrix_get(cov, j, j) * scale, 0.0));
    }
    gsl_matrix_free(cov);
    gsl_vector_free(x0);
    gsl_multifit_nlinear_free(w);
    return rss;
}

/* soft minimum: theta = log b, log Bmax, log p */
static double bw_softmin(const double *t, double s)
{
    double b = exp(t[0]), B = exp(t[1]), p = exp(t[2]);
    double lin = b * s;
    return lin / pow(1.0 + pow(lin / B, p), 1.0 / p);
}
/* Michaelis-Menten: theta = log Bmax, log s_half */
static double bw_mm(const double *t, double s)
{
    return exp(t[0]) * s / (s + exp(t[1]));
}

static cal_param from_log(double th, double se_log)
{
    double v = exp(th);
    return (cal_param){v, v * se_log};
}

int calfit_bw(const cal_series *s, cal_bw_fit *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", s->name);
    int n = s->n;
    if (n < 4) {
        return SIM_EINPUT;
    }
    double ymax = 0;
    for (int i = 0; i < n; i++) {
        ymax = fmax(ymax, s->pts[i].median);
    }
    double th[3] = {log(s->pts[0].median / s->pts[0].x), log(ymax), log(4.0)}, se[3];
    out->rss_softmin = nl_fit(bw_softmin, s, 3, th, se);
    out->per_sm_gb_s = from_log(th[0], se[0]);
    out->bmax_gb_s = from_log(th[1], se[1]);
    out->sharpness = from_log(th[2], se[2]);
    double B0 = 1.1 * ymax, y0 = s->pts[0].median, x0 = s->pts[0].x;
    double h0 = x0 * fmax(B0 / y0 - 1.0, 0.05);
    double tm[2] = {log(B0), log(h0)}, sm[2];
    out->rss_mm = nl_fit(bw_mm, s, 2, tm, sm);
    out->mm_bmax_gb_s = from_log(tm[0], sm[0]);
    out->s_half = from_log(tm[1], sm[1]);
    out->form = out->rss_softmin <= out->rss_mm ? CAL_BW_SOFTMIN : CAL_BW_MM;
    out->n = n;
    for (int i = 0; i < n; i++) {
        double f = calfit_bw_eval(out, s->pts[i].x);
        out->resid_rel[i] = (s->pts[i].median - f) / f;
    }
    rms_max(out->resid_rel, n, &out->rms_rel, NULL);
    return 0;
}

double calfit_bw_eval(const cal_bw_fit *f, double sms)
{
    if (f->form == CAL_BW_SOFTMIN) {
        double t[3] = {log(f->per_sm_gb_s.value), log(f->bmax_gb_s.value),
                       log(f->sharpness.value)};
        return bw_softmin(t, sms);
    }
    double t[2] = {log(f->mm_bmax_gb_s.value), log(f->s_half.value)};
    return bw_mm(t, sms);
}

/* ------------------------------------------------------------------ time-slicing */

static double mean_of(const double *v, int n)
{
    double s = 0;
    for (int i = 0; i < n; i++) {
        s += v[i];
    }
    return n > 0 ? s / n : 0.0;
}
static double se_of(const double *v, int n)
{
    if (n < 2) {
        return 0.0;
    }
    double m = mean_of(v, n), s = 0;
    for (int i = 0; i < n; i++) {
        s += (v[i] - m) * (v[i] - m);
    }
    return sqrt(s / (n - 1) / n);
}

int calfit_timeslice(const cal_ts_length *t, cal_ts_fit *out)
{
    memset(out, 0, sizeof *out);
    if (t->n_k < 2 || t->k[0] != 1 || t->n_rep[0] < 1) {
        return SIM_EINPUT;
    }
    out->kernel_ms = t->kernel_ms;
    out->gap_ms = t->gap_ms;
    out->n_k = t->n_k;
    double t1 = mean_of(t->makespan_s[0], t->n_rep[0]);
    double all[CAL_MAX_K * CAL_MAX_REPS];
    int n_all = 0;
    for (int j = 0; j < t->n_k; j++) {
        double e[CAL_MAX_REPS];
        for (int r = 0; r < t->n_rep[j]; r++) {
            e[r] = t->k[j] * t1 / t->makespan_s[j][r];
            if (j > 0) {
                all[n_all++] = e[r];
            }
        }
        out->k[j] = t->k[j];
        /* k = 1 is the reference: eta(1) = 1 by definition; its spread is kept as its se. */
        out->eta[j] = (cal_param){j == 0 ? 1.0 : mean_of(e, t->n_rep[j]), se_of(e, t->n_rep[j])};
    }
    out->eta_mean = (cal_param){mean_of(all, n_all), se_of(all, n_all)};
    return 0;
}

/* ------------------------------------------------------------------ MPS */

/* Prediction before the fitted scales: returns wall time; *mixed_ok tells whether the
 * mixed-kind interference term applies (kinds mixed, GPU not oversubscribed). */
static double mps_pred0(const cal_data *d, const cal_bw_fit *bw, const cal_mps_run *r, int i,
                        bool *mixed_ok)
{
    double S = d->sms_total, sum = 0, sum_mem = 0;
    bool has_c = false, has_m = false;
    for (int j = 0; j < r->n; j++) {
        sum += r->c[j].sms;
        has_c |= !r->c[j].is_memory;
        has_m |= r->c[j].is_memory;
    }
    double over = fmax(1.0, sum / S);
    *mixed_ok = has_c && has_m && over <= 1.0;
    const cal_mps_client *c = &r->c[i];
    double solo = c->is_memory ? d->mps_solo_memory_s : d->mps_solo_compute_s;
    double sigma = c->sms / over;
    if (over > 1.0 || !c->is_memory || !bw) {
        return solo * S / sigma; /* time share of the whole GPU, or SM share of compute */
    }
    for (int j = 0; j < r->n; j++) {
        if (r->c[j].is_memory) {
            sum_mem += r->c[j].sms / over;
        }
    }
    double tot = calfit_bw_eval(bw, fmin(sum_mem, S));
    double mine = tot * sigma / sum_mem;
    return solo * calfit_bw_eval(bw, S) / mine;
}

double calfit_mps_predict(const cal_data *d, const cal_bw_fit *bw, const cal_mps_fit *f,
                          const cal_mps_run *r, int i)
{
    bool mixed = false;
    double p = mps_pred0(d, bw, r, i, &mixed);
    p /= r->c[i].is_memory ? f->eta_memory.value : f->eta_compute.value;
    if (mixed) {
        p *= 1.0 + f->gamma_mixed.value;
    }
    return p;
}

int calfit_mps(const cal_data *d, const cal_bw_fit *bw, cal_mps_fit *out)
{
    memset(out, 0, sizeof *out);
    if (!d->has_mps || d->n_mps == 0 || !(d->mps_solo_compute_s > 0) ||
        !(d->mps_solo_memory_s > 0) || d->sms_total <= 0) {
        return SIM_EINPUT;
    }
    /* Ratios measured / predicted: their mean is the least-squares scale in relative terms. */
    double rc[CAL_MAX_MPS * CAL_MAX_CLIENTS], rm[CAL_MAX_MPS * CAL_MAX_CLIENTS];
    int nc = 0, nm = 0;
    for (int g = 0; g < d->n_mps; g++) {
        for (int i = 0; i < d->mps[g].n; i++) {
            bool mixed = false;
            double p = mps_pred0(d, bw, &d->mps[g], i, &mixed);
            if (mixed || !(p > 0)) {
                continue;
            }
            double q = d->mps[g].c[i].wall_s / p;
            if (d->mps[g].c[i].is_memory) {
                rm[nm++] = q;
            } else {
                rc[nc++] = q;
            }
        }
    }
    if (nc == 0 || nm == 0) {
        return SIM_EINPUT;
    }
    double mc = mean_of(rc, nc), mm = mean_of(rm, nm);
    out->eta_compute = (cal_param){1.0 / mc, se_of(rc, nc) / (mc * mc)};
    out->eta_memory = (cal_param){1.0 / mm, se_of(rm, nm) / (mm * mm)};
    double rx[CAL_MAX_MPS * CAL_MAX_CLIENTS];
    int nx = 0;
    for (int g = 0; g < d->n_mps; g++) {
        for (int i = 0; i < d->mps[g].n; i++) {
            bool mixed = false;
            double p = mps_pred0(d, bw, &d->mps[g], i, &mixed);
            if (!mixed) {
                continue;
            }
            p /= d->mps[g].c[i].is_memory ? out->eta_memory.value : out->eta_compute.value;
            rx[nx++] = d->mps[g].c[i].wall_s / p;
        }
    }
    out->gamma_mixed = nx > 0 ? (cal_param){mean_of(rx, nx) - 1.0, se_of(rx, nx)}
                              : (cal_param){0, 0};
    double res[CAL_MAX_MPS * CAL_MAX_CLIENTS];
    int nr = 0;
    for (int g = 0; g < d->n_mps; g++) {
        for (int i = 0; i < d->mps[g].n; i++) {
            double p = calfit_mps_predict(d, bw, out, &d->mps[g], i);
            res[nr++] = (d->mps[g].c[i].wall_s - p) / p;
        }
    }
    out->n = nr;
    rms_max(res, nr, &out->rms_rel, &out->max_rel);
    return 0;
}

/* ------------------------------------------------------------------ all-reduce */

/* A coefficient the rows pin: positive, with a standard error at most its value. */
static bool pinned(double c, double se)
{
    return c > 0 && se <= c;
}

int calfit_allreduce(const cal_series *ar, int gpus, const cal_ar_assume *assume,
                     cal_ar_fit *out)
{
    memset(out, 0, sizeof *out);
    int n = ar->n;
    if (n < 3 || gpus < 2) {
        return SIM_EINPUT;
    }
    /* t = c0 + c1 G with c0 = 2(N-1) alpha, c1 = (2(N-1)/N) / beta */
    double cols[2 * CAL_MAX_PTS], y[CAL_MAX_PTS], w[CAL_MAX_PTS], c[2], se[2], cv = 0;
    for (int i = 0; i < n; i++) {
        cols[i] = 1.0;
        cols[n + i] = ar->pts[i].x;
        y[i] = ar->pts[i].median * 1e-3;
        w[i] = 1.0 / (y[i] * y[i]);
    }
    wlinear(cols, 2, y, w, n, c, se, &cv, NULL);
    double steps = 2.0 * (gpus - 1), frac = 2.0 * (gpus - 1) / gpus;
    bool pin[2] = {pinned(c[0], se[0]), pinned(c[1], se[1])};
    if (!assume && (c[0] <= 0 || c[1] <= 0)) {
        return SIM_EINPUT; /* no physical fit, and nothing to hold a parameter at */
    }
    if (assume && (!pin[0] || !pin[1])) {
        /* Hold what the rows cannot pin at its assumed value; refit the other with it held
         * (one-column weighted least squares on the remainder), and hold that one too when the
         * remainder does not pin it either. */
        double held[2] = {steps * assume->alpha_s, frac / assume->beta_bytes_per_s};
        int k = pin[0] ? 0 : pin[1] ? 1 : -1; /* the coefficient to refit */
        for (int j = 0; j < 2; j++) {
            if (j != k) {
                c[j] = held[j];
                se[j] = 0;
            }
        }
        if (k >= 0) {
            int h = 1 - k;
            double rest[CAL_MAX_PTS];
            for (int i = 0; i < n; i++) {
                rest[i] = y[i] - c[h] * cols[h * n + i];
            }
            wlinear(cols + k * n, 1, rest, w, n, &c[k], &se[k], NULL, NULL);
            pin[k] = pinned(c[k], se[k]);
            if (!pin[k]) {
                c[k] = held[k];
                se[k] = 0;
            }
        }
    }
    out->gpus = gpus;
    out->alpha_s = (cal_param){c[0] / steps, se[0] / steps};
    double beta = frac / c[1];
    out->beta_bytes_per_s = (cal_param){beta, beta * se[1] / c[1]}; /* delta method */
    out->alpha_pinned = pin[0];
    out->beta_pinned = pin[1];
    out->n = n;
    for (int i = 0; i < n; i++) {
        double f = calfit_allreduce_eval(out, ar->pts[i].x);
        out->resid_rel[i] = (y[i] - f) / f;
    }
    rms_max(out->resid_rel, n, &out->rms_rel, &out->max_rel);
    return 0;
}

double calfit_allreduce_eval(const cal_ar_fit *f, double bytes)
{
    double g = f->gpus;
    return 2.0 * (g - 1) * f->alpha_s.value + 2.0 * (g - 1) / g * bytes / f->beta_bytes_per_s.value;
}

int calfit_allreduce_protocols(const cal_series *ar, int gpus, cal_ar_fit out[2],
                               double *ll_max_bytes)
{
    memset(out, 0, 2 * sizeof *out);
    *ll_max_bytes = 0;
    double best = (double)INFINITY;
    cal_ar_fit f[2];
    for (int cut = 3; cut + 3 <= ar->n; cut++) {
        if (!(ar->pts[cut].x > ar->pts[cut - 1].x)) {
            continue; /* a cut between two rows of one size says nothing */
        }
        cal_series side[2];
        memset(side, 0, sizeof side);
        for (int i = 0; i < ar->n; i++) {
            cal_series *s = &side[i >= cut];
            s->pts[s->n++] = ar->pts[i];
        }
        if (calfit_allreduce(&side[0], gpus, NULL, &f[0]) != 0 ||
            calfit_allreduce(&side[1], gpus, NULL, &f[1]) != 0) {
            continue;
        }
        double rss = 0;
        for (int j = 0; j < 2; j++) {
            for (int i = 0; i < f[j].n; i++) {
                rss += f[j].resid_rel[i] * f[j].resid_rel[i];
            }
        }
        if (rss < best) {
            best = rss;
            out[0] = f[0];
            out[1] = f[1];
            *ll_max_bytes = ar->pts[cut - 1].x;
        }
    }
    return isfinite(best) ? 0 : SIM_EINPUT;
}

/* ------------------------------------------------------------------ everything */

/* Index of the triad bandwidth fit (else the first), or -1. */
static int triad_index(const cal_fit *f)
{
    for (int i = 0; i < f->n_bw; i++) {
        if (!strcmp(f->bw[i].name, "triad")) {
            return i;
        }
    }
    return f->n_bw > 0 ? 0 : -1;
}

int calfit_all(const cal_data *d, cal_fit *out)
{
    memset(out, 0, sizeof *out);
    out->sms_total = d->sms_total;
    for (int i = 0; i < d->n_rates; i++) {
        if (calfit_rate(&d->rates[i], &out->rates[out->n_rates]) == 0) {
            out->n_rates++;
        }
    }
    for (int i = 0; i < d->n_bw; i++) {
        if (calfit_bw(&d->bw[i], &out->bw[out->n_bw]) == 0) {
            out->n_bw++;
        }
    }
    for (int i = 0; i < d->n_ts; i++) {
        if (calfit_timeslice(&d->ts[i], &out->ts[out->n_ts]) == 0) {
            out->n_ts++;
        }
    }
    int t = triad_index(out);
    out->has_mps = calfit_mps(d, t >= 0 ? &out->bw[t] : NULL, &out->mps) == 0;
    out->has_ar = d->ar_gpus >= 2 && calfit_allreduce(&d->ar, d->ar_gpus, NULL, &out->ar) == 0;
    out->has_ar_proto = d->ar_gpus >= 2 && d->ar_only_proto == 0 &&
                        calfit_allreduce_protocols(&d->ar, d->ar_gpus, out->ar_proto,
                                                   &out->ar_ll_max_bytes) == 0;
    return 0;
}

int calfit_allreduce_ring(const cal_data *d, cal_ar_ring *out)
{
    memset(out, 0, sizeof *out);
    out->gpus = d->ar_gpus;
    if (d->ar_gpus < 2) {
        return SIM_EINPUT;
    }
    if (d->ar_only_proto) {
        int pr = d->ar_only_proto - 1;
        out->has[pr] = calfit_allreduce(&d->ar, d->ar_gpus, NULL, &out->proto[pr]) == 0;
        return out->has[pr] ? 0 : SIM_EINPUT;
    }
    if (calfit_allreduce_protocols(&d->ar, d->ar_gpus, out->proto, &out->ll_max_bytes) != 0) {
        return SIM_EINPUT;
    }
    out->has[0] = out->has[1] = true;
    return 0;
}

/* ------------------------------------------------------------------ hold-out */

static void split(const cal_series *s, cal_series *even, cal_series *odd)
{
    memset(even, 0, sizeof *even);
    memset(odd, 0, sizeof *odd);
    snprintf(even->name, sizeof even->name, "%s", s->name);
    for (int i = 0; i < s->n; i++) {
        cal_series *t = (i % 2 == 0) ? even : odd;
        t->pts[t->n++] = s->pts[i];
    }
}

static void add_err(double pred, double meas, double *sum, double *mx, int *n)
{
    double e = 100.0 * fabs(pred - meas) / meas;
    *sum += e;
    *mx = fmax(*mx, e);
    (*n)++;
}

int calfit_holdout(const cal_data *d, double *mape_pct, double *max_pct, int *n_pred)
{
    double sum = 0, mx = 0;
    int n = 0;
    cal_series ev, od;
    for (int i = 0; i < d->n_rates; i++) {
        cal_rate_fit f;
        split(&d->rates[i], &ev, &od);
        if (d->rates[i].n < 4 || calfit_rate(&ev, &f) != 0) {
            continue;
        }
        for (int j = 0; j < od.n; j++) {
            add_err(calfit_rate_eval(&f, od.pts[j].x), od.pts[j].median, &sum, &mx, &n);
        }
    }
    for (int i = 0; i < d->n_bw; i++) {
        cal_bw_fit f;
        split(&d->bw[i], &ev, &od);
        if (d->bw[i].n < 8 || calfit_bw(&ev, &f) != 0) {
            continue;
        }
        for (int j = 0; j < od.n; j++) {
            add_err(calfit_bw_eval(&f, od.pts[j].x), od.pts[j].median, &sum, &mx, &n);
        }
    }
    /* Time-slicing: back-to-back lengths in ascending kernel length. */
    int idx[CAL_MAX_LENGTHS * 2], nl = 0;
    for (int i = 0; i < d->n_ts; i++) {
        if (d->ts[i].gap_ms == 0) {
            int j = nl++;
            while (j > 0 && d->ts[idx[j - 1]].kernel_ms > d->ts[i].kernel_ms) {
                idx[j] = idx[j - 1];
                j--;
            }
            idx[j] = i;
        }
    }
    if (nl >= 2) {
        cal_ts_fit fits[CAL_MAX_LENGTHS * 2];
        bool ok[CAL_MAX_LENGTHS * 2];
        for (int a = 0; a < nl; a++) {
            ok[a] = calfit_timeslice(&d->ts[idx[a]], &fits[a]) == 0;
        }
        for (int a = 1; a < nl; a += 2) { /* held out: odd positions */
            const cal_ts_length *t = &d->ts[idx[a]];
            if (!ok[a]) {
                continue;
            }
            double t1 = mean_of(t->makespan_s[0], t->n_rep[0]);
            for (int j = 1; j < t->n_k; j++) {
                double es = 0;
                int ne = 0;
                for (int b = 0; b < nl; b += 2) {
                    for (int q = 0; ok[b] && q < fits[b].n_k; q++) {
                        if (fits[b].k[q] == t->k[j]) {
                            es += fits[b].eta[q].value;
                            ne++;
                        }
                    }
                }
                if (ne == 0) {
                    continue;
                }
                double pred = t->k[j] * t1 / (es / ne);
                add_err(pred, mean_of(t->makespan_s[j], t->n_rep[j]), &sum, &mx, &n);
            }
        }
    }
    *n_pred = n;
    *mape_pct = n > 0 ? sum / n : 0.0;
    *max_pct = mx;
    return n > 0 ? 0 : SIM_EINPUT;
}

/* ------------------------------------------------------------------ host-gap check */

int calfit_ts_gap_check(const cal_data *d, double *mape_pct, double *max_pct, int *n_pred)
{
    double sum = 0, mx = 0;
    int n = 0;
    for (int i = 0; i < d->n_ts; i++) {
        const cal_ts_length *g = &d->ts[i];
        const cal_ts_length *b = NULL;
        for (int j = 0; j < d->n_ts; j++) {
            if (d->ts[j].gap_ms == 0 && d->ts[j].kernel_ms == g->kernel_ms) {
                b = &d->ts[j];
            }
        }
        cal_ts_fit fb;
        if (g->gap_ms == 0 || !b || g->kernels < 1 || g->n_k < 2 || g->k[0] != 1 ||
            calfit_timeslice(b, &fb) != 0) {
            continue;
        }
        /* Per-kernel GPU time from the solo back-to-back run; host time = the rest of a solo
         * iteration with gaps (sleep and synchronisation included). */
        double gpu_s = mean_of(b->makespan_s[0], b->n_rep[0]) / (double)b->kernels;
        double host_s = fmax(0.0, mean_of(g->makespan_s[0], g->n_rep[0]) / (double)g->kernels -
                                      gpu_s);
        double eta[SHARE_MAX_JOBS + 1];
        for (int q = 0; q <= SHARE_MAX_JOBS; q++) {
            eta[q] = q <= 1 ? 1.0 : fb.eta_mean.value;
        }
        for (int j = 1; j < g->n_k; j++) {
            if (g->k[j] > SHARE_MAX_JOBS) {
                continue;
            }
            double x = share_ts_mva(g->k[j], host_s, gpu_s, eta, NULL);
            add_err((double)g->kernels / x, mean_of(g->makespan_s[j], g->n_rep[j]), &sum, &mx, &n);
        }
    }
    *n_pred = n;
    *mape_pct = n > 0 ? sum / n : 0.0;
    *max_pct = mx;
    return n > 0 ? 0 : SIM_EINPUT;
}
