/* tools/out_pass.c - the writers' one pass over the jobs (see out.h: out_jobs_pass). */
#include <math.h>

#include "tools/out.h"

void out_jobs_pass(const world *w, out_stats_acc *st, out_run_json *rj, out_jobs_csv_w *cw)
{
    const cluster *c = world_cluster(w);
    const job_table *jt = world_jobs(w);
    for (job_id k = 0; k < job_table_count(jt); k++) {
        out_prefetch_job(c, jt, k);
        const job *j = job_table_get(jt, k);
        if (st) {
            out_stats_add(st, j);
        }
        out_job_text tx = {.n_work = 0};
        if (rj && cw && j->spec.work_s != floor(j->spec.work_s)) { /* %.17g in both files */
            tx.n_work = numfmt_g17(tx.work, j->spec.work_s);
        }
        if (rj) {
            out_run_json_job(rj, j, &tx);
        }
        if (cw) {
            out_jobs_csv_job(cw, j, &tx);
        }
    }
}
