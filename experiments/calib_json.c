/* experiments/calib_json.c - calibration JSON and model JSON readers (see calib_json.h). */
#include "experiments/calib_json.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "experiments/fileio.h"
#include "experiments/jsonrd.h"
#include "sim/err.h"
#include "sim/xalloc.h"

typedef jsonrd rd;

/* ------------------------------------------------------------------ typed access */

/* A bad value v (or a missing one, NULL, reported at the object `in` that lacks it). */
static void bad_in(rd *r, const char *path, const char *expect, const cJSON *v, const cJSON *in)
{
    jsonrd_bad(r, path, expect, v, in);
}

static void bad(rd *r, const char *path, const char *expect, const cJSON *v)
{
    bad_in(r, path, expect, v, NULL);
}

/* v at path is one more than the reader holds: "expected at most CAP WHAT" (cap: the limit's
 * macro, so that the message follows it). */
static void bad_cap(rd *r, const char *path, int cap, const char *what, const cJSON *v)
{
    char expect[96];
    snprintf(expect, sizeof expect, "at most %d %s", cap, what);
    bad(r, path, expect, v);
}

static const cJSON *get(const cJSON *o, const char *key)
{
    return jsonrd_get(o, key);
}

/* Number at o.key within [lo, hi]; on failure reports and returns false. */
static bool num(rd *r, const cJSON *o, const char *base, const char *key, double lo, double hi,
                double *out)
{
    char path[256];
    snprintf(path, sizeof path, "%s%s%s", base, base[0] ? "." : "", key);
    const cJSON *v = get(o, key);
    if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble) || v->valuedouble < lo ||
        v->valuedouble > hi) {
        char exp[96];
        if (hi >= 1e300) {
            snprintf(exp, sizeof exp, "a number >= %g", lo);
        } else {
            snprintf(exp, sizeof exp, "a number in [%g, %g]", lo, hi);
        }
        bad_in(r, path, exp, v, o);
        return false;
    }
    *out = v->valuedouble;
    return true;
}

static bool str(rd *r, const cJSON *o, const char *base, const char *key, char *out, size_t n)
{
    char path[256];
    snprintf(path, sizeof path, "%s%s%s", base, base[0] ? "." : "", key);
    const cJSON *v = get(o, key);
    if (!cJSON_IsString(v) || strlen(v->valuestring) >= n) {
        char exp[64];
        snprintf(exp, sizeof exp, "a string of at most %zu bytes", n - 1);
        bad_in(r, path, exp, v, o);
        return false;
    }
    snprintf(out, n, "%s", v->valuestring);
    return true;
}

/* Optional string: copies when present, else leaves out as is. */
static void opt_str(const cJSON *o, const char *key, char *out, size_t n)
{
    const cJSON *v = get(o, key);
    if (cJSON_IsString(v)) {
        snprintf(out, n, "%.*s", (int)(n - 1), v->valuestring);
    }
}

/* Array at o.key; absent or null gives NULL without error when optional. */
static const cJSON *arr(rd *r, const cJSON *o, const char *base, const char *key, bool optional)
{
    const cJSON *v = get(o, key);
    if (optional && (!v || cJSON_IsNull(v))) {
        return NULL;
    }
    if (!cJSON_IsArray(v)) {
        char path[256];
        snprintf(path, sizeof path, "%s%s%s", base, base[0] ? "." : "", key);
        bad_in(r, path, "an array", v, o);
        return NULL;
    }
    return v;
}

static bool check_schema(rd *r, const cJSON *root, const char *want)
{
    char s[64] = "";
    if (!cJSON_IsObject(root)) {
        bad(r, "(root)", "an object", root);
        return false;
    }
    if (!str(r, root, "", "schema", s, sizeof s)) {
        return false;
    }
    if (strcmp(s, want)) {
        char exp[64];
        snprintf(exp, sizeof exp, "\"%s\"", want);
        bad(r, "schema", exp, get(root, "schema"));
        return false;
    }
    const cJSON *ver = get(root, "schema_version");
    if (!cJSON_IsNumber(ver) || ver->valuedouble != 1) {
        bad(r, "schema_version", "1 (the version this build reads)", ver);
        return false;
    }
    return true;
}

/* ------------------------------------------------------------------ calibration file */

static cal_series *series_for(cal_series *arr_, int *n, int cap, const char *name)
{
    for (int i = 0; i < *n; i++) {
        if (!strcmp(arr_[i].name, name)) {
            return &arr_[i];
        }
    }
    if (*n >= cap) {
        return NULL;
    }
    cal_series *s = &arr_[(*n)++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    return s;
}

static void sort_series(cal_series *s)
{
    for (int i = 1; i < s->n; i++) {
        cal_sample t = s->pts[i];
        int j = i;
        while (j > 0 && s->pts[j - 1].x > t.x) {
            s->pts[j] = s->pts[j - 1];
            j--;
        }
        s->pts[j] = t;
    }
}

/* flops.runs or membw.runs: name_key "format"/"kernel", value prefix "tflops"/"gb_s". */
static void read_sm_series(rd *r, const cJSON *sec, const char *secname, const char *name_key,
                           const char *val, cal_series *out, int *n_out, int cap)
{
    char base[64];
    snprintf(base, sizeof base, "%s", secname);
    const cJSON *runs = arr(r, sec, base, "runs", false);
    int i = 0;
    const cJSON *run;
    cJSON_ArrayForEach(run, runs)
    {
        char p[96], name[CAL_NAME_LEN], key[32];
        snprintf(p, sizeof p, "%s.runs[%d]", secname, i++);
        if (get(run, "error")) {
            continue; /* a partition that could not be made; recorded, not a sample */
        }
        double sms, med, mn, mx, reps;
        snprintf(key, sizeof key, "%s_median", val);
        bool ok = str(r, run, p, name_key, name, sizeof name);
        ok &= num(r, run, p, "sms", 1, 100000, &sms);
        ok &= num(r, run, p, key, 1e-12, 1e300, &med);
        snprintf(key, sizeof key, "%s_min", val);
        ok &= num(r, run, p, key, 0, 1e300, &mn);
        snprintf(key, sizeof key, "%s_max", val);
        ok &= num(r, run, p, key, 0, 1e300, &mx);
        ok &= num(r, run, p, "reps", 1, 1e6, &reps);
        if (!ok) {
            continue;
        }
        cal_series *s = series_for(out, n_out, cap, name);
        if (!s || s->n >= CAL_MAX_PTS) {
            char exp[64];
            snprintf(exp, sizeof exp, "at most %d series of at most %d points", cap, CAL_MAX_PTS);
            bad(r, p, exp, get(run, name_key));
            continue;
        }
        s->pts[s->n++] = (cal_sample){sms, med, mn, mx, (int)reps};
    }
    for (int k = 0; k < *n_out; k++) {
        sort_series(&out[k]);
    }
}

/* Makespan of a group: last end minus first start over its workers. */
static bool makespan(rd *r, const cJSON *run, const char *p, double *out)
{
    const cJSON *ws = arr(r, run, p, "workers", false);
    double lo = HUGE_VAL, hi = -HUGE_VAL;
    int i = 0;
    const cJSON *w;
    cJSON_ArrayForEach(w, ws)
    {
        char q[128];
        snprintf(q, sizeof q, "%s.workers[%d]", p, i++);
        double s, e;
        if (!num(r, w, q, "start_s", 0, 1e300, &s) || !num(r, w, q, "end_s", s, 1e300, &e)) {
            return false;
        }
        lo = fmin(lo, s);
        hi = fmax(hi, e);
    }
    if (i == 0) {
        bad(r, p, "a group with workers", ws);
        return false;
    }
    *out = hi - lo;
    return hi > lo;
}

static void read_timeslice(rd *r, const cJSON *sec, cal_data *out)
{
    const cJSON *lens = arr(r, sec, "timeslice", "lengths", false);
    int li = 0;
    const cJSON *L;
    cJSON_ArrayForEach(L, lens)
    {
        char p[64];
        snprintf(p, sizeof p, "timeslice.lengths[%d]", li++);
        if (get(L, "error")) {
            continue;
        }
        double kms, kpp;
        char cp[96];
        snprintf(cp, sizeof cp, "%s.calibration", p);
        if (!num(r, get(L, "calibration"), cp, "kernel_ms", 1e-6, 1e6, &kms) ||
            !num(r, L, p, "kernels_per_process", 1, 1e12, &kpp)) {
            continue;
        }
        const cJSON *runs = arr(r, L, p, "runs", false);
        int ri = 0;
        const cJSON *run;
        cJSON_ArrayForEach(run, runs)
        {
            char q[96];
            snprintf(q, sizeof q, "%s.runs[%d]", p, ri++);
            double gap, procs, ms;
            if (!num(r, run, q, "gap_ms", 0, 1e6, &gap) ||
                !num(r, run, q, "procs", 1, CAL_MAX_CLIENTS, &procs)) {
                continue;
            }
            if (!cJSON_IsTrue(get(run, "ok")) || !makespan(r, run, q, &ms)) {
                continue;
            }
            cal_ts_length *t = NULL;
            for (int i = 0; i < out->n_ts; i++) {
                if (out->ts[i].kernel_ms == kms && out->ts[i].gap_ms == gap) {
                    t = &out->ts[i];
                }
            }
            if (!t) {
                if (out->n_ts >= CAL_MAX_LENGTHS * 2) {
                    bad_cap(r, q, CAL_MAX_LENGTHS * 2, "(length, gap) combinations",
                            get(run, "gap_ms"));
                    continue;
                }
                t = &out->ts[out->n_ts++];
                memset(t, 0, sizeof *t);
                t->kernel_ms = kms;
                t->gap_ms = gap;
                t->kernels = (long)kpp;
            }
            int k = (int)procs, j = 0;
            while (j < t->n_k && t->k[j] < k) {
                j++;
            }
            if (j == t->n_k || t->k[j] != k) {
                if (t->n_k >= CAL_MAX_K) {
                    bad_cap(r, q, CAL_MAX_K, "process counts", get(run, "procs"));
                    continue;
                }
                memmove(&t->k[j + 1], &t->k[j], sizeof t->k[0] * (size_t)(t->n_k - j));
                memmove(&t->n_rep[j + 1], &t->n_rep[j], sizeof t->n_rep[0] * (size_t)(t->n_k - j));
                memmove(&t->makespan_s[j + 1], &t->makespan_s[j],
                        sizeof t->makespan_s[0] * (size_t)(t->n_k - j));
                t->k[j] = k;
                t->n_rep[j] = 0;
                t->n_k++;
            }
            if (t->n_rep[j] < CAL_MAX_REPS) {
                t->makespan_s[j][t->n_rep[j]++] = ms;
            }
        }
    }
}

static void read_mps(rd *r, const cJSON *sec, cal_data *out)
{
    const cJSON *runs = arr(r, sec, "mps", "runs", true);
    if (!runs) {
        return;
    }
    int gi = 0;
    const cJSON *run;
    cJSON_ArrayForEach(run, runs)
    {
        char p[64], mix[CAL_MAX_CLIENTS + 1];
        snprintf(p, sizeof p, "mps.runs[%d]", gi++);
        double pct;
        if (!num(r, run, p, "thread_percentage", 1, 100, &pct) ||
            !str(r, run, p, "mix", mix, sizeof mix) || !cJSON_IsTrue(get(run, "ok"))) {
            continue;
        }
        if (out->n_mps >= CAL_MAX_MPS) {
            bad_cap(r, p, CAL_MAX_MPS, "MPS groups", run);
            break;
        }
        cal_mps_run *g = &out->mps[out->n_mps];
        memset(g, 0, sizeof *g);
        g->pct = (int)pct;
        const cJSON *ws = arr(r, run, p, "workers", false);
        int wi = 0;
        bool ok = true;
        const cJSON *w;
        cJSON_ArrayForEach(w, ws)
        {
            char q[96], kind[16];
            snprintf(q, sizeof q, "%s.workers[%d]", p, wi++);
            double sms, wall, kernels = 0;
            if (g->n >= CAL_MAX_CLIENTS || !str(r, w, q, "kind", kind, sizeof kind) ||
                !num(r, w, q, "sms_reported", 1, 100000, &sms) ||
                !num(r, w, q, "wall_s", 1e-9, 1e9, &wall) ||
                (get(w, "kernels") && !num(r, w, q, "kernels", 1, 1e12, &kernels))) {
                ok = false;
                break;
            }
            if (strcmp(kind, "compute") && strcmp(kind, "memory")) {
                bad(r, q, "kind \"compute\" or \"memory\"", get(w, "kind"));
                ok = false;
                break;
            }
            g->c[g->n++] =
                (cal_mps_client){!strcmp(kind, "memory"), (int)sms, wall, (long)kernels};
        }
        if (!ok || g->n == 0) {
            continue;
        }
        if (g->pct == 100 && g->n == 1) {
            if (g->c[0].is_memory) {
                out->mps_solo_memory_s = g->c[0].wall_s;
            } else {
                out->mps_solo_compute_s = g->c[0].wall_s;
            }
        }
        out->n_mps++;
    }
    out->has_mps = out->n_mps > 0;
}

static void read_allreduce(rd *r, const cJSON *sec, cal_data *out)
{
    const cJSON *runs = arr(r, sec, "allreduce", "runs", true);
    double gpus = 0;
    if (!runs || !num(r, sec, "allreduce", "gpus", 2, 1024, &gpus)) {
        return;
    }
    snprintf(out->ar.name, sizeof out->ar.name, "allreduce");
    int i = 0;
    const cJSON *run;
    cJSON_ArrayForEach(run, runs)
    {
        char p[64];
        snprintf(p, sizeof p, "allreduce.runs[%d]", i++);
        double b, med, mn, mx, reps;
        bool ok = num(r, run, p, "bytes", 1, 1e15, &b) &&
                  num(r, run, p, "ms_median", 1e-9, 1e9, &med) &&
                  num(r, run, p, "ms_min", 0, 1e9, &mn) && num(r, run, p, "ms_max", 0, 1e9, &mx) &&
                  num(r, run, p, "reps", 1, 1e6, &reps);
        if (!ok || !cJSON_IsTrue(get(run, "correct"))) {
            continue;
        }
        if (out->ar.n >= CAL_MAX_PTS) {
            bad_cap(r, p, CAL_MAX_PTS, "sizes", get(run, "bytes"));
            break;
        }
        out->ar.pts[out->ar.n++] = (cal_sample){b, med, mn, mx, (int)reps};
    }
    sort_series(&out->ar);
    out->ar_gpus = out->ar.n > 0 ? (int)gpus : 0;
    /* every row of one protocol: a sweep cut to the sizes where a harness measures the GPU */
    const cJSON *pv = get(sec, "protocol");
    if (pv && !cJSON_IsNull(pv)) {
        if (cJSON_IsString(pv) && !strcmp(pv->valuestring, "ll")) {
            out->ar_only_proto = 1;
        } else if (cJSON_IsString(pv) && !strcmp(pv->valuestring, "simple")) {
            out->ar_only_proto = 2;
        } else {
            bad(r, "allreduce.protocol", "\"ll\" or \"simple\" (the one protocol of every row), "
                "or null", pv);
        }
    }
}

/* What load_calib fills, and which MIG device's sections it reads (-1: the top level). */
typedef struct calib_target {
    cal_data *out;
    int mig_device;
} calib_target;

static void load_calib(rd *r, const cJSON *top, void *vt)
{
    const calib_target *tg = vt;
    cal_data *out = tg->out;
    const cJSON *gb = get(top, "gpu_before");
    opt_str(gb, "name", out->device, sizeof out->device);
    opt_str(gb, "uuid", out->uuid, sizeof out->uuid);
    opt_str(gb, "driver_version", out->driver, sizeof out->driver);
    opt_str(top, "date_utc", out->date_utc, sizeof out->date_utc);
    const cJSON *root = top;
    if (tg->mig_device >= 0) {
        const cJSON *migs = arr(r, top, "", "mig_devices", false);
        root = cJSON_GetArrayItem(migs, tg->mig_device);
        if (!cJSON_IsObject(root)) {
            char exp[64];
            snprintf(exp, sizeof exp, "a MIG device at index %d", tg->mig_device);
            if (migs) {
                bad(r, "mig_devices", exp, migs);
            }
            return;
        }
        opt_str(root, "uuid", out->uuid, sizeof out->uuid);
    }
    const cJSON *fl = get(root, "flops"), *mb = get(root, "membw");
    const cJSON *dev = get(fl, "device") ? get(fl, "device") : get(mb, "device");
    double sms = 0;
    if (dev) {
        opt_str(dev, "name", out->device, sizeof out->device);
        if (num(r, dev, cJSON_IsObject(fl) ? "flops.device" : "membw.device", "sms", 1, 100000,
                &sms)) {
            out->sms_total = (int)sms;
        }
    }
    if (cJSON_IsObject(fl)) {
        read_sm_series(r, fl, "flops", "format", "tflops", out->rates, &out->n_rates,
                       CAL_MAX_FORMATS);
    }
    if (cJSON_IsObject(mb)) {
        read_sm_series(r, mb, "membw", "kernel", "gb_s", out->bw, &out->n_bw, CAL_MAX_BW);
    }
    if (cJSON_IsObject(get(root, "timeslice"))) {
        read_timeslice(r, get(root, "timeslice"), out);
    }
    if (cJSON_IsObject(get(root, "mps"))) {
        read_mps(r, get(root, "mps"), out);
    }
    if (cJSON_IsObject(get(root, "allreduce"))) {
        read_allreduce(r, get(root, "allreduce"), out);
    }
    if (r->errors == 0 && out->sms_total == 0 && (out->n_rates || out->n_bw || out->has_mps)) {
        bad(r, "flops.device.sms", "the GPU's SM count", NULL);
    }
    if (tg->mig_device >= 0) {
        char prof[32] = "";
        opt_str(root, "profile", prof, sizeof prof);
        size_t l = strlen(out->device);
        snprintf(out->device + l, sizeof out->device - l, " MIG %s", prof);
    }
}

/* ------------------------------------------------------------------ model file */

static bool param(rd *r, const cJSON *o, const char *p, const char *key, double lo, double hi,
                  cal_param *out)
{
    char sek[64];
    snprintf(sek, sizeof sek, "%s_se", key);
    return num(r, o, p, key, lo, hi, &out->value) && num(r, o, p, sek, 0, 1e300, &out->se);
}

/* One protocol's alpha-beta at path p (object o) into f; false on a bad field. */
static bool read_ar_fit(rd *r, const cJSON *o, const char *p, int gpus, cal_ar_fit *f)
{
    f->gpus = gpus;
    return param(r, o, p, "alpha_s", 0, 1, &f->alpha_s) &&
           param(r, o, p, "beta_bytes_per_s", 1, 1e15, &f->beta_bytes_per_s);
}

/* The all-reduce fit per protocol (`allreduce.protocols`, with `allreduce.ll_max_bytes`), when
 * the model holds one (models written before 2026-11-29 do not). */
static void read_ar_protocols(rd *r, const cJSON *ar, cal_fit *out)
{
    const cJSON *ps = get(ar, "protocols");
    if (!ps || cJSON_IsNull(ps)) {
        return;
    }
    if (!cJSON_IsObject(ps)) {
        bad(r, "allreduce.protocols", "an object {ll, simple} or null", ps);
        return;
    }
    bool ok = num(r, ar, "allreduce", "ll_max_bytes", 1, 1e15, &out->ar_ll_max_bytes);
    static const char *const names[2] = {"ll", "simple"};
    for (int pr = 0; pr < 2; pr++) {
        char p[64];
        snprintf(p, sizeof p, "allreduce.protocols.%s", names[pr]);
        const cJSON *o = get(ps, names[pr]);
        if (!cJSON_IsObject(o)) {
            bad(r, p, "an object (alpha_s, beta_bytes_per_s)", o);
            ok = false;
            continue;
        }
        ok = read_ar_fit(r, o, p, out->ar.gpus, &out->ar_proto[pr]) && ok;
    }
    out->has_ar_proto = ok;
}

/* One entry of `allreduce.rings` (models written before 2026-11-29 have none): the fit of a
 * ring of another size, {gpus, protocols: {ll?, simple?}, ll_max_bytes when both}. */
static bool read_ar_ring(rd *r, const cJSON *e, const char *p, const cal_fit *fit,
                         cal_ar_ring *out)
{
    memset(out, 0, sizeof *out);
    double g = 0;
    if (!cJSON_IsObject(e)) {
        bad(r, p, "an object {gpus, protocols}", e);
        return false;
    }
    if (!num(r, e, p, "gpus", 2, 1024, &g)) {
        return false;
    }
    out->gpus = (int)g;
    char q[96];
    snprintf(q, sizeof q, "%s.gpus", p);
    bool dup = out->gpus == fit->ar.gpus;
    for (int i = 0; i < fit->n_ar_rings; i++) {
        dup = dup || fit->ar_rings[i].gpus == out->gpus;
    }
    if (dup || g != (double)out->gpus) {
        bad(r, q, "a whole number of GPUs that no other all-reduce fit of the model has", get(e, "gpus"));
        return false;
    }
    const cJSON *ps = get(e, "protocols");
    snprintf(q, sizeof q, "%s.protocols", p);
    if (!cJSON_IsObject(ps)) {
        bad_in(r, q, "an object {ll, simple} holding at least one of them", ps, e);
        return false;
    }
    static const char *const names[2] = {"ll", "simple"};
    bool ok = true;
    for (int pr = 0; pr < 2; pr++) {
        const cJSON *o = get(ps, names[pr]);
        if (!o || cJSON_IsNull(o)) {
            continue;
        }
        snprintf(q, sizeof q, "%s.protocols.%s", p, names[pr]);
        if (!cJSON_IsObject(o)) {
            bad(r, q, "an object (alpha_s, beta_bytes_per_s) or null", o);
            ok = false;
            continue;
        }
        out->has[pr] = read_ar_fit(r, o, q, out->gpus, &out->proto[pr]);
        ok = out->has[pr] && ok;
    }
    if (ok && !out->has[0] && !out->has[1]) {
        snprintf(q, sizeof q, "%s.protocols", p);
        bad(r, q, "an object holding ll, simple or both", ps);
        return false;
    }
    if (ok && out->has[0] && out->has[1]) {
        ok = num(r, e, p, "ll_max_bytes", 1, 1e15, &out->ll_max_bytes);
    }
    return ok;
}

static void read_ar_rings(rd *r, const cJSON *ar, cal_fit *out)
{
    const cJSON *rings = arr(r, ar, "allreduce", "rings", true), *e;
    int i = 0;
    cJSON_ArrayForEach(e, rings)
    {
        char p[64];
        snprintf(p, sizeof p, "allreduce.rings[%d]", i++);
        if (out->n_ar_rings >= CAL_MAX_AR_RINGS) {
            bad_cap(r, p, CAL_MAX_AR_RINGS, "ring sizes beside the node's own sweep", e);
            break;
        }
        if (read_ar_ring(r, e, p, out, &out->ar_rings[out->n_ar_rings])) {
            out->n_ar_rings++;
        }
    }
}

static void load_model(rd *r, const cJSON *root, void *vout)
{
    cal_fit *out = vout;
    double v;
    if (num(r, root, "", "sms_total", 1, 100000, &v)) {
        out->sms_total = (int)v;
    }
    const cJSON *a = arr(r, root, "", "compute", false), *e;
    int i = 0;
    cJSON_ArrayForEach(e, a)
    {
        char p[64];
        snprintf(p, sizeof p, "compute[%d]", i++);
        if (out->n_rates >= CAL_MAX_FORMATS) {
            bad_cap(r, p, CAL_MAX_FORMATS, "formats", e);
            break;
        }
        cal_rate_fit *f = &out->rates[out->n_rates];
        memset(f, 0, sizeof *f);
        if (str(r, e, p, "format", f->name, sizeof f->name) &&
            param(r, e, p, "tflops_per_sm", 1e-12, 1e6, &f->per_sm) &&
            param(r, e, p, "rolloff_per_sm", -1, 1, &f->rolloff)) {
            f->has_rolloff = f->rolloff.value != 0;
            out->n_rates++;
        }
    }
    a = arr(r, root, "", "bandwidth", false);
    i = 0;
    cJSON_ArrayForEach(e, a)
    {
        char p[64], form[24];
        snprintf(p, sizeof p, "bandwidth[%d]", i++);
        if (out->n_bw >= CAL_MAX_BW) {
            bad_cap(r, p, CAL_MAX_BW, "kernels", e);
            break;
        }
        cal_bw_fit *f = &out->bw[out->n_bw];
        memset(f, 0, sizeof *f);
        if (!str(r, e, p, "kernel", f->name, sizeof f->name) ||
            !str(r, e, p, "form", form, sizeof form)) {
            continue;
        }
        bool ok;
        if (!strcmp(form, "softmin")) {
            f->form = CAL_BW_SOFTMIN;
            ok = param(r, e, p, "bmax_gb_s", 1e-9, 1e12, &f->bmax_gb_s) &&
                 param(r, e, p, "per_sm_gb_s", 1e-9, 1e12, &f->per_sm_gb_s) &&
                 param(r, e, p, "sharpness", 1e-3, 1e4, &f->sharpness);
        } else if (!strcmp(form, "michaelis-menten")) {
            f->form = CAL_BW_MM;
            ok = param(r, e, p, "mm_bmax_gb_s", 1e-9, 1e12, &f->mm_bmax_gb_s) &&
                 param(r, e, p, "s_half", 1e-9, 1e9, &f->s_half);
        } else {
            char q[80];
            snprintf(q, sizeof q, "%s.form", p);
            bad(r, q, "\"softmin\" or \"michaelis-menten\"", get(e, "form"));
            ok = false;
        }
        if (ok) {
            out->n_bw++;
        }
    }
    a = arr(r, root, "", "timeslice", false);
    i = 0;
    cJSON_ArrayForEach(e, a)
    {
        char p[64];
        snprintf(p, sizeof p, "timeslice[%d]", i++);
        if (out->n_ts >= CAL_MAX_LENGTHS * 2) {
            bad_cap(r, p, CAL_MAX_LENGTHS * 2, "entries", e);
            break;
        }
        cal_ts_fit *f = &out->ts[out->n_ts];
        memset(f, 0, sizeof *f);
        const cJSON *ks = arr(r, e, p, "k", false), *es = arr(r, e, p, "eta", false);
        const cJSON *ss = arr(r, e, p, "eta_se", false);
        if (!num(r, e, p, "kernel_ms", 0, 1e9, &f->kernel_ms) ||
            !num(r, e, p, "gap_ms", 0, 1e9, &f->gap_ms) ||
            !param(r, e, p, "eta_mean", 1e-6, 10, &f->eta_mean) || !ks || !es || !ss) {
            continue;
        }
        int n = cJSON_GetArraySize(ks);
        if (n < 1 || n > CAL_MAX_K || cJSON_GetArraySize(es) != n || cJSON_GetArraySize(ss) != n) {
            bad(r, p, "k, eta and eta_se of the same length, 1 to 8", ks);
            continue;
        }
        bool ok = true;
        for (int j = 0; j < n && ok; j++) {
            const cJSON *kj = cJSON_GetArrayItem(ks, j), *ej = cJSON_GetArrayItem(es, j);
            const cJSON *sj = cJSON_GetArrayItem(ss, j);
            if (!cJSON_IsNumber(kj) || kj->valuedouble < 1 || kj->valuedouble > 1024 ||
                !cJSON_IsNumber(ej) || !(ej->valuedouble > 0) || ej->valuedouble > 10 ||
                !cJSON_IsNumber(sj) || !(sj->valuedouble >= 0) || !isfinite(sj->valuedouble)) {
                char q[96];
                snprintf(q, sizeof q, "%s.eta[%d]", p, j);
                bad(r, q, "k >= 1 with 0 < eta <= 10 and eta_se >= 0", ej);
                ok = false;
                break;
            }
            f->k[j] = (int)kj->valuedouble;
            f->eta[j] = (cal_param){ej->valuedouble, sj->valuedouble};
        }
        if (ok) {
            f->n_k = n;
            out->n_ts++;
        }
    }
    const cJSON *m = get(root, "mps");
    if (cJSON_IsObject(m)) {
        out->has_mps = param(r, m, "mps", "eta_compute", 1e-6, 10, &out->mps.eta_compute) &&
                       param(r, m, "mps", "eta_memory", 1e-6, 10, &out->mps.eta_memory) &&
                       param(r, m, "mps", "gamma_mixed", -1, 100, &out->mps.gamma_mixed);
    } else if (m && !cJSON_IsNull(m)) {
        bad(r, "mps", "an object or null", m);
    }
    const cJSON *ar = get(root, "allreduce");
    if (cJSON_IsObject(ar)) {
        double g = 0;
        out->has_ar = num(r, ar, "allreduce", "gpus", 2, 1024, &g) &&
                      param(r, ar, "allreduce", "alpha_s", 0, 1, &out->ar.alpha_s) &&
                      param(r, ar, "allreduce", "beta_bytes_per_s", 1, 1e15,
                            &out->ar.beta_bytes_per_s);
        out->ar.gpus = (int)g;
        read_ar_protocols(r, ar, out);
        read_ar_rings(r, ar, out);
    } else if (ar && !cJSON_IsNull(ar)) {
        bad(r, "allreduce", "an object or null", ar);
    }
}

/* ------------------------------------------------------------------ entry points */

typedef void load_fn(rd *r, const cJSON *root, void *out);

static int load_buffer(const char *name, const char *buf, size_t len, const char *schema,
                       load_fn *fn, void *out, diag *d)
{
    rd r = {.file = name, .d = d, .text = buf, .len = len};
    cJSON *root = jsonrd_parse(&r);
    if (!root) {
        jsonrd_fini(&r);
        return SIM_EINPUT;
    }
    jsonrd_check_duplicates(&r, root, "");
    if (r.errors == 0 && check_schema(&r, root, schema)) {
        fn(&r, root, out);
    }
    cJSON_Delete(root);
    jsonrd_fini(&r);
    return r.errors ? SIM_EINPUT : 0;
}

static int load_file(const char *path, const char *schema, load_fn *fn, void *out, diag *d)
{
    char *buf;
    size_t len;
    int rc = fileio_read_all(path, FILEIO_MAX_BYTES, &buf, &len);
    if (rc) {
        return rc;
    }
    rc = load_buffer(path, buf, len, schema, fn, out, d);
    free(buf);
    return rc;
}

int calib_json_load_buffer_mig(const char *name, const char *buf, size_t len, int mig_device,
                               cal_data *out, diag *d)
{
    memset(out, 0, sizeof *out);
    calib_target t = {out, mig_device};
    return load_buffer(name, buf, len, CALIB_JSON_SCHEMA, load_calib, &t, d);
}

int calib_json_load_buffer(const char *name, const char *buf, size_t len, cal_data *out, diag *d)
{
    return calib_json_load_buffer_mig(name, buf, len, -1, out, d);
}

int calib_json_load_file_mig(const char *path, int mig_device, cal_data *out, diag *d)
{
    memset(out, 0, sizeof *out);
    calib_target t = {out, mig_device};
    return load_file(path, CALIB_JSON_SCHEMA, load_calib, &t, d);
}

int calib_json_load_file(const char *path, cal_data *out, diag *d)
{
    return calib_json_load_file_mig(path, -1, out, d);
}

/* A model file with the identity of its node. */
typedef struct model_target {
    cal_fit *fit;
    calapply_source *src;
} model_target;

static void load_model_source(rd *r, const cJSON *root, void *vout)
{
    model_target *t = vout;
    const cJSON *s = get(root, "source");
    if (!cJSON_IsObject(s)) {
        bad(r, "source", "an object (file, device, uuid, driver, date_utc)", s);
    } else {
        str(r, s, "source", "device", t->src->device, sizeof t->src->device);
        t->src->device_at = jsonrd_loc(r, get(s, "device"));
        opt_str(s, "file", t->src->file, sizeof t->src->file);
        opt_str(s, "uuid", t->src->uuid, sizeof t->src->uuid);
        opt_str(s, "driver", t->src->driver, sizeof t->src->driver);
        opt_str(s, "date_utc", t->src->date_utc, sizeof t->src->date_utc);
    }
    load_model(r, root, t->fit);
}

int calmodel_load_source(const char *path, cal_fit *out, calapply_source *src, diag *d)
{
    memset(out, 0, sizeof *out);
    memset(src, 0, sizeof *src);
    model_target t = {out, src};
    return load_file(path, CALMODEL_SCHEMA, load_model_source, &t, d);
}

int calmodel_load_source_buffer(const char *name, const char *buf, size_t len, cal_fit *out,
                                calapply_source *src, diag *d)
{
    memset(out, 0, sizeof *out);
    memset(src, 0, sizeof *src);
    model_target t = {out, src};
    return load_buffer(name, buf, len, CALMODEL_SCHEMA, load_model_source, &t, d);
}

const gpu_type *calmodel_target(const cal_fit *f, const calapply_source *src, const char *gpu,
                                const gpu_catalog *cat, char *why, size_t n)
{
    if (gpu) {
        const gpu_type *g = gpu_catalog_find(cat, gpu);
        if (!g) {
            char names[512];
            snprintf(why, n, "unknown GPU type; expected one of [%s], got '%s'",
                     gpu_catalog_names(cat, names, sizeof names), gpu);
        } else if (g->sms_total != 0 && g->sms_total != f->sms_total) {
            snprintf(why, n,
                     "measured device '%s' has %d SMs, catalog GPU %s has %d; expected the GPU "
                     "type the model was measured on, got '%s'",
                     src->device, f->sms_total, g->name, g->sms_total, gpu);
            g = NULL;
        }
        return g;
    }
    const gpu_type *g = calapply_match_gpu(cat, src->device, f->sms_total);
    if (!g) {
        snprintf(why, n,
                 "no catalog GPU type matches the measured device (%d SMs); expected a catalog "
                 "GPU (or name the type: gpu: / --calibration-gpu), got '%s'",
                 f->sms_total, src->device);
    }
    return g;
}

int calmodel_apply(const cal_fit *f, const calapply_source *src, const calmodel_site *at,
                   const gpu_catalog *cat, const phys_params *m, diag *d, gpu_type *out)
{
    char why[512];
    const gpu_type *g = calmodel_target(f, src, at->gpu, cat, why, sizeof why);
    if (!g) {
        diag_error(d, at->gpu ? at->gpu_at : at->file_at, at->gpu ? at->gpu_path : at->file_path,
                   "%s", why);
        return SIM_EINPUT;
    }
    if (calapply_gpu(g, f, m, out, why, sizeof why) != 0) {
        diag_error(d, at->file_at, at->file_path,
                   "%s; expected the GPU type it was measured on, got '%s'", why, g->name);
        return SIM_EINPUT;
    }
    return 0;
}


/* ------------------------------------------------------------------ time-slice probe file */

/* One child's timeline (role "slice") into t, in ms from origin_ns; false after reporting. */
static bool read_timeline(rd *r, const cJSON *c, const char *p, double origin_ns,
                          tsp_timeline *t)
{
    double first, last;
    if (!num(r, c, p, "t_first_ns", 0, 1e300, &first) ||
        !num(r, c, p, "t_last_ns", first, 1e300, &last)) {
        return false;
    }
    const cJSON *gaps = arr(r, c, p, "gaps_ns", false);
    if (!gaps) {
        return false;
    }
    t->first_ms = (first - origin_ns) * 1e-6;
    t->last_ms = (last - origin_ns) * 1e-6;
    t->n_gaps = cJSON_GetArraySize(gaps);
    t->gap_ms = xcalloc((size_t)t->n_gaps * 2 + 1, sizeof(double), "probe gaps");
    double prev = first;
    for (int i = 0; i < t->n_gaps; i++) {
        const cJSON *g = cJSON_GetArrayItem(gaps, i);
        const cJSON *a = cJSON_GetArrayItem(g, 0), *b = cJSON_GetArrayItem(g, 1);
        if (cJSON_GetArraySize(g) != 2 || !cJSON_IsNumber(a) || !cJSON_IsNumber(b) ||
            a->valuedouble < prev || b->valuedouble < a->valuedouble ||
            b->valuedouble > last) {
            char q[128];
            snprintf(q, sizeof q, "%s.gaps_ns[%d]", p, i);
            bad(r, q, "[start, end] within t_first_ns..t_last_ns, after the previous gap", g);
            t->n_gaps = i;
            return false;
        }
        prev = b->valuedouble;
        t->gap_ms[2 * i] = (a->valuedouble - origin_ns) * 1e-6;
        t->gap_ms[2 * i + 1] = (b->valuedouble - origin_ns) * 1e-6;
    }
    return true;
}

/* A numeric array of exactly n items at o.key into a new array; NULL after reporting. */
static double *num_array(rd *r, const cJSON *o, const char *base, const char *key, int n)
{
    const cJSON *a = arr(r, o, base, key, false);
    if (!a || cJSON_GetArraySize(a) != n) {
        if (a) {
            char path[160], exp[64];
            snprintf(path, sizeof path, "%s.%s", base, key);
            snprintf(exp, sizeof exp, "an array of %d numbers", n);
            bad(r, path, exp, a);
        }
        return NULL;
    }
    double *v = xcalloc((size_t)n + 1, sizeof(double), "probe samples");
    for (int i = 0; i < n; i++) {
        const cJSON *x = cJSON_GetArrayItem(a, i);
        if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0)) {
            char path[160];
            snprintf(path, sizeof path, "%s.%s[%d]", base, key, i);
            bad(r, path, "a number >= 0", x);
            free(v);
            return NULL;
        }
        v[i] = x->valuedouble;
    }
    return v;
}

/* The children of group g (path p) when it ran ("ok": a group that failed on the GPU is
 * recorded, not analysed), else NULL. */
static const cJSON *ok_children(rd *r, const cJSON *g, const char *p)
{
    const cJSON *ch = arr(r, g, p, "children", false);
    return ch && cJSON_IsTrue(get(g, "ok")) ? ch : NULL;
}

static void read_slice_groups(rd *r, const cJSON *top, tsp_data *out)
{
    const cJSON *groups = arr(r, top, "", "slices", false), *g;
    int gi = 0;
    cJSON_ArrayForEach(g, groups)
    {
        char p[64];
        snprintf(p, sizeof p, "slices[%d]", gi++);
        const cJSON *ch = ok_children(r, g, p);
        if (!ch) {
            continue;
        }
        if (out->n_groups >= TSP_MAX_GROUPS || cJSON_GetArraySize(ch) > TSP_MAX_PROCS) {
            char what[48];
            snprintf(what, sizeof what, "groups of at most %d processes", TSP_MAX_PROCS);
            bad_cap(r, p, TSP_MAX_GROUPS, what, ch);
            return;
        }
        double origin = HUGE_VAL;
        const cJSON *c;
        cJSON_ArrayForEach(c, ch)
        {
            const cJSON *f = get(c, "t_first_ns");
            origin = cJSON_IsNumber(f) ? fmin(origin, f->valuedouble) : origin;
            opt_str(get(c, "device"), "name", out->device, sizeof out->device);
        }
        tsp_group *grp = &out->g[out->n_groups++];
        int ci = 0;
        cJSON_ArrayForEach(c, ch)
        {
            char q[96];
            snprintf(q, sizeof q, "%s.children[%d]", p, ci);
            if (!read_timeline(r, c, q, origin, &grp->tl[ci])) {
                grp->n = ci + 1; /* freed with the others */
                return;
            }
            grp->n = ++ci;
        }
    }
}

static void read_return_series(rd *r, const cJSON *top, tsp_data *out)
{
    const cJSON *rets = arr(r, top, "", "returns", false), *g;
    int gi = 0;
    cJSON_ArrayForEach(g, rets)
    {
        char p[64];
        snprintf(p, sizeof p, "returns[%d]", gi++);
        const cJSON *ch = ok_children(r, g, p), *c;
        if (!ch) {
            continue;
        }
        int ci = 0;
        cJSON_ArrayForEach(c, ch)
        {
            const cJSON *role = get(c, "role");
            char q[96];
            snprintf(q, sizeof q, "%s.children[%d]", p, ci++);
            if (!cJSON_IsString(role) || strcmp(role->valuestring, "return")) {
                continue;
            }
            if (out->n_ret >= TSP_MAX_RETURNS) {
                bad_cap(r, p, TSP_MAX_RETURNS, "return series", g);
                return;
            }
            tsp_returns *t = &out->ret[out->n_ret];
            const cJSON *lat = arr(r, c, q, "latency_ms", false);
            if (!lat || !str(r, g, p, "beside", t->beside, sizeof t->beside)) {
                return;
            }
            t->n = cJSON_GetArraySize(lat);
            t->sleep_ms = num_array(r, c, q, "host_sleep_ms", t->n);
            t->latency_ms = num_array(r, c, q, "latency_ms", t->n);
            out->n_ret++;
            if (!t->sleep_ms || !t->latency_ms) {
                return;
            }
        }
    }
}

static void load_tslice(rd *r, const cJSON *top, void *vout)
{
    tsp_data *out = vout;
    opt_str(top, "date_utc", out->date_utc, sizeof out->date_utc);
    const cJSON *smi = get(top, "nvidia_smi");
    if (cJSON_IsString(smi)) { /* name, uuid, driver_version, ...: the third field */
        const char *s = strchr(smi->valuestring, ',');
        s = s ? strchr(s + 1, ',') : NULL;
        if (s) {
            s += strspn(s + 1, " ") + 1;
            snprintf(out->driver, sizeof out->driver, "%.*s", (int)strcspn(s, ","), s);
        }
    }
    read_slice_groups(r, top, out);
    if (r->errors == 0) {
        read_return_series(r, top, out);
    }
}

/* A probe file that did not read leaves nothing to free. */
static int tslice_done(int rc, tsp_data *out)
{
    if (rc) {
        tsp_free(out);
    }
    return rc;
}

int tslice_json_load_buffer(const char *name, const char *buf, size_t len, tsp_data *out,
                            diag *d)
{
    memset(out, 0, sizeof *out);
    return tslice_done(load_buffer(name, buf, len, TSLICE_JSON_SCHEMA, load_tslice, out, d), out);
}
