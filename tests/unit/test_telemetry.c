/* Unit tests for experiments/telemetry (dcgm-exporter scrapes, Prometheus answers, nvidia-smi
 * logs -> an observation's gpu_util and readings) and `fit-workload` reading it: real samples of
 * experiments/telemetry/ (their README gives the sources), each form's errors, and the fit of the
 * ViT fine-tuning runs whose utilisation comes from the DCGM readings. Tests run from the
 * repository root. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "experiments/telemetry.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "tests/unit/sh.h"
#include "tests/unit/diagfx.h"

#define MIGPROF "experiments/telemetry/migprofiler-vit-finetune-a100-40g.json"

static tel_query whole(int gpu)
{
    return (tel_query){TEL_AUTO, gpu, -1, -HUGE_VAL, HUGE_VAL};
}

static int load_text(const char *text, tel_query q, diag *d, tel_result *r)
{
    return tel_load_buffer("t.prom", text, strlen(text), &q, d, r);
}

/* A real dcgm-exporter 2.x scrape of an idle T4 (DataDog's fixture): utilisation 0 %, power
 * 8.969 W, no frame buffer in use. */
Test(telemetry, dcgm_exporter_scrape_of_an_idle_t4)
{
    diag *d = diag_create();
    tel_result r;
    tel_query q = whole(0);
    cr_assert_eq(tel_load_file("experiments/telemetry/datadog-dcgm-exporter-t4.prom", &q, d, &r),
                 0, "%s", fx_diag_message(d, 0));
    cr_assert_eq(r.n_util, 1);
    cr_assert_str_eq(r.util_source, "DCGM_FI_DEV_GPU_UTIL");
    cr_assert_float_eq(r.gpu_util, 0, 0);
    cr_assert_float_eq(r.power_w, 8.969, 1e-12);
    cr_assert_float_eq(r.fb_used_bytes, 0, 0);
    cr_assert(isnan(r.sm_active) && isnan(r.gr_engine_active));
    cr_assert_str_eq(r.model, "Tesla T4");
    cr_assert(isnan(r.first_s)); /* a scrape without timestamps */
    diag_destroy(d);
}

/* The scrape dcgm-exporter's README prints has clocks only: no utilisation to read. */
Test(telemetry, readme_scrape_has_no_utilisation)
{
    diag *d = diag_create();
    tel_result r;
    tel_query q = whole(0);
    cr_assert_eq(tel_load_file("experiments/telemetry/dcgm-exporter-readme.prom", &q, d, &r),
                 SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(d, 0),
                     "experiments/telemetry/dcgm-exporter-readme.prom: error: no utilisation "
                     "sample of GPU 0 in the window; expected DCGM_FI_DEV_GPU_UTIL, "
                     "DCGM_FI_PROF_GR_ENGINE_ACTIVE or utilization.gpu for it, got none");
    diag_destroy(d);
}

/* MIGProfiler's DCGM readings: the mean over each run's window equals the gract_mean and
 * fb_used_mean MIGProfiler computed itself (vit_finetune.csv, batch 8, to its 3 decimals). */
Test(telemetry, window_means_match_migprofilers_own)
{
    static const struct {
        double from, to, gract, fb_mib;
    } runs[] = {{1657289532, 1657289653, 0.931, 3934},
                {1657289877, 1657289998, 0.904, 4018},
                {1657290717, 1657290838, 0.863, 4093},
                {1657291817, 1657291938, 0.676, 4328}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        diag *d = diag_create();
        tel_result r;
        tel_query q = {TEL_AUTO, 0, -1, runs[i].from, runs[i].to};
        cr_assert_eq(tel_load_file(MIGPROF, &q, d, &r), 0, "%s", fx_diag_message(d, 0));
        cr_assert_str_eq(r.util_source, "DCGM_FI_PROF_GR_ENGINE_ACTIVE");
        cr_assert_eq(r.n_util, 122); /* one a second, both ends included */
        cr_assert_float_eq(r.gpu_util, runs[i].gract, 0.0005, "run %zu: %g", i, r.gpu_util);
        cr_assert_float_eq(r.fb_used_bytes, runs[i].fb_mib * 1048576, 0, "run %zu", i);
        cr_assert_float_eq(r.first_s, runs[i].from, 0);
        cr_assert_float_eq(r.last_s, runs[i].to, 0);
        diag_destroy(d);
    }
}

/* MIG instances: a whole-GPU query ignores instance samples; an instance query takes
 * GR_ENGINE_ACTIVE of its GPU_I_ID (DCGM reports no GPU_UTIL per instance); Prometheus text
 * timestamps in ms, OpenMetrics in s. */
Test(telemetry, mig_instances_and_timestamps)
{
    const char *text =
        "# TYPE DCGM_FI_PROF_GR_ENGINE_ACTIVE gauge\n"
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",GPU_I_PROFILE=\"3g.40gb\",GPU_I_ID=\"1\"} 0.80 "
        "1700000000000\n"
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",GPU_I_PROFILE=\"3g.40gb\",GPU_I_ID=\"1\"} 0.60 "
        "1700000010.5\n"
        "DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu=\"0\",GPU_I_PROFILE=\"1g.10gb\",GPU_I_ID=\"9\"} 0.10\n"
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} 55\n"
        "DCGM_FI_DEV_GPU_UTIL{gpu=\"1\"} 99\n";
    diag *d = diag_create();
    tel_result r;
    cr_assert_eq(load_text(text, whole(0), d, &r), 0, "%s", fx_diag_message(d, 0));
    cr_assert_float_eq(r.gpu_util, 0.55, 1e-12);
    cr_assert_eq(r.n_util, 1);
    cr_assert(isnan(r.gr_engine_active)); /* instance samples are not the whole GPU's */
    tel_query q = {TEL_PROM, 0, 1, -HUGE_VAL, HUGE_VAL};
    cr_assert_eq(load_text(text, q, d, &r), 0);
    cr_assert_float_eq(r.gpu_util, 0.70, 1e-12);
    cr_assert_str_eq(r.util_source, "DCGM_FI_PROF_GR_ENGINE_ACTIVE");
    cr_assert_float_eq(r.first_s, 1700000000, 1e-6);
    cr_assert_float_eq(r.last_s, 1700000010.5, 1e-6);
    q.to_s = 1700000005; /* the window keeps the first sample only */
    cr_assert_eq(load_text(text, q, d, &r), 0);
    cr_assert_float_eq(r.gpu_util, 0.80, 1e-12);
    diag_destroy(d);
}

Test(telemetry, malformed_text_names_line_and_column)
{
    diag *d = diag_create();
    tel_result r;
    cr_assert_eq(load_text("# ok\nDCGM_FI_DEV_GPU_UTIL{gpu=0} 5\n", whole(0), d, &r), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(d, 0), "t.prom:2:25: error: expected a label: name=\"value\", "
                                         "got 'DCGM_FI_DEV_GPU_UTIL{gpu=0} 5'");
    diag_clear(d);
    cr_assert_eq(load_text("DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} five\n", whole(0), d, &r),
                 SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(d, 0),
                     "t.prom:1:31: error: expected a sample value (a number) after the name and "
                     "labels, got 'DCGM_FI_DEV_GPU_UTIL{gpu=\"0\"} five'");
    diag_destroy(d);
}

/* Prometheus query answers: a range (matrix) and an instant (vector) query; a failed query. */
Test(telemetry, prometheus_json)
{
    const char *range =
        "{\"status\":\"success\",\"data\":{\"resultType\":\"matrix\",\"result\":["
        "{\"metric\":{\"__name__\":\"DCGM_FI_DEV_GPU_UTIL\",\"gpu\":\"2\"},"
        "\"values\":[[1700000000,\"40\"],[1700000015,\"60\"]]},"
        "{\"metric\":{\"__name__\":\"DCGM_FI_PROF_SM_ACTIVE\",\"gpu\":\"2\"},"
        "\"values\":[[1700000000,\"0.3\"],[1700000015,\"0.5\"]]}]}}";
    diag *d = diag_create();
    tel_result r;
    tel_query q = whole(2);
    cr_assert_eq(tel_load_buffer("q.json", range, strlen(range), &q, d, &r), 0, "%s",
                 fx_diag_message(d, 0));
    cr_assert_float_eq(r.gpu_util, 0.5, 1e-12);
    cr_assert_float_eq(r.sm_active, 0.4, 1e-12);
    const char *instant = "{\"status\":\"success\",\"data\":{\"resultType\":\"vector\",\"result\":"
                          "[{\"metric\":{\"__name__\":\"DCGM_FI_DEV_GPU_UTIL\",\"gpu\":\"2\"},"
                          "\"value\":[1700000000,\"12\"]}]}}";
    cr_assert_eq(tel_load_buffer("q.json", instant, strlen(instant), &q, d, &r), 0);
    cr_assert_float_eq(r.gpu_util, 0.12, 1e-12);
    const char *bad = "{\"status\":\"error\",\"errorType\":\"bad_data\"}";
    cr_assert_eq(tel_load_buffer("q.json", bad, strlen(bad), &q, d, &r), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(d, 0), "q.json:1:11: error: status: expected \"success\" (a "
                                         "Prometheus query's answer), got '\"error\"'");
    diag_destroy(d);
}

/* nvidia-smi --query-gpu=timestamp,name,index,utilization.gpu,memory.used,power.draw
 * --format=csv (the header and value forms nvidia-smi --help-query-gpu documents), with units
 * beside the values or, with nounits, in the header only; a missing column or unit is refused. */
Test(telemetry, nvidia_smi_csv)
{
    const char *csv =
        "timestamp, name, index, utilization.gpu [%], memory.used [MiB], power.draw [W]\n"
        "2024/05/01 10:00:00.100, NVIDIA A100-SXM4-40GB, 0, 80 %, 20381 MiB, 245.10 W\n"
        "2024/05/01 10:00:01.100, NVIDIA A100-SXM4-40GB, 0, 90 %, 20391 MiB, 255.10 W\n"
        "2024/05/01 10:00:01.100, NVIDIA A100-SXM4-40GB, 1, 10 %, 1 MiB, 55.00 W\n";
    diag *d = diag_create();
    tel_result r;
    tel_query q = whole(0);
    cr_assert_eq(tel_load_buffer("smi.csv", csv, strlen(csv), &q, d, &r), 0, "%s",
                 fx_diag_message(d, 0));
    cr_assert_str_eq(r.util_source, "utilization.gpu");
    cr_assert_float_eq(r.gpu_util, 0.85, 1e-12);
    cr_assert_float_eq(r.fb_used_bytes, 20391.0 * 1048576, 0);
    cr_assert_float_eq(r.power_w, 250.1, 1e-9);
    cr_assert_str_eq(r.model, "NVIDIA A100-SXM4-40GB");
    cr_assert_float_eq(r.first_s, 1714557600.1, 1e-6); /* 2024-05-01 10:00:00.1 UTC */
    const char *nounits = "timestamp, index, utilization.gpu [%]\n"
                          "2024/05/01 10:00:00.000, 0, 70\n";
    cr_assert_eq(tel_load_buffer("smi.csv", nounits, strlen(nounits), &q, d, &r), 0);
    cr_assert_float_eq(r.gpu_util, 0.70, 1e-12);
    const char *no_unit = "timestamp, index, utilization.gpu\n2024/05/01 10:00:00.000, 0, 70\n";
    cr_assert_eq(tel_load_buffer("smi.csv", no_unit, strlen(no_unit), &q, d, &r), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(d, 0),
                     "smi.csv:2:29: error: utilization.gpu: expected a number in % (the unit in "
                     "the header, [%], or after the value), got '70'");
    diag_clear(d);
    const char *no_col = "timestamp, utilization.gpu [%]\n2024/05/01 10:00:00.000, 70 %\n";
    cr_assert_eq(tel_load_buffer("smi.csv", no_col, strlen(no_col), &q, d, &r), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(d, 0),
                     "smi.csv:1:1: error: index: missing column; expected nvidia-smi "
                     "--query-gpu=timestamp,index,utilization.gpu[,memory.used,power.draw] "
                     "--format=csv, got no 'index'");
    diag_destroy(d);
}

/* fit-workload reads each observation's utilisation from the DCGM readings of its window, which
 * pins the host time the four throughputs alone leave to the prior. */
Test(telemetry, fit_workload_reads_telemetry, .timeout = 60)
{
    char out[16384];
    int rc = test_sh("./slicesim fit-workload experiments/examples/byom-telemetry/observations.yaml"
                     " -o /tmp/slicesim-telemetry-fit.yaml --class transformer-training 2>&1",
                     out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "    0  GPU 0: 122 samples of DCGM_FI_PROF_GR_ENGINE_ACTIVE -> gpu_util "
                          "0.931, FB used max 3.84 GiB -> footprint 3.84 GiB"),
              "%s", out);
    /* the four frame-buffer readings (3.84, 3.92, 4.00, 4.23 GiB) pin the footprint, which the
     * class prior alone left NOT PINNED (4.0 GiB +- a factor e): their log mean, 4.00 GiB, to
     * within the 10 % each reading is trusted to over four readings (5 %) */
    const char *fp = strstr(out, "\nmem_footprint_bytes_fixed");
    cr_assert_not_null(fp, "%s", out);
    double v = 0, se = 0;
    char status[32] = "";
    cr_assert_eq(sscanf(fp, " mem_footprint_bytes_fixed %lf %lf %31s", &v, &se, status), 3);
    cr_assert_str_eq(status, "fitted");
    cr_assert(v > 3.84 * 1073741824.0 && v < 4.23 * 1073741824.0, "footprint %g", v);
    cr_assert(se < 0.06 * v, "std_err %g of %g", se, v);
    cr_assert(strstr(out, "    3  GPU 0: 122 samples of DCGM_FI_PROF_GR_ENGINE_ACTIVE -> gpu_util "
                          "0.676"),
              "%s", out);
    cr_assert(strstr(out, "host_s_fixed") && !strstr(out, "host_s_fixed: prior"), "%s", out);
    remove("/tmp/slicesim-telemetry-fit.yaml");
}

/* An nvidia-smi log with memory.used and power.draw: the frame buffer (over the observation's two
 * peers) becomes the footprint fitted, and the power is printed with why it is not fitted. */
Test(telemetry, fit_workload_footprint_over_peers_and_power_printed_only, .timeout = 60)
{
    char dir[64], path[128], out[16384];
    cr_assert(test_tmpdir(dir, sizeof dir, "telpow"));
    snprintf(path, sizeof path, "%s/smi.csv", dir);
    cr_assert(test_write_text(
        path, "timestamp, index, utilization.gpu [%], memory.used [MiB], power.draw [W]\n"
              "2024/05/01 10:00:00.100, 0, 80 %, 20480 MiB, 245.10 W\n"
              "2024/05/01 10:00:01.100, 0, 90 %, 20480 MiB, 255.10 W\n"));
    snprintf(path, sizeof path, "%s/obs.yaml", dir);
    cr_assert(test_write_text(path,
                              "workload: w\ngpu: A100-SXM4-40GB\nunit: sample\nobservations:\n"
                              "  - config: {partition: full, sharing: timeslice, peers: 2}\n"
                              "    batch: 8\n    throughput: 100\n"
                              "    telemetry: {file: smi.csv}\n"
                              "  - config: {partition: 3g.20gb}\n    batch: 8\n    throughput: 60\n"));
    char cmd[512];
    snprintf(cmd, sizeof cmd, "./slicesim fit-workload %s -o %s/p.yaml --accept-poor-fit 2>&1",
             path, dir);
    test_sh(cmd, out, sizeof out);
    cr_assert(strstr(out, "FB used max 20.00 GiB -> footprint 10.00 GiB, power 250.1 W"), "%s",
              out);
    cr_assert(strstr(out, "power is printed only: the model's power terms"), "%s", out);
    const char *fp = strstr(out, "\nmem_footprint_bytes_fixed");
    cr_assert_not_null(fp, "%s", out);
    double v = 0;
    cr_assert_eq(sscanf(fp, " mem_footprint_bytes_fixed %lf", &v), 1);
    cr_assert_float_eq(v / 1073741824.0, 10.0, 0.05, "%s", out); /* the one reading, per peer */
    test_rm_rf(dir);
}
