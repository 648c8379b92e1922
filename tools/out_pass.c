/* tools/out_pass.c - the writers' one pass over the jobs (see out.h: out_jobs_pass). */
#include <math.h>

#include "tools/out.h"

/* Jobs looked up ahead of the one written: a ring of the next AHEAD (a power of two) records,
 * each job looked up once. A record stays valid while its page does: a spilled page read back
 * is kept until JOB_SPILL_CACHE others have been, and the ring spans at most two pages. */
#define AHEAD 16

void out_jobs_pass(const world *w, out_stats_acc *st, out_run_json *rj, out_jobs_csv_w *cw)
{
    _Static_assert(AHEAD > 3 * OUT_PREFETCH_STEP && AHEAD <= JOB_PAGE, "the ring ahead");
    const cluster *c = world_cluster(w);
    const job_table *jt = world_jobs(w);
    job_id n = (job_id)job_table_count(jt);
    const job *ring[AHEAD];
    for (job_id k = 0; k < n && k < 3 * OUT_PREFETCH_STEP; k++) {
        ring[k % AHEAD] = job_table_get(jt, k);
    }
    for (job_id k = 0; k < n; k++) {
        /* out_prefetch_job's hints from the ring: the unit list of job k + 12, the first unit's
         * device of job k + 8 (and its run.json entry, where its jobs.csv text is), that device's
         * GPU of job k + 4 (and its jobs.csv text) */
        if (k + 3 * OUT_PREFETCH_STEP < n) {
            const job *a = ring[(k + 3 * OUT_PREFETCH_STEP) % AHEAD] =
                job_table_get(jt, k + 3 * OUT_PREFETCH_STEP);
            __builtin_prefetch(a->units);
        }
        if (k + 2 * OUT_PREFETCH_STEP < n) {
            const job *a = ring[(k + 2 * OUT_PREFETCH_STEP) % AHEAD];
            if (a->n_units) {
                __builtin_prefetch(cluster_device_get(c, a->units[0]));
            }
            if (rj) {
                out_run_json_prefetch(rj, a);
            }
            if (cw) {
                out_jobs_csv_prefetch(cw, a);
            }
        }
        if (k + OUT_PREFETCH_STEP < n) {
            const job *a = ring[(k + OUT_PREFETCH_STEP) % AHEAD];
            if (a->n_units) {
                __builtin_prefetch(cluster_gpu_get(c, cluster_device_get(c, a->units[0])->gpu));
            }
            if (cw) {
                out_jobs_csv_prefetch_text(cw, a);
            }
        }
        const job *j = ring[k % AHEAD];
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
