/* model/fit/wmeas.c - P, M and C from a solo run's GPM and kernel-census measurements (wmeas.h). */
#include "model/fit/wmeas.h"

#include <math.h>

static int in_unit(double x)
{
    return x > 0 && x <= 1;
}

double wmeas_host_s(const phys_params *m, double iter_s, double gpu_util, double overlap)
{
    double gpu_s = gpu_util * iter_s;
    double host_s = iter_s;
    if (overlap < 1) {
        double h = (iter_s - gpu_s) / (1 - overlap); /* t = (1 - o) H + G */
        host_s = overlap * h <= gpu_s ? h : iter_s;   /* else t = H */
    }
    return fmax(host_s, m->meas_host_floor * iter_s);
}

int wmeas_split_solo(const gpu_type *g, const phys_params *m, const wmeas_solo *s,
                     wmeas_split *out)
{
    if (!(s->iter_s > 0) || !isfinite(s->iter_s) || !in_unit(s->gpu_util) ||
        !in_unit(s->kernel_busy) || !in_unit(s->sm_activity) || !in_unit(s->dram_util)) {
        return -1;
    }
    double sms = g->sms_total;
    partition_cfg whole;
    partition_cfg_init(&whole, g);
    double bw = speed_partition_bandwidth(&whole, sms, m);
    double gpu_s = s->gpu_util * s->iter_s;
    /* SM activity averages over the whole run; while some kernel runs (the busy share) the
     * kernels hold a / b of the SMs */
    out->max_sms = fmax(1.0, fmin(sms, s->sm_activity / s->kernel_busy * sms));
    /* GPM's DRAM utilisation is a share of the datasheet bandwidth */
    out->mem_traffic_bytes = s->dram_util * g->mem_bw_bytes_per_s * s->iter_s;
    double compute_s = fmax(m->meas_compute_floor * gpu_s, gpu_s - out->mem_traffic_bytes / bw);
    out->compute_sm_s = compute_s * out->max_sms;
    return 0;
}
