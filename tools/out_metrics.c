/* tools/out_metrics.c - metrics.om in OpenMetrics text with DCGM exporter names (see
 * out_metrics.h). */
#include "tools/out_metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "model/physics/power.h"
#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/actlog.h"
#include "tools/devlog.h"

#define NS_PER_S ((sim_time)1000000000)
#define MIB (1024.0 * 1024.0)

typedef enum fam_kind {
    FAM_GPU_UTIL,
    FAM_GR_ACTIVE,
    FAM_SM_ACTIVE,
    FAM_FB_USED,
    FAM_FB_FREE,
    FAM_POWER
} fam_kind;

/* Names and HELP texts as dcgm-exporter's default-counters.csv gives them. */
static const struct family {
    fam_kind kind;
    const char *name, *help;
    bool per_instance; /* one series per MIG instance on a MIG GPU */
} families[] = {
    {FAM_GPU_UTIL, "DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", false},
    {FAM_GR_ACTIVE, "DCGM_FI_PROF_GR_ENGINE_ACTIVE", "Ratio of time the graphics engine is active.",
     true},
    {FAM_SM_ACTIVE, "DCGM_FI_PROF_SM_ACTIVE",
     "The ratio of cycles an SM has at least 1 warp assigned (in %).", true},
    {FAM_FB_USED, "DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", true},
    {FAM_FB_FREE, "DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", true},
    {FAM_POWER, "DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", false},
};

typedef struct om_ctx {
    FILE *f;
    const world *w;
    const cluster *c;
    const devlog *log;
    const phys_params *phys;
    const actlog *act;      /* activity of each device (finished) */
    int64_t epoch_ns;       /* Unix time of simulated time 0 (outputs.start_time), ns */
    sim_time interval, end; /* end: the last sample's time */
    bool whole_s;           /* timestamps as integer seconds */
    sim_time *times;        /* scratch: the sample times, n_times of them */
    double *values;         /* scratch: one series' value at each sample time */
    bool *shown;            /* scratch: whether DCGM shows the series at each sample time */
    size_t n_times;
    /* the head of the last sample written, "NAME{LABELS}": the same for every sample of a series
     * (and of one pod's part of it), so made once per series and pod instead of once per sample
     * (the labels were most of the time of writing metrics.om: 58 MB for a 30-day horizon) */
    char *head;
    size_t head_len, head_cap;
    const struct family *head_fam;
    gpu_id head_g;
    const cluster_device *head_dev;
    const job *head_j;
} om_ctx;

/* Append n bytes of s to x->head. */
static void head_put(om_ctx *x, const char *s, size_t n)
{
    if (x->head_len + n + 1 > x->head_cap) {
        x->head_cap = 2 * (x->head_len + n + 1);
        x->head = xrealloc(x->head, x->head_cap, "metrics.om series head");
    }
    memcpy(x->head + x->head_len, s, n);
    x->head_len += n;
    x->head[x->head_len] = '\0';
}

static void head_puts(om_ctx *x, const char *s)
{
    head_put(x, s, strlen(s));
}

/* A label value with '\\', '"' and newlines escaped (OpenMetrics ABNF). */
static void put_label(om_ctx *x, const char *key, const char *v, bool first)
{
    head_puts(x, first ? "" : ",");
    head_puts(x, key);
    head_puts(x, "=\"");
    for (; *v; v++) {
        if (*v == '\\' || *v == '"') {
            head_put(x, "\\", 1);
            head_put(x, v, 1);
        } else if (*v == '\n') {
            head_puts(x, "\\n");
        } else {
            head_put(x, v, 1);
        }
    }
    head_puts(x, "\"");
}

/* The head of a sample of family fam, "NAME{LABELS}", into x->head (unless it holds it already);
 * j non-NULL: the pod that holds the device (dcgm-exporter's Kubernetes mode adds container,
 * namespace and pod, in that order). */
static void put_head(om_ctx *x, const struct family *fam, gpu_id g, const cluster_device *inst,
                     const job *j)
{
    if (x->head_len > 0 && x->head_fam == fam && x->head_g == g && x->head_dev == inst &&
        x->head_j == j) {
        return;
    }
    x->head_fam = fam;
    x->head_g = g;
    x->head_dev = inst;
    x->head_j = j;
    x->head_len = 0;
    const cluster_gpu *cg = cluster_gpu_get(x->c, g);
    char buf[128];
    head_puts(x, fam->name);
    head_puts(x, "{");
    snprintf(buf, sizeof buf, "%" PRIu32, cg->index);
    put_label(x, "gpu", buf, true);
    snprintf(buf, sizeof buf, "nvidia%" PRIu32, cg->index);
    put_label(x, "device", buf, false);
    snprintf(buf, sizeof buf, "NVIDIA %s", cg->type->name);
    put_label(x, "modelName", buf, false);
    put_label(x, "Hostname", cluster_node_name(x->c, cg->node), false);
    if (inst) {
        put_label(x, "GPU_I_PROFILE", inst->profile->name, false);
        snprintf(buf, sizeof buf, "%" PRIu32, inst->index);
        put_label(x, "GPU_I_ID", buf, false);
    }
    if (j) {
        put_label(x, "container", j->spec.class_name, false);
        put_label(x, "namespace", j->spec.pod.queue ? j->spec.pod.queue : "default", false);
        snprintf(buf, sizeof buf, "%s-%" PRIu32, j->spec.class_name, j->id);
        put_label(x, "pod", buf, false);
    }
    head_puts(x, "}");
}

static void put_timestamp(const om_ctx *x, sim_time t)
{
    sim_time u = x->epoch_ns + t;
    if (x->whole_s) {
        fprintf(x->f, " %" PRId64 "\n", u / NS_PER_S);
    } else {
        fprintf(x->f, " %" PRId64 ".%03" PRId64 "\n", u / NS_PER_S, (u % NS_PER_S) / 1000000);
    }
}

/* Board power (W) of GPU g with its devices' activity as the cursors acts[0 .. n) hold it: a
 * device keeps sm x its SMs busy on average and sm / util of them in its busy phases (as fp32
 * work; model/physics/power.h power_board_w). */
static double power_now(const cluster *c, const phys_params *phys, gpu_id g,
                        const actlog_cursor *acts, uint32_t n)
{
    const cluster_gpu *cg = cluster_gpu_get(c, g);
    double busy[WL_CLASS_COUNT] = {0}, peak[WL_CLASS_COUNT] = {0};
    for (uint32_t k = 0; k < n; k++) {
        double sms = cluster_device_get(c, cg->first_dev + k)->sms;
        busy[WL_CLASS_FP32] += acts[k].sm * sms;
        peak[WL_CLASS_FP32] += acts[k].util > 0 ? fmin(1.0, acts[k].sm / acts[k].util) * sms : 0;
    }
    return power_board_w(cg->type, phys, busy, peak);
}

/* Energy (J) GPU g draws from the cursors' common time to t (>= it), the cursors acts[0 .. n)
 * advanced to t, piece by piece between the devices' activity changes. */
static double energy_to(const cluster *c, const phys_params *phys, gpu_id g, actlog_cursor *acts,
                        uint32_t n, sim_time t)
{
    double e = 0;
    sim_time at = n ? acts[0].t : t;
    for (;;) {
        sim_time nt = t;
        for (uint32_t k = 0; k < n; k++) {
            sim_time kt = actlog_cursor_next_time(&acts[k]);
            nt = kt < nt ? kt : nt;
        }
        e += power_now(c, phys, g, acts, n) * sim_time_to_s(nt - at);
        for (uint32_t k = 0; k < n; k++) {
            actlog_cursor_advance(&acts[k], nt);
        }
        at = nt;
        if (nt >= t) {
            return e;
        }
    }
}

/* Cursors over the devices of GPU g (at most DEVLOG_MAX_DEVS); their count. */
static uint32_t gpu_cursors(const cluster *c, const actlog *act, gpu_id g,
                            actlog_cursor acts[DEVLOG_MAX_DEVS])
{
    const cluster_gpu *cg = cluster_gpu_get(c, g);
    uint32_t n = cg->n_devs < DEVLOG_MAX_DEVS ? cg->n_devs : DEVLOG_MAX_DEVS;
    for (uint32_t k = 0; k < n; k++) {
        actlog_cursor_init(&acts[k], act, cg->first_dev + k);
    }
    return n;
}

/* Activity integrals (fraction x ns) of device index d of GPU g (-1: all its devices) over
 * [0, t], from cursors acts[0 .. n) advanced to t; busy: util, else SM activity. */
static double act_integral(actlog_cursor *acts, uint32_t n, int d, sim_time t, bool util)
{
    double v = 0;
    for (uint32_t k = 0; k < n; k++) {
        if (d < 0 || (int)k == d) {
            actlog_cursor_advance(&acts[k], t);
            v += util ? acts[k].util_ns : acts[k].sm_ns;
        }
    }
    return v;
}

/* Fill x->values and x->shown for one series: device index `d` on the GPU (-1: the GPU as a
 * whole), at every sample time. On a re-partitioned GPU (lay non-NULL) a sample is shown only
 * while DCGM would show the series: an instance's while it exists, the GPU-level utilisation and
 * memory while MIG is off (power always). Utilisation, GR_ENGINE_ACTIVE and SM_ACTIVE are the
 * activity's mean over the interval ending at the sample (tools/actlog.h; t = 0: the activity
 * then), capped at 1 for a GPU-level series over several instances. */
static void series_values(const om_ctx *x, const struct family *fam, gpu_id g, int d,
                          devlog_layout *lay)
{
    const cluster_gpu *cg = cluster_gpu_get(x->c, g);
    const cluster_device *dev = d < 0 ? NULL : cluster_device_get(x->c, cg->first_dev + (dev_id)d);
    devlog_cursor cur;
    devlog_cursor_init(&cur, x->log, x->c, g);
    actlog_cursor acts[DEVLOG_MAX_DEVS];
    uint32_t n_acts = gpu_cursors(x->c, x->act, g, acts);
    bool util = fam->kind != FAM_SM_ACTIVE;
    sim_time prev = 0;
    double act_prev = 0;
    for (size_t s = 0; s < x->n_times; s++) {
        sim_time t = x->times[s];
        bool show = true;
        if (lay) {
            devlog_layout_advance(lay, t);
            show = d >= 0 ? lay->on[d] : fam->kind == FAM_POWER || !devlog_layout_mig(lay);
        }
        double value = 0;
        if (fam->kind == FAM_POWER) { /* the mean over (prev, t]; at t = 0 the power then */
            double e = energy_to(x->c, x->phys, g, acts, n_acts, t);
            value = t > prev ? e / sim_time_to_s(t - prev) : power_now(x->c, x->phys, g, acts, n_acts);
        } else if (fam->kind == FAM_FB_USED || fam->kind == FAM_FB_FREE) {
            devlog_cursor_advance(&cur, t);
            uint64_t used = 0;
            for (uint32_t k = 0; k < cur.n_devs; k++) {
                used += d < 0 || (int)k == d ? cur.mem_bytes[k] : 0;
            }
            uint64_t cap = dev ? dev->mem_bytes : cg->type->mem_bytes;
            value = fam->kind == FAM_FB_USED
                        ? ceil((double)used / MIB)
                        : (used >= cap ? 0.0 : floor((double)(cap - used) / MIB));
        } else {
            double a = act_integral(acts, n_acts, d, t, util);
            double frac;
            if (t == prev) { /* the first sample: the activity at that instant */
                frac = 0;
                for (uint32_t k = 0; k < n_acts; k++) {
                    frac += d < 0 || (int)k == d ? (util ? acts[k].util : acts[k].sm) : 0;
                }
            } else {
                frac = (a - act_prev) / (double)(t - prev);
            }
            frac = fmin(1.0, fmax(0.0, frac));
            value = fam->kind == FAM_GPU_UTIL ? round(100 * frac) : frac;
            act_prev = a;
        }
        x->values[s] = value;
        x->shown[s] = show;
        prev = t;
    }
    devlog_cursor_fini(&cur);
}

/* One sample line of a series. */
static void put_sample(om_ctx *x, const struct family *fam, gpu_id g, const cluster_device *dev,
                       const job *j, size_t s)
{
    put_head(x, fam, g, dev, j);
    fwrite(x->head, 1, x->head_len, x->f);
    switch (fam->kind) {
    case FAM_GPU_UTIL:
    case FAM_FB_USED:
    case FAM_FB_FREE:
        fprintf(x->f, " %.0f", x->values[s]);
        break;
    case FAM_GR_ACTIVE:
    case FAM_SM_ACTIVE:
        fprintf(x->f, " %.6f", x->values[s]);
        break;
    case FAM_POWER:
        fprintf(x->f, " %.3f", x->values[s]);
        break;
    }
    put_timestamp(x, x->times[s]);
}

/* First sample index at or after t. */
static size_t first_sample(const om_ctx *x, sim_time t)
{
    size_t lo = 0, hi = x->n_times;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->times[mid] < t) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* One series of device index d of GPU g (-1: the GPU), written in one piece per label set (a
 * metric's points together, OpenMetrics). pods: the series is one device's on a GPU whose layout
 * never changes, so it carries the labels of the pods that hold it, as dcgm-exporter's
 * Kubernetes mode does (its shared-GPU mode: one series per pod, each with the device's value):
 * every pod's samples while it holds a unit of the device ([start, end) of each of its runs
 * there), then the samples with no pod, without pod labels. */
static void put_series(om_ctx *x, const struct family *fam, gpu_id g, int d, devlog_layout *lay,
                       bool pods)
{
    series_values(x, fam, g, d, lay);
    const cluster_gpu *cg = cluster_gpu_get(x->c, g);
    const cluster_device *dev = d < 0 ? NULL : cluster_device_get(x->c, cg->first_dev + (dev_id)d);
    if (!pods) {
        for (size_t s = 0; s < x->n_times; s++) {
            if (x->shown[s]) {
                put_sample(x, fam, g, dev, NULL, s);
            }
        }
        return;
    }
    dev_id want = cg->first_dev + (dev_id)(d < 0 ? 0 : d);
    const job_table *jt = world_jobs(x->w);
    bool *held = xcalloc(x->n_times + 1, sizeof *held, "held samples");
    size_t lo = x->log->gpu_first[g], hi = x->log->gpu_first[g + 1];
    /* the spans are sorted by (start, device, job): each pod in the order of its first span on
     * the device, with all its spans there */
    for (size_t i = lo; i < hi; i++) {
        const devlog_span *sp = &x->log->spans[i];
        bool first = sp->dev == want;
        for (size_t k = lo; first && k < i; k++) {
            first = !(x->log->spans[k].dev == want && x->log->spans[k].job == sp->job);
        }
        if (!first) {
            continue;
        }
        const job *j = job_table_get(jt, sp->job);
        for (size_t k = i; k < hi; k++) {
            const devlog_span *o = &x->log->spans[k];
            if (o->dev != want || o->job != sp->job) {
                continue;
            }
            size_t to = o->end == SIM_TIME_MAX ? x->n_times : first_sample(x, o->end);
            for (size_t s = first_sample(x, o->start); s < to; s++) {
                if (x->shown[s]) {
                    put_sample(x, fam, g, dev, j, s);
                }
                held[s] = true;
            }
        }
    }
    for (size_t s = 0; s < x->n_times; s++) {
        if (x->shown[s] && !held[s]) {
            put_sample(x, fam, g, dev, NULL, s);
        }
    }
    free(held);
}

double out_energy_j(const world *w, const phys_params *phys, const actlog *act)
{
    const cluster *c = world_cluster(w);
    sim_time end = world_get_totals(w).horizon;
    double e = 0;
    for (gpu_id g = 0; g < cluster_n_gpus(c); g++) {
        actlog_cursor acts[DEVLOG_MAX_DEVS];
        uint32_t n = gpu_cursors(c, act, g, acts);
        e += energy_to(c, phys, g, acts, n, end);
    }
    return e;
}

double out_power_mean_w(const world *w, double energy_j)
{
    const cluster *c = world_cluster(w);
    double h = sim_time_to_s(world_get_totals(w).horizon);
    uint32_t n = 0;
    for (gpu_id g = 0; g < cluster_n_gpus(c); g++) {
        n += cluster_gpu_get(c, g)->type->tdp_w > 0;
    }
    return n > 0 && h > 0 ? energy_j / (h * n) : 0.0;
}

int out_metrics_om(FILE *f, const world *w, const phys_params *phys, const actlog *act,
                   sim_time interval_ns, int64_t epoch_ns)
{
    SIM_ASSERT(interval_ns > 0);
    devlog log;
    devlog_build(w, &log);
    om_ctx x = {.f = f,
                .w = w,
                .c = world_cluster(w),
                .log = &log,
                .phys = phys,
                .act = act,
                .epoch_ns = epoch_ns,
                .interval = interval_ns,
                .end = log.end,
                .whole_s = interval_ns % NS_PER_S == 0 && epoch_ns % NS_PER_S == 0};
    if (x.whole_s && x.end % NS_PER_S != 0) {
        x.end += NS_PER_S - x.end % NS_PER_S;
    }
    sim_time t = 0;
    do {
        x.n_times++;
    } while (devlog_next_sample(&t, x.interval, x.end));
    x.times = xcalloc(x.n_times, sizeof *x.times, "sample times");
    x.values = xcalloc(x.n_times, sizeof *x.values, "sample values");
    x.shown = xcalloc(x.n_times, sizeof *x.shown, "shown samples");
    t = 0;
    for (size_t k = 0; k < x.n_times; k++) {
        x.times[k] = t;
        devlog_next_sample(&t, x.interval, x.end);
    }
    for (size_t i = 0; i < sizeof families / sizeof families[0]; i++) {
        const struct family *fam = &families[i];
        fprintf(f, "# TYPE %s gauge\n# HELP %s %s\n", fam->name, fam->name, fam->help);
        for (gpu_id g = 0; g < cluster_n_gpus(x.c); g++) {
            const cluster_gpu *cg = cluster_gpu_get(x.c, g);
            if (fam->kind == FAM_POWER && cg->type->tdp_w <= 0) {
                continue;
            }
            if (cg->reconfigurable) { /* its instances come and go: each series while it exists */
                devlog_layout lay;
                devlog_layout_init(&lay, &log, x.c, g);
                put_series(&x, fam, g, -1, &lay, false);
                for (uint32_t d = 0; fam->per_instance && d < cg->n_devs; d++) {
                    if (cluster_device_get(x.c, cg->first_dev + d)->profile) {
                        devlog_layout_init(&lay, &log, x.c, g);
                        put_series(&x, fam, g, (int)d, &lay, true);
                    }
                }
            } else if (fam->kind == FAM_GPU_UTIL && cg->mig_enabled) {
                continue; /* DCGM has no GPU_UTIL for a GPU in MIG mode */
            } else if (fam->per_instance && cg->mig_enabled) {
                for (uint32_t d = 0; d < cg->n_devs; d++) {
                    put_series(&x, fam, g, (int)d, NULL, true);
                }
            } else {
                /* a GPU's series: the pods' labels when the GPU is one device (MIG off) */
                put_series(&x, fam, g, -1, NULL, !cg->mig_enabled);
            }
        }
    }
    fputs("# EOF\n", f);
    free(x.times);
    free(x.values);
    free(x.shown);
    free(x.head);
    devlog_fini(&log);
    return ferror(f) ? SIM_EIO : 0;
}
