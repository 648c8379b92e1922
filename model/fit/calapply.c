/* model/fit/calapply.c - a measured node in place of a catalog GPU type's defaults (calapply.h). */
#include "model/fit/calapply.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sim/err.h"

#define MAX_TOKENS 8
#define TOKEN_LEN 32

/* Whether '-'-separated catalog name `name` has a component starting with `tok` (any case). */
static bool has_component(const char *name, const char *tok)
{
    size_t tl = strlen(tok);
    for (const char *p = name; *p;) {
        const char *e = strchr(p, '-');
        size_t cl = e ? (size_t)(e - p) : strlen(p);
        if (cl >= tl && !strncasecmp(p, tok, tl)) {
            return true;
        }
        p += cl + (e ? 1 : 0);
    }
    return false;
}

/* Whether the key or an alias of g has every token of toks[0..n). */
static bool names_hold(const gpu_type *g, char toks[][TOKEN_LEN], int n)
{
    for (int a = -1; a < g->n_aliases; a++) {
        const char *name = a < 0 ? g->name : g->aliases[a];
        bool all = true;
        for (int i = 0; i < n && all; i++) {
            all = has_component(name, toks[i]);
        }
        if (all) {
            return true;
        }
    }
    return false;
}

/* "80GB" and the like. */
static bool is_mem_size(const char *t)
{
    size_t i = 0;
    while (isdigit((unsigned char)t[i])) {
        i++;
    }
    return i > 0 && !strcasecmp(t + i, "GB");
}

/* Whether a node measured with `sms` SMs (0 = unknown) can be of type g: equal counts, or a
 * catalog type whose SM count is unsourced (0). */
static bool sms_fit(const gpu_type *g, int sms)
{
    return sms <= 0 || g->sms_total == 0 || g->sms_total == sms;
}

const gpu_type *calapply_match_gpu(const gpu_catalog *cat, const char *device, int sms_total)
{
    const char *name = strncmp(device, "NVIDIA ", 7) ? device : device + 7;
    const gpu_type *g = gpu_catalog_find(cat, name);
    if (g && sms_fit(g, sms_total)) {
        return g;
    }
    /* tokens: required = the chip (first word) and a memory size; optional = the rest */
    char req[2][TOKEN_LEN], opt[MAX_TOKENS][TOKEN_LEN];
    int n_req = 0, n_opt = 0;
    char buf[128];
    snprintf(buf, sizeof buf, "%s", name);
    for (char *save = NULL, *t = strtok_r(buf, " -", &save); t; t = strtok_r(NULL, " -", &save)) {
        if (n_req == 0 || (n_req == 1 && is_mem_size(t))) {
            snprintf(req[n_req++], TOKEN_LEN, "%s", t);
        } else if (n_opt < MAX_TOKENS) {
            snprintf(opt[n_opt++], TOKEN_LEN, "%s", t);
        }
    }
    if (n_req == 0) {
        return NULL;
    }
    const gpu_type *found = NULL;
    int n_found = 0;
    for (size_t i = 0; i < cat->n_gpus; i++) {
        const gpu_type *c = &cat->gpus[i];
        if (sms_fit(c, sms_total) && names_hold(c, req, n_req)) {
            found = c;
            n_found++;
        }
    }
    if (n_found == 1) {
        return found;
    }
    if (n_found == 0) {
        return NULL;
    }
    /* several: the optional words ("PCIe", "NVL") may tell them apart */
    found = NULL;
    n_found = 0;
    for (size_t i = 0; i < cat->n_gpus; i++) {
        const gpu_type *c = &cat->gpus[i];
        if (sms_fit(c, sms_total) && names_hold(c, req, n_req) && names_hold(c, opt, n_opt)) {
            found = c;
            n_found++;
        }
    }
    return n_found == 1 ? found : NULL;
}

int calapply_bw_index(const cal_fit *f)
{
    for (int i = 0; i < f->n_bw; i++) {
        if (!strcmp(f->bw[i].name, "triad")) {
            return i;
        }
    }
    return f->n_bw > 0 ? 0 : -1;
}

int calapply_ts_index(const cal_fit *f, double kernel_ms)
{
    int best = -1;
    double best_d = HUGE_VAL;
    for (int i = 0; i < f->n_ts; i++) {
        const cal_ts_fit *t = &f->ts[i];
        if (t->gap_ms != 0 || !(t->kernel_ms > 0) || t->n_k < 2) {
            continue;
        }
        double dist = fabs(log(t->kernel_ms / kernel_ms));
        if (dist < best_d) {
            best_d = dist;
            best = i;
        }
    }
    return best;
}

/* η(k) of measurement t for k = 2..GPU_MEAS_MAX_K into eta[]: linear in k between measured
 * counts, the last measured value past them. */
static void eta_table(const cal_ts_fit *t, double eta[GPU_MEAS_MAX_K + 1])
{
    eta[0] = eta[1] = 1.0;
    for (int k = 2; k <= GPU_MEAS_MAX_K; k++) {
        double e = t->eta[t->n_k - 1].value;
        for (int i = 1; i < t->n_k; i++) {
            if (t->k[i] >= k) {
                double k0 = t->k[i - 1], k1 = t->k[i];
                double e0 = t->eta[i - 1].value, e1 = t->eta[i].value;
                e = e0 + (e1 - e0) * ((double)k - k0) / (k1 - k0);
                break;
            }
        }
        eta[k] = e;
    }
}

int calapply_gpu(const gpu_type *in, const cal_fit *f, const phys_params *m, gpu_type *out,
                 char *why, size_t n)
{
    *out = *in;
    if (in->sms_total == 0) {
        out->sms_total = f->sms_total; /* unsourced in the catalog: the measured count */
    } else if (f->sms_total != in->sms_total) {
        snprintf(why, n, "measured on %d SMs, catalog GPU %s has %d", f->sms_total, in->name,
                 in->sms_total);
        return SIM_EINPUT;
    }
    double s = (double)f->sms_total;
    for (int i = 0; i < f->n_rates; i++) {
        gpu_format fm = gpu_format_from_name(f->rates[i].name);
        if (fm < GPU_FMT_COUNT) {
            out->peak_flops[fm] = calfit_rate_eval(&f->rates[i], s) * 1e12;
        }
    }
    int b = calapply_bw_index(f);
    if (b >= 0) {
        const cal_bw_fit *bw = &f->bw[b];
        gpu_measured *ms = &out->meas;
        ms->has_bw = true;
        ms->bw_is_mm = bw->form == CAL_BW_MM;
        ms->bw_max_bytes_per_s = (ms->bw_is_mm ? bw->mm_bmax_gb_s : bw->bmax_gb_s).value * 1e9;
        ms->bw_per_sm_bytes_per_s = bw->per_sm_gb_s.value * 1e9;
        ms->bw_sharpness = bw->sharpness.value;
        ms->bw_s_half = bw->s_half.value;
    }
    if (f->has_ar && in->nvlink_bytes_per_s > 0) {
        /* the sweep ran over the type's NVLink (a type without NVLink keeps its PCIe figures:
         * what its sweep crossed is not recorded) */
        gpu_measured *ms = &out->meas;
        ms->n_ar = 0;
        for (int i = -1; i < f->n_ar_rings && ms->n_ar < GPU_MEAS_MAX_AR; i++) {
            const cal_ar_ring *rg = i >= 0 ? &f->ar_rings[i] : NULL;
            gpu_meas_ar e = {.gpus = rg ? rg->gpus : f->ar.gpus};
            for (int pr = 0; pr < 2; pr++) {
                const cal_ar_fit *a = rg ? &rg->proto[pr]
                                         : f->has_ar_proto ? &f->ar_proto[pr] : &f->ar;
                e.has[pr] = rg ? rg->has[pr] : true;
                e.latency_s[pr] = e.has[pr] ? 2.0 * (e.gpus - 1) * a->alpha_s.value : 0;
                e.busbw_bytes_per_s[pr] = e.has[pr] ? a->beta_bytes_per_s.value : 0;
            }
            e.ll_max_bytes = rg ? rg->ll_max_bytes : f->has_ar_proto ? f->ar_ll_max_bytes : 0;
            /* ascending in gpus (the loader keeps the sizes distinct) */
            int k = ms->n_ar++;
            for (; k > 0 && ms->ar[k - 1].gpus > e.gpus; k--) {
                ms->ar[k] = ms->ar[k - 1];
            }
            ms->ar[k] = e;
        }
    }
    for (int c = 0; c < m->n_ts && c < GPU_MEAS_MAX_TS; c++) {
        if (!(m->ts[c].kernel_ms > 0)) {
            continue;
        }
        int t = calapply_ts_index(f, m->ts[c].kernel_ms);
        if (t >= 0) {
            out->meas.has_eta[c] = true;
            eta_table(&f->ts[t], out->meas.eta[c]);
        }
    }
    return 0;
}
