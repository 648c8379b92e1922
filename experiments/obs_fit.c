/* experiments/obs_fit.c - fit a profile to loaded observations (model/fit/wfit.h) and answer queries
 * with it (model/physics/speed.h): the logic behind `slicesim fit-workload` and `slicesim predict`.
 *
 * Parameterisation. Free parameters are H, C, P (in every class) and (when the class gives it)
 * M, plus the footprint; with observations at two or more batch sizes each gets a fixed and a
 * per-sample part. A workload-class prior (workloads/priors.yaml) gives every free parameter a
 * log-normal prior, scaled to the workload by the observation on the largest partition, so that
 * a fit on two observations stays well posed; wfit reports which parameters the data did not
 * pin. P's prior is weak (a log-sd of at least 1, whatever the class says) and wfit starts it at
 * several points of the observed SM range, keeping the best chi^2.
 * Uncertainty. wfit scans P (held at points of the observed SM range, the rest refitted): every
 * profile that fits the observations within one chi^2 unit of the best is a member of the family
 * of profiles, and the members along the host-time/parallelism trade-off become the profile's
 * `variants`. For every other parameter the data left to its prior, the fit is redone with that
 * parameter held at each end of its prior's one-standard-deviation range (median * e^(+-sd)),
 * also kept as variants. predict reports the span of the variants' answers (with the fitted
 * standard errors and the model's own loss-factor range) as time_s_lo..hi.
 */
#include "experiments/obs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/physics/ddp.h"
#include "model/physics/predict.h"
#include "model/fit/wfit.h"
#include "model/fit/wmeas.h"
#include "sim/err.h"
#include "sim/xalloc.h"

#include <gsl/gsl_cdf.h>

/* Start value and prior of one free parameter. */
typedef struct free_param {
    wl_param which;
    double start;
    double rel_sd;
    const char *src;
    bool in_variants; /* refit at the ends of its prior when not pinned */
} free_param;

/* True when e carries the GPM measurements of a solo run (obs.h; the loader checked them). */
static bool has_gpm(const obs_entry *e)
{
    return e->sm_activity_at.line != 0;
}

/* The reference observation: timed, exclusive, one process, on the partition with most SMs;
 * among those the one with GPM measurements (on `full`, so it has the most SMs), else the
 * first. */
static const obs_entry *reference_obs(const obs_file *f)
{
    const obs_entry *best = NULL;
    int best_sms = -1;
    for (size_t i = 0; i < f->n; i++) {
        const obs_entry *e = &f->obs[i];
        if (e->outcome != OBS_OUTCOME_OK || obs_config_is_ddp(&e->config) || e->config.n_with ||
            e->config.peers > 1) {
            continue;
        }
        int sms = e->mig ? e->mig->sms : f->gpu->sms_total;
        if (sms > best_sms || (sms == best_sms && has_gpm(e) && !has_gpm(best))) {
            best = e;
            best_sms = sms;
        }
    }
    return best;
}

static void set_param(wl_profile *p, wl_class wc, wl_param which, double v)
{
    if (which == WL_P_COMPUTE_FIXED) {
        p->compute_sm_s_fixed[wc] = v;
    } else if (which == WL_P_COMPUTE_PER_SAMPLE) {
        p->compute_sm_s_per_sample[wc] = v;
    } else {
        wl_param_set(p, which, v);
    }
}

static double get_param(const wl_profile *p, wl_class wc, wl_param which)
{
    if (which == WL_P_COMPUTE_FIXED) {
        return p->compute_sm_s_fixed[wc];
    }
    if (which == WL_P_COMPUTE_PER_SAMPLE) {
        return p->compute_sm_s_per_sample[wc];
    }
    return wl_param_get(p, which);
}

/* Fill the partition of observation e. */
static void obs_partition(const obs_file *f, const obs_entry *e, partition_cfg *c)
{
    partition_cfg_init(c, f->gpu);
    c->mig = e->mig;
    c->peers = (int)e->config.peers;
    if (e->config.sharing_at.line) {
        c->sharing = (share_mode)e->config.sharing;
    } else {
        c->sharing = c->peers > 1 ? SHARE_TIMESLICE : SHARE_EXCLUSIVE;
    }
    c->mps_percent = e->config.mps_percent;
    c->mig_busy = (int)e->config.mig_busy;
}

/* Run wfit on the usable observations with the free set `fp` (n_fp entries), `skip` (or -1)
 * held at `hold`. */
static int run_fit(const wl_profile *start, wl_class wc, const phys_params *m, const free_param *fp,
                   int n_fp, int skip, double hold, const wfit_obs *wo, int n_wo, wfit_result *res)
{
    wfit_spec spec;
    memset(&spec, 0, sizeof spec);
    spec.n_profiles = 1;
    spec.profiles[0] = *start;
    spec.model = *m;
    if (skip >= 0) {
        set_param(&spec.profiles[0], wc, fp[skip].which, hold);
        spec.family_dchisq = -1; /* a variant is one refit: no family of its own */
    }
    for (int i = 0; i < n_fp; i++) {
        if (i == skip) {
            continue;
        }
        wfit_free *w = &spec.free[spec.n_free++];
        w->profile = 0;
        w->which = (int)fp[i].which;
        w->has_prior = true;
        w->prior = (wfit_prior){fp[i].start, fp[i].rel_sd, fp[i].src};
    }
    return wfit_fit(&spec, n_wo, wo, res);
}

int obs_fit(const obs_file *f, const obs_prior_class *pc, const phys_params *m, arena *a,
            obs_profile **out, obs_fit_report *rep)
{
    *out = NULL;
    memset(rep, 0, sizeof *rep);
    rep->n_rows = f->n;
    rep->rows = arena_calloc(a, f->n ? f->n : 1, sizeof *rep->rows);
    const obs_entry *ref = reference_obs(f);
    if (!ref) {
        snprintf(rep->error, sizeof rep->error,
                 "no usable observation; expected at least one timed run of one process "
                 "(exclusive, no DDP keys, no with) or a timed DDP run");
        return SIM_EINPUT;
    }
    /* usable observations */
    wfit_obs *wo = arena_calloc(a, f->n, sizeof *wo);
    int n_wo = 0;
    uint32_t bmin = 0, bmax = 0;
    for (size_t i = 0; i < f->n; i++) {
        const obs_entry *e = &f->obs[i];
        obs_fit_row *r = &rep->rows[i];
        r->measured_unit_s = e->unit_time_s;
        if (obs_config_is_ddp(&e->config)) {
            r->note = "not used: no DDP observation is used (obs_fit_ddp was not run)";
            continue;
        }
        if (e->config.n_with) {
            r->note = "not used: co-location with other workloads (with:) is not fitted";
            continue;
        }
        wfit_obs *w = &wo[n_wo];
        obs_partition(f, e, &w->cfg);
        w->profile = 0;
        w->batch = e->batch;
        w->is_oom = e->outcome == OBS_OUTCOME_OOM;
        w->unit_time_s = e->unit_time_s;
        w->gpu_util = e->gpu_util;
        w->footprint_bytes = obs_footprint_bytes(e);
        r->used = true;
        r->fit_index = n_wo++;
        if (!bmin || e->batch < bmin) {
            bmin = e->batch;
        }
        if (e->batch > bmax) {
            bmax = e->batch;
        }
    }
    bool multi_batch = bmax > bmin;
    wl_class wc = (wl_class)pc->work_class;

    /* Scale the dimensionless class priors by the reference observation. */
    wl_profile start;
    memset(&start, 0, sizeof start);
    start.name = f->workload;
    start.unit_is_sample = f->unit_is_sample;
    start.host_overlap = f->host_overlap;
    start.mps_sm_growth = f->mps_sm_growth; /* MPS peers (share_mps.h): in every residual too */
    obs_ddp_terms_apply(&f->ddp, &start); /* kept by every profile the fit makes */
    start.ts_class = pc->ts_class ? phys_ts_class_index(m, pc->ts_class) : 0;
    if (start.ts_class < 0) {
        start.ts_class = 0;
    }
    double bref = ref->batch;
    double t_iter = ref->unit_time_s * (f->unit_is_sample ? bref : 1.0);
    partition_cfg ref_cfg;
    obs_partition(f, ref, &ref_cfg);
    double sms_total = f->gpu->sms_total;
    double s_ref = ref->mig ? ref->mig->sms : sms_total;
    double h0 = pc->host_fraction.mean * t_iter;
    if (h0 >= t_iter) {
        h0 = 0.5 * t_iter;
    }
    double g0 = t_iter - h0;
    /* a measured utilisation of the reference run replaces the class's host fraction: it gives
     * the GPU time G = u t and, with the loop's host_overlap, H (model/fit/wmeas.h) */
    bool util_measured = ref->gpu_util > 0;
    if (util_measured) {
        h0 = wmeas_host_s(m, t_iter, ref->gpu_util, f->host_overlap);
        g0 = ref->gpu_util * t_iter;
    }
    double mem_t = pc->mem_fraction.mean * g0;
    double p0 = pc->parallel_fraction.mean * sms_total;
    double s_eff = p0 < s_ref ? p0 : s_ref;
    double c0 = (g0 - mem_t) * s_eff;
    double m0 = mem_t * speed_partition_bandwidth(&ref_cfg, s_eff, m);
    /* The solo run's GPM measurements replace the class's split of the GPU time into compute,
     * memory and parallelism (model/fit/wmeas.h, the split validate's h100-coloc tables use) */
    wmeas_split ms;
    bool measured =
        has_gpm(ref) &&
        wmeas_split_solo(f->gpu, m,
                         &(wmeas_solo){.iter_s = t_iter, .gpu_util = ref->gpu_util,
                                       .kernel_busy = ref->kernel_busy,
                                       .sm_activity = ref->sm_activity,
                                       .dram_util = ref->dram_util},
                         &ms) == 0;
    if (measured) {
        p0 = ms.max_sms;
        m0 = ms.mem_traffic_bytes;
        c0 = ms.compute_sm_s;
    }
    double fp0 = pc->footprint_gib.mean * 1073741824.0;
    /* a measured footprint (the frame buffer in use, model/fit/wfit.h) starts it, under a wide prior
     * where the class gives none: the readings pin it */
    double fp_meas = obs_footprint_bytes(ref);
    for (size_t i = 0; i < f->n && !(fp_meas > 0); i++) {
        fp_meas = obs_footprint_bytes(&f->obs[i]);
    }
    obs_prior_value fp_prior = pc->footprint_gib;
    if (fp_meas > 0) {
        fp0 = fp_meas;
        if (!(pc->footprint_gib.mean > 0)) {
            fp_prior = (obs_prior_value){.mean = fp_meas / 1073741824.0,
                                         .rel_sd = 2.0,
                                         .src = "telemetry: the frame buffer in use"};
        }
    }
    double share = multi_batch ? pc->batch_share.mean : 0.0;
    if (share >= 1.0) {
        share = 0.5;
    }

    free_param fp[16];
    int n_fp = 0;
    const struct {
        wl_param fixed, per;
        double total;
        const obs_prior_value *prior;
        bool want, in_variants;
    } base[] = {
        {WL_P_HOST_S_FIXED, WL_P_HOST_S_PER_SAMPLE, h0, &pc->host_fraction, true, true},
        {WL_P_COMPUTE_FIXED, WL_P_COMPUTE_PER_SAMPLE, c0, NULL, true, true},
        {WL_P_MEM_TRAFFIC_FIXED, WL_P_MEM_TRAFFIC_PER_SAMPLE, m0, &pc->mem_fraction,
         measured || pc->mem_fraction.mean > 0, true},
        {WL_P_MEM_FOOTPRINT_FIXED, WL_P_MEM_FOOTPRINT_PER_SAMPLE, fp0, &fp_prior, fp0 > 0,
         false},
    };
    for (size_t k = 0; k < sizeof base / sizeof base[0]; k++) {
        if (!base[k].want || !(base[k].total > 0)) {
            continue;
        }
        /* C has no class prior: the data pin it; a wide prior (a factor e^2) only regularises.
         * A measured M has the measurement's prior. */
        double sd = base[k].prior ? base[k].prior->rel_sd : 2.0;
        const char *src = base[k].prior ? base[k].prior->src : "scale of the reference observation";
        if (measured && base[k].fixed == WL_P_MEM_TRAFFIC_FIXED) {
            sd = m->meas_prior_rel_sd;
            src = WMEAS_SOURCE;
        } else if (util_measured && base[k].fixed == WL_P_HOST_S_FIXED) {
            src = WMEAS_HOST_SOURCE;
        }
        double fixed = base[k].total * (1.0 - share);
        set_param(&start, wc, base[k].fixed, fixed);
        fp[n_fp++] = (free_param){base[k].fixed, fixed, sd, src, base[k].in_variants};
        if (multi_batch) {
            double per = base[k].total * share / bref;
            set_param(&start, wc, base[k].per, per);
            fp[n_fp++] = (free_param){base[k].per, per, sd + pc->batch_share.rel_sd,
                                      pc->batch_share.src, base[k].in_variants};
        }
    }
    {
        /* P is free in every class, under a weak prior: the class's median, a log-sd of at least
         * 1 (a factor e), so the observations decide when they can; wfit starts it at several
         * points of the observed SM range and scans the family along it (not a variant here) */
        wl_param which = multi_batch ? WL_P_MAX_SMS_PER_SAMPLE : WL_P_MAX_SMS_FIXED;
        double v = multi_batch ? p0 / bref : p0;
        set_param(&start, wc, which, v);
        double sd = pc->parallel_fraction.rel_sd > 1.0 ? pc->parallel_fraction.rel_sd : 1.0;
        const char *src = pc->parallel_fraction.src;
        if (measured) {
            /* measured: GPM SM activity over the kernel-busy share (model/fit/wmeas.h) */
            sd = m->meas_prior_rel_sd;
            src = WMEAS_SOURCE;
        }
        fp[n_fp++] = (free_param){which, v, sd, src, false};
    }

    wfit_result res;
    memset(&res, 0, sizeof res);
    int st = run_fit(&start, wc, m, fp, n_fp, -1, 0, wo, n_wo, &res);
    if (st == SIM_EINPUT) {
        wfit_result_fini(&res);
        snprintf(rep->error, sizeof rep->error, "the fit rejected the observations (%s)",
                 sim_strerror(st));
        return SIM_EINPUT;
    }
    rep->status = st;
    rep->iterations = res.iterations;
    rep->chisq = res.chisq;
    rep->data_chisq = res.data_chisq;
    rep->dof = res.dof;
    double best_data_chisq = res.data_chisq;

    obs_profile *p = arena_alloc(a, sizeof *p);
    p->p = res.profiles[0];
    p->p.name = f->workload;
    p->p.grad_bytes = f->grad_bytes;
    p->p.kernels_per_iter = f->kernels_per_iter > 0 ? f->kernels_per_iter
                            : f->measured >= 0      ? f->obs[f->measured].kernels_per_iter
                                                    : 0;
    /* the launch gaps under MPS (model/physics/share_mps.h): the measured solo's kernel-busy
     * share of NVML's busy time, at most 1, as validate's coloc tables take it */
    if (f->measured >= 0 && f->obs[f->measured].kernel_busy > 0 &&
        f->obs[f->measured].gpu_util > 0) {
        p->p.kernel_busy_frac =
            fmin(1.0, f->obs[f->measured].kernel_busy / f->obs[f->measured].gpu_util);
    }
    p->unit = f->unit;
    p->gpu_name = f->gpu_name;
    p->prior_class = pc->name;
    p->ts_class_name = pc->ts_class;
    p->ref_batch = bref;
    for (int i = 0; i < WL_P_COUNT; i++) {
        p->src[i] = OBS_SRC_FIXED;
        p->lo[i] = p->hi[i] = get_param(&p->p, wc, (wl_param)i);
    }
    rep->n_params = n_fp;
    for (int i = 0; i < n_fp && i < res.n_params; i++) {
        const wfit_param_result *pr = &res.params[i];
        obs_fit_param *o = &rep->params[i];
        o->which = fp[i].which;
        o->value = pr->value;
        o->std_err = pr->std_err;
        o->pinned = pr->pinned;
        snprintf(o->assumed, sizeof o->assumed, "%s", pr->assumed);
        o->prior_src = fp[i].src;
        o->prior_median = fp[i].start;
        o->prior_lo = fp[i].start * exp(-fp[i].rel_sd);
        o->prior_hi = fp[i].start * exp(fp[i].rel_sd);
        o->family_lo = pr->family_lo;
        o->family_hi = pr->family_hi;
        o->family_open = pr->family_open;
        int w = (int)fp[i].which;
        if (pr->pinned) {
            p->src[w] = OBS_SRC_FIT;
            p->sd[w] = pr->std_err;
        } else {
            p->src[w] = OBS_SRC_PRIOR;
            p->lo[w] = fmin(fmin(o->prior_lo, pr->family_lo), pr->value);
            p->hi[w] = fmax(fmax(o->prior_hi, pr->family_hi), pr->value);
        }
    }
    /* the family of profiles (members 1.. are the refits along P) */
    for (int k = 1; k < res.n_family && p->n_variants < OBS_MAX_VARIANTS; k++) {
        p->variants[p->n_variants] = res.family[k].profiles[0];
        p->variants[p->n_variants].name = f->workload;
        p->n_variants++;
    }
    for (size_t i = 0; i < f->n; i++) {
        obs_fit_row *r = &rep->rows[i];
        if (r->used && r->fit_index < res.n_obs) {
            r->rel_residual = res.rel_residual[r->fit_index];
            r->predicted_unit_s = r->measured_unit_s * (1.0 + r->rel_residual);
        }
    }
    wfit_result_fini(&res);

    /* Variants: refits with each unpinned parameter held at the ends of its prior range, kept
     * when they still fit the observations (data chi^2 within 1 of the best: a parameter that
     * only the family spreads is pinned at each of its members and has no such refit). */
    for (int i = 0; i < n_fp; i++) {
        if (p->src[fp[i].which] != OBS_SRC_PRIOR || !fp[i].in_variants) {
            continue;
        }
        for (int dir = -1; dir <= 1 && p->n_variants < OBS_MAX_VARIANTS; dir += 2) {
            double hold = fp[i].start * exp(dir * fp[i].rel_sd);
            wfit_result vr;
            memset(&vr, 0, sizeof vr);
            if (run_fit(&p->p, wc, m, fp, n_fp, i, hold, wo, n_wo, &vr) != SIM_EINPUT &&
                vr.data_chisq <= best_data_chisq + 1.0) {
                p->variants[p->n_variants] = vr.profiles[0];
                p->variants[p->n_variants].name = f->workload;
                p->n_variants++;
            }
            wfit_result_fini(&vr);
        }
    }
    char buf[512];
    int len = snprintf(buf, sizeof buf, "%s: %d of %zu observations (class %s)", f->path, n_wo,
                       f->n, pc->name);
    if (measured && len > 0 && (size_t)len < sizeof buf) {
        snprintf(buf + len, sizeof buf - (size_t)len,
                 "; P, M, C started at the GPM split of observations[%d]",
                 (int)(ref - f->obs));
    }
    p->fitted_on = arena_strdup(a, buf);
    *out = p;
    return 0;
}

/* ---- predict ------------------------------------------------------------------------------- */

static void invalid(obs_prediction *out, const char *why)
{
    out->outcome = SPEED_INVALID;
    /* bounded: a reason longer than the field is cut (and gcc -O2 sees that it cannot overflow) */
    snprintf(out->reason, sizeof out->reason, "%.*s", (int)sizeof out->reason - 1, why);
}

/* True when profile p can be evaluated at batch b: b is the batch it was fitted at, or it has
 * terms that grow with the batch (observations at two batch sizes). */
static bool batch_supported(const obs_profile *p, double b)
{
    if (b == p->ref_batch) {
        return true;
    }
    for (int c = 0; c < WL_CLASS_COUNT; c++) {
        if (p->p.compute_sm_s_per_sample[c] > 0) {
            return true;
        }
    }
    return p->p.host_s_per_sample > 0 || p->p.mem_traffic_bytes_per_sample > 0 ||
           p->p.max_sms_per_sample > 0;
}

/* The partition a query's config cf describes on GPU g (partition, sharing, peers, with,
 * mps_percent, mig_busy; `others` are the profiles `with:` may name), into *c. Returns 0, or -1
 * with the reason in why. */
static int query_cfg(const obs_config *cf, const gpu_type *g, const obs_profile *const *others,
                     size_t n_others, partition_cfg *c, char *why, size_t why_len)
{
    partition_cfg_init(c, g);
    if (obs_resolve_partition(g, cf->partition, &c->mig, why, why_len)) {
        return -1;
    }
    if (cf->peers < 1) {
        snprintf(why, why_len, "peers must be >= 1; got %lld", (long long)cf->peers);
        return -1;
    }
    if (cf->mig_busy_at.line && !c->mig) {
        snprintf(why, why_len, "mig_busy needs a MIG partition; got partition full");
        return -1;
    }
    if (cf->mig_busy < 0) {
        snprintf(why, why_len, "mig_busy must be >= 0");
        return -1;
    }
    if (cf->peers > 64) {
        snprintf(why, why_len, "peers must be at most 64");
        return -1;
    }
    c->peers = (int)cf->peers;
    c->mig_busy = (int)cf->mig_busy;
    c->mps_percent = cf->mps_percent;
    c->n_with = (int)cf->n_with;
    for (size_t i = 0; i < cf->n_with; i++) {
        const obs_profile *w = NULL;
        for (size_t k = 0; k < n_others && !w; k++) {
            if (others[k]->p.name && !strcmp(others[k]->p.name, cf->with[i])) {
                w = others[k];
            }
        }
        if (!w) {
            snprintf(why, why_len, "with: no profile named '%s' was given on the command line",
                     cf->with[i]);
            return -1;
        }
        c->with[i] = &w->p;
        c->with_batch[i] = w->ref_batch >= 1 ? w->ref_batch : 1;
    }
    if (cf->sharing_at.line) {
        c->sharing = (share_mode)cf->sharing;
    } else {
        c->sharing = c->peers > 1 || c->n_with > 0 ? SHARE_TIMESLICE : SHARE_EXCLUSIVE;
    }
    return 0;
}

/* True when the query's config names a sharing key (sharing, peers, with, mps_percent,
 * mig_busy). */
static bool names_sharing(const obs_config *cf)
{
    return cf->sharing_at.line || cf->peers_at.line || cf->n_with || cf->mps_percent_at.line ||
           cf->mig_busy_at.line;
}

/* A DDP config's job on GPU g, as predict reads it: the shape (obs_ddp_job) running profile p at
 * `batch` with gradient size grad_bytes; the slowest worker's GPU shared as the config says
 * (query_cfg into *share, job->share = share, when the config names a sharing key; `others` are
 * the profiles `with:` may name); its ring (*ring); the rate of that ring when the rings of its
 * `peers - 1` identical gangs on the same GPUs cross the same links (max-min fair shares,
 * comm_share) in *rate. Returns 0 (then comm_ring_fini(ring)), or -1 with the reason in why. */
static int ddp_config_job(const obs_config *cf, const gpu_type *g, const obs_profile *const *others,
                          size_t n_others, const comm_params *cm, const wl_profile *p,
                          double batch, double grad_bytes, ddp_job *job, partition_cfg *share,
                          comm_ring *ring, double *rate, char *why, size_t why_len)
{
    if (obs_ddp_job(cf, g, cm, job, why, why_len)) {
        return -1;
    }
    job->profile = p;
    job->batch = batch;
    job->grad_bytes = grad_bytes;
    if (names_sharing(cf)) {
        if (query_cfg(cf, g, others, n_others, share, why, why_len)) {
            return -1;
        }
        if (!cf->mig_busy_at.line) {
            share->mig_busy = job->mig_busy;
        }
        job->share = share;
    }
    if (ddp_ring(job, cm, ring, why, why_len)) {
        return -1;
    }
    int n_rings = job->share && job->share->peers > 1 ? job->share->peers : 1;
    const comm_ring *rings[64];
    double rates[64];
    for (int i = 0; i < n_rings; i++) {
        rings[i] = ring;
    }
    comm_share(rings, (size_t)n_rings, rates);
    *rate = rates[0];
    return 0;
}

/* A DDP query: the job's ring (shared with the rings of its `peers - 1` identical gangs on the
 * same GPUs), its step with every worker's GPU shared as the config says, and the range over
 * the profile's variants. */
static void predict_ddp(const obs_profile *p, const obs_profile *const *others, size_t n_others,
                        const obs_query *q, const gpu_type *g, const phys_params *m,
                        const comm_params *cm, obs_prediction *out)
{
    if (!cm) {
        invalid(out, "DDP query without a communication model");
        return;
    }
    ddp_job job;
    partition_cfg share;
    comm_ring ring;
    double rate;
    char why[sizeof out->reason];
    if (ddp_config_job(&q->config, g, others, n_others, cm, &p->p, q->batch, p->p.grad_bytes,
                       &job, &share, &ring, &rate, why, sizeof why)) {
        invalid(out, why);
        return;
    }
    ddp_result r;
    ddp_step(&job, cm, m, &ring, rate, &r);
    out->outcome = r.outcome;
    if (r.outcome != SPEED_OK) {
        snprintf(out->reason, sizeof out->reason, "%s", r.reason);
        comm_ring_fini(&ring);
        return;
    }
    out->throughput = r.throughput;
    out->time_s = q->work / r.throughput;
    out->time_lo_s = out->time_hi_s = out->time_s;
    for (int v = 0; v < p->n_variants; v++) {
        wl_profile pv = p->variants[v];
        pv.grad_bytes = p->p.grad_bytes;
        job.profile = &pv;
        ddp_result rv;
        ddp_step(&job, cm, m, &ring, rate, &rv);
        if (rv.outcome == SPEED_OK) {
            out->time_lo_s = fmin(out->time_lo_s, q->work / rv.throughput);
            out->time_hi_s = fmax(out->time_hi_s, q->work / rv.throughput);
        }
    }
    comm_ring_fini(&ring);
}

void obs_predict(const obs_profile *p, const obs_profile *const *others, size_t n_others,
                 const obs_queries *qs, size_t qi, const phys_params *m, const comm_params *cm,
                 obs_prediction *out)
{
    memset(out, 0, sizeof *out);
    const obs_query *q = &qs->q[qi];
    const obs_config *cf = &q->config;
    if (obs_config_is_ddp(cf)) {
        if (!batch_supported(p, q->batch)) {
            invalid(out, "profile was fitted at one batch only; predicting another batch needs "
                         "observations at two batch sizes");
            return;
        }
        predict_ddp(p, others, n_others, q, qs->gpu, m, cm, out);
        return;
    }
    partition_cfg c;
    char why[sizeof ((obs_prediction *)0)->reason];
    if (query_cfg(cf, qs->gpu, others, n_others, &c, why, sizeof why)) {
        invalid(out, why);
        return;
    }
    if (!batch_supported(p, q->batch)) {
        char v[160];
        snprintf(v, sizeof v,
                 "profile was fitted at batch %.0f only; predicting batch %u needs "
                 "observations at two batch sizes",
                 p->ref_batch, q->batch);
        invalid(out, v);
        return;
    }
    /* the variants: the family of profiles along P and the prior ends of the other unpinned
     * parameters */
    speed_result r;
    predict_family_time(&p->p, p->n_variants, p->variants, q->batch, &c, m, &r);
    out->outcome = r.outcome;
    if (r.outcome != SPEED_OK) {
        snprintf(out->reason, sizeof out->reason, "%s", r.reason);
        return;
    }
    double t = r.unit_time_s;
    double lo = r.unit_time_lo_s > 0 ? r.unit_time_lo_s : t;
    double hi = r.unit_time_hi_s > 0 ? r.unit_time_hi_s : t;
    /* fitted standard errors, added in quadrature (covariances ignored: conservative) */
    double var = 0;
    wl_class wc = wl_dominant_class(&p->p);
    for (int i = 0; i < WL_P_COUNT; i++) {
        if (p->src[i] != OBS_SRC_FIT || !(p->sd[i] > 0)) {
            continue;
        }
        wl_profile pp = p->p;
        double v0 = get_param(&pp, wc, (wl_param)i);
        set_param(&pp, wc, (wl_param)i, v0 + p->sd[i]);
        speed_result rp;
        predict_unit_estimate(&pp, q->batch, &c, m, &rp);
        if (rp.outcome == SPEED_OK) {
            var += (rp.unit_time_s - t) * (rp.unit_time_s - t);
        }
    }
    double se = sqrt(var);
    out->time_s = t * q->work;
    out->throughput = r.throughput;
    out->time_lo_s = fmin(lo, t - se) * q->work;
    out->time_hi_s = fmax(hi, t + se) * q->work;
    if (out->time_lo_s < 0) {
        out->time_lo_s = 0;
    }
}

int obs_check_ddp_sharing(const obs_file *f, diag *d)
{
    int rc = 0;
    for (size_t i = 0; i < f->n; i++) {
        const obs_config *cf = &f->obs[i].config;
        if (!obs_config_is_ddp(cf) || !names_sharing(cf) || cf->n_with) {
            continue;
        }
        partition_cfg share;
        char why[512];
        const char *bad = why;
        if (query_cfg(cf, f->gpu, NULL, 0, &share, why, sizeof why) == 0) {
            bad = predict_cfg_invalid(&share);
        }
        if (!bad) {
            continue;
        }
        const char *key = "sharing";
        src_loc at = cf->sharing_at.line ? cf->sharing_at : cf->at;
        if (strstr(bad, "peers") && cf->peers_at.line) {
            key = "peers";
            at = cf->peers_at;
        } else if (strstr(bad, "mps_percent") && cf->mps_percent_at.line) {
            key = "mps_percent";
            at = cf->mps_percent_at;
        } else if (strstr(bad, "mig_busy") && cf->mig_busy_at.line) {
            key = "mig_busy";
            at = cf->mig_busy_at;
        }
        char path[128];
        snprintf(path, sizeof path, "observations[%zu].config.%s", i, key);
        diag_error(d, at, path,
                   "%s; expected a config that `slicesim predict` answers, got sharing '%s' "
                   "with peers %lld",
                   bad, share_mode_name(share.sharing), (long long)cf->peers);
        rc = SIM_EINPUT;
    }
    return rc;
}

/* ---- DDP observations ---------------------------------------------------------------------- */

/* One DDP observation's job and ring (built once: they do not depend on G). */
typedef struct ddp_obs {
    const obs_entry *e;
    bool ok; /* job and ring built */
    ddp_job job;
    partition_cfg share; /* job.share points here when the config names a sharing key */
    comm_ring ring;
    double rate; /* the ring's rate beside its peers' rings (ddp_config_job) */
} ddp_obs;

/* Builds o's job for e (ddp_config_job, as predict reads the same config) running p; o->ok says
 * whether it could. A run co-located with other workloads (with:) is not built: they are not
 * fitted (as for one process). */
static void ddp_obs_build(ddp_obs *o, const obs_entry *e, const gpu_type *g,
                          const comm_params *cm, const wl_profile *p)
{
    char why[256];
    o->e = e;
    o->ok = !e->config.n_with &&
            ddp_config_job(&e->config, g, NULL, 0, cm, p, e->batch, 0, &o->job, &o->share,
                           &o->ring, &o->rate, why, sizeof why) == 0;
}

/* Predicted time per unit of the whole job at gradient size g; NAN when the model gives none;
 * *oom set when it predicts OOM. */
static double ddp_unit_time(ddp_obs *o, const comm_params *cm, const phys_params *m, double g,
                            bool *oom)
{
    *oom = false;
    if (!o->ok) {
        return (double)NAN;
    }
    o->job.grad_bytes = g;
    ddp_result r;
    ddp_step(&o->job, cm, m, &o->ring, o->rate, &r);
    *oom = r.outcome == SPEED_OOM;
    return r.outcome == SPEED_OK ? 1.0 / r.throughput : (double)NAN;
}

/* Sum of squared log residuals of the ok DDP observations at gradient size g. */
static double ddp_cost(ddp_obs *os, int n, const comm_params *cm, const phys_params *m, double g)
{
    double sum = 0;
    for (int i = 0; i < n; i++) {
        bool oom;
        if (os[i].e->outcome != OBS_OUTCOME_OK) {
            continue;
        }
        double t = ddp_unit_time(&os[i], cm, m, g, &oom);
        double d = isfinite(t) ? log(t / os[i].e->unit_time_s) : 50.0;
        sum += d * d;
    }
    return sum;
}

/* The x in [lo, hi] that minimises cost(ctx, x), by golden section (at most max_it steps, until
 * the bracket is narrower than tol); cost is taken to be unimodal there. */
static double golden_min(double lo, double hi, double (*cost)(void *, double), void *ctx,
                         double tol, int max_it)
{
    const double phi = (sqrt(5.0) - 1) / 2;
    double x1 = hi - phi * (hi - lo), x2 = lo + phi * (hi - lo);
    double c1 = cost(ctx, x1), c2 = cost(ctx, x2);
    for (int it = 0; it < max_it && hi - lo > tol; it++) {
        if (c1 <= c2) {
            hi = x2;
            x2 = x1;
            c2 = c1;
            x1 = hi - phi * (hi - lo);
            c1 = cost(ctx, x1);
        } else {
            lo = x1;
            x1 = x2;
            c1 = c2;
            x2 = lo + phi * (hi - lo);
            c2 = cost(ctx, x2);
        }
    }
    return (lo + hi) / 2;
}

/* What the DDP costs need, for golden_min: the observations, the profile to scale and the
 * gradient size (scale_cost only), the models. */
typedef struct fit_ctx {
    ddp_obs *os;
    int n;
    const wl_profile *p0;
    double g;
    const comm_params *cm;
    const phys_params *m;
} fit_ctx;

/* ddp_cost at G = 10^x. */
static double grad_cost(void *ctx, double x)
{
    fit_ctx *g = ctx;
    return ddp_cost(g->os, g->n, g->cm, g->m, pow(10, x));
}

/* log10 of the gradient size that minimises ddp_cost: the cost is not monotone in G (the bucket
 * sizes change with it), so x = log10 G is scanned over [3, 12] in steps of `step`, then refined
 * around the best point by golden section. */
static double fit_log_grad(ddp_obs *os, int n, const comm_params *cm, const phys_params *m,
                           double step)
{
    double best_x = 3, best_c = HUGE_VAL;
    for (int k = 0; 3 + step * k <= 12 + 1e-9; k++) {
        double x = 3 + step * k, c = ddp_cost(os, n, cm, m, pow(10, x));
        if (c < best_c) {
            best_c = c;
            best_x = x;
        }
    }
    fit_ctx g = {os, n, NULL, 0, cm, m};
    return golden_min(best_x - step, best_x + step, grad_cost, &g, 1e-10, 100);
}

int obs_fit_ddp(const obs_file *f, obs_profile *p, const phys_params *m, const comm_params *cm,
                obs_fit_report *rep)
{
    ddp_obs *os = xcalloc(f->n ? f->n : 1, sizeof *os, "DDP observations");
    int *row = xcalloc(f->n ? f->n : 1, sizeof *row, "DDP observation rows");
    int n = 0, n_ok = 0;
    for (size_t i = 0; i < f->n; i++) {
        const obs_entry *e = &f->obs[i];
        if (!obs_config_is_ddp(&e->config)) {
            continue;
        }
        row[n] = (int)i;
        ddp_obs_build(&os[n++], e, f->gpu, cm, &p->p);
        n_ok += e->outcome == OBS_OUTCOME_OK;
    }
    rep->n_ddp = n;
    if (n > 0 && !(f->grad_bytes > 0) && n_ok > 0) {
        p->p.grad_bytes = pow(10, fit_log_grad(os, n, cm, m, 0.005));
        rep->grad_fitted = true;
        /* pinned when no gradient size a factor 2 or more away fits within one more unit of
         * chi^2 (residuals in units of WFIT_TIME_REL_SD): hidden communication leaves it open,
         * and so does a second branch of the bucket-count sawtooth (ddp_buckets); from DDP runs
         * alone also one that fits with another solo time (obs_fit_from_ddp's grad_alt_bytes) */
        double lim = ddp_cost(os, n, cm, m, p->p.grad_bytes) + WFIT_TIME_REL_SD * WFIT_TIME_REL_SD;
        double xg = log10(p->p.grad_bytes), alt_c = HUGE_VAL, alt = 0;
        for (int k = 0; k <= 900; k++) {
            double x = 3 + 0.01 * k;
            if (fabs(x - xg) < log10(2.0)) {
                continue;
            }
            double c = ddp_cost(os, n, cm, m, pow(10, x));
            if (c <= lim && c < alt_c) {
                alt_c = c;
                alt = pow(10, x);
            }
        }
        if (!(rep->derived_last && rep->grad_alt_bytes > 0)) {
            rep->grad_alt_bytes = alt;
        }
        rep->grad_pinned = !(rep->grad_alt_bytes > 0);
    }
    for (int k = 0; k < n; k++) {
        const obs_entry *e = os[k].e;
        obs_fit_row *r = &rep->rows[row[k]];
        bool oom;
        double t = ddp_unit_time(&os[k], cm, m, p->p.grad_bytes, &oom);
        r->used = true;
        r->note = NULL;
        if (e->outcome == OBS_OUTCOME_OOM) {
            r->rel_residual = oom ? 0 : 1;
        } else if (isfinite(t)) {
            r->predicted_unit_s = t;
            r->rel_residual = t / e->unit_time_s - 1;
        } else {
            r->used = false;
            r->note = e->config.n_with ? "not used: co-location with other workloads (with:) is "
                                         "not fitted"
                      : oom            ? "not used: the model predicts OOM for this DDP run"
                                       : "not used: the DDP model cannot evaluate it (grad_bytes "
                                         "unknown?)";
        }
        if (os[k].ok) {
            comm_ring_fini(&os[k].ring);
        }
    }
    free(os);
    free(row);
    return 0;
}

double obs_fit_chisq_limit(const obs_fit_report *rep)
{
    double k = rep->dof > 1 ? rep->dof : 1;
    return OBS_POOR_FIT_NOISE_FACTOR * OBS_POOR_FIT_NOISE_FACTOR *
           gsl_cdf_chisq_Qinv(OBS_POOR_FIT_P, k);
}

/* ---- a fit from DDP observations alone ------------------------------------------------------ */

bool obs_fit_needs_ddp(const obs_file *f)
{
    if (reference_obs(f)) {
        return false;
    }
    for (size_t i = 0; i < f->n; i++) {
        const obs_entry *e = &f->obs[i];
        if (obs_config_is_ddp(&e->config) && e->outcome == OBS_OUTCOME_OK &&
            e->unit_time_s > 0) {
            return true;
        }
    }
    return false;
}

/* p's host time, compute work and memory traffic (fixed and per sample) times s: its time on any
 * partition scales by s (the roofline g is homogeneous of degree 1); parallelism and footprint
 * stay. */
static void scale_times(wl_profile *p, double s)
{
    p->host_s_fixed *= s;
    p->host_s_per_sample *= s;
    for (int c = 0; c < WL_CLASS_COUNT; c++) {
        p->compute_sm_s_fixed[c] *= s;
        p->compute_sm_s_per_sample[c] *= s;
    }
    p->mem_traffic_bytes_fixed *= s;
    p->mem_traffic_bytes_per_sample *= s;
}

/* Best ddp_cost of the DDP observations os with profile p0 scaled by s (scale_times), at the
 * given gradient size g (> 0) or at the best one. */
static double scaled_cost(ddp_obs *os, int n, const wl_profile *p0, double s, double g,
                          const comm_params *cm, const phys_params *m)
{
    wl_profile ps = *p0;
    scale_times(&ps, s);
    for (int i = 0; i < n; i++) {
        os[i].job.profile = &ps;
    }
    if (!(g > 0)) {
        g = pow(10, fit_log_grad(os, n, cm, m, 0.02));
    }
    double c = ddp_cost(os, n, cm, m, g);
    for (int i = 0; i < n; i++) {
        os[i].job.profile = p0;
    }
    return c;
}

/* scaled_cost at a scale of 10^x. */
static double scale_cost(void *ctx, double x)
{
    fit_ctx *c = ctx;
    return scaled_cost(c->os, c->n, c->p0, pow(10, x), c->g, c->cm, c->m);
}

/* log10 of the scale of p0 (scale_times) that minimises scaled_cost at gradient size g (or the
 * best one at each scale when g is 0): x = log10 s scanned over [-3, 0.1] (the solo time is at
 * most the perfect-scaling one) in steps of `step`, then golden section (max_it steps); the
 * cost there in *cost. */
static double best_log_scale(ddp_obs *os, int n, const wl_profile *p0, double g,
                             const comm_params *cm, const phys_params *m, double step, int max_it,
                             double *cost)
{
    double best_x = 0, best_c = HUGE_VAL;
    for (int k = 0; -3 + step * k <= 0.1 + 1e-9; k++) {
        double x = -3 + step * k, c = scaled_cost(os, n, p0, pow(10, x), g, cm, m);
        if (c < best_c) {
            best_c = c;
            best_x = x;
        }
    }
    fit_ctx sc = {os, n, p0, g, cm, m};
    double x = golden_min(best_x - step, best_x + step, scale_cost, &sc, 1e-9, max_it);
    double c = scaled_cost(os, n, p0, pow(10, x), g, cm, m);
    *cost = c < best_c ? c : best_c;
    return c < best_c ? x : best_x;
}

int obs_fit_from_ddp(const obs_file *f, const obs_prior_class *pc, const phys_params *m,
                     const comm_params *cm, arena *a, const obs_file **f_out, obs_profile **out,
                     obs_fit_report *rep)
{
    *f_out = f;
    const obs_entry *e0 = NULL;
    for (size_t i = 0; i < f->n && !e0; i++) {
        const obs_entry *e = &f->obs[i];
        if (obs_config_is_ddp(&e->config) && e->outcome == OBS_OUTCOME_OK &&
            e->unit_time_s > 0) {
            e0 = e;
        }
    }
    ddp_job j0;
    char why[256];
    if (!e0 || obs_ddp_job(&e0->config, f->gpu, cm, &j0, why, sizeof why) != 0) {
        return obs_fit(f, pc, m, a, out, rep); /* says why nothing can be fitted */
    }
    /* f with the derived one-process run appended; its first time assumes perfect scaling */
    obs_file *f2 = arena_calloc(a, 1, sizeof *f2);
    *f2 = *f;
    f2->obs = arena_calloc(a, f->n + 1, sizeof *f2->obs);
    memcpy(f2->obs, f->obs, f->n * sizeof *f->obs);
    obs_entry *d = &f2->obs[f->n];
    memset(d, 0, sizeof *d);
    d->at = e0->at;
    d->config.partition = e0->config.partition;
    d->config.peers = 1;
    d->batch = e0->batch;
    d->mig = e0->mig;
    d->gpu_util = -1;
    d->outcome = OBS_OUTCOME_OK;
    double t0 = e0->unit_time_s * j0.workers;
    d->unit_time_s = t0;
    f2->n = f->n + 1;
    f2->measured = -1;
    int rc = obs_fit(f2, pc, m, a, out, rep);
    if (rc == SIM_EINPUT) {
        return rc;
    }
    /* the DDP observations' jobs and rings */
    ddp_obs *os = xcalloc(f->n, sizeof *os, "DDP observations");
    int n = 0;
    for (size_t i = 0; i < f->n; i++) {
        const obs_entry *e = &f->obs[i];
        if (!obs_config_is_ddp(&e->config) || e->outcome != OBS_OUTCOME_OK) {
            continue;
        }
        ddp_obs_build(&os[n], e, f->gpu, cm, &(*out)->p);
        n += os[n].ok;
    }
    /* the solo time is at most the perfect-scaling one (communication only adds) */
    const wl_profile p0 = (*out)->p;
    double g = f->grad_bytes, best_c;
    double best = best_log_scale(os, n, &p0, g, cm, m, 0.02, 60, &best_c);
    /* what the runs leave open: another gradient size, a factor 2 or more away, with which some
     * solo time fits them within one unit of chi^2 (the profile likelihood over G, the solo time
     * re-fitted at each G: the bucket count is an integer, so the cost is a sawtooth in G and two
     * branches can fit as well); scanned over log10 G in [3, 12] in steps of 0.05 */
    double g_alt = 0;
    if (!(g > 0) && n > 0) {
        wl_profile pb = p0;
        scale_times(&pb, pow(10, best));
        for (int i = 0; i < n; i++) {
            os[i].job.profile = &pb;
        }
        double xg = fit_log_grad(os, n, cm, m, 0.02), alt_c = HUGE_VAL;
        for (int i = 0; i < n; i++) {
            os[i].job.profile = &p0;
        }
        double lim = best_c + WFIT_TIME_REL_SD * WFIT_TIME_REL_SD;
        for (int k = 0; k <= 180; k++) {
            double x = 3 + 0.05 * k, c;
            if (fabs(x - xg) < log10(2.0)) {
                continue;
            }
            best_log_scale(os, n, &p0, pow(10, x), cm, m, 0.05, 40, &c);
            if (c <= lim && c < alt_c) {
                alt_c = c;
                g_alt = pow(10, x);
            }
        }
    }
    for (int i = 0; i < n; i++) {
        comm_ring_fini(&os[i].ring);
    }
    free(os);
    /* the derived run: the profile's solo time per unit at the best scale, refitted */
    speed_result r;
    partition_cfg c;
    partition_cfg_init(&c, f->gpu);
    c.mig = e0->mig;
    wl_profile ps = p0;
    scale_times(&ps, pow(10, best));
    predict_unit_estimate(&ps, e0->batch, &c, m, &r);
    if (r.outcome == SPEED_OK) {
        d->unit_time_s = r.unit_time_s;
    }
    rc = obs_fit(f2, pc, m, a, out, rep);
    rep->derived_last = true;
    rep->grad_alt_bytes = g_alt;
    *f_out = f2;
    return rc;
}
