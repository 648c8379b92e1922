/* Unit tests for a measured node in place of a catalog GPU type (model/fit/calapply.h), its loaders
 * (experiments/calib_json.h calmodel_*), the scenario key `calibration:` and
 * `slicesim predict/fit-workload --calibration`. Expected values are derived at test time from the
 * recorded model file (calib/results/, `slicesim fit` of an H100 80GB HBM3 measured with calib/),
 * never typed in. */
#include <criterion/criterion.h>

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments/calib_json.h"
#include "experiments/catalog_load.h"
#include "experiments/comm_load.h"
#include "experiments/fileio.h"
#include "experiments/obs.h"
#include "experiments/physics_load.h"
#include "experiments/scenario.h"
#include "model/fit/calapply.h"
#include "model/physics/comm.h"
#include "model/physics/ddp.h"
#include "model/physics/predict.h"
#include "model/physics/speed.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/run.h"
#include "tests/unit/diagfx.h"
#include "tests/unit/sh.h"

#define H100_MODEL "calib/results/2026-11-22-h100-sxm-model.json"
#define H100_CALIB "calib/results/2026-11-22-h100-sxm.json"
#define EXAMPLE "experiments/examples/calibrated-h100.yaml"

typedef struct world {
    arena *a;
    diag *d;
    gpu_catalog cat;
    phys_params phys;
    cal_fit *fit;
    calapply_source src;
} world;

static void world_init(world *w)
{
    w->a = arena_create();
    w->d = diag_create();
    w->fit = xcalloc(1, sizeof *w->fit, "model");
    cr_assert_eq(catalog_load_default(w->a, &w->cat, w->d), 0);
    cr_assert_eq(physics_load_default(w->d, &w->phys), 0);
    int rc = calmodel_load_source(H100_MODEL, w->fit, &w->src, w->d);
    if (rc) {
        diag_print(w->d, stderr);
    }
    cr_assert_eq(rc, 0, "cannot load %s", H100_MODEL);
}

static void world_fini(world *w)
{
    free(w->fit);
    diag_destroy(w->d);
    arena_destroy(w->a);
}

static const cal_rate_fit *rate(const cal_fit *f, const char *name)
{
    for (int i = 0; i < f->n_rates; i++) {
        if (!strcmp(f->rates[i].name, name)) {
            return &f->rates[i];
        }
    }
    cr_assert_fail("the model has no %s rate", name);
    return NULL;
}

static const cal_ts_fit *ts_10ms(const cal_fit *f)
{
    const cal_ts_fit *best = NULL;
    for (int i = 0; i < f->n_ts; i++) {
        if (f->ts[i].gap_ms == 0 && (!best || f->ts[i].kernel_ms > best->kernel_ms)) {
            best = &f->ts[i];
        }
    }
    cr_assert_not_null(best);
    return best;
}

Test(calapply, device_names_map_to_catalog_keys)
{
    world w;
    world_init(&w);
    const gpu_type *g = calapply_match_gpu(&w.cat, w.src.device, w.fit->sms_total);
    cr_assert_not_null(g, "no match for '%s'", w.src.device);
    cr_assert_str_eq(g->name, "H100-SXM5-80GB");
    /* the same name with the PCIe card's SM count is the PCIe card */
    const gpu_type *pcie = gpu_catalog_find(&w.cat, "H100-PCIe-80GB");
    cr_assert_eq(calapply_match_gpu(&w.cat, "NVIDIA H100 80GB HBM3", pcie->sms_total), pcie);
    /* nvidia-smi names that are catalog keys or aliases */
    cr_assert_str_eq(calapply_match_gpu(&w.cat, "NVIDIA A100-SXM4-40GB", 0)->name,
                     "A100-SXM4-40GB");
    cr_assert_str_eq(calapply_match_gpu(&w.cat, "NVIDIA H200", 0)->name, "H200-SXM5-141GB");
    cr_assert_null(calapply_match_gpu(&w.cat, "NVIDIA Foo 40GB", 100));
    /* an SM count no H100 80GB has */
    cr_assert_null(calapply_match_gpu(&w.cat, "NVIDIA H100 80GB HBM3", 77));
    world_fini(&w);
}

Test(calapply, recorded_h100_replaces_peaks_bandwidth_and_eta)
{
    world w;
    world_init(&w);
    const gpu_type *cat_h100 = gpu_catalog_find(&w.cat, "H100-SXM5-80GB");
    gpu_type before = *cat_h100, g;
    char why[256] = "";
    cr_assert_eq(calapply_gpu(cat_h100, w.fit, &w.phys, &g, why, sizeof why), 0, "%s", why);
    double s = w.fit->sms_total;

    /* effective peaks: the fitted rate at the measured SM count */
    double fp32 = calfit_rate_eval(rate(w.fit, "fp32"), s) * 1e12;
    cr_assert_float_eq(g.peak_flops[GPU_FMT_FP32], fp32, 1e-6 * fp32);
    double bf16 = calfit_rate_eval(rate(w.fit, "bf16_tensor"), s) * 1e12;
    cr_assert_float_eq(g.peak_flops[GPU_FMT_BF16_TENSOR], bf16, 1e-6 * bf16);
    cr_assert_neq(g.peak_flops[GPU_FMT_FP32], before.peak_flops[GPU_FMT_FP32]);
    /* a format the node did not measure keeps its datasheet figure */
    cr_assert_eq(g.peak_flops[GPU_FMT_FP8_TENSOR], before.peak_flops[GPU_FMT_FP8_TENSOR]);
    /* the catalog entry itself is untouched */
    cr_assert_eq(memcmp(cat_h100, &before, sizeof before), 0);
    cr_assert_not(cat_h100->meas.has_bw);

    /* bandwidth: the triad curve, whole GPU and a 1-slice, 16-SM partition */
    int b = calapply_bw_index(w.fit);
    cr_assert_geq(b, 0);
    cr_assert_str_eq(w.fit->bw[b].name, "triad");
    double whole = calfit_bw_eval(&w.fit->bw[b], s) * 1e9;
    cr_assert_float_eq(speed_bandwidth(&g, s, 8, 8, &w.phys), whole, 1e-9 * whole);
    double drive16 = calfit_bw_eval(&w.fit->bw[b], 16) * 1e9;
    double want16 = fmin(drive16, whole / 8);
    cr_assert_float_eq(speed_bandwidth(&g, 16, 1, 8, &w.phys), want16, 1e-9 * want16);
    cr_assert_neq(speed_bandwidth(&before, s, 8, 8, &w.phys), whole);

    /* η: the class that states a kernel length gets the longest back-to-back measurement
     * (10 ms is the nearest to the probe's 8.7 ms); k = 3 lies between the measured 2 and 4 */
    int cls = -1;
    for (int i = 0; i < w.phys.n_ts; i++) {
        if (w.phys.ts[i].kernel_ms > 0) {
            cls = i;
        }
    }
    cr_assert_geq(cls, 0, "no physics time-slice class states kernel_ms");
    const cal_ts_fit *t = ts_10ms(w.fit);
    cr_assert_eq(calapply_ts_index(w.fit, w.phys.ts[cls].kernel_ms), (int)(t - w.fit->ts));
    cr_assert_eq(t->k[1], 2);
    cr_assert_eq(t->k[2], 4);
    cr_assert_float_eq(speed_eta(&g, &w.phys, cls, 2), t->eta[1].value, 1e-12);
    cr_assert_float_eq(speed_eta(&g, &w.phys, cls, 3), (t->eta[1].value + t->eta[2].value) / 2,
                       1e-12);
    cr_assert_float_eq(speed_eta(&g, &w.phys, cls, 4), t->eta[2].value, 1e-12);
    cr_assert_float_eq(speed_eta(&g, &w.phys, cls, 8), t->eta[t->n_k - 1].value, 1e-12);
    cr_assert_float_eq(speed_eta(&g, &w.phys, cls, 12), t->eta[t->n_k - 1].value, 1e-12);
    cr_assert_neq(speed_eta(&g, &w.phys, cls, 2), phys_eta(&w.phys, cls, 2));
    /* classes without a kernel length keep the physics' η */
    for (int i = 0; i < w.phys.n_ts; i++) {
        if (!(w.phys.ts[i].kernel_ms > 0)) {
            cr_assert_eq(speed_eta(&g, &w.phys, i, 2), phys_eta(&w.phys, i, 2));
        }
    }
    world_fini(&w);
}

Test(calapply, memory_bound_time_scales_with_the_measured_bandwidth)
{
    world w;
    world_init(&w);
    const gpu_type *h = gpu_catalog_find(&w.cat, "H100-SXM5-80GB");
    gpu_type g;
    char why[256];
    cr_assert_eq(calapply_gpu(h, w.fit, &w.phys, &g, why, sizeof why), 0);
    wl_profile p = {.name = "stream", .mem_traffic_bytes_fixed = 1e12};
    w.phys.roofline_p = 1; /* pure memory time: t = M / BW */
    partition_cfg c0, c1;
    partition_cfg_init(&c0, h);
    partition_cfg_init(&c1, &g);
    speed_result r0, r1;
    predict_unit_time(&p, 1, &c0, &w.phys, &r0);
    predict_unit_time(&p, 1, &c1, &w.phys, &r1);
    cr_assert_eq(r0.outcome, SPEED_OK);
    cr_assert_eq(r1.outcome, SPEED_OK);
    double bw0 = speed_bandwidth(h, h->sms_total, 1, 1, &w.phys);
    double bw1 = speed_bandwidth(&g, g.sms_total, 1, 1, &w.phys);
    cr_assert_float_eq(r1.unit_time_s / r0.unit_time_s, bw0 / bw1, 1e-9);
    world_fini(&w);
}

Test(calapply, another_sm_count_is_refused)
{
    world w;
    world_init(&w);
    const gpu_type *pcie = gpu_catalog_find(&w.cat, "H100-PCIe-80GB");
    gpu_type g;
    char why[256], want[256];
    cr_assert_eq(calapply_gpu(pcie, w.fit, &w.phys, &g, why, sizeof why), SIM_EINPUT);
    snprintf(want, sizeof want, "measured on %d SMs, catalog GPU H100-PCIe-80GB has %d",
             w.fit->sms_total, pcie->sms_total);
    cr_assert_str_eq(why, want);
    cr_assert_null(calmodel_target(w.fit, &w.src, "H100-PCIe-80GB", &w.cat, why, sizeof why));
    snprintf(want, sizeof want,
             "measured device '%s' has %d SMs, catalog GPU H100-PCIe-80GB has %d; expected the "
             "GPU type the model was measured on, got 'H100-PCIe-80GB'",
             w.src.device, w.fit->sms_total, pcie->sms_total);
    cr_assert_str_eq(why, want);
    /* an alias names the type */
    cr_assert_str_eq(calmodel_target(w.fit, &w.src, "H100", &w.cat, why, sizeof why)->name,
                     "H100-SXM5-80GB");
    world_fini(&w);
}

Test(calapply, a_node_fills_an_sm_count_the_catalog_leaves_unsourced)
{
    world w;
    world_init(&w);
    cal_data *data = xcalloc(1, sizeof *data, "data");
    cal_fit *fit = xcalloc(1, sizeof *fit, "fit");
    cr_assert_eq(calib_json_load_file("calib/results/2026-11-22-h200-sxm-x2.json", data, w.d), 0);
    cr_assert_eq(calfit_all(data, fit), 0);
    calapply_source src = {0};
    snprintf(src.device, sizeof src.device, "%s", data->device);
    char why[512] = "";
    const gpu_type *h = calmodel_target(fit, &src, NULL, &w.cat, why, sizeof why);
    cr_assert_not_null(h, "%s", why);
    cr_assert_str_eq(h->name, "H200-SXM5-141GB");
    gpu_type g;
    cr_assert_eq(calapply_gpu(h, fit, &w.phys, &g, why, sizeof why), 0, "%s", why);
    cr_assert_eq(g.sms_total, fit->sms_total);
    cr_assert(g.meas.has_bw);
    free(fit);
    free(data);
    world_fini(&w);
}

Test(calapply, recorded_model_is_the_fit_of_the_recorded_measurements)
{
    world w;
    world_init(&w);
    cal_data *data = xcalloc(1, sizeof *data, "data");
    cal_fit *fit = xcalloc(1, sizeof *fit, "fit");
    cr_assert_eq(calib_json_load_file(H100_CALIB, data, w.d), 0);
    cr_assert_eq(calfit_all(data, fit), 0);
    cr_assert_str_eq(w.src.device, data->device);
    cr_assert_str_eq(w.src.date_utc, data->date_utc);
    cr_assert_eq(fit->sms_total, w.fit->sms_total);
    double a = rate(fit, "fp32")->per_sm.value, b = rate(w.fit, "fp32")->per_sm.value;
    cr_assert_float_eq(a, b, 1e-9 * a);
    int i = calapply_bw_index(fit), j = calapply_bw_index(w.fit);
    cr_assert_float_eq(fit->bw[i].bmax_gb_s.value, w.fit->bw[j].bmax_gb_s.value,
                       1e-6 * fit->bw[i].bmax_gb_s.value);
    free(fit);
    free(data);
    world_fini(&w);
}

/* ---- scenarios ------------------------------------------------------------------------------- */

static char *slurp(const char *path)
{
    char *buf = NULL;
    size_t len = 0;
    cr_assert_eq(fileio_read_all(path, 64u << 20, &buf, &len), 0, "cannot read %s", path);
    return buf;
}

/* `text` with every `from` replaced by `to` (caller frees). */
static char *subst(const char *text, const char *from, const char *to)
{
    size_t lf = strlen(from), lt = strlen(to), n = 0;
    for (const char *p = text; (p = strstr(p, from)); p += lf) {
        n++;
    }
    char *out = xmalloc(strlen(text) + n * lt + 1, "text"), *o = out;
    for (const char *p = text;;) {
        const char *q = strstr(p, from);
        size_t k = q ? (size_t)(q - p) : strlen(p);
        memcpy(o, p, k);
        o += k;
        if (!q) {
            break;
        }
        memcpy(o, to, lt);
        o += lt;
        p = q + lf;
    }
    *o = '\0';
    return out;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs(text, f);
    fclose(f);
}

/* Sum of jct_s over the jobs of class `cls` in a jobs.csv. */
static double class_jct_sum(const char *csv, const char *cls, int *n)
{
    char *text = slurp(csv), *save = NULL;
    double sum = 0;
    *n = 0;
    for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *f[16];
        int nf = 0;
        for (char *s2 = NULL, *t = strtok_r(line, ",", &s2); t && nf < 16;
             t = strtok_r(NULL, ",", &s2)) {
            f[nf++] = t;
        }
        if (nf > 11 && !strcmp(f[1], cls)) {
            sum += strtod(f[11], NULL);
            (*n)++;
        }
    }
    free(text);
    return sum;
}

Test(calapply, scenario_key_loads_the_model_and_names_its_gpu)
{
    world w;
    world_init(&w);
    scenario_spec *s = NULL;
    int rc = scenario_load_file(EXAMPLE, NULL, 0, 0, w.a, w.d, &s);
    if (rc) {
        diag_print(w.d, stderr);
    }
    cr_assert_eq(rc, 0);
    cr_assert_eq(s->n_calibrations, 1);
    cr_assert_str_eq(s->calibrations[0].path, "calibration");
    cr_assert_str_eq(s->calibrations[0].gpu_type, "H100-SXM5-80GB");
    cr_assert_str_eq(s->calibrations[0].src->device, w.src.device);
    cr_assert_eq(s->calibrations[0].fit->sms_total, w.fit->sms_total);
    /* the calibrated type is a copy: the catalog keeps the datasheet type, the run's catalog
     * (scenario_catalog) holds the copy */
    const gpu_type *sheet = gpu_catalog_find(&w.cat, "H100-SXM5-80GB");
    gpu_type want;
    char why[256];
    cr_assert_eq(calapply_gpu(sheet, w.fit, &w.phys, &want, why, sizeof why), 0);
    const gpu_type *cal = s->calibrations[0].calibrated;
    cr_assert_not_null(cal);
    cr_assert_eq(memcmp(&cal->meas, &want.meas, sizeof want.meas), 0);
    cr_assert_float_eq(cal->peak_flops[GPU_FMT_FP32], want.peak_flops[GPU_FMT_FP32], 0);
    cr_assert_neq(sheet->peak_flops[GPU_FMT_FP32], want.peak_flops[GPU_FMT_FP32]);
    cr_assert_not(sheet->meas.has_bw);
    gpu_catalog run_cat;
    scenario_catalog(s, &w.cat, w.a, &run_cat);
    const gpu_type *in_run = gpu_catalog_find(&run_cat, "H100-SXM5-80GB");
    cr_assert_eq(memcmp(in_run, cal, sizeof *cal), 0);
    cr_assert_neq(in_run, sheet);
    cr_assert_eq(memcmp(gpu_catalog_find(&run_cat, "A100-SXM4-40GB"),
                        gpu_catalog_find(&w.cat, "A100-SXM4-40GB"), sizeof(gpu_type)),
                 0);
    cr_assert_not(gpu_catalog_find(&w.cat, "H100-SXM5-80GB")->meas.has_bw);
    /* the list and mapping forms, paths only */
    const char *text = "name: x\nseed: 1\nhorizon: 1h\n"
                       "calibration: [a.json, {file: b.json, gpu: H100}]\n"
                       "cluster: {nodes: [{name: n, gpu: H100, gpus_per_node: 1}]}\n"
                       "workload: {jobs: [{name: j, rate: 1/h, duration: 1m, "
                       "request: {nvidia.com/gpu: 1}}]}\n";
    rc = scenario_load_buffer("d/x.yaml", NULL, text, strlen(text), NULL, 0, SCENARIO_NO_FILES, w.a,
                              w.d, &s);
    cr_assert_eq(rc, 0);
    cr_assert_eq(s->n_calibrations, 2);
    cr_assert_str_eq(s->calibrations[0].file, "d/a.json");
    cr_assert_null(s->calibrations[0].gpu);
    cr_assert_str_eq(s->calibrations[1].path, "calibration[1]");
    cr_assert_str_eq(s->calibrations[1].file, "d/b.json");
    cr_assert_str_eq(s->calibrations[1].gpu, "H100");
    world_fini(&w);
}

Test(calapply, a_calibrated_scenario_runs_and_differs_from_the_catalog_one)
{
    world w;
    world_init(&w);
    char cwd[512], dir[64], buf[1024];
    cr_assert_not_null(getcwd(cwd, sizeof cwd));
    cr_assert(test_tmpdir(dir, sizeof dir, "calapply"));
    /* the example with absolute references, written once with and once without its key */
    char *text = slurp(EXAMPLE), *t1, *t2, *t3;
    snprintf(buf, sizeof buf, "%s/calib/", cwd);
    t1 = subst(text, "../../calib/", buf);
    snprintf(buf, sizeof buf, "%s/experiments/sharing/", cwd);
    t2 = subst(t1, "../sharing/", buf);
    snprintf(buf, sizeof buf, "%s/experiments/mig/", cwd);
    t3 = subst(t2, "../mig/", buf);
    const char *key = strstr(t3, "\ncalibration:");
    cr_assert_not_null(key);
    char *plain = xmalloc(strlen(t3) + 1, "text");
    size_t head = (size_t)(key - t3) + 1;
    memcpy(plain, t3, head);
    strcpy(plain + head, strchr(key + 1, '\n') + 1);
    char cal_yaml[600], plain_yaml[600], cal_out[600], plain_out[600];
    snprintf(cal_yaml, sizeof cal_yaml, "%s/cal.yaml", dir);
    snprintf(plain_yaml, sizeof plain_yaml, "%s/plain.yaml", dir);
    snprintf(cal_out, sizeof cal_out, "%s/cal", dir);
    snprintf(plain_out, sizeof plain_out, "%s/plain", dir);
    write_text(cal_yaml, t3);
    write_text(plain_yaml, plain);
    run_opts o = {.scenario = cal_yaml, .out_dir = cal_out, .errors = stderr, .verify_every = 64};
    cr_assert_eq(run_scenario(&o), 0);
    o.scenario = plain_yaml;
    o.out_dir = plain_out;
    cr_assert_eq(run_scenario(&o), 0);

    /* run.json records the model, its GPU type and the measured node */
    snprintf(buf, sizeof buf, "%s/run.json", cal_out);
    char *json = slurp(buf);
    cJSON *root = cJSON_Parse(json);
    cr_assert_not_null(root);
    const cJSON *cal = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "config"), "calibration");
    cr_assert_eq(cJSON_GetArraySize(cal), 1);
    const cJSON *c0 = cJSON_GetArrayItem(cal, 0);
    cr_assert_str_eq(cJSON_GetObjectItem(c0, "gpu")->valuestring, "H100-SXM5-80GB");
    cr_assert_str_eq(cJSON_GetObjectItem(c0, "device")->valuestring, w.src.device);
    cr_assert_str_eq(cJSON_GetObjectItem(c0, "date_utc")->valuestring, w.src.date_utc);
    snprintf(buf, sizeof buf, "%s/calib/results/2026-11-22-h100-sxm-model.json", cwd);
    cr_assert_str_eq(cJSON_GetObjectItem(c0, "file")->valuestring, buf);
    cJSON_Delete(root);
    free(json);
    snprintf(buf, sizeof buf, "%s/run.json", plain_out);
    json = slurp(buf);
    root = cJSON_Parse(json);
    cal = cJSON_GetObjectItem(cJSON_GetObjectItem(root, "config"), "calibration");
    cr_assert_eq(cJSON_GetArraySize(cal), 0);
    cJSON_Delete(root);
    free(json);

    /* time-sliced training: the measured η(k) is below the physics' kernel-8ms one here, so the
     * shared jobs take longer with the calibration (and the direction flips if it were above) */
    int cls = phys_ts_class_index(&w.phys, "kernel-8ms");
    cr_assert_geq(cls, 0);
    gpu_type g;
    char why[256];
    cr_assert_eq(calapply_gpu(gpu_catalog_find(&w.cat, "H100-SXM5-80GB"), w.fit, &w.phys, &g, why,
                              sizeof why),
                 0);
    double eta_cal = speed_eta(&g, &w.phys, cls, 4), eta_def = phys_eta(&w.phys, cls, 4);
    cr_assert_neq(eta_cal, eta_def);
    int n_cal, n_plain;
    snprintf(buf, sizeof buf, "%s/jobs.csv", cal_out);
    double jct_cal = class_jct_sum(buf, "train-shared", &n_cal);
    snprintf(buf, sizeof buf, "%s/jobs.csv", plain_out);
    double jct_plain = class_jct_sum(buf, "train-shared", &n_plain);
    cr_assert_gt(n_cal, 0);
    cr_assert_eq(n_cal, n_plain);
    if (eta_cal < eta_def) {
        cr_assert_gt(jct_cal, jct_plain, "calibrated %g s, catalog %g s", jct_cal, jct_plain);
    } else {
        cr_assert_lt(jct_cal, jct_plain, "calibrated %g s, catalog %g s", jct_cal, jct_plain);
    }
    cr_assert(test_rm_rf(dir));
    free(plain);
    free(t3);
    free(t2);
    free(t1);
    free(text);
    world_fini(&w);
}

/* ---- CLI ------------------------------------------------------------------------------------- */

/* Run a shell command; stdout into *out (caller frees), returns the exit status. */
static int sh(const char *cmd, char **out)
{
    char dir[64], path[96], full[2048];
    cr_assert(test_tmpdir(dir, sizeof dir, "calapply-out"));
    snprintf(path, sizeof path, "%s/out", dir);
    snprintf(full, sizeof full, "%s > %s 2>&1", cmd, path);
    int st = system(full);
    *out = slurp(path);
    cr_assert(test_rm_rf(dir));
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* time_s of CSV row `index` of predict's output. */
static double row_time(const char *csv, int index)
{
    char key[32];
    snprintf(key, sizeof key, "\n%d,", index);
    const char *p = strstr(csv, key);
    cr_assert_not_null(p, "no row %d in:\n%s", index, csv);
    return strtod(p + strlen(key), NULL);
}

Test(calapply, predict_with_calibration_follows_the_measured_bandwidth)
{
    world w;
    world_init(&w);
    char dir[64], q[96];
    cr_assert(test_tmpdir(dir, sizeof dir, "calapply-q"));
    snprintf(q, sizeof q, "%s/queries.yaml", dir);
    write_text(q, "gpu: H100-SXM5-80GB\nqueries:\n"
                  "  - {config: {partition: full}, batch: 32, work: 100000}\n");
    char cmd[1024], *a, *b;
    snprintf(cmd, sizeof cmd, "./slicesim predict workloads/library/resnet50-train.yaml %s", q);
    cr_assert_eq(sh(cmd, &a), 0, "%s", a);
    snprintf(cmd, sizeof cmd,
             "./slicesim predict --calibration %s workloads/library/resnet50-train.yaml %s",
             H100_MODEL, q);
    cr_assert_eq(sh(cmd, &b), 0, "%s", b);
    /* one exclusive whole GPU: only the bandwidth curve differs, so the time moves against the
     * bandwidth that the SMs its kernels use (min(SMs, P at batch 32)) drive */
    const gpu_type *h = gpu_catalog_find(&w.cat, "H100-SXM5-80GB");
    gpu_type g;
    char why[256];
    cr_assert_eq(calapply_gpu(h, w.fit, &w.phys, &g, why, sizeof why), 0);
    obs_profile *prof = NULL;
    cr_assert_eq(obs_load_profile("workloads/library/resnet50-train.yaml", NULL, 0, &w.phys, w.a,
                                  w.d, &prof),
                 0);
    double sms = fmin(h->sms_total, wl_max_sms(&prof->p, 32));
    double bw_def = speed_bandwidth(h, sms, 1, 1, &w.phys);
    double bw_cal = speed_bandwidth(&g, sms, 1, 1, &w.phys);
    double t_def = row_time(a, 0), t_cal = row_time(b, 0);
    cr_assert_neq(bw_def, bw_cal);
    if (bw_cal < bw_def) {
        cr_assert_gt(t_cal, t_def, "%s\n%s", a, b);
    } else {
        cr_assert_lt(t_cal, t_def, "%s\n%s", a, b);
    }
    free(a);
    free(b);
    /* queries for another GPU type are refused, at their gpu key */
    write_text(q, "gpu: A100-SXM4-40GB\nqueries:\n  - {config: {partition: full}, work: 1}\n");
    cr_assert_eq(sh(cmd, &a), 2, "%s", a);
    char want[1024];
    snprintf(want, sizeof want,
             "%s:1:6: error: gpu: not the calibrated GPU type; expected H100-SXM5-80GB "
             "(--calibration %s, measured on '%s'), got 'A100-SXM4-40GB'\n",
             q, H100_MODEL, w.src.device);
    cr_assert_str_eq(a, want);
    free(a);
    /* a missing model file is an environment error */
    cr_assert_eq(sh("./slicesim predict --calibration /nonexistent/m.json "
                    "workloads/library/resnet50-train.yaml experiments/examples/byom/queries.yaml",
                    &a),
                 1);
    cr_assert_str_eq(a, "slicesim predict: error: --calibration: /nonexistent/m.json: No such "
                        "file or directory\n");
    free(a);
    cr_assert(test_rm_rf(dir));
    world_fini(&w);
}

Test(calapply, fit_workload_with_calibration_records_it_in_the_profile)
{
    world w;
    world_init(&w);
    char dir[64], obs[96], prof[96];
    cr_assert(test_tmpdir(dir, sizeof dir, "calapply-fit"));
    snprintf(obs, sizeof obs, "%s/obs.yaml", dir);
    snprintf(prof, sizeof prof, "%s/profile.yaml", dir);
    write_text(obs, "workload: w\ngpu: H100-SXM5-80GB\nunit: sample\nobservations:\n"
                    "  - {config: {partition: full}, batch: 8, throughput: 900}\n"
                    "  - {config: {partition: 1g.10gb}, batch: 8, throughput: 150}\n");
    char cmd[1024], *out;
    snprintf(cmd, sizeof cmd, "./slicesim fit-workload %s -o %s --calibration %s", obs, prof,
             H100_MODEL);
    cr_assert_eq(sh(cmd, &out), 0, "%s", out);
    free(out);
    char *p = slurp(prof), want[512];
    snprintf(want, sizeof want, "Fitted with --calibration %s: H100-SXM5-80GB measured as '%s'",
             H100_MODEL, w.src.device);
    cr_assert_not_null(strstr(p, want), "%s", p);
    free(p);
    cr_assert(test_rm_rf(dir));
    world_fini(&w);
}

/* calmodel_apply, the one way a calibration is applied, reports at the site the caller gives:
 * the GPU name when one is given, else the model file's reference */
Test(calapply, apply_reports_at_the_site_and_leaves_the_catalog)
{
    world w;
    world_init(&w);
    const gpu_type *sheet = gpu_catalog_find(&w.cat, "H100-SXM5-80GB");
    gpu_type before = *sheet, out;
    calmodel_site site = {.file_at = {"s.yaml", 3, 14},
                          .file_path = "calibration",
                          .gpu_at = {"s.yaml", 3, 30},
                          .gpu_path = "calibration.gpu"};
    cr_assert_eq(calmodel_apply(w.fit, &w.src, &site, &w.cat, &w.phys, w.d, &out), 0);
    cr_assert_eq(memcmp(sheet, &before, sizeof before), 0);
    cr_assert(out.meas.has_bw);
    site.gpu = "H100-PCIe-80GB";
    cr_assert_eq(calmodel_apply(w.fit, &w.src, &site, &w.cat, &w.phys, w.d, &out), SIM_EINPUT);
    char want[512];
    snprintf(want, sizeof want,
             "s.yaml:3:30: error: calibration.gpu: measured device '%s' has %d SMs, catalog GPU "
             "H100-PCIe-80GB has %d; expected the GPU type the model was measured on, got "
             "'H100-PCIe-80GB'",
             w.src.device, w.fit->sms_total, gpu_catalog_find(&w.cat, "H100-PCIe-80GB")->sms_total);
    cr_assert_str_eq(fx_diag_message(w.d, 0), want);
    site.gpu = NULL;
    calapply_source foo = w.src;
    snprintf(foo.device, sizeof foo.device, "NVIDIA Foo 40GB");
    cr_assert_eq(calmodel_apply(w.fit, &foo, &site, &w.cat, &w.phys, w.d, &out), SIM_EINPUT);
    cr_assert(strncmp(fx_diag_message(w.d, 1), "s.yaml:3:14: error: calibration: no catalog GPU type "
                                              "matches the measured device",
                      60) == 0,
              "%s", fx_diag_message(w.d, 1));
    world_fini(&w);
}

/* --calibration's errors: a type that is not the measured one at the flag, no match at the
 * model file's source.device */
Test(calapply, cli_calibration_errors_name_the_flag_or_the_model_file)
{
    char *a;
    cr_assert_eq(sh("./slicesim predict --calibration " H100_MODEL " --calibration-gpu H100-NOPE "
                    "workloads/library/resnet50-train.yaml experiments/examples/byom/queries.yaml",
                    &a),
                 2);
    cr_assert(strncmp(a, "--calibration-gpu H100-NOPE: error: unknown GPU type; expected one of [",
                      70) == 0,
              "%s", a);
    free(a);
    char dir[64], m[96];
    cr_assert(test_tmpdir(dir, sizeof dir, "calapply-m"));
    snprintf(m, sizeof m, "%s/model.json", dir);
    char *text = slurp(H100_MODEL);
    char *dev = strstr(text, "NVIDIA H100 80GB HBM3");
    cr_assert_not_null(dev);
    memcpy(dev, "NVIDIA Foo  40GB HBM3", 21);
    write_text(m, text);
    int line = 1, col = 1;
    for (const char *p = text; p < dev - 1; p++) {
        line += *p == '\n';
        col = *p == '\n' ? 1 : col + 1;
    }
    free(text);
    char cmd[512], want[512];
    snprintf(cmd, sizeof cmd,
             "./slicesim predict --calibration %s workloads/library/resnet50-train.yaml "
             "experiments/examples/byom/queries.yaml",
             m);
    cr_assert_eq(sh(cmd, &a), 2, "%s", a);
    snprintf(want, sizeof want,
             "%s:%d:%d: error: source.device: no catalog GPU type matches the measured device",
             m, line, col);
    cr_assert(strncmp(a, want, strlen(want)) == 0, "%s\nwanted %s", a, want);
    free(a);
    cr_assert(test_rm_rf(dir));
}

/* The H200 pair's model holds an all-reduce fit per protocol: applied to the H200's NVLink
 * (gpu_type.meas.ar_*: latency 2(n-1) alpha and bus bandwidth per protocol, the switch point),
 * and predict's DDP queries are costed with it. Against the same model without its all-reduce
 * fit, a one-GPU query answers the same (no link) and a 2- and an 8-worker query differ. */
Test(calapply, allreduce_fit_feeds_the_nvlink)
{
    world w;
    world_init(&w);
    const char *model = "calib/results/2026-11-22-h200-sxm-x2-model.json";
    calapply_source src;
    cr_assert_eq(calmodel_load_source(model, w.fit, &src, w.d), 0);
    cr_assert(w.fit->has_ar && w.fit->has_ar_proto);
    const gpu_type *h = gpu_catalog_find(&w.cat, "H200-SXM5-141GB");
    gpu_type g;
    char why[256];
    cr_assert_eq(calapply_gpu(h, w.fit, &w.phys, &g, why, sizeof why), 0);
    cr_assert_eq(h->meas.n_ar, 0);
    cr_assert_eq(g.meas.n_ar, 1);
    cr_assert_eq(g.meas.ar[0].gpus, 2);
    for (int pr = 0; pr < 2; pr++) {
        const cal_ar_fit *a = &w.fit->ar_proto[pr];
        cr_assert(g.meas.ar[0].has[pr]);
        cr_assert_eq(g.meas.ar[0].latency_s[pr], 2 * a->alpha_s.value);
        cr_assert_eq(g.meas.ar[0].busbw_bytes_per_s[pr], a->beta_bytes_per_s.value);
    }
    cr_assert_eq(g.meas.ar[0].ll_max_bytes, w.fit->ar_ll_max_bytes);
    /* the same model without its all-reduce fit */
    char *text = NULL;
    size_t len = 0;
    cr_assert_eq(fileio_read_all(model, FILEIO_MAX_BYTES, &text, &len), 0);
    cJSON *root = cJSON_Parse(text);
    free(text);
    cJSON_ReplaceItemInObject(root, "allreduce", cJSON_CreateNull());
    char dir[64], noar[96], q[96];
    cr_assert(test_tmpdir(dir, sizeof dir, "calapply-noar"));
    snprintf(noar, sizeof noar, "%s/model.json", dir);
    snprintf(q, sizeof q, "%s/queries.yaml", dir);
    char *out = cJSON_Print(root);
    write_text(noar, out);
    free(out);
    cJSON_Delete(root);
    write_text(q, "gpu: H200-SXM5-141GB\nqueries:\n"
                  "  - {config: {partition: full}, batch: 32, work: 100000}\n"
                  "  - {config: {partition: full, workers: 2, per_gpu: 1}, batch: 32, work: 100000}\n"
                  "  - {config: {partition: full, workers: 8, per_gpu: 1}, batch: 32, work: 100000}\n");
    char cmd[1024], *a, *b;
    snprintf(cmd, sizeof cmd,
             "./slicesim predict --calibration %s workloads/library/resnet50-train.yaml %s", model,
             q);
    cr_assert_eq(sh(cmd, &a), 0, "%s", a);
    snprintf(cmd, sizeof cmd,
             "./slicesim predict --calibration %s workloads/library/resnet50-train.yaml %s", noar,
             q);
    cr_assert_eq(sh(cmd, &b), 0, "%s", b);
    cr_assert_eq(row_time(a, 0), row_time(b, 0), "%s\n%s", a, b);
    cr_assert_neq(row_time(a, 1), row_time(b, 1), "%s\n%s", a, b);
    cr_assert_neq(row_time(a, 2), row_time(b, 2), "%s\n%s", a, b);
    free(a);
    free(b);
    cr_assert(test_rm_rf(dir));
    world_fini(&w);
}

/* A model with a fit per ring size (the 2-GPU sweep and calib/ddp's 4-GPU Simple rows) puts
 * both on the H200's NVLink, ascending in GPUs, each protocol where it was measured; a DDP
 * ring of 4 then costs its buckets with the 4-GPU fit: faster than with the 2-GPU fit alone
 * (340.5 against 304.2 GB/s, 28.2 against 39.9 us of latency). */
Test(calapply, a_fit_per_ring_size_feeds_the_nvlink)
{
    world w;
    world_init(&w);
    calapply_source src;
    cr_assert_eq(calmodel_load_source("calib/results/2026-11-28-h200-sxm-x2x4-model.json", w.fit,
                                      &src, w.d),
                 0);
    cr_assert_eq(w.fit->n_ar_rings, 1);
    comm_params cp;
    cr_assert_eq(comm_load_default(w.d, &cp), 0);
    const gpu_type *h = gpu_catalog_find(&w.cat, "H200-SXM5-141GB");
    gpu_type g;
    char why[256];
    cr_assert_eq(calapply_gpu(h, w.fit, &w.phys, &g, why, sizeof why), 0);
    cr_assert_eq(g.meas.n_ar, 2);
    cr_assert_eq(g.meas.ar[0].gpus, 2);
    cr_assert_eq(g.meas.ar[1].gpus, 4);
    cr_assert(g.meas.ar[0].has[0] && g.meas.ar[0].has[1]);
    cr_assert(!g.meas.ar[1].has[0] && g.meas.ar[1].has[1]);
    const cal_ar_fit *s4 = &w.fit->ar_rings[0].proto[1];
    cr_assert_eq(g.meas.ar[1].latency_s[1], 6 * s4->alpha_s.value);
    cr_assert_eq(g.meas.ar[1].busbw_bytes_per_s[1], s4->beta_bytes_per_s.value);
    /* the ring of 4 on one node takes the 4-GPU fit: its hop capacity is that bandwidth */
    comm_node nd = ddp_node(&cp, NULL, &g, 4, 0, 0);
    comm_rank r[4] = {{0, 0, false}, {0, 1, false}, {0, 2, false}, {0, 3, false}};
    comm_ring four, two;
    cr_assert_eq(comm_ring_build(&cp, &nd, 1, r, 4, &four, why, sizeof why), 0);
    cr_assert_eq(comm_ring_build(&cp, &nd, 1, r, 2, &two, why, sizeof why), 0);
    cr_assert_float_eq(comm_ring_alone_rate(&four), s4->beta_bytes_per_s.value, 1);
    cr_assert_float_eq(comm_ring_alone_rate(&two), w.fit->ar_proto[1].beta_bytes_per_s.value, 1);
    double b = 26214400; /* a 25 MiB bucket */
    double t4 = comm_ring_allreduce_time(&cp, &four, b, comm_ring_alone_rate(&four));
    cr_assert_float_eq(t4, 6 * s4->alpha_s.value + 1.5 * b / s4->beta_bytes_per_s.value, 1e-12);
    comm_ring_fini(&four);
    comm_ring_fini(&two);
    world_fini(&w);
}
