/* experiments/physics_load.c - model/physics/physics.yaml -> phys_params (see physics_load.h). */
#include "experiments/physics_load.h"

#include <stdio.h>
#include <string.h>

#include "experiments/cfg.h"
#include "experiments/embedded.h"
#include "sim/err.h"

typedef struct sourced {
    double value;
    const char *src;
    const char *note;
    src_loc at;
} sourced;

typedef struct ts_entry {
    const char *name;
    double *eta;
    size_t n_eta;
    double kernel_ms; /* 0 = not stated */
    const char *src;
    const char *note;
    src_loc at;
} ts_entry;

typedef struct sm_w {
    sourced c[WL_CLASS_COUNT];
} sm_w;

typedef struct physics_doc {
    int version;
    sourced roofline_p, bw_stream_eff, bw_drive_sm_frac, mig_sm_eff, power_alpha,
        power_idle_frac, power_board_idle_frac, clock_min_frac, power_window_s, mps_bw_contention, mps_kernel_wait, mps_sm_granule,
        mps_min_sms, param_rel_sd, mig_apply_s, meas_prior_rel_sd, meas_compute_floor,
        meas_host_floor, ts_quantum_s, ts_switch_s;
    sm_w power_sm_w;
    ts_entry *ts;
    size_t n_ts;
} physics_doc;

/* sourced_NAME: {value, src, note?} with value from `low` (CFG_MIN or CFG_ABOVE) to hi */
#define SOURCED_BOUNDED(name, low, hi)                                                         \
    static const cfg_field sourced_##name[] = {                                                \
        CFG_SELF(sourced, at),                                                                 \
        {"value", CFG_DOUBLE, .required = true, low, CFG_MAX(hi),                              \
         .off = offsetof(sourced, value)},                                                     \
        {"src", CFG_STRING, .required = true, .off = offsetof(sourced, src)},                  \
        {"note", CFG_STRING, .off = offsetof(sourced, note)},                                  \
        {0},                                                                                   \
    };
#define SOURCED(lo, hi) SOURCED_BOUNDED(lo##_##hi, CFG_MIN(lo), hi)
SOURCED(0, 1)
SOURCED(1, 64)
SOURCED(0, 1000)
SOURCED_BOUNDED(above0_10, CFG_ABOVE(0), 10)

static const cfg_field sm_w_fields[] = {
    {"fp32", CFG_MAP, .required = true, .sub = sourced_0_1000,
     .off = offsetof(sm_w, c) + WL_CLASS_FP32 * sizeof(sourced)},
    {"fp64", CFG_MAP, .required = true, .sub = sourced_0_1000,
     .off = offsetof(sm_w, c) + WL_CLASS_FP64 * sizeof(sourced)},
    {"fp16", CFG_MAP, .required = true, .sub = sourced_0_1000,
     .off = offsetof(sm_w, c) + WL_CLASS_FP16 * sizeof(sourced)},
    {"tensor", CFG_MAP, .required = true, .sub = sourced_0_1000,
     .off = offsetof(sm_w, c) + WL_CLASS_TENSOR * sizeof(sourced)},
    {0},
};

static const cfg_field ts_fields[] = {
    CFG_SELF(ts_entry, at),
    {"name", CFG_STRING, .required = true, .off = offsetof(ts_entry, name)},
    {"eta", CFG_SEQ, .required = true, CFG_MIN(1), CFG_MAX(PHYS_MAX_K - 1), .elem = CFG_DOUBLE,
     .off = offsetof(ts_entry, eta), .count_off = offsetof(ts_entry, n_eta)},
    {"src", CFG_STRING, .required = true, .off = offsetof(ts_entry, src)},
    {"note", CFG_STRING, .off = offsetof(ts_entry, note)},
    {"kernel_ms", CFG_DOUBLE, CFG_ABOVE(0), CFG_MAX(1e6), .off = offsetof(ts_entry, kernel_ms)},
    {0},
};

#define REQ_MAP(key, table) {#key, CFG_MAP, .required = true, .sub = table, .off = offsetof(physics_doc, key)}

static const cfg_field doc_fields[] = {
    {"version", CFG_INT, .required = true, CFG_MIN(1), CFG_MAX(1),
     .off = offsetof(physics_doc, version)},
    REQ_MAP(roofline_p, sourced_1_64),
    REQ_MAP(bw_stream_eff, sourced_0_1),
    REQ_MAP(bw_drive_sm_frac, sourced_0_1000),
    REQ_MAP(mig_sm_eff, sourced_0_1),
    REQ_MAP(power_alpha, sourced_0_1000),
    REQ_MAP(power_idle_frac, sourced_0_1),
    REQ_MAP(power_board_idle_frac, sourced_0_1),
    REQ_MAP(clock_min_frac, sourced_0_1),
    REQ_MAP(power_window_s, sourced_0_1000),
    REQ_MAP(mps_bw_contention, sourced_0_1000),
    REQ_MAP(mps_kernel_wait, sourced_0_1),
    REQ_MAP(mps_sm_granule, sourced_1_64),
    REQ_MAP(mps_min_sms, sourced_0_1000),
    REQ_MAP(param_rel_sd, sourced_0_1),
    REQ_MAP(mig_apply_s, sourced_0_1000),
    REQ_MAP(meas_prior_rel_sd, sourced_above0_10),
    REQ_MAP(meas_compute_floor, sourced_0_1),
    REQ_MAP(meas_host_floor, sourced_0_1),
    REQ_MAP(ts_quantum_s, sourced_0_1),
    REQ_MAP(ts_switch_s, sourced_0_1),
    {"power_sm_w", CFG_MAP, .required = true, .sub = sm_w_fields,
     .off = offsetof(physics_doc, power_sm_w)},
    {"timeslice", CFG_SEQ, .required = true, CFG_MIN(1), CFG_MAX(PHYS_MAX_TS_CLASSES),
     CFG_SEQ_OF(physics_doc, ts, n_ts, ts_entry, ts_fields)},
    {0},
};

/* Checks the schema cannot express: non-empty sources, η in (0, 1], unique class names. */
static void check_doc(const physics_doc *pd, diag *d)
{
    const sourced *all[] = {&pd->roofline_p,      &pd->bw_stream_eff,   &pd->bw_drive_sm_frac,
                            &pd->mig_sm_eff,      &pd->power_alpha,     &pd->power_idle_frac,
                            &pd->power_board_idle_frac,
                            &pd->clock_min_frac,  &pd->power_window_s, &pd->mps_bw_contention,
                            &pd->param_rel_sd,
                            &pd->mig_apply_s,     &pd->mps_kernel_wait,
                            &pd->mps_sm_granule,  &pd->mps_min_sms,
                            &pd->meas_prior_rel_sd, &pd->meas_compute_floor,
                            &pd->meas_host_floor, &pd->ts_quantum_s, &pd->ts_switch_s};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (all[i]->src && !all[i]->src[0]) {
            diag_error(d, all[i]->at, "src", "empty source; expected where the value comes from, "
                       "got ''");
        }
    }
    for (size_t i = 0; i < pd->n_ts; i++) {
        char path[64];
        snprintf(path, sizeof path, "timeslice[%zu].eta", i);
        for (size_t k = 0; k < pd->n_ts && k < i; k++) {
            if (pd->ts[k].name && pd->ts[i].name && !strcmp(pd->ts[k].name, pd->ts[i].name)) {
                diag_error(d, pd->ts[i].at, "timeslice.name",
                           "duplicate class; expected a new name, got '%s'", pd->ts[i].name);
            }
        }
        if (pd->ts[i].name && strlen(pd->ts[i].name) >= PHYS_NAME_MAX) {
            diag_error(d, pd->ts[i].at, "timeslice.name",
                       "name too long; expected at most %d characters, got '%s'",
                       PHYS_NAME_MAX - 1, pd->ts[i].name);
        }
        for (size_t k = 0; k < pd->ts[i].n_eta; k++) {
            double e = pd->ts[i].eta[k];
            if (!(e > 0 && e <= 1)) {
                diag_error(d, pd->ts[i].at, path,
                           "efficiency out of range; expected a number in (0, 1], got '%g'", e);
            }
        }
    }
}

/* cfg_finish_fn: the checks beyond the schema, then the values into phys_params (ctx). */
static void finish(const void *dst, void *ctx, diag *d)
{
    const physics_doc *pd = dst;
    phys_params *out = ctx;
    int before = diag_error_count(d);
    check_doc(pd, d);
    if (diag_error_count(d) != before) {
        return;
    }
    out->roofline_p = pd->roofline_p.value;
    out->bw_stream_eff = pd->bw_stream_eff.value;
    out->bw_drive_sm_frac = pd->bw_drive_sm_frac.value;
    out->mig_sm_eff = pd->mig_sm_eff.value;
    out->power_alpha = pd->power_alpha.value;
    out->power_idle_frac = pd->power_idle_frac.value;
    out->power_board_idle_frac = pd->power_board_idle_frac.value;
    out->clock_min_frac = pd->clock_min_frac.value;
    out->power_window_s = pd->power_window_s.value;
    out->mps_bw_contention = pd->mps_bw_contention.value;
    out->mps_kernel_wait = pd->mps_kernel_wait.value;
    out->mps_sm_granule = pd->mps_sm_granule.value;
    out->mps_min_sms = pd->mps_min_sms.value;
    out->param_rel_sd = pd->param_rel_sd.value;
    out->mig_apply_s = pd->mig_apply_s.value;
    out->meas_prior_rel_sd = pd->meas_prior_rel_sd.value;
    out->meas_compute_floor = pd->meas_compute_floor.value;
    out->meas_host_floor = pd->meas_host_floor.value;
    out->ts_quantum_s = pd->ts_quantum_s.value;
    out->ts_switch_s = pd->ts_switch_s.value;
    for (int c = 0; c < WL_CLASS_COUNT; c++) {
        out->power_sm_w[c] = pd->power_sm_w.c[c].value;
    }
    out->n_ts = (int)pd->n_ts;
    for (size_t i = 0; i < pd->n_ts; i++) {
        phys_ts_class *t = &out->ts[i];
        snprintf(t->name, sizeof t->name, "%s", pd->ts[i].name);
        t->kernel_ms = pd->ts[i].kernel_ms;
        t->eta[0] = t->eta[1] = 1.0;
        for (int k = 2; k <= PHYS_MAX_K; k++) {
            size_t j = (size_t)(k - 2) < pd->ts[i].n_eta ? (size_t)(k - 2) : pd->ts[i].n_eta - 1;
            t->eta[k] = pd->ts[i].eta[j];
        }
    }
}

int physics_load_buffer(const char *name, const void *buf, size_t len, diag *d,
                        phys_params *out)
{
    memset(out, 0, sizeof *out);
    physics_doc pd;
    memset(&pd, 0, sizeof pd);
    return cfg_load_buffer(name, buf, len, doc_fields, &pd, finish, out, d);
}

int physics_load_default(diag *d, phys_params *out)
{
    const unsigned char *data;
    size_t len;
    if (!embedded_get("model/physics/physics.yaml", &data, &len)) {
        diag_error(d, (src_loc){"model/physics/physics.yaml", 0, 0}, "", "not embedded in this build");
        return SIM_EINPUT;
    }
    return physics_load_buffer("model/physics/physics.yaml", data, len, d, out);
}
