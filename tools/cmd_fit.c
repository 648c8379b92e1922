/* tools/cmd_fit.c - `slicesim fit CALIB.json -o MODEL.json [--compare] [--gpu NAME]
 * [--catalog FILE] [--allreduce-sweep FILE]...`: fit model parameters to a calibration file
 * (calib/run-all.sh output) and write them as MODEL.json (schema "slicesim-calmodel" v1,
 * calib/README.md). Each --allreduce-sweep file (the calibration schema, an `allreduce`
 * section of another ring size) adds that ring size's fit (`allreduce.rings`).
 * `slicesim fit --tslice TSLICE.json`: the time-slice quantum, switch gap and return waits of a
 * calib/tslice.cu recording (model/fit/tsprobe.h), printed beside the figures
 * model/physics/physics.yaml takes from the H100 recording (ts_quantum_s, ts_switch_s).
 *
 * Prints one line per fitted quantity (value ± standard error, residuals), then
 * `holdout mape=X% max=Y% n=N`. --compare prints the measured whole-GPU figures against the
 * catalog's datasheet figures for the same GPU (named by --gpu, or guessed from the device name
 * that nvidia-smi reported). Exit: 0, 1 (file unreadable or unwritable), 2 (bad input/usage). */
#include "tools/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "experiments/calib_json.h"
#include "experiments/fileio.h"
#include "experiments/physics_load.h"
#include "model/fit/calapply.h"
#include "model/fit/calfit.h"
#include "model/fit/tsprobe.h"
#include "model/hw/catalog.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/gslerr.h"
#include "sim/xalloc.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: slicesim fit CALIB.json -o MODEL.json [--compare] [--gpu NAME] [--catalog FILE]\n"
            "                    [--mig-device N] [--allreduce-sweep FILE]...\n"
            "       slicesim fit --tslice TSLICE.json\n"
            "  Fits per-SM rates per format, the bandwidth-versus-SMs curve, time-slice\n"
            "  efficiency eta(k), MPS interference and all-reduce alpha/beta to a calibration\n"
            "  file from calib/run-all.sh, prints them with standard errors and a hold-out check,\n"
            "  and writes MODEL.json for scenarios (calibration: key).\n"
            "  --compare       print measured whole-GPU figures against the catalog's datasheet\n"
            "  --gpu NAME      catalog GPU to compare with (default: guessed from the device name)\n"
            "  --catalog FILE  catalog file instead of the built-in model/hw/gpus.yaml\n"
            "  --mig-device N  fit the sections of MIG device N (mig_devices[N]) of a node\n"
            "                  measured with MIG on, instead of the whole-GPU sections\n"
            "  --allreduce-sweep FILE  an all-reduce sweep of another ring size on the same\n"
            "                  GPU type (a calibration JSON with an `allreduce` section): its\n"
            "                  fit joins the model's, per ring size (repeatable, up to 3)\n"
            "  --tslice FILE   analyse a calib/tslice.cu recording instead: the time slice,\n"
            "                  the switch gap and the return waits, beside model/physics/physics.yaml's\n"
            "                  ts_quantum_s and ts_switch_s (nothing written)\n");
}

/* ------------------------------------------------------------------ printing */

static void print_fit(const cal_data *d, const cal_fit *f)
{
    printf("device: %s (%d SMs), driver %s, measured %s\n", d->device[0] ? d->device : "?",
           d->sms_total, d->driver[0] ? d->driver : "?", d->date_utc[0] ? d->date_utc : "?");
    for (int i = 0; i < f->n_rates; i++) {
        const cal_rate_fit *r = &f->rates[i];
        printf("compute %-12s %.5g ± %.2g TFLOP/s per SM", r->name, r->per_sm.value, r->per_sm.se);
        if (r->has_rolloff) {
            printf(", roll-off %.3g ± %.2g per SM", r->rolloff.value, r->rolloff.se);
        }
        printf(" (n=%d, rms resid %.2f%%)\n", r->n, 100 * r->rms_rel);
    }
    for (int i = 0; i < f->n_bw; i++) {
        const cal_bw_fit *b = &f->bw[i];
        if (b->form == CAL_BW_SOFTMIN) {
            printf("bandwidth %-6s softmin Bmax=%.5g ± %.2g GB/s, b=%.4g ± %.2g GB/s per SM, "
                   "p=%.3g ± %.2g",
                   b->name, b->bmax_gb_s.value, b->bmax_gb_s.se, b->per_sm_gb_s.value,
                   b->per_sm_gb_s.se, b->sharpness.value, b->sharpness.se);
        } else {
            printf("bandwidth %-6s michaelis-menten Bmax=%.5g ± %.2g GB/s, s_half=%.4g ± %.2g SMs",
                   b->name, b->mm_bmax_gb_s.value, b->mm_bmax_gb_s.se, b->s_half.value,
                   b->s_half.se);
        }
        printf(" (rss softmin %.3g, michaelis-menten %.3g; n=%d, rms resid %.2f%%)\n",
               b->rss_softmin, b->rss_mm, b->n, 100 * b->rms_rel);
    }
    for (int i = 0; i < f->n_ts; i++) {
        const cal_ts_fit *t = &f->ts[i];
        printf("timeslice kernel=%.3g ms gap=%.3g ms:", t->kernel_ms, t->gap_ms);
        for (int j = 1; j < t->n_k; j++) {
            printf(" eta(%d)=%.4f ± %.4f", t->k[j], t->eta[j].value, t->eta[j].se);
        }
        printf("; mean %.4f ± %.4f\n", t->eta_mean.value, t->eta_mean.se);
    }
    if (f->has_mps) {
        printf("mps eta_compute=%.4f ± %.4f eta_memory=%.4f ± %.4f gamma_mixed=%.4f ± %.4f "
               "(n=%d, rms resid %.2f%%, max %.2f%%)\n",
               f->mps.eta_compute.value, f->mps.eta_compute.se, f->mps.eta_memory.value,
               f->mps.eta_memory.se, f->mps.gamma_mixed.value, f->mps.gamma_mixed.se, f->mps.n,
               100 * f->mps.rms_rel, 100 * f->mps.max_rel);
    } else {
        printf("mps: no data\n");
    }
    if (f->has_ar) {
        printf("allreduce %d GPUs alpha=%.4g ± %.2g us%s, beta=%.5g ± %.2g GB/s%s (n=%d, rms "
               "resid %.1f%%, max %.1f%%)\n",
               f->ar.gpus, 1e6 * f->ar.alpha_s.value, 1e6 * f->ar.alpha_s.se,
               f->ar.alpha_pinned ? "" : " NOT PINNED", 1e-9 * f->ar.beta_bytes_per_s.value,
               1e-9 * f->ar.beta_bytes_per_s.se, f->ar.beta_pinned ? "" : " NOT PINNED", f->ar.n,
               100 * f->ar.rms_rel, 100 * f->ar.max_rel);
        for (int pr = 0; f->has_ar_proto && pr < 2; pr++) {
            const cal_ar_fit *a = &f->ar_proto[pr];
            printf("allreduce %-6s %s %.0f B: alpha=%.4g ± %.2g us, beta=%.5g ± %.2g GB/s (n=%d, "
                   "rms resid %.1f%%, max %.1f%%)\n",
                   pr ? "simple" : "ll", pr ? "above" : "up to", f->ar_ll_max_bytes,
                   1e6 * a->alpha_s.value, 1e6 * a->alpha_s.se, 1e-9 * a->beta_bytes_per_s.value,
                   1e-9 * a->beta_bytes_per_s.se, a->n, 100 * a->rms_rel, 100 * a->max_rel);
        }
    } else {
        printf(d->ar_gpus >= 2 ? "allreduce: not fitted (the sweep gives no positive alpha and "
                                 "beta)\n"
                               : "allreduce: no data\n");
    }
    for (int i = 0; i < f->n_ar_rings; i++) {
        const cal_ar_ring *g = &f->ar_rings[i];
        for (int pr = 0; pr < 2; pr++) {
            const cal_ar_fit *a = &g->proto[pr];
            if (g->has[pr]) {
                printf("allreduce ring %d GPUs %-6s: alpha=%.4g ± %.2g us%s, beta=%.5g ± %.2g "
                       "GB/s%s (n=%d, rms resid %.1f%%, max %.1f%%)\n",
                       g->gpus, pr ? "simple" : "ll", 1e6 * a->alpha_s.value,
                       1e6 * a->alpha_s.se, a->alpha_pinned ? "" : " NOT PINNED",
                       1e-9 * a->beta_bytes_per_s.value, 1e-9 * a->beta_bytes_per_s.se,
                       a->beta_pinned ? "" : " NOT PINNED", a->n, 100 * a->rms_rel,
                       100 * a->max_rel);
            }
        }
    }
}

/* ------------------------------------------------------------------ MODEL.json */

static void add_param(cJSON *o, const char *key, cal_param p)
{
    char k[64];
    snprintf(k, sizeof k, "%s_se", key);
    cJSON_AddNumberToObject(o, key, p.value);
    cJSON_AddNumberToObject(o, k, p.se);
}

static void add_series(cJSON *o, const char *xkey, const cal_series *s, const double *resid, int n)
{
    cJSON *xs = cJSON_AddArrayToObject(o, xkey), *rs = cJSON_AddArrayToObject(o, "resid_rel");
    for (int i = 0; i < n && i < s->n; i++) {
        cJSON_AddItemToArray(xs, cJSON_CreateNumber(s->pts[i].x));
        cJSON_AddItemToArray(rs, cJSON_CreateNumber(resid[i]));
    }
}

/* One protocol's fit as written to MODEL.json. */
static void add_ar_fit(cJSON *o, const cal_ar_fit *q)
{
    add_param(o, "alpha_s", q->alpha_s);
    add_param(o, "beta_bytes_per_s", q->beta_bytes_per_s);
    cJSON_AddNumberToObject(o, "n", q->n);
    cJSON_AddNumberToObject(o, "rms_rel_resid", q->rms_rel);
    cJSON_AddNumberToObject(o, "max_rel_resid", q->max_rel);
}

/* `allreduce.rings`: the fits of the --allreduce-sweep files (files[i] for ring i), per ring
 * size. */
static void add_ar_rings(cJSON *a, const cal_fit *f, const char *const *files)
{
    if (f->n_ar_rings == 0) {
        return;
    }
    cJSON *rs = cJSON_AddArrayToObject(a, "rings");
    for (int i = 0; i < f->n_ar_rings; i++) {
        const cal_ar_ring *g = &f->ar_rings[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "gpus", g->gpus);
        cJSON_AddStringToObject(o, "file", files[i]);
        if (g->has[0] && g->has[1]) {
            cJSON_AddNumberToObject(o, "ll_max_bytes", g->ll_max_bytes);
        }
        cJSON *ps = cJSON_AddObjectToObject(o, "protocols");
        for (int pr = 0; pr < 2; pr++) {
            if (g->has[pr]) {
                add_ar_fit(cJSON_AddObjectToObject(ps, pr ? "simple" : "ll"), &g->proto[pr]);
            }
        }
        cJSON_AddItemToArray(rs, o);
    }
}

static cJSON *model_json(const char *src, const char *const *sweeps, const cal_data *d,
                         const cal_fit *f, double mape, double maxe, int n_pred, double gm,
                         double gx, int gn)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", CALMODEL_SCHEMA);
    cJSON_AddNumberToObject(root, "schema_version", CALMODEL_SCHEMA_VERSION);
    cJSON *s = cJSON_AddObjectToObject(root, "source");
    cJSON_AddStringToObject(s, "file", src);
    cJSON_AddStringToObject(s, "device", d->device);
    cJSON_AddStringToObject(s, "uuid", d->uuid);
    cJSON_AddStringToObject(s, "driver", d->driver);
    cJSON_AddStringToObject(s, "date_utc", d->date_utc);
    cJSON_AddNumberToObject(root, "sms_total", f->sms_total);
    cJSON *c = cJSON_AddArrayToObject(root, "compute");
    for (int i = 0; i < f->n_rates; i++) {
        const cal_rate_fit *r = &f->rates[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "format", r->name);
        add_param(o, "tflops_per_sm", r->per_sm);
        add_param(o, "rolloff_per_sm", r->rolloff);
        cJSON_AddNumberToObject(o, "n", r->n);
        cJSON_AddNumberToObject(o, "rms_rel_resid", r->rms_rel);
        add_series(o, "sms", &d->rates[i], r->resid_rel, r->n);
        cJSON_AddItemToArray(c, o);
    }
    cJSON *b = cJSON_AddArrayToObject(root, "bandwidth");
    for (int i = 0; i < f->n_bw; i++) {
        const cal_bw_fit *w = &f->bw[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "kernel", w->name);
        cJSON_AddStringToObject(o, "form", w->form == CAL_BW_SOFTMIN ? "softmin" : "michaelis-menten");
        add_param(o, "bmax_gb_s", w->bmax_gb_s);
        add_param(o, "per_sm_gb_s", w->per_sm_gb_s);
        add_param(o, "sharpness", w->sharpness);
        add_param(o, "mm_bmax_gb_s", w->mm_bmax_gb_s);
        add_param(o, "s_half", w->s_half);
        cJSON_AddNumberToObject(o, "rss_softmin", w->rss_softmin);
        cJSON_AddNumberToObject(o, "rss_mm", w->rss_mm);
        cJSON_AddNumberToObject(o, "n", w->n);
        cJSON_AddNumberToObject(o, "rms_rel_resid", w->rms_rel);
        add_series(o, "sms", &d->bw[i], w->resid_rel, w->n);
        cJSON_AddItemToArray(b, o);
    }
    cJSON *t = cJSON_AddArrayToObject(root, "timeslice");
    for (int i = 0; i < f->n_ts; i++) {
        const cal_ts_fit *e = &f->ts[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "kernel_ms", e->kernel_ms);
        cJSON_AddNumberToObject(o, "gap_ms", e->gap_ms);
        cJSON *k = cJSON_AddArrayToObject(o, "k"), *v = cJSON_AddArrayToObject(o, "eta");
        cJSON *se = cJSON_AddArrayToObject(o, "eta_se");
        for (int j = 0; j < e->n_k; j++) {
            cJSON_AddItemToArray(k, cJSON_CreateNumber(e->k[j]));
            cJSON_AddItemToArray(v, cJSON_CreateNumber(e->eta[j].value));
            cJSON_AddItemToArray(se, cJSON_CreateNumber(e->eta[j].se));
        }
        add_param(o, "eta_mean", e->eta_mean);
        cJSON_AddItemToArray(t, o);
    }
    if (f->has_mps) {
        cJSON *m = cJSON_AddObjectToObject(root, "mps");
        add_param(m, "eta_compute", f->mps.eta_compute);
        add_param(m, "eta_memory", f->mps.eta_memory);
        add_param(m, "gamma_mixed", f->mps.gamma_mixed);
        cJSON_AddNumberToObject(m, "n", f->mps.n);
        cJSON_AddNumberToObject(m, "rms_rel_resid", f->mps.rms_rel);
        cJSON_AddNumberToObject(m, "max_rel_resid", f->mps.max_rel);
    } else {
        cJSON_AddNullToObject(root, "mps");
    }
    if (f->has_ar) {
        cJSON *a = cJSON_AddObjectToObject(root, "allreduce");
        cJSON_AddNumberToObject(a, "gpus", f->ar.gpus);
        add_param(a, "alpha_s", f->ar.alpha_s);
        add_param(a, "beta_bytes_per_s", f->ar.beta_bytes_per_s);
        cJSON_AddNumberToObject(a, "n", f->ar.n);
        cJSON_AddNumberToObject(a, "rms_rel_resid", f->ar.rms_rel);
        cJSON_AddNumberToObject(a, "max_rel_resid", f->ar.max_rel);
        add_series(a, "bytes", &d->ar, f->ar.resid_rel, f->ar.n);
        if (f->has_ar_proto) {
            cJSON_AddNumberToObject(a, "ll_max_bytes", f->ar_ll_max_bytes);
            cJSON *ps = cJSON_AddObjectToObject(a, "protocols");
            for (int pr = 0; pr < 2; pr++) {
                add_ar_fit(cJSON_AddObjectToObject(ps, pr ? "simple" : "ll"), &f->ar_proto[pr]);
            }
        }
        add_ar_rings(a, f, sweeps);
    } else {
        cJSON_AddNullToObject(root, "allreduce");
    }
    cJSON *h = cJSON_AddObjectToObject(root, "holdout");
    cJSON_AddNumberToObject(h, "mape_pct", mape);
    cJSON_AddNumberToObject(h, "max_pct", maxe);
    cJSON_AddNumberToObject(h, "n_predicted", n_pred);
    cJSON *g = cJSON_AddObjectToObject(root, "timeslice_gap_check");
    cJSON_AddNumberToObject(g, "mape_pct", gm);
    cJSON_AddNumberToObject(g, "max_pct", gx);
    cJSON_AddNumberToObject(g, "n_predicted", gn);
    return root;
}

static void put_line(FILE *f, const void *text)
{
    fputs(text, f);
    fputc('\n', f);
}

static int write_text(const char *path, const char *text)
{
    if (fileio_write_atomic(path, put_line, text) != 0) {
        fprintf(stderr, "slicesim fit: cannot write %s: %s\n", path, strerror(errno));
        return CLI_EXIT_ENV;
    }
    return CLI_EXIT_OK;
}

/* ------------------------------------------------------------------ --compare */

static int compare(const cal_data *d, const cal_fit *f, const char *gpu, const char *catalog)
{
    arena *a = arena_create();
    diag *dg = diag_create();
    gpu_catalog cat;
    int exit_rc = cli_load_catalog("fit", catalog, NULL, a, dg, &cat, NULL);
    if (exit_rc == CLI_EXIT_OK) {
        const gpu_type *g = gpu ? gpu_catalog_find(&cat, gpu) : calapply_match_gpu(&cat, d->device, f->sms_total);
        if (!g) {
            fprintf(stderr, "slicesim fit: error: --compare: no catalog GPU for '%s'; name one "
                            "with --gpu (see `slicesim profiles`)\n",
                    gpu ? gpu : d->device);
            exit_rc = CLI_EXIT_INPUT;
        } else {
            printf("compare with catalog %s (datasheet, dense), whole GPU = %d SMs measured, %d "
                   "in the catalog:\n",
                   g->name, f->sms_total, g->sms_total);
            printf("  %-14s %12s %12s %7s\n", "quantity", "measured", "datasheet", "ratio");
            for (int i = 0; i < f->n_rates; i++) {
                gpu_format fm = gpu_format_from_name(f->rates[i].name);
                double m = calfit_rate_eval(&f->rates[i], f->sms_total);
                double p = fm < GPU_FMT_COUNT ? g->peak_flops[fm] * 1e-12 : 0;
                if (p > 0) {
                    printf("  %-14s %8.4g TF/s %8.4g TF/s %7.3f\n", f->rates[i].name, m, p, m / p);
                } else {
                    printf("  %-14s %8.4g TF/s %12s %7s\n", f->rates[i].name, m, "unsourced", "-");
                }
            }
            for (int i = 0; i < f->n_bw; i++) {
                double m = calfit_bw_eval(&f->bw[i], f->sms_total);
                double p = g->mem_bw_bytes_per_s * 1e-9;
                char q[48];
                snprintf(q, sizeof q, "bw %s", f->bw[i].name);
                if (p > 0) {
                    printf("  %-14s %8.5g GB/s %7.5g GB/s %7.3f\n", q, m, p, m / p);
                } else {
                    printf("  %-14s %8.5g GB/s %12s %7s\n", q, m, "unsourced", "-");
                }
            }
        }
    }
    diag_destroy(dg);
    arena_destroy(a);
    return exit_rc;
}

/* ------------------------------------------------------------------ --tslice */

/* Analyse the time-slice probe at path and print it beside physics.yaml's figures. */
static int fit_tslice(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    if (fileio_read_all(path, FILEIO_MAX_BYTES, &text, &len) != 0) {
        fprintf(stderr, "slicesim fit: cannot read %s: %s\n", path, strerror(errno));
        return CLI_EXIT_ENV;
    }
    tsp_data d;
    diag *dg = diag_create();
    int rc = tslice_json_load_buffer(path, text, len, &d, dg);
    free(text);
    int exit_rc = cli_load_status("fit", path, rc, dg);
    diag_destroy(dg);
    if (exit_rc != CLI_EXIT_OK) {
        return exit_rc;
    }
    tsp_result r;
    if (tsp_analyse(&d, &r) != 0) {
        fprintf(stderr,
                "%s:1:1: error: slices: no group of 2 or more contexts has a whole time slice; "
                "expected a recording in which spinning contexts took turns (calib/tslice.cu "
                "with its default options, compute mode Default, no MPS daemon)\n",
                path);
        tsp_free(&d);
        return CLI_EXIT_INPUT;
    }
    phys_params m;
    diag *pd = diag_create();
    int prc = physics_load_default(pd, &m);
    diag_destroy(pd);
    printf("device: %s, driver %s, measured %s\n", d.device[0] ? d.device : "?",
           d.driver[0] ? d.driver : "?", d.date_utc[0] ? d.date_utc : "?");
    printf("time slice %.4g ms (median of %d whole slices, p10-p90 %.4g-%.4g ms)", r.slice_median_ms,
           r.n_slices, r.slice_p10_ms, r.slice_p90_ms);
    if (prc == 0) {
        printf("; physics.yaml ts_quantum_s %.4g ms", 1e3 * m.ts_quantum_s);
    }
    printf("\nswitch %.4g ms per switch (median of %d gaps)", r.switch_median_ms, r.n_switches);
    if (prc == 0) {
        printf("; physics.yaml ts_switch_s %.4g ms", 1e3 * m.ts_switch_s);
    }
    printf("\nback-to-back efficiency of two contexts, slice / (slice + switch): %.4f\n",
           r.slice_median_ms / (r.slice_median_ms + r.switch_median_ms));
    printf("alone: %d gap%s (longest %.3g ms)\n", r.solo_gaps, r.solo_gaps == 1 ? "" : "s",
           r.solo_gap_max_ms);
    const char *lab[] = {"alone", "beside a spinning context", "beside a kernel stream"};
    const double v[] = {r.ret_alone_ms, r.ret_busy_ms, r.ret_stream_ms};
    for (int i = 0; i < 3; i++) {
        if (v[i] == v[i]) { /* NAN: the recording has no such series */
            printf("return latency %s: %.4g ms (mean)\n", lab[i], v[i]);
        }
    }
    tsp_free(&d);
    return CLI_EXIT_OK;
}

/* The --allreduce-sweep files: each a calibration JSON whose `allreduce` section is a sweep of
 * another ring size of the same GPU type, fitted into f->ar_rings. Needs the calibration's own
 * fit (f->has_ar); a size measured twice is refused. */
static int fit_sweeps(const char *const *files, int n, cal_fit *f)
{
    int rc = CLI_EXIT_OK;
    cal_data *s = n ? xcalloc(1, sizeof *s, "all-reduce sweep") : NULL;
    for (int i = 0; i < n && rc == CLI_EXIT_OK; i++) {
        diag *dg = diag_create();
        rc = cli_load_status("fit", files[i], calib_json_load_file(files[i], s, dg), dg);
        diag_destroy(dg);
        if (rc != CLI_EXIT_OK) {
            break;
        }
        bool dup = !f->has_ar || s->ar_gpus == f->ar.gpus;
        for (int k = 0; k < f->n_ar_rings; k++) {
            dup = dup || f->ar_rings[k].gpus == s->ar_gpus;
        }
        if (s->ar_gpus < 2 || dup) {
            fprintf(stderr,
                    "%s: allreduce: a sweep on %d GPUs; expected one of at least 2 GPUs beside "
                    "the calibration's own all-reduce sweep (%d GPUs), each size once\n",
                    files[i], s->ar_gpus, f->has_ar ? f->ar.gpus : 0);
            rc = CLI_EXIT_INPUT;
        } else if (calfit_allreduce_ring(s, &f->ar_rings[f->n_ar_rings]) != 0) {
            fprintf(stderr, "%s: allreduce: the sweep on %d GPUs gives no positive alpha and "
                            "beta\n", files[i], s->ar_gpus);
            rc = CLI_EXIT_INPUT;
        } else {
            f->n_ar_rings++;
        }
    }
    free(s);
    return rc;
}

/* ------------------------------------------------------------------ command */

int cmd_fit(int argc, char **argv)
{
    const char *in = NULL, *out = NULL, *gpu = NULL, *catalog = NULL, *mig_arg = NULL;
    const char *tslice = NULL;
    const char *sweeps[CAL_MAX_AR_RINGS];
    int n_sweeps = 0;
    bool do_compare = false;
    static const char *const opts[] = {"-o", "--gpu", "--catalog", "--mig-device", "--tslice"};
    const char **const dsts[] = {&out, &gpu, &catalog, &mig_arg, &tslice};
    for (int i = 1; i < argc; i++) {
        int took = cli_option_value("fit", argc, argv, &i, opts, dsts, 5);
        if (took < 0) {
            return CLI_EXIT_INPUT;
        } else if (took) {
            continue;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return CLI_EXIT_OK;
        } else if (!strcmp(argv[i], "--compare")) {
            do_compare = true;
        } else if (!strcmp(argv[i], "--allreduce-sweep")) {
            if (i + 1 >= argc || n_sweeps >= CAL_MAX_AR_RINGS) {
                usage(stderr);
                return cli_usage_error("fit", "--allreduce-sweep: expected a file after it, at "
                                              "most %d times", CAL_MAX_AR_RINGS);
            }
            sweeps[n_sweeps++] = argv[++i];
        } else if (argv[i][0] == '-' || in) {
            usage(stderr);
            return cli_usage_error("fit", "unexpected argument '%s'", argv[i]);
        } else {
            in = argv[i];
        }
    }
    if (tslice) {
        if (in || out || gpu || catalog || mig_arg || do_compare || n_sweeps) {
            usage(stderr);
            return cli_usage_error("fit", "--tslice takes no other argument; got '%s'",
                                   in ? in : out ? "-o" : gpu ? "--gpu" : catalog ? "--catalog"
                                                                : mig_arg ? "--mig-device"
                                                                : n_sweeps ? "--allreduce-sweep"
                                                                          : "--compare");
        }
        return fit_tslice(tslice);
    }
    if (!in || !out) {
        usage(stderr);
        return cli_usage_error("fit", "need CALIB.json and -o MODEL.json");
    }
    uint64_t mig_v = 0;
    if (mig_arg && !cli_parse_u64(mig_arg, 0, 63, &mig_v)) {
        usage(stderr);
        return cli_usage_error("fit", "--mig-device: expected 0..63, got '%s'", mig_arg);
    }
    int mig = mig_arg ? (int)mig_v : -1;
    sim_gsl_install_handler();
    cal_data *d = xcalloc(1, sizeof *d, "calibration data");
    cal_fit *f = xcalloc(1, sizeof *f, "calibration fit");
    diag *dg = diag_create();
    int rc = calib_json_load_file_mig(in, mig, d, dg);
    int exit_rc = cli_load_status("fit", in, rc, dg);
    if (exit_rc == CLI_EXIT_OK) {
        calfit_all(d, f);
        exit_rc = fit_sweeps(sweeps, n_sweeps, f);
    }
    if (exit_rc == CLI_EXIT_OK) {
        print_fit(d, f);
        double mape = 0, maxe = 0;
        int n_pred = 0;
        if (calfit_holdout(d, &mape, &maxe, &n_pred) == 0) {
            printf("holdout mape=%.2f%% max=%.2f%% n=%d\n", mape, maxe, n_pred);
        } else {
            printf("holdout: too few points to hold any out\n");
        }
        double gm = 0, gx = 0;
        int gn = 0;
        if (calfit_ts_gap_check(d, &gm, &gx, &gn) == 0) {
            printf("timeslice host-gap check (MVA, nothing fitted): mape=%.2f%% max=%.2f%% n=%d\n",
                   gm, gx, gn);
        }
        cJSON *j = model_json(in, sweeps, d, f, mape, maxe, n_pred, gm, gx, gn);
        char *text = cJSON_Print(j);
        exit_rc = write_text(out, text);
        cJSON_free(text);
        cJSON_Delete(j);
        if (exit_rc == CLI_EXIT_OK && do_compare) {
            exit_rc = compare(d, f, gpu, catalog);
        }
    }
    diag_destroy(dg);
    free(f);
    free(d);
    return exit_rc;
}
