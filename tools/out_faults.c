/* tools/out_faults.c - the fault report of a run: run.json's metrics.faults and a summary line
 * (see out.h; the figures come from model/cluster/fault.h). */
#include "tools/out.h"

static void add(cJSON *o, const char *k, double v)
{
    cJSON_AddItemToObject(o, k, out_json_number(v));
}

cJSON *out_faults_json(const fault_stats *st, double checkpoint_s)
{
    cJSON *o = cJSON_CreateObject();
    add(o, "checkpoint_s", checkpoint_s);
    cJSON *n = cJSON_AddObjectToObject(o, "faults");
    for (int k = 0; k < FAULT_N_KINDS; k++) {
        add(n, fault_kind_name((fault_kind)k), (double)st->n_faults[k]);
    }
    cJSON *by = cJSON_AddObjectToObject(o, "by_mode");
    for (int m = 0; m < FAULT_N_MODES; m++) {
        cJSON *e = cJSON_AddObjectToObject(by, fault_mode_name((fault_mode)m));
        add(e, "kills", (double)st->n_kills[m]);
        add(e, "jobs_affected", (double)st->n_affected[m]);
        add(e, "lost_gpu_h", st->lost_gpu_s[m] / 3600.0);
        add(e, "lost_work_h", st->lost_work_s[m] / 3600.0);
    }
    return o;
}

void out_faults_summary(FILE *f, const fault_stats *st)
{
    uint64_t total = 0;
    for (int k = 0; k < FAULT_N_KINDS; k++) {
        total += st->n_faults[k];
    }
    fprintf(f, "faults: %llu (gpu %llu, instance %llu, node %llu, nvlink %llu); killed:",
            (unsigned long long)total, (unsigned long long)st->n_faults[FAULT_GPU],
            (unsigned long long)st->n_faults[FAULT_INSTANCE],
            (unsigned long long)st->n_faults[FAULT_NODE],
            (unsigned long long)st->n_faults[FAULT_NVLINK]);
    for (int m = 0; m < FAULT_N_MODES; m++) {
        fprintf(f, "%s %s %llu (%.2f GPU-h lost)", m ? "," : "", fault_mode_name((fault_mode)m),
                (unsigned long long)st->n_kills[m], st->lost_gpu_s[m] / 3600.0);
    }
    fputc('\n', f);
}
