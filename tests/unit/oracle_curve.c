/* tests/unit/oracle_curve.c - the allocation curve by a sweep over every event (see
 * oracle_curve.h). */
#include "tests/unit/oracle_curve.h"

#include <stdlib.h>

typedef struct oevent {
    sim_time t;
    int kind; /* 0 end, 1 submit, 2 start: at equal times ends free first, starts follow */
    job_id j;
} oevent;

static int by_time_kind_job(const void *pa, const void *pb)
{
    const oevent *a = pa, *b = pb;
    if (a->t != b->t) {
        return a->t < b->t ? -1 : 1;
    }
    if (a->kind != b->kind) {
        return a->kind - b->kind;
    }
    return a->j < b->j ? -1 : a->j > b->j;
}

size_t oracle_curve(const cluster *c, const job *const *jobs, size_t n_jobs, double step,
                    fragstat_point **out)
{
    size_t n_ev = 0;
    oevent *ev = calloc(3 * n_jobs + 1, sizeof *ev);
    for (job_id j = 0; j < n_jobs; j++) {
        const job *jb = jobs[j];
        if (jb->state == JOB_DONE) {
            ev[n_ev++] = (oevent){jb->end, 0, j};
        }
        if (jb->state != JOB_PENDING) {
            ev[n_ev++] = (oevent){jb->spec.submit, 1, j};
        }
        if (jb->state == JOB_RUNNING || jb->state == JOB_DONE) {
            ev[n_ev++] = (oevent){jb->start, 2, j};
        }
    }
    qsort(ev, n_ev, sizeof *ev, by_time_kind_job);
    uint32_t n_gpus = cluster_n_gpus(c);
    int64_t *held = calloc(n_gpus ? n_gpus : 1, sizeof *held);
    double total = (double)n_gpus * MILLI_PER_GPU;
    uint64_t arrived = 0;
    size_t n_pts = 0;
    fragstat_point *pts = calloc(n_ev + 1, sizeof *pts);
    double next = step;
    for (size_t i = 0; i < n_ev; i++) {
        const job *jb = jobs[ev[i].j];
        frag_pod p = frag_pod_make(jb->spec.req.per_worker, jb->spec.pod.gpu_milli,
                                   jb->spec.pod.cpu_milli, jb->spec.pod.gpu_spec);
        if (ev[i].kind == 1) {
            arrived += (uint64_t)p.milli * p.n_gpu * jb->spec.req.n_workers;
        } else {
            for (uint32_t u = 0; u < jb->n_units; u++) {
                held[cluster_device_get(c, jb->units[u])->gpu] +=
                    ev[i].kind == 2 ? p.milli : -(int64_t)p.milli;
            }
        }
        if ((i + 1 < n_ev && ev[i + 1].t == ev[i].t) || total <= 0) {
            continue; /* the state after everything at this time */
        }
        double a = (double)arrived / total;
        if (a >= next || i + 1 == n_ev) {
            uint32_t busy = 0;
            uint64_t alloc = 0;
            for (uint32_t g = 0; g < n_gpus; g++) { /* a GPU counts at most 1000 */
                busy += held[g] > 0;
                alloc += (uint64_t)(held[g] < MILLI_PER_GPU ? held[g] : MILLI_PER_GPU);
            }
            pts[n_pts++] = (fragstat_point){a, (double)busy / n_gpus, (double)alloc / total};
        }
        while (next <= a) {
            next += step;
        }
    }
    free(held);
    free(ev);
    *out = pts;
    return n_pts;
}
