/* experiments/validation_measured.c - the builders of our own measurements: the H100 co-location
 * table (calib/coloc) and the calibration recordings replayed (calib/run-all.sh JSON). See
 * validation_int.h; each builder's comment says which profile shape it assumes and why. No
 * measured figure is written here: they are read from the CSV and the recordings. */
#include "experiments/validation_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/cfg.h"
#include "model/fit/calapply.h"
#include "model/fit/calfit.h"
#include "model/physics/ddp.h"
#include "experiments/comm_load.h"
#include "sim/diag.h"
#include "model/physics/predict.h"
#include "model/fit/wmeas.h"

/* Column indices of a co-location table; -1 where the column is absent. */
typedef struct coloc_cols {
    int w, k, with, r, u, f; /* required: workload, kind, with, rate_per_s, gpu_util, figure */
    int sd;                  /* optional: rel_sd, the measured noise of a row */
    /* optional measurements of the solo rows (calib/coloc/table.py): kernel-busy fraction and
     * kernels per iteration (torch.profiler census), GPM SM activity and DRAM utilisation */
    int busy, kern, sm, dram;
    /* optional: CPU seconds per iteration before the first kernel launch (workload definition) */
    int ser;
    /* optional: the solo's GPU tail after its last launch over its kernel-busy time (census) */
    int tail;
    /* optional: the SM-time growth beside MPS peers, fitted on a 2-client record (table.py) */
    int grow;
} coloc_cols;

/* The workloads the solo rows made, as the other rows need them. */
typedef struct coloc_solo {
    int n;
    const char *names[WFIT_MAX_PROFILES]; /* workload names (the CSV's cells) */
    double sd[WFIT_MAX_PROFILES];         /* rel_sd of each workload's solo row (0 = not stated) */
    double util[WFIT_MAX_PROFILES];       /* the utilisation each solo row is fitted with */
} coloc_solo;

/* One profile and its free parameters per solo row (see val_build_coloc); false with b->err set
 * on a row it cannot use. */
static bool coloc_profiles(builder *b, const csv_table *t, const coloc_cols *col, coloc_solo *s)
{
    int n_prof = 0;
    int ts8 = phys_ts_class_index(b->m, "kernel-8ms");
    double sms = b->gpu->sms_total;
    double bw = speed_partition_bandwidth(&(partition_cfg){.gpu = b->gpu}, sms, b->m);
    for (int r = 0; r < t->n_rows; r++) {
        if (strcmp(t->rows[r][col->k], "solo") != 0) {
            continue;
        }
        double rate, util;
        if (!val_cell_double(t->rows[r][col->r], &rate) ||
            !val_cell_double(t->rows[r][col->u], &util) || !(rate > 0) ||
            !(util > 0 && util <= 1)) {
            val_row_error(b, t, r, "a solo row needs rate_per_s and gpu_util");
            return false;
        }
        if (n_prof == WFIT_MAX_PROFILES) {
            snprintf(b->err, sizeof b->err, "more than %d workloads", WFIT_MAX_PROFILES);
            return false;
        }
        /* prior share of G that is memory time, by what the workload is (calib/coloc/coloc.py):
         * the fp32 stream does 8 axpy passes over 256 MiB (12 bytes per 2 flops, far below the
         * H100's machine balance): 0.95; transformers 0.58 and CNNs / the MLP 0.3, the
         * transformer-training and cnn-training classes of workloads/priors.yaml */
        const char *wn = t->rows[r][col->w];
        bool stream = strstr(wn, "stream") != NULL;
        double mem_share = stream ? 0.95 : !strncmp(wn, "tfm", 3) ? 0.58 : 0.3;
        wl_class cls = stream ? WL_CLASS_FP32 : WL_CLASS_TENSOR;
        wl_profile *p = &b->spec.profiles[n_prof];
        double busy, kern, sm_act, dram;
        bool census = col->busy >= 0 && val_cell_double(t->rows[r][col->busy], &busy) && busy > 0 &&
                      busy <= 1 && col->kern >= 0 &&
                      val_cell_double(t->rows[r][col->kern], &kern) && kern > 0;
        bool gpm = census && col->sm >= 0 && val_cell_double(t->rows[r][col->sm], &sm_act) &&
                   sm_act > 0 && col->dram >= 0 && val_cell_double(t->rows[r][col->dram], &dram) &&
                   dram > 0;
        double tail = 0;
        if (!census || col->tail < 0 || !val_cell_double(t->rows[r][col->tail], &tail) ||
            !(tail > 0 && tail <= 1)) {
            tail = 0;
        }
        double grow = 0;
        if (col->grow < 0 || !val_cell_double(t->rows[r][col->grow], &grow) || !isfinite(grow)) {
            grow = 0;
        }
        double it = 1.0 / rate, g = util * it;
        snprintf(b->names[n_prof], sizeof b->names[n_prof], "%s", t->rows[r][col->w]);
        double serial, overlap = 1.0;
        if (col->ser >= 0 && val_cell_double(t->rows[r][col->ser], &serial) && serial > 0) {
            /* that CPU time follows the previous iteration's synchronisation: it cannot overlap
             * the loop's own GPU work, so o = 1 - serial / H, with H the solo iteration time
             * (host-bound: the only loop with such CPU work, host_loop, is) */
            overlap = fmax(0.0, 1.0 - serial / it);
        }
        *p = (wl_profile){.name = b->names[n_prof],
                          .host_s_fixed = wmeas_host_s(b->m, it, util, overlap),
                          .host_overlap = overlap,
                          .max_sms_fixed = sms,
                          .ts_class = ts8 > 0 ? ts8 : 0,
                          .kernels_per_iter = census ? kern : 0,
                          /* phi: the census' kernel-busy share of the NVML-busy time (the rest
                           * launch gaps, model/physics/share_mps.h) */
                          .kernel_busy_frac = census ? fmin(1.0, busy / util) : 0,
                          /* tau: the census' GPU tail after the last launch (speed.h) */
                          .gpu_tail_frac = tail,
                          /* a: the SM-time growth beside MPS peers (share_mps.h) */
                          .mps_sm_growth = grow};
        p->compute_sm_s_fixed[cls] = (1.0 - mem_share) * g * sms;
        p->mem_traffic_bytes_fixed = mem_share * g * bw;
        double sd_p = 1.0, sd_m = 1.0;
        const char *src = "h100-coloc: scale of the solo row (weak)";
        wmeas_split ms;
        if (gpm && wmeas_split_solo(b->gpu, b->m,
                                    &(wmeas_solo){.iter_s = it,
                                                  .gpu_util = util,
                                                  .kernel_busy = busy,
                                                  .sm_activity = sm_act,
                                                  .dram_util = dram},
                                    &ms) == 0) {
            /* measured: the split of model/fit/wmeas.h, the one fit-workload uses */
            p->max_sms_fixed = ms.max_sms;
            p->mem_traffic_bytes_fixed = ms.mem_traffic_bytes;
            p->compute_sm_s_fixed[cls] = ms.compute_sm_s;
            sd_p = sd_m = b->m->meas_prior_rel_sd;
            src = "h100-coloc: " WMEAS_SOURCE;
        }
        s->names[n_prof] = t->rows[r][col->w];
        s->util[n_prof] = util;
        s->sd[n_prof] = 0;
        if (col->sd >= 0 && !val_cell_double(t->rows[r][col->sd], &s->sd[n_prof])) {
            s->sd[n_prof] = 0;
        }
        const wl_param fr[] = {WL_P_HOST_S_FIXED, WL_P_COMPUTE_FIXED, WL_P_MEM_TRAFFIC_FIXED,
                               WL_P_MAX_SMS_FIXED};
        for (size_t i = 0; i < sizeof fr / sizeof fr[0]; i++) {
            wfit_free *w = &b->spec.free[b->spec.n_free++];
            double v = wl_param_get(p, fr[i]);
            double sd = fr[i] == WL_P_HOST_S_FIXED    ? 2.0
                        : fr[i] == WL_P_COMPUTE_FIXED ? 1.0
                        : fr[i] == WL_P_MAX_SMS_FIXED ? sd_p
                                                      : sd_m;
            *w = (wfit_free){.profile = n_prof,
                             .which = (int)fr[i],
                             .has_prior = true,
                             .prior = {v, sd,
                                       sd < 1.0 && fr[i] != WL_P_COMPUTE_FIXED
                                           ? src
                                           : "h100-coloc: scale of the solo row (weak)"}};
        }
        n_prof++;
    }
    s->n = n_prof;
    return true;
}

/* One figure per row, predicted from the profiles of its workload (and co-runner); b->err set
 * on a row it cannot map. */
static void coloc_figures(builder *b, const csv_table *t, const coloc_cols *col,
                          const coloc_solo *s)
{
    for (int r = 0; r < t->n_rows; r++) {
        int pi = -1, wi = -1;
        for (int i = 0; i < s->n; i++) {
            pi = !strcmp(s->names[i], t->rows[r][col->w]) ? i : pi;
            wi = !strcmp(s->names[i], t->rows[r][col->with]) ? i : wi;
        }
        double rate;
        const char *kind = t->rows[r][col->k];
        if (pi < 0 || !val_cell_double(t->rows[r][col->r], &rate) || !(rate > 0)) {
            val_row_error(b, t, r, "unknown workload or bad rate_per_s");
            return;
        }
        fig_spec *f = val_add_fig(b, t->rows[r][col->f], rate, "it/s");
        if (!f) {
            return;
        }
        f->profile = pi;
        f->is_rate = true;
        f->work = 1.0;
        /* noise of the row: its own sub-window spread and, for a predicted row, the spread of
         * the solo run its prediction is built from (independent, so in quadrature) */
        double sd = 0;
        if (col->sd >= 0 && !val_cell_double(t->rows[r][col->sd], &sd)) {
            sd = 0;
        }
        bool solo = !strcmp(kind, "solo");
        f->f.noise_pct = 100.0 * sqrt(sd * sd + (solo ? 0.0 : s->sd[pi] * s->sd[pi]));
        int k = 1;
        if (solo) {
            f->util = s->util[pi];
        } else if (!strcmp(kind, "solo-mps")) { /* one uncapped MPS client alone */
            f->cfg.sharing = SHARE_MPS;
            f->cfg.peers = 1;
        } else if (val_prefixed_int(kind, "ts", 1, 64, &k) ||
                   val_prefixed_int(kind, "mps", 1, 64, &k)) {
            f->cfg.sharing = kind[0] == 't' ? SHARE_TIMESLICE : SHARE_MPS;
            f->cfg.peers = k;
        } else if (val_prefixed_int(kind, "cap", 1, 100, &k)) {
            f->cfg.sharing = SHARE_MPS;
            f->cfg.mps_percent = k;
        } else if ((!strcmp(kind, "pair-ts") || !strcmp(kind, "pair-mps")) && wi >= 0) {
            f->cfg.sharing = !strcmp(kind, "pair-ts") ? SHARE_TIMESLICE : SHARE_MPS;
            f->with = wi;
        } else {
            val_row_error(b, t, r,
                          "unknown kind '%s'; expected solo, solo-mps, tsN or mpsN (N clients, 1 "
                          "to 64), capP (P %% of the threads, 1 to 100), or pair-ts or pair-mps "
                          "with a known workload",
                          kind);
            return;
        }
    }
}

/* h100-coloc (calib/coloc, this project's H100 measurement; data/h100-coloc.csv, and
 * h100-coloc-run4's data/h100-coloc-run4.csv from another H100, each table one machine's runs):
 * throughput of one process of each PyTorch workload alone without MPS (kind solo: exclusive
 * runs only, with their NVML utilisation; every scenario fits them), time-sliced with k
 * identical processes, as k MPS clients, as one uncapped MPS client alone (solo-mps, predicted
 * like every other row), alone under a 25 / 50 % MPS thread cap, and beside another workload
 * under time-slicing and MPS. One profile per workload, a unit = one
 * iteration. Every loop launches its kernels asynchronously and synchronises once per
 * iteration (calib/coloc/coloc.py), so host_overlap = 1: t = max(H, G), except for the CPU time
 * a loop spends before its first launch (column serial_host_s, from the workload's definition:
 * host_loop's 4 ms of CPU work), which follows the previous iteration's synchronisation and so
 * cannot overlap its own GPU work: o = 1 - serial_host_s / H. Free per workload: H, C
 * (tensor class; fp32 for the memory stream), M and P. The solo time and utilisation pin H and
 * G = C/min(s, P) + M/BW(s). How G splits into compute, memory and parallelism: where the table
 * has the solo run's measurements (calib/coloc/table.py: kernel census and NVML GPM), P, M and C
 * start at model/fit/wmeas.h's split of them (the one `fit-workload` uses for an observation's
 * sm_activity, dram_util and kernel_busy): P at the SMs with a resident warp while a kernel runs,
 * M at the bytes GPM's DRAM utilisation gives, C at what the GPU time leaves, with priors of
 * meas_prior_rel_sd (model/physics/physics.yaml, log sd) on P and M; the
 * profile's kernels_per_iter is the census count (MPS kernel queueing, model/physics/share_mps.h) and
 * its kernel_busy_frac the census' busy_frac over the solo's gpu_util (at most 1: the launch gaps
 * under MPS, model/physics/share_mps.h) and its gpu_tail_frac the census' tail column (the GPU
 * work after the last launch, which a cap or MPS peers stretch: model/physics/speed.h). The
 * utilisation fitted stays NVML's: with the census' kernel-busy fraction instead, the
 * time-sliced rows' error rose from 4.6 to 8.4 % (NVML's counter also covers copies and the
 * launch gaps inside a busy sample). Without those columns: weak priors (P at the GPU's SM
 * count, M at a class share of G, below), reported NOT PINNED. Figures are labelled
 * WORKLOAD/KIND[:WITH], and validate prints the error per KIND. The
 * scenario's `calibration:` (the H100 calibration of calib/results) gives the bandwidth-vs-SMs
 * curve and the time-slice efficiency (kernel-8ms class: the measured back-to-back eta of the
 * nearest kernel length); nothing of the time-sliced or MPS rows is fitted, also when a 2-way
 * time-sliced row is (h100-coloc-ts2: it then moves only the workload's own H, C, M, P).
 * Columns read by name; one is recorded and deliberately not read: n (how many runs a row
 * averages). gpu_tail_frac was tried on the H100 as a tail in every configuration, time-slicing
 * and the solo fit included, and rejected (docs/validation.md gives its figures); it is read now
 * for the tail's stretch where the kernels stretch (MPS caps and peers; calib/coloc/NOTES-h200.md
 * 'captail'). The mps_sm_growth column (table.py: the SM-time an iteration of 2 identical MPS
 * clients over one's, as a of 1 + a ln k) becomes the profile's mps_sm_growth; empty: 0. A
 * negative fit (noise: h200-coloc-g's cnn_infer_b8, -0.009) is read as it is, and the model
 * takes only a > 0 as measured (share_mps.c grows), so that workload keeps the unmeasured path. */
void val_build_coloc(builder *b, const csv_table *t)
{
    coloc_cols col = {.w = val_csv_col(t, "workload"),
                      .k = val_csv_col(t, "kind"),
                      .with = val_csv_col(t, "with"),
                      .r = val_csv_col(t, "rate_per_s"),
                      .u = val_csv_col(t, "gpu_util"),
                      .f = val_csv_col(t, "figure"),
                      .sd = val_csv_col(t, "rel_sd"),
                      .busy = val_csv_col(t, "busy_frac"),
                      .kern = val_csv_col(t, "kernels"),
                      .sm = val_csv_col(t, "sm_active"),
                      .dram = val_csv_col(t, "dram_util"),
                      .ser = val_csv_col(t, "serial_host_s"),
                      .tail = val_csv_col(t, "gpu_tail_frac"),
                      .grow = val_csv_col(t, "mps_sm_growth")};
    if (col.w < 0 || col.k < 0 || col.with < 0 || col.r < 0 || col.u < 0 || col.f < 0) {
        snprintf(b->err, sizeof b->err,
                 "missing a column (figure, workload, kind, with, rate_per_s, gpu_util)");
        return;
    }
    coloc_solo solo;
    if (!coloc_profiles(b, t, &col, &solo)) {
        return;
    }
    b->spec.n_profiles = solo.n;
    b->by_kind = true;
    coloc_figures(b, t, &col, &solo);
}

/* Clients of each kind in an MPS run of a calibration. */
static void mps_counts(const cal_mps_run *g, int *n_c, int *n_m)
{
    *n_c = *n_m = 0;
    for (int i = 0; i < g->n; i++) {
        *n_m += g->c[i].is_memory;
        *n_c += !g->c[i].is_memory;
    }
}

/* Mean wall time and kernel count of the clients of kind is_memory in every MPS run of d with
 * thread percentage pct and n_c / n_m clients (repetitions pooled); 0 when there is none. */
static double mps_mean_wall(const cal_data *d, int pct, int n_c, int n_m, bool is_memory,
                            double *kernels)
{
    double sum = 0, sum_k = 0;
    int n = 0;
    for (int g = 0; g < d->n_mps; g++) {
        int c, m;
        mps_counts(&d->mps[g], &c, &m);
        if (d->mps[g].pct != pct || c != n_c || m != n_m) {
            continue;
        }
        for (int i = 0; i < d->mps[g].n; i++) {
            if (d->mps[g].c[i].is_memory == is_memory) {
                sum += d->mps[g].c[i].wall_s;
                sum_k += (double)d->mps[g].c[i].kernels;
                n++;
            }
        }
    }
    if (kernels) {
        *kernels = n > 0 ? sum_k / n : 0;
    }
    return n > 0 ? sum / n : 0;
}

/* calib-h100-mps: the MPS runs of this project's node calibrations (calib/mps.cu through
 * calib/run-all.sh; the scenario's calib_runs, read by experiments/calib_json.h). Each recording
 * has two kinds of client, each launching about 200 kernels of ~1 ms (alone) back to back with a
 * grid of 8 blocks per SM of the whole GPU, so a client fills every SM it is given, in whole
 * waves: a compute-bound one (fp32 FMA chains) and a memory-bound one (float4 streaming
 * passes). One profile per recording and kind, a unit = the client's whole run: the compute
 * client is C fp32 SM-seconds on up to all the GPU's SMs, the memory client M bytes and no
 * compute (its time on s SMs is M over the bandwidth-vs-SMs curve of the scenario's
 * calibration), both without host time and with the kernels they launched (kernels_per_iter:
 * MPS kernel queueing, model/physics/share_mps.h). Free: C and M, fitted on the recording's uncapped solo
 * runs, as `slicesim fit` takes them (model/fit/calfit.h); every other run is predicted by the
 * sharing physics: k identical clients (mpsK), one client or k identical ones under a thread
 * cap of P % (capP, capP-mpsK), a compute and a memory client side by side (pair-mps,
 * capP-pair-mps; other mixes mix-cNmM). A figure is the mean wall time of the clients of one
 * kind in the runs of one thread percentage and mix (repetitions pooled), labelled
 * runR-KIND/RUN[:WITH], R = the recording's place in calib_runs. */
void val_build_calib_mps(builder *b, const csv_table *t)
{
    (void)t;
    double sms = b->gpu->sms_total;
    double bw = speed_partition_bandwidth(&(partition_cfg){.gpu = b->gpu}, sms, b->m);
    b->by_kind = true;
    b->spec.n_profiles = 2 * b->n_runs;
    for (int ri = 0; ri < b->n_runs; ri++) {
        const cal_data *d = &b->runs[ri];
        int pc = 2 * ri, pm = pc + 1;
        double kc = 0, km = 0;
        double solo_c = mps_mean_wall(d, 100, 1, 0, false, &kc);
        double solo_m = mps_mean_wall(d, 100, 0, 1, true, &km);
        if (!(solo_c > 0) || !(solo_m > 0)) {
            snprintf(b->err, sizeof b->err,
                     "calib_runs[%d]: the fit needs an uncapped compute and an uncapped memory "
                     "client alone (mps mixes c and m at 100 %%)", ri);
            return;
        }
        snprintf(b->names[pc], sizeof b->names[pc], "run%d-compute", ri + 1);
        snprintf(b->names[pm], sizeof b->names[pm], "run%d-memory", ri + 1);
        wl_profile *p = &b->spec.profiles[pc];
        *p = (wl_profile){.name = b->names[pc], .max_sms_fixed = sms, .kernels_per_iter = kc};
        p->compute_sm_s_fixed[WL_CLASS_FP32] = solo_c * sms;
        p = &b->spec.profiles[pm];
        *p = (wl_profile){.name = b->names[pm], .max_sms_fixed = sms, .kernels_per_iter = km,
                          .mem_traffic_bytes_fixed = solo_m * bw};
        val_free_param(b, pc, WL_P_COMPUTE_FIXED);
        val_free_param(b, pm, WL_P_MEM_TRAFFIC_FIXED);
        for (int g = 0; g < d->n_mps; g++) {
            int n_c, n_m, pct = d->mps[g].pct;
            mps_counts(&d->mps[g], &n_c, &n_m);
            bool first = true; /* repetitions of a run are pooled at its first */
            for (int h = 0; h < g; h++) {
                int c, m;
                mps_counts(&d->mps[h], &c, &m);
                first &= !(d->mps[h].pct == pct && c == n_c && m == n_m);
            }
            for (int mem = 0; first && mem < 2; mem++) {
                int own = mem ? n_m : n_c, other = mem ? n_c : n_m;
                if (own == 0) {
                    continue;
                }
                if (other > PART_MAX_WITH) {
                    snprintf(b->err, sizeof b->err,
                             "calib_runs[%d]: mps run with %d clients of the other kind; at "
                             "most %d", ri, other, PART_MAX_WITH);
                    return;
                }
                char cap[16] = "", run[64];
                if (pct < 100) {
                    snprintf(cap, sizeof cap, "cap%d%s", pct, own + other > 1 ? "-" : "");
                }
                if (other == 0 && own == 1) {
                    snprintf(run, sizeof run, "%s", pct < 100 ? cap : "solo");
                } else if (other == 0) {
                    snprintf(run, sizeof run, "%smps%d", cap, own);
                } else if (n_c == 1 && n_m == 1) {
                    snprintf(run, sizeof run, "%spair-mps:run%d-%s", cap, ri + 1,
                             mem ? "compute" : "memory");
                } else {
                    snprintf(run, sizeof run, "%smix-c%dm%d", cap, n_c, n_m);
                }
                char label[128]; /* at most 40 bytes for up to WFIT_MAX_PROFILES / 2 runs */
                snprintf(label, sizeof label, "run%d-%s/%s", ri + 1, mem ? "memory" : "compute",
                         run);
                fig_spec *f =
                    val_add_fig(b, label, mps_mean_wall(d, pct, n_c, n_m, mem, NULL), "s");
                if (!f) {
                    return;
                }
                f->profile = mem ? pm : pc;
                f->work = 1.0;
                f->cfg.sharing = own + other > 1 || pct < 100 ? SHARE_MPS : SHARE_EXCLUSIVE;
                f->cfg.mps_percent = pct < 100 ? pct : 0;
                f->cfg.peers = own;
                if (other > 0) {
                    f->with = mem ? pc : pm;
                    f->with_n = other;
                }
            }
        }
    }
}

/* Mean makespan of the runs of k processes in t (0 when t has none). */
static double ts_makespan(const cal_ts_length *t, int k)
{
    for (int j = 0; j < t->n_k; j++) {
        if (t->k[j] == k && t->n_rep[j] > 0) {
            double sum = 0;
            for (int r = 0; r < t->n_rep[j]; r++) {
                sum += t->makespan_s[j][r];
            }
            return sum / t->n_rep[j];
        }
    }
    return 0;
}

/* Time-slice class of the physics for kernels of kernel_ms: the class stating the nearest
 * kernel length on a log scale (the one a calibration sets from its measured eta), else 0. */
static int ts_class_for(const phys_params *m, double kernel_ms)
{
    int best = 0;
    double best_d = HUGE_VAL;
    for (int i = 0; i < m->n_ts; i++) {
        double d = m->ts[i].kernel_ms > 0 ? fabs(log(m->ts[i].kernel_ms / kernel_ms)) : HUGE_VAL;
        if (d < best_d) {
            best = i;
            best_d = d;
        }
    }
    return best;
}

/* calib-h100-timeslice(-run2): the time-slice runs of a node calibration (calib/timeslice.cu
 * through calib/run-all.sh; the scenario's calib_runs, one recording per table: two profiles per
 * kernel length). k = 1, 2, 4, 8 processes each run N fp32 FMA kernels of ~0.1, 1 or 10 ms
 * (grids for the whole GPU), back to back or each followed by a host sleep as long as the kernel
 * (it synchronises first, so host and GPU alternate: host_overlap 0). A unit is one kernel, a
 * figure the makespan of the k processes (mean of the repetitions) = N x the unit time. Per
 * kernel length: the back-to-back profile, C fp32 SM-seconds per kernel on up to all SMs, free C
 * fitted on the solo run (`solo`); the profile with gaps, the same C (the solo back-to-back time,
 * as calfit_ts_gap_check takes it) and the host time per kernel H, free H fitted on its solo run
 * (`gap-solo`). Predicted: k >= 2 processes time-sliced (`tsK`, `gap-tsK`) by the exact MVA of
 * model/physics/share_ts.h with eta(k) of the physics class nearest to the kernel length, which the
 * scenario's calibration sets from its measured back-to-back eta (model/fit/calapply.h), for the
 * profiles with gaps at most G / (G + s) per kernel (each kernel a round, kernels_per_iter 1:
 * the switch per GPU phase, share_ts_eta_phases): rows that
 * calibration was measured on must be excluded by the scenario. Labels LEN/KIND (LENms: the
 * measured solo kernel length to one digit), runR-LEN/KIND with several recordings. */
void val_build_calib_ts(builder *b, const csv_table *t)
{
    (void)t;
    double sms = b->gpu->sms_total;
    b->by_kind = true;
    for (int ri = 0; ri < b->n_runs; ri++) {
        const cal_data *d = &b->runs[ri];
        if (d->n_ts == 0) {
            snprintf(b->err, sizeof b->err,
                     "calib_runs[%d]: the recording has no timeslice runs to replay", ri);
            return;
        }
        for (int li = 0; li < d->n_ts; li++) {
            const cal_ts_length *bb = &d->ts[li], *gp = NULL;
            if (bb->gap_ms > 0) {
                continue;
            }
            for (int j = 0; j < d->n_ts; j++) {
                gp = d->ts[j].gap_ms > 0 && d->ts[j].kernel_ms == bb->kernel_ms ? &d->ts[j] : gp;
            }
            double t1 = ts_makespan(bb, 1), t1g = gp ? ts_makespan(gp, 1) : 0;
            if (!(t1 > 0) || (gp && !(t1g > 0))) {
                snprintf(b->err, sizeof b->err,
                         "calib_runs[%d]: timeslice kernel length %g ms has no run of one process",
                         ri, bb->kernel_ms);
                return;
            }
            if (b->spec.n_profiles + (gp ? 2 : 1) > WFIT_MAX_PROFILES) {
                snprintf(b->err, sizeof b->err,
                         "calib_runs: more than %d kernel lengths and gap modes in all; expected "
                         "fewer recordings per table", WFIT_MAX_PROFILES);
                return;
            }
            char wname[64]; /* the figures' WORKLOAD part */
            if (b->n_runs > 1) {
                snprintf(wname, sizeof wname, "run%d-", ri + 1);
            } else {
                wname[0] = '\0';
            }
            snprintf(wname + strlen(wname), sizeof wname - strlen(wname),
                     bb->kernel_ms < 1 ? "%.1gms" : "%.0fms", bb->kernel_ms);
            for (int gap = 0; gap < (gp ? 2 : 1); gap++) {
                const cal_ts_length *s = gap ? gp : bb;
                int pi = b->spec.n_profiles++;
                char *name = b->names[pi];
                snprintf(name, sizeof b->names[pi], "%.27s%s", wname, gap ? "-gap" : "");
                wl_profile *p = &b->spec.profiles[pi];
                *p = (wl_profile){.name = name, .max_sms_fixed = sms,
                                  .ts_class = ts_class_for(b->m, bb->kernel_ms),
                                  .host_s_fixed = gap ? fmax(1e-7, (t1g - t1) / s->kernels) : 0,
                                  .kernels_per_iter = 1};
                p->compute_sm_s_fixed[WL_CLASS_FP32] = t1 / (double)bb->kernels * sms;
                val_free_param(b, pi, gap ? WL_P_HOST_S_FIXED : WL_P_COMPUTE_FIXED);
                for (int j = 0; j < s->n_k; j++) {
                    int k = s->k[j];
                    char label[128];
                    snprintf(label, sizeof label, "%s/%s%s", wname, gap ? "gap-" : "",
                             k == 1 ? "solo" : "ts");
                    if (k > 1) {
                        snprintf(label + strlen(label), sizeof label - strlen(label), "%d", k);
                    }
                    fig_spec *f = val_add_fig(b, label, ts_makespan(s, k), "s");
                    if (!f) {
                        return;
                    }
                    f->profile = pi;
                    f->work = (double)s->kernels;
                    f->cfg.sharing = k > 1 ? SHARE_TIMESLICE : SHARE_EXCLUSIVE;
                    f->cfg.peers = k;
                }
            }
        }
    }
}

/* The column of NAME in t, or -1 with b->err set. */
static int ddp_col(builder *b, const csv_table *t, const char *name)
{
    int c = val_csv_col(t, name);
    if (c < 0 && !b->err[0]) {
        snprintf(b->err, sizeof b->err, "missing column '%s'", name);
    }
    return c;
}

/* A cell of row r that must be a number >= lo: true and *out; else b->err set. */
static bool ddp_cell(builder *b, const csv_table *t, int r, int col, const char *name, double lo,
                     double *out)
{
    if (!val_cell_double(t->rows[r][col], out) || !(*out >= lo)) {
        val_row_error(b, t, r, "%s: expected a number >= %g, got '%s'", name, lo,
                      t->rows[r][col]);
        return false;
    }
    return true;
}

double val_ddp_rate(const builder *b, const fig_spec *f, const wl_profile *p,
                    const phys_params *m)
{
    ddp_job j;
    memset(&j, 0, sizeof j);
    j.profile = p;
    j.batch = 1;
    j.grad_bytes = p->grad_bytes;
    j.gpu = b->gpu;
    j.workers = f->workers;
    j.per_gpu = 1;
    j.gpus_per_node = b->sc->gpus_per_node > 0 ? b->sc->gpus_per_node : f->workers;
    char why[256];
    comm_ring ring;
    if (ddp_shape(&j, why, sizeof why) != 0 || ddp_ring(&j, &b->comm, &ring, why, sizeof why)) {
        return nan("");
    }
    /* k identical gangs on the same GPUs: each worker shares its GPU with k - 1 others, and
     * the k rings share the same links (each moves 1/k of the ring's rate) */
    partition_cfg share = f->cfg;
    int k = share.peers > 1 ? share.peers : 1;
    if (share.sharing != SHARE_EXCLUSIVE) {
        j.share = &share;
    }
    ddp_result r;
    ddp_step(&j, &b->comm, m, &ring, comm_ring_alone_rate(&ring) / k, &r);
    comm_ring_fini(&ring);
    return r.outcome == SPEED_OK ? 1.0 / r.step_s : nan("");
}

/* h200x4-ddp (calib/ddp, this project's measurement of real PyTorch DDP on 4x H200 NVLink;
 * data/h200x4-ddp.csv from calib/ddp/table.py): per model, one process alone (kind solo: its
 * iteration rate and NVML utilisation, the only fitted rows), one DDP job of 2 or 4 workers
 * (ddpN), and k two-worker jobs on the same two GPUs time-sliced (tsK) or as MPS clients
 * (mpsK, k = 1: one job alone under MPS). One profile per model, a unit = one iteration, the
 * loop synchronising once per iteration: t = (1 - o) H + max(o H, G); free: H and C (tensor
 * class), M held at a class share of G (transformers 0.58, the others 0.3, as h100-coloc's
 * prior), so the solo rate, its utilisation and its host clock (host_s: the host's own work per
 * step, without its wait for the GPU at the synchronisation, an observation of H) pin H and G.
 * The host overlap o is pinned by the host clock where it ends before the iteration (the host
 * waits for the GPU at the step's end: GPT-2, ViT, the MLP), t - G = (1 - o) H being the GPU's
 * idle per step; a host busy for the whole step (the CNNs) leaves o >= G / H unpinned, kept at
 * 1 (t = max(H, G)). The DDP columns of the row (grad_bytes,
 * grad_tensors, buffer_tensors, buckets, backward_frac, optimizer_frac, step_cv, host_s: measured
 * on the solo run and from DDP's logging data, calib/ddp/table.py) go into the profile; the
 * ddp2 rows carry ddp2_host_sd (their ranks' host spread within a step), used only where they
 * are fitted (fit_ddp_host: h200x4-ddp-scale); every DDP row is
 * predicted by model/physics/ddp.h with model/physics/comm.yaml (nothing of them fitted). k gangs on the same
 * GPUs: each worker's partition shared with k - 1 identical workers (model/physics/ddp.h job.share),
 * each ring at 1/k of the ring's rate. */
void val_build_ddp(builder *b, const csv_table *t)
{
    const char *names[] = {"figure",       "model",         "kind",          "workers",
                           "rate_per_s",   "rel_sd",        "gpu_util",      "grad_bytes",
                           "grad_tensors", "buffer_tensors", "buckets",      "backward_frac",
                           "optimizer_frac", "step_cv",      "host_s",        "ddp2_host_sd"};
    int col[16];
    for (int i = 0; i < 16; i++) {
        col[i] = ddp_col(b, t, names[i]);
    }
    if (b->err[0]) {
        return;
    }
    diag *d = diag_create();
    int rc = comm_load_default(d, &b->comm);
    diag_destroy(d);
    if (rc != 0) {
        snprintf(b->err, sizeof b->err, "model/physics/comm.yaml does not load");
        return;
    }
    int ts8 = phys_ts_class_index(b->m, "kernel-8ms");
    double sms = b->gpu->sms_total;
    double bw = speed_partition_bandwidth(&(partition_cfg){.gpu = b->gpu}, sms, b->m);
    int n_prof = 0;
    double solo_sd[WFIT_MAX_PROFILES] = {0}, rank_sd[WFIT_MAX_PROFILES] = {0};
    for (int r = 0; r < t->n_rows && !b->err[0]; r++) {
        const char *model = t->rows[r][col[1]], *kind = t->rows[r][col[2]];
        double rate, sd, util, v[9];
        if (!ddp_cell(b, t, r, col[4], "rate_per_s", 1e-9, &rate) ||
            !ddp_cell(b, t, r, col[5], "rel_sd", 0, &sd)) {
            return;
        }
        int pi = -1;
        for (int i = 0; i < n_prof; i++) {
            pi = !strcmp(b->names[i], model) ? i : pi;
        }
        if (!strcmp(kind, "solo")) {
            if (pi >= 0 || n_prof == WFIT_MAX_PROFILES) {
                val_row_error(b, t, r, "a second solo row of '%s', or more than %d models",
                              model, WFIT_MAX_PROFILES);
                return;
            }
            const char *vn[] = {"grad_bytes", "grad_tensors", "buffer_tensors", "buckets"};
            for (int i = 0; i < 4; i++) {
                if (!ddp_cell(b, t, r, col[7 + i], vn[i], 0, &v[i])) {
                    return;
                }
            }
            if (!ddp_cell(b, t, r, col[6], "gpu_util", 1e-6, &util) ||
                !ddp_cell(b, t, r, col[11], "backward_frac", 0, &v[4]) ||
                !ddp_cell(b, t, r, col[12], "optimizer_frac", 0, &v[5]) ||
                !ddp_cell(b, t, r, col[13], "step_cv", 0, &v[6]) ||
                !ddp_cell(b, t, r, col[14], "host_s", 0, &v[7]) ||
                !ddp_cell(b, t, r, col[15], "ddp2_host_sd", 0, &v[8]) || util > 1 ||
                v[4] >= 1 || v[5] >= 1 || v[6] >= 1 || v[8] >= 1) {
                if (!b->err[0]) {
                    val_row_error(b, t, r, "gpu_util, backward_frac, optimizer_frac, step_cv, "
                                           "ddp2_host_sd: expected fractions below 1");
                }
                return;
            }
            pi = n_prof++;
            snprintf(b->names[pi], sizeof b->names[pi], "%s", model);
            double it = 1.0 / rate, g = util * it;
            /* the host's overlap (above): pinned by the host clock where it ends before the
             * iteration, else kept at 1 */
            double o = v[7] > 0 && v[7] < it ? fmin(1, fmax(0, 1 - (it - g) / v[7])) : 1;
            bool tfm = !strcmp(model, "gpt2") || !strcmp(model, "vit");
            double mem_share = tfm ? 0.58 : 0.3;
            wl_profile *p = &b->spec.profiles[pi];
            *p = (wl_profile){.name = b->names[pi],
                              .host_s_fixed = wmeas_host_s(b->m, it, util, o),
                              .host_overlap = o,
                              .max_sms_fixed = sms,
                              .ts_class = ts8 > 0 ? ts8 : 0,
                              .grad_bytes = v[0],
                              .grad_tensors = v[1],
                              .buffer_tensors = v[2],
                              .grad_buckets = v[3],
                              .backward_frac = v[4],
                              .optimizer_frac = v[5],
                              .step_cv = v[6]};
            p->compute_sm_s_fixed[WL_CLASS_TENSOR] = (1.0 - mem_share) * g * sms;
            p->mem_traffic_bytes_fixed = mem_share * g * bw;
            const wl_param fr[] = {WL_P_HOST_S_FIXED, WL_P_COMPUTE_FIXED};
            for (int i = 0; i < 2; i++) {
                b->spec.free[b->spec.n_free++] =
                    (wfit_free){.profile = pi,
                                .which = (int)fr[i],
                                .has_prior = true,
                                .prior = {wl_param_get(p, fr[i]), i == 0 ? 2.0 : 1.0,
                                          "h200x4-ddp: scale of the solo row (weak)"}};
            }
            solo_sd[pi] = sd;
            rank_sd[pi] = v[8];
        }
        if (pi < 0) {
            val_row_error(b, t, r, "model '%s' before its solo row", model);
            return;
        }
        fig_spec *f = val_add_fig(b, t->rows[r][col[0]], rate, "it/s");
        if (!f) {
            return;
        }
        f->profile = pi;
        f->is_rate = true;
        f->work = 1.0;
        bool solo = !strcmp(kind, "solo");
        f->f.noise_pct = 100.0 * sqrt(sd * sd + (solo ? 0.0 : solo_sd[pi] * solo_sd[pi]));
        int k = 0;
        if (solo) {
            f->util = util;
            f->host_s = v[7];
        } else if (val_prefixed_int(kind, "ddp", 2, DDP_MAX_WORKERS, &k)) {
            f->workers = k;
            f->ddp_host_sd = k == 2 ? rank_sd[pi] : 0;
        } else if (val_prefixed_int(kind, "ts", 1, 64, &k) ||
                   val_prefixed_int(kind, "mps", 1, 64, &k)) {
            f->workers = 2;
            f->cfg.sharing = kind[0] == 't' ? SHARE_TIMESLICE : SHARE_MPS;
            f->cfg.peers = k;
        } else {
            val_row_error(b, t, r,
                          "unknown kind '%s'; expected solo, ddpN (N workers, 2 to %d), or tsK "
                          "or mpsK (K two-worker jobs on the same GPUs, 1 to 64)",
                          kind, DDP_MAX_WORKERS);
            return;
        }
    }
    b->spec.n_profiles = n_prof;
    b->by_kind = true;
}
