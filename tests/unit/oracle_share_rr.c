/* tests/unit/oracle_share_rr.c - see oracle_share_rr.h. */
#include "tests/unit/oracle_share_rr.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "model/physics/share.h"
#include "sim/err.h"
#include "sim/xalloc.h"

/* ---- per-iteration round-robin simulation ---- */

static double draw_phase(gsl_rng *r, double mean, double cv)
{
    if (mean <= 0) {
        return 0;
    }
    if (cv <= 0) {
        return mean;
    }
    double shape = 1.0 / (cv * cv);
    return gsl_ran_gamma(r, shape, mean / shape);
}

int share_rr_simulate(const share_rr_cfg *c, double *throughput_per_job, double *gpu_busy)
{
    if (c->k < 1 || c->k > SHARE_MAX_JOBS || !(c->gpu_s > 0) || c->host_s < 0 ||
        !(c->quantum_s > 0) || c->n_iters < 10 || c->phase_cv < 0) {
        return SIM_EINPUT;
    }
    int k = c->k;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, (unsigned long)c->seed);
    double host_end[SHARE_MAX_JOBS];  /* +inf while the process is at the GPU */
    double remaining[SHARE_MAX_JOBS]; /* useful GPU work left in the current phase (s) */
    int queue[SHARE_MAX_JOBS];        /* ready queue, round-robin order; queue[0] runs */
    int nq = 0;
    for (int i = 0; i < k; i++) {
        /* start every process in its host phase, staggered by the random draw */
        host_end[i] = draw_phase(r, c->host_s, c->phase_cv);
        remaining[i] = 0;
    }
    double now = 0, slice_end = HUGE_VAL, t_start = 0, busy_time = 0;
    long done = 0, warm = c->n_iters / 10, counted = 0;
    while (done < c->n_iters) {
        /* next host completion */
        int hi = -1;
        for (int i = 0; i < k; i++) {
            if (isfinite(host_end[i]) && (hi < 0 || host_end[i] < host_end[hi])) {
                hi = i;
            }
        }
        double rate = nq >= 2 ? c->eta[nq] : 1.0; /* useful work per wall second */
        double run_end = nq > 0 ? now + remaining[queue[0]] / rate : HUGE_VAL;
        double t_gpu = fmin(slice_end, run_end);
        double t_next = hi >= 0 ? fmin(host_end[hi], t_gpu) : t_gpu;
        SIM_ASSERT(isfinite(t_next) && t_next >= now);
        if (nq > 0) {
            /* finishing exactly: set 0 rather than subtract (now + r - now != r in floating point)
             */
            bool finishes = run_end <= slice_end && !(hi >= 0 && host_end[hi] < run_end);
            remaining[queue[0]] = finishes ? 0.0 : remaining[queue[0]] - (t_next - now) * rate;
            if (done >= warm) {
                busy_time += t_next - now;
            }
        }
        now = t_next;
        if (hi >= 0 && host_end[hi] <= now) {
            /* host phase over: join the tail of the ready queue with a new GPU phase */
            host_end[hi] = HUGE_VAL;
            remaining[hi] = draw_phase(r, c->gpu_s, c->phase_cv);
            queue[nq++] = hi;
            if (nq == 1) {
                slice_end = now + c->quantum_s;
            }
            continue;
        }
        if (nq == 0) {
            continue;
        }
        int cur = queue[0];
        if (remaining[cur] <= 0) {
            /* GPU phase complete: back to the host */
            memmove(queue, queue + 1, sizeof(int) * (size_t)(nq - 1));
            nq--;
            host_end[cur] = now + draw_phase(r, c->host_s, c->phase_cv);
            done++;
            if (done == warm) {
                t_start = now;
                busy_time = 0;
            } else if (done > warm) {
                counted++;
            }
            slice_end = nq > 0 ? now + c->quantum_s : HUGE_VAL;
        } else if (now >= slice_end) {
            /* quantum expired: rotate */
            memmove(queue, queue + 1, sizeof(int) * (size_t)(nq - 1));
            queue[nq - 1] = cur;
            slice_end = now + c->quantum_s;
        }
    }
    gsl_rng_free(r);
    double span = now - t_start;
    *throughput_per_job = span > 0 ? (double)counted / span / k : 0;
    if (gpu_busy) {
        *gpu_busy = span > 0 ? busy_time / span : 0;
    }
    return 0;
}
