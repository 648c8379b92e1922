/* tools/out_services.c - the inference services' report: run.json's metrics.services entries
 * and summary lines (see out.h; the figures come from model/cluster/service.h). */
#include "tools/out.h"

static void add(cJSON *o, const char *k, double v)
{
    cJSON_AddItemToObject(o, k, out_json_number(v));
}

cJSON *out_service_json(const scenario_service *sv, const service_stats *st)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", sv->name);
    add(o, "replicas", sv->replicas);
    cJSON_AddStringToObject(o, "resource", sv->resource);
    add(o, "requests", (double)st->n_arrived);
    add(o, "done", (double)st->n_done);
    add(o, "requeued", (double)st->n_requeued);
    add(o, "batches", (double)st->n_batches);
    add(o, "mean_batch", st->mean_batch);
    cJSON *lat = cJSON_AddObjectToObject(o, "latency_s");
    add(lat, "mean", st->mean_s);
    add(lat, "p50", st->p50_s);
    add(lat, "p95", st->p95_s);
    add(lat, "p99", st->p99_s);
    add(lat, "max", st->max_s);
    add(o, "slo_s", sim_time_to_s(sv->slo_ns));
    add(o, "slo_attainment", st->attainment);
    add(o, "gpu_h", st->gpu_s / 3600.0);
    cJSON *sc = cJSON_AddObjectToObject(o, "replicas_running");
    add(sc, "mean", st->mean_running);
    add(sc, "max", st->max_running);
    add(sc, "scale_ups", (double)st->n_scale_up);
    add(sc, "scale_downs", (double)st->n_scale_down);
    add(sc, "scale_ups_denied", (double)st->n_scale_denied);
    return o;
}

void out_service_summary(FILE *f, const scenario_service *sv, const service_stats *st)
{
    fprintf(f,
            "service %s: %llu requests, latency p50 %.1f ms p95 %.1f ms p99 %.1f ms, "
            "SLO %.0f ms met by %.1f%%, %.1f GPU-h, %.1f replicas on average\n",
            sv->name, (unsigned long long)st->n_arrived, 1e3 * st->p50_s, 1e3 * st->p95_s,
            1e3 * st->p99_s, 1e3 * sim_time_to_s(sv->slo_ns), 100 * st->attainment,
            st->gpu_s / 3600.0, st->mean_running);
}
