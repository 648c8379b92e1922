/* Unit tests for the time-slice probe's reader and analysis (experiments/calib_json.h
 * tslice_json_*, model/fit/tsprobe.h): a hand-made pair of timelines with known slices and
 * switches, bad input, and the file recorded on the H100 (calib/results/), whose figures are
 * the source of model/physics/physics.yaml's ts_quantum_s and ts_switch_s. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "experiments/fileio.h"
#include "experiments/calib_json.h"
#include "experiments/physics_load.h"
#include "model/fit/tsprobe.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "sim/xalloc.h"
#include "tests/unit/diagfx.h"
#include "tests/unit/sh.h"

#define TSLICE_FILE "calib/results/2026-11-24-h100-tslice.json"

/* Two contexts from t = 0 (1 ms = 1e6 ns after the timer's origin 1e6), quantum 2 ms, switch
 * 0.1 ms: A runs [0, 2], [4.2, 6.2], [8.4, 9.0]; B first runs at 2.1: [2.1, 4.1], [6.3, 8.3],
 * [9.1, 10]. A's gaps hold B's runs with 0.1 ms on each side; B's last gap [8.3, 9.1] holds A's
 * cut run [8.4, 9.0]: (0.8 - 0.6) / 2 = 0.1 per switch. Whole slices (between two gaps): A's
 * [4.2, 6.2] and B's [6.3, 8.3], 2 ms each. Alone, one gap of 3 us. Returns: 0.01 and 0.03 ms
 * alone (mean 0.02), 1 and 2 ms beside the spinning kernel (mean 1.5). */
static const char *PAIR =
    "{\"schema\": \"slicesim-tslice\", \"schema_version\": 1, \"date_utc\": \"2026-11-24T00:00:00Z\","
    " \"nvidia_smi\": \"NVIDIA H100 80GB HBM3, GPU-x, 580.159.04, Default, Disabled\","
    " \"slices\": ["
    "  {\"rep\": 0, \"procs\": 1, \"ok\": true, \"children\": [{\"role\": \"slice\","
    "   \"device\": {\"name\": \"NVIDIA H100 80GB HBM3\"},"
    "   \"t_first_ns\": 1000000, \"t_last_ns\": 5000000, \"gaps_ns\": [[2000000, 2003000]]}]},"
    "  {\"rep\": 0, \"procs\": 2, \"ok\": true, \"children\": ["
    "   {\"role\": \"slice\", \"t_first_ns\": 1000000, \"t_last_ns\": 10000000,"
    "    \"gaps_ns\": [[3000000, 5200000], [7200000, 9400000]]},"
    "   {\"role\": \"slice\", \"t_first_ns\": 3100000, \"t_last_ns\": 11000000,"
    "    \"gaps_ns\": [[5100000, 7300000], [9300000, 10100000]]}]},"
    "  {\"rep\": 1, \"procs\": 2, \"ok\": false, \"children\": [null, null]}],"
    " \"returns\": ["
    "  {\"beside\": \"none\", \"ok\": true, \"children\": [{\"role\": \"return\","
    "   \"host_sleep_ms\": [1, 2], \"latency_ms\": [0.01, 0.03]}]},"
    "  {\"beside\": \"slice\", \"ok\": true, \"children\": [{\"role\": \"slice\"}, {\"role\": \"return\","
    "   \"host_sleep_ms\": [1, 2], \"latency_ms\": [1, 2]}]}]}";

Test(tsprobe, hand_made_pair_gives_its_quantum_and_switch)
{
    tsp_data d;
    diag *dg = diag_create();
    cr_assert_eq(tslice_json_load_buffer("t.json", PAIR, strlen(PAIR), &d, dg), 0);
    diag_destroy(dg);
    cr_assert_str_eq(d.driver, "580.159.04");
    cr_assert_str_eq(d.device, "NVIDIA H100 80GB HBM3");
    cr_assert_eq(d.n_groups, 2); /* the failed group is skipped */
    tsp_result r;
    cr_assert_eq(tsp_analyse(&d, &r), 0);
    cr_assert_eq(r.n_slices, 2);
    cr_assert_float_eq(r.slice_median_ms, 2.0, 1e-9);
    cr_assert_eq(r.n_switches, 4);
    cr_assert_float_eq(r.switch_median_ms, 0.1, 1e-9);
    cr_assert_eq(r.solo_gaps, 1);
    cr_assert_float_eq(r.solo_gap_max_ms, 0.003, 1e-9);
    cr_assert_float_eq(r.ret_alone_ms, 0.02, 1e-12);
    cr_assert_float_eq(r.ret_busy_ms, 1.5, 1e-12);
    cr_assert(isnan(r.ret_stream_ms));
    tsp_free(&d);
}

static const char *first_error(const char *text, int *rc)
{
    static char msg[512];
    tsp_data d;
    diag *dg = diag_create();
    *rc = tslice_json_load_buffer("t.json", text, strlen(text), &d, dg);
    snprintf(msg, sizeof msg, "%s", diag_error_count(dg) ? fx_diag_message(dg, 0) : "");
    diag_destroy(dg);
    if (*rc == 0) {
        tsp_free(&d);
    }
    return msg;
}

Test(tsprobe, bad_files_name_the_field)
{
    int rc = 0;
    const char *m = first_error("{\"schema\": \"slicesim-calib\", \"schema_version\": 1}", &rc);
    cr_assert_eq(rc, SIM_EINPUT);
    cr_assert_str_eq(m, "t.json:1:12: error: schema: expected \"slicesim-tslice\", got "
                        "'\"slicesim-calib\"'");
    m = first_error("{\"schema\": \"slicesim-tslice\", \"schema_version\": 1, \"slices\": [{\"ok\": "
                    "true, \"children\": [{\"t_first_ns\": 10, \"t_last_ns\": 20, \"gaps_ns\": "
                    "[[15, 25]]}]}], \"returns\": []}",
                    &rc);
    cr_assert_eq(rc, SIM_EINPUT);
    cr_assert_str_eq(m, "t.json:1:137: error: slices[0].children[0].gaps_ns[0]: expected [start, "
                        "end] within t_first_ns..t_last_ns, after the previous gap, got 'an "
                        "array'");
    m = first_error("{\"schema\": \"slicesim-tslice\", \"schema_version\": 1, \"slices\": [], "
                    "\"returns\": [{\"beside\": \"none\", \"ok\": true, \"children\": [{\"role\": "
                    "\"return\", \"host_sleep_ms\": [1], \"latency_ms\": [0.1, 0.2]}]}]}",
                    &rc);
    cr_assert_eq(rc, SIM_EINPUT);
    cr_assert_str_eq(m, "t.json:1:158: error: returns[0].children[0].host_sleep_ms: expected an "
                        "array of 2 numbers, got 'an array'");
}

/* The file recorded on the H100 (calib/tslice.cu, 2026-11-24): checks that do not take the
 * figures from the analysis itself. Alone a context is never taken off the GPU; two and three
 * spinning contexts take turns, so a gap of one holds (P - 1) slices of the others and P
 * switches, and the back-to-back efficiency that slices and switches imply, q / (q + s), is the
 * one the node calibration measured from makespans (calib/results/2026-11-22-h100-sxm.json,
 * eta(2) of the 10 ms kernels 0.9055 = 2 x 0.1998 / 0.4412..0.4426) within 3 %. A process back
 * from a host phase waits longer beside a busy context than alone, by at least one switch. */
Test(tsprobe, recorded_h100_probe_is_consistent)
{
    tsp_data d;
    diag *dg = diag_create();
    char *text = NULL;
    size_t len = 0;
    cr_assert_eq(fileio_read_all(TSLICE_FILE, 64 << 20, &text, &len), 0);
    int rc = tslice_json_load_buffer(TSLICE_FILE, text, len, &d, dg);
    free(text);
    if (rc) {
        diag_print(dg, stderr);
    }
    diag_destroy(dg);
    cr_assert_eq(rc, 0);
    cr_assert_str_eq(d.device, "NVIDIA H100 80GB HBM3");
    cr_assert_str_eq(d.driver, "580.159.04");
    tsp_result r;
    cr_assert_eq(tsp_analyse(&d, &r), 0);
    cr_assert_eq(r.solo_gaps, 0);
    cr_assert_gt(r.n_slices, 100);
    cr_assert_lt(r.slice_p90_ms - r.slice_p10_ms, 0.05 * r.slice_median_ms); /* one quantum */
    for (int g = 0; g < d.n_groups; g++) {
        const tsp_timeline *t = &d.g[g].tl[0];
        int p = d.g[g].n;
        if (p < 2 || t->n_gaps < 3) {
            continue;
        }
        double gap = t->gap_ms[3] - t->gap_ms[2]; /* a gap in the middle of the run */
        cr_assert_float_eq(gap, (p - 1) * r.slice_median_ms + p * r.switch_median_ms,
                           0.02 * gap, "group %d: gap %g ms", g, gap);
    }
    double eta = r.slice_median_ms / (r.slice_median_ms + r.switch_median_ms);
    cr_assert_float_eq(eta, 0.9055, 0.03 * 0.9055);
    cr_assert_gt(r.ret_busy_ms, r.ret_alone_ms + r.switch_median_ms);
    /* model/physics/physics.yaml cites this file: its quantum and switch gap are these, to the us */
    phys_params m;
    dg = diag_create();
    cr_assert_eq(physics_load_default(dg, &m), 0);
    diag_destroy(dg);
    cr_assert_float_eq(m.ts_quantum_s * 1e3, r.slice_median_ms, 0.0005);
    cr_assert_float_eq(m.ts_switch_s * 1e3, r.switch_median_ms, 0.0005);
    tsp_free(&d);
}

/* `slicesim fit --tslice` on the recorded H100 probe prints the quantum and the switch gap that
 * model/physics/physics.yaml took from this same file, each beside physics.yaml's figure (so the
 * two printed numbers must agree); a file of another schema or other arguments are exit 2. */
Test(tsprobe, cli_prints_the_recorded_probe_beside_physics_yaml)
{
    char out[2048];
    cr_assert_eq(test_sh("./slicesim fit --tslice " TSLICE_FILE " 2>&1", out, sizeof out), 0, "%s",
                 out);
    double q = 0, qy = 0, s = 0, sy = 0;
    const char *l = strstr(out, "time slice ");
    cr_assert_not_null(l, "%s", out);
    cr_assert_eq(sscanf(l, "time slice %lf ms (median of %*d whole slices, p10-p90 %*f-%*f ms); "
                           "physics.yaml ts_quantum_s %lf ms",
                        &q, &qy),
                 2, "%s", l);
    l = strstr(out, "\nswitch ");
    cr_assert_not_null(l, "%s", out);
    cr_assert_eq(
        sscanf(l, "\nswitch %lf ms per switch (median of %*d gaps); physics.yaml ts_switch_s %lf ms",
               &s, &sy),
        2, "%s", l);
    cr_assert(q > 0 && q == qy, "quantum %g ms, physics.yaml %g ms", q, qy);
    cr_assert(s > 0 && s == sy, "switch %g ms, physics.yaml %g ms", s, sy);
    cr_assert_not_null(strstr(out, "return latency beside a spinning context: "), "%s", out);

    cr_assert_eq(test_sh("./slicesim fit --tslice calib/results/2026-11-22-h100-sxm.json 2>&1", out,
                         sizeof out),
                 2);
    cr_assert_str_eq(out, "calib/results/2026-11-22-h100-sxm.json:1:11: error: schema: expected "
                          "\"slicesim-tslice\", got '\"slicesim-calib\"'\n");
    cr_assert_eq(test_sh("./slicesim fit --tslice " TSLICE_FILE " -o m.json 2>&1 >/dev/null", out,
                         sizeof out),
                 2);
    cr_assert_not_null(strstr(out, "slicesim fit: error: --tslice takes no other argument; got "
                                   "'-o'\n"),
                       "%s", out);
}
