/* tools/out_repart.c - the re-partitioning report: run.json's metrics.repartition and a summary
 * line (see out.h; the figures come from model/cluster/reconf.h). */
#include "tools/out.h"

static void add(cJSON *o, const char *k, double v)
{
    cJSON_AddItemToObject(o, k, out_json_number(v));
}

cJSON *out_repart_json(const reconf_stats *st)
{
    cJSON *o = cJSON_CreateObject();
    add(o, "requested", (double)st->n_requested);
    add(o, "rejected", (double)st->n_rejected);
    add(o, "applied", (double)st->n_applied);
    add(o, "mode_changes", (double)st->n_mode_changes);
    add(o, "timeslice_on", (double)st->n_timeslice_on);
    add(o, "timeslice_off", (double)st->n_timeslice_off);
    add(o, "evicted", (double)st->n_evicted);
    add(o, "evicted_gpu_h", st->evicted_gpu_s / 3600.0);
    add(o, "drain_gpu_h", st->drain_gpu_s / 3600.0);
    add(o, "apply_gpu_h", st->apply_gpu_s / 3600.0);
    return o;
}

void out_repart_summary(FILE *f, const reconf_stats *st)
{
    char ts[96] = "";
    if (st->n_timeslice_on + st->n_timeslice_off > 0) {
        snprintf(ts, sizeof ts, ", %llu to / %llu from time-slicing",
                 (unsigned long long)st->n_timeslice_on, (unsigned long long)st->n_timeslice_off);
    }
    fprintf(f,
            "repartition: %llu layouts applied (%llu mode changes%s), %llu refused, %llu pods "
            "evicted; %.1f GPU-h draining, %.2f GPU-h applying\n",
            (unsigned long long)st->n_applied, (unsigned long long)st->n_mode_changes, ts,
            (unsigned long long)st->n_rejected, (unsigned long long)st->n_evicted,
            st->drain_gpu_s / 3600.0, st->apply_gpu_s / 3600.0);
}
