/* experiments/plan.c - the `plan:` section of a scenario (see plan.h). */
#include "experiments/plan.h"

#include <stdbool.h>
#include <string.h>

#include "experiments/cfg.h"
#include "sim/err.h"

/* The SLO mapping as written; each limit present or not (its location). */
typedef struct raw_slo {
    double wait_mean, wait_p95, jct_mean, jct_p95, slowdown_mean, failed;
    double latency_p95, latency_p99, attainment;
    src_loc wait_mean_at, wait_p95_at, jct_mean_at, jct_p95_at, slowdown_mean_at, failed_at;
    src_loc latency_p95_at, latency_p99_at, attainment_at;
    src_loc at;
} raw_slo;

/* The walk's destination: the spec, and the SLOs as written (turned into a list after). */
typedef struct raw_plan {
    plan_spec ps;
    raw_slo slo;
} raw_plan;

static const cfg_field slo_fields[] = {
    CFG_SELF(raw_slo, at),
    {"wait_mean", CFG_SECONDS, CFG_MIN(0), .off = offsetof(raw_slo, wait_mean),
     CFG_LOC(raw_slo, wait_mean_at)},
    {"wait_p95", CFG_SECONDS, CFG_MIN(0), .off = offsetof(raw_slo, wait_p95),
     CFG_LOC(raw_slo, wait_p95_at)},
    {"jct_mean", CFG_SECONDS, CFG_MIN(0), .off = offsetof(raw_slo, jct_mean),
     CFG_LOC(raw_slo, jct_mean_at)},
    {"jct_p95", CFG_SECONDS, CFG_MIN(0), .off = offsetof(raw_slo, jct_p95),
     CFG_LOC(raw_slo, jct_p95_at)},
    {"slowdown_mean", CFG_DOUBLE, CFG_MIN(1), .off = offsetof(raw_slo, slowdown_mean),
     CFG_LOC(raw_slo, slowdown_mean_at)},
    {"failed", CFG_DOUBLE, CFG_MIN(0), .off = offsetof(raw_slo, failed),
     CFG_LOC(raw_slo, failed_at)},
    {"latency_p95", CFG_SECONDS, CFG_MIN(0), .off = offsetof(raw_slo, latency_p95),
     CFG_LOC(raw_slo, latency_p95_at)},
    {"latency_p99", CFG_SECONDS, CFG_MIN(0), .off = offsetof(raw_slo, latency_p99),
     CFG_LOC(raw_slo, latency_p99_at)},
    {"attainment", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1), .off = offsetof(raw_slo, attainment),
     CFG_LOC(raw_slo, attainment_at)},
    {0},
};

static const cfg_field cost_fields[] = {
    {"gpu_hour", CFG_DOUBLE, CFG_MIN(0), .dflt = "0", .off = offsetof(plan_spec, gpu_hour)},
    {"energy_kwh", CFG_DOUBLE, CFG_MIN(0), .dflt = "0", .off = offsetof(plan_spec, energy_kwh)},
    {0},
};

static const cfg_field plan_fields[] = {
    CFG_SELF(raw_plan, ps.at),
    {"replications", CFG_U32, CFG_MIN(1), CFG_MAX(100000), .dflt = "1",
     .off = offsetof(raw_plan, ps.sw.replications)},
    {"axes", CFG_SEQ, .required = true, CFG_MIN(1), CFG_MAX(SWEEP_MAX_AXES),
     CFG_SEQ_OF(raw_plan, ps.sw.axes, ps.sw.n_axes, sweep_axis, sweep_axis_fields)},
    {"slo", CFG_MAP, .required = true, .sub = slo_fields, .off = offsetof(raw_plan, slo)},
    {"cost", CFG_MAP, .required = true, .sub = cost_fields, .off = offsetof(raw_plan, ps)},
    {0},
};

static void add_slo(plan_spec *ps, const char *figure, const char *key, double v, src_loc at)
{
    if (cfg_present(at)) {
        ps->slos[ps->n_slos++] = (plan_slo){figure, key, v, at, false};
    }
}

int plan_walk(cfg_walker *w, yaml_node_t *node, plan_spec **out)
{
    *out = NULL;
    diag *d = w->diag;
    int before = diag_error_count(d);
    raw_plan *rp = arena_calloc(w->arena, 1, sizeof *rp);
    plan_spec *ps = &rp->ps;
    cfg_walk_map(w, node, "plan", plan_fields, rp);
    raw_slo *r = &rp->slo;
    add_slo(ps, "wait_mean_s", "wait_mean", r->wait_mean, r->wait_mean_at);
    add_slo(ps, "wait_p95_s", "wait_p95", r->wait_p95, r->wait_p95_at);
    add_slo(ps, "jct_mean_s", "jct_mean", r->jct_mean, r->jct_mean_at);
    add_slo(ps, "jct_p95_s", "jct_p95", r->jct_p95, r->jct_p95_at);
    add_slo(ps, "slowdown_mean", "slowdown_mean", r->slowdown_mean, r->slowdown_mean_at);
    add_slo(ps, "failed", "failed", r->failed, r->failed_at);
    add_slo(ps, "service_latency_p95_s", "latency_p95", r->latency_p95, r->latency_p95_at);
    add_slo(ps, "service_latency_p99_s", "latency_p99", r->latency_p99, r->latency_p99_at);
    if (cfg_present(r->attainment_at)) { /* at least: kept as a limit on 1 - attainment */
        ps->slos[ps->n_slos++] =
            (plan_slo){"service_attainment", "attainment", r->attainment, r->attainment_at, true};
    }
    if (diag_error_count(d) == before && ps->n_slos == 0) { /* slo: {} */
        diag_error(d, r->at, "plan.slo",
                   "no SLO; expected at least one of wait_mean, wait_p95, jct_mean, jct_p95, "
                   "slowdown_mean, failed, latency_p95, latency_p99, attainment, got an empty "
                   "mapping");
    }
    ps->sw.at = ps->at;
    int rc = sweep_count(&ps->sw, "plan", before, d);
    if (rc != 0) {
        return rc;
    }
    *out = ps;
    return 0;
}

static int walk_section(cfg_walker *w, yaml_node_t *node, void *out)
{
    return plan_walk(w, node, out);
}

int plan_load_buffer(const char *name, const void *buf, size_t len, arena *a, diag *d,
                     plan_spec **out)
{
    *out = NULL;
    yamlx_doc *doc = NULL;
    int rc = yamlx_load_buffer(name, buf, len, a, d, &doc);
    return rc ? rc : cfg_load_section(doc, a, d, "plan", walk_section, out);
}
