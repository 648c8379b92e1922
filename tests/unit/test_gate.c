/* Unit tests for tools/gate (--fail-on expressions), tools/runfig (a run's figures read back)
 * and `slicesim diff` / `slicesim run --fail-on`: figures equal run.json's where both exist, a
 * change of a run against itself is zero, paired replications give an interval, a violated gate
 * exits 3 and a passing one 0. Tests run from the repository root. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sim/diag.h"
#include "tests/unit/sh.h"
#include "tools/gate.h"
#include "tools/runfig.h"

Test(gate, parse_expressions)
{
    gate_expr g;
    char why[512];
    cr_assert(gate_parse("wait_p95>900s", &g, why, sizeof why), "%s", why);
    cr_assert_str_eq(g.kind, "all");
    cr_assert_eq(g.fig, RF_WAIT_P95);
    cr_assert_eq(g.op, 2);
    cr_assert_float_eq(g.value, 900, 1e-12);
    cr_assert(gate_parse("class=train-4gpu/jct_mean>=2h", &g, why, sizeof why));
    cr_assert_str_eq(g.kind, "class");
    cr_assert_str_eq(g.scope, "train-4gpu");
    cr_assert_eq(g.op, 3);
    cr_assert_float_eq(g.value, 7200, 1e-12);
    cr_assert(gate_parse("slo_attainment<99%", &g, why, sizeof why));
    cr_assert_float_eq(g.value, 0.99, 1e-12);
    cr_assert_eq(g.op, 0);
    cr_assert(gate_parse("pool=mig/delta.alloc<=-0.05", &g, why, sizeof why));
    cr_assert(g.delta);
    cr_assert_str_eq(g.kind, "pool");
    cr_assert_float_eq(g.value, -0.05, 1e-12);
    cr_assert(gate_parse("wait_mean>90", &g, why, sizeof why)); /* seconds by default */
    cr_assert_float_eq(g.value, 90, 1e-12);
    /* violated when the relation holds; not a number fails */
    cr_assert(gate_parse("wait_p95>900s", &g, why, sizeof why));
    cr_assert(gate_violated(&g, 901));
    cr_assert_not(gate_violated(&g, 900));
    cr_assert(gate_violated(&g, NAN));
}

Test(gate, bad_expressions_say_what_was_expected)
{
    gate_expr g;
    char why[512];
    cr_assert_not(gate_parse("wait_p96>900s", &g, why, sizeof why));
    cr_assert(strstr(why, "FIGURE one of [jobs, done, oom, wait_mean, wait_p95"), "%s", why);
    cr_assert(strstr(why, "got 'wait_p96>900s'"), "%s", why);
    cr_assert_not(gate_parse("wait_p95>15 min", &g, why, sizeof why));
    cr_assert(strstr(why, "a number with a time unit s, m, h or d"), "%s", why);
    cr_assert_not(gate_parse("slo_attainment<0.99s", &g, why, sizeof why));
    cr_assert(strstr(why, "or a percentage"), "%s", why);
    cr_assert_not(gate_parse("node=a/wait_p95>1h", &g, why, sizeof why));
    cr_assert(strstr(why, "a scope is class=NAME or pool=NAME"), "%s", why);
    cr_assert_not(gate_parse("wait_p95", &g, why, sizeof why));
    cr_assert_not(gate_parse("wait_p95>-5s", &g, why, sizeof why)); /* only a change is < 0 */
}

/* The figures of "all" equal what run.json states (the same jobs, the same quantile rule). */
Test(gate, run_figures_match_run_json, .timeout = 60)
{
    char dir[64], cmd[512], out[4096];
    cr_assert(test_tmpdir(dir, sizeof dir, "gate"));
    snprintf(cmd, sizeof cmd, "./slicesim run experiments/default.yaml -o %s/a >/dev/null 2>&1",
             dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0);
    char path[128];
    snprintf(path, sizeof path, "%s/a", dir);
    diag *d = diag_create();
    runfig_set f;
    cr_assert_eq(runfig_load(path, 900, d, &f), 0);
    /* on the heap: a static one lies in every test process's .bss, which LeakSanitizer
     * reads through at each exit (the ASan tests' time) */
    char *text = malloc(1 << 22);
    cr_assert_not_null(text);
    snprintf(path, sizeof path, "%s/a/run.json", dir);
    cr_assert(test_read_text(path, text, 1 << 22));
    cJSON *root = cJSON_Parse(text);
    free(text);
    const cJSON *m = cJSON_GetObjectItem(root, "metrics");
    const runfig_scope *all = runfig_get(&f, "all", "");
    cr_assert_not_null(all);
    const cJSON *w = cJSON_GetObjectItem(m, "wait_s"), *j = cJSON_GetObjectItem(m, "jct_s");
    const cJSON *c = cJSON_GetObjectItem(m, "counts");
    cr_assert_float_eq(all->v[RF_WAIT_P95], cJSON_GetObjectItem(w, "p95")->valuedouble, 1e-6);
    cr_assert_float_eq(all->v[RF_WAIT_MEAN], cJSON_GetObjectItem(w, "mean")->valuedouble, 1e-6);
    cr_assert_float_eq(all->v[RF_JCT_MEAN], cJSON_GetObjectItem(j, "mean")->valuedouble, 1e-6);
    cr_assert_float_eq(all->v[RF_JCT_P95], cJSON_GetObjectItem(j, "p95")->valuedouble, 1e-6);
    cr_assert_float_eq(all->v[RF_JOBS], cJSON_GetObjectItem(c, "jobs")->valuedouble, 0);
    cr_assert_float_eq(all->v[RF_OOM], cJSON_GetObjectItem(c, "failed_oom")->valuedouble, 0);
    cr_assert_float_eq(
        all->v[RF_ALLOC],
        cJSON_GetObjectItem(cJSON_GetObjectItem(m, "allocation"), "units_mean")->valuedouble,
        1e-12);
    /* the default scenario's pools and classes: big-batch-1g asks for 8 GiB on 1g.5gb: 3 OOM */
    cr_assert_not_null(runfig_get(&f, "pool", "mig"));
    cr_assert_not_null(runfig_get(&f, "pool", "whole"));
    cr_assert_float_eq(runfig_get(&f, "class", "big-batch-1g")->v[RF_OOM], 3, 0);
    cr_assert(all->v[RF_SLO] > 0 && all->v[RF_SLO] < 1);
    cJSON_Delete(root);
    runfig_free(&f);
    diag_destroy(d);
    test_rm_rf(dir);
}

/* diff: a run against itself changes nothing; one node fewer in the MIG pool raises the wait,
 * and the gates on it fail (3) or pass (0) as their limits say. run --fail-on does the same on
 * one run. */
Test(gate, diff_and_run_gates, .timeout = 120)
{
    char dir[64], cmd[1024], out[16384];
    cr_assert(test_tmpdir(dir, sizeof dir, "diff"));
    snprintf(cmd, sizeof cmd,
             "./slicesim run experiments/default.yaml -o %s/a >/dev/null 2>&1 && "
             "./slicesim run experiments/default.yaml -o %s/b --set cluster.nodes[1].count=1 "
             ">/dev/null 2>&1",
             dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    snprintf(cmd, sizeof cmd, "./slicesim diff %s/a %s/a 2>&1 | grep '^all *wait_p95_s'", dir,
             dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, " 0.0  n=1"), "%s", out); /* one pair: no interval, said so */
    snprintf(cmd, sizeof cmd, "./slicesim diff %s/a %s/a 2>&1 | head -1", dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, ": 1 replication (n=1: no confidence interval of the change; the "
                          "replications of a sweep give one)"),
              "%s", out);
    snprintf(cmd, sizeof cmd,
             "./slicesim diff %s/a %s/b --fail-on 'wait_p95>1h' --fail-on "
             "'pool=mig/delta.alloc<0' 2>&1",
             dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 3, "%s", out);
    cr_assert(strstr(out, "gate wait_p95>1h: FAILED (wait_p95 = 4739.18 s)"), "%s", out);
    cr_assert(strstr(out, "gate pool=mig/delta.alloc<0: passed"), "%s", out);
    snprintf(cmd, sizeof cmd, "./slicesim diff %s/a %s/b --fail-on 'wait_p95>2h' 2>&1", dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    snprintf(cmd, sizeof cmd,
             "./slicesim run experiments/default.yaml -o %s/a --force --slo-wait 15m "
             "--fail-on 'slo_attainment<0.8' 2>&1 | tail -1",
             dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out); /* tail's status */
    cr_assert(strstr(out, "gate slo_attainment<0.8: FAILED (slo_attainment = 0.788043)"), "%s",
              out);
    snprintf(cmd, sizeof cmd,
             "./slicesim run experiments/default.yaml -o %s/a --force --fail-on "
             "'class=train-4gpu/wait_p95>1h' >/dev/null 2>&1",
             dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    snprintf(cmd, sizeof cmd,
             "./slicesim run experiments/default.yaml -o %s/a --force --fail-on "
             "'class=train-4gpu/wait_p95>30m' >/dev/null 2>&1",
             dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 3, "%s", out);
    /* usage errors: exit 2 */
    snprintf(cmd, sizeof cmd, "./slicesim diff %s/a %s/b --fail-on 'slo_attainment<0.9' 2>&1",
             dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "expected --slo-wait D"), "%s", out);
    snprintf(cmd, sizeof cmd, "./slicesim diff %s/a %s/b --fail-on 'class=nope/oom>0' 2>&1", dir,
             dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 2, "%s", out);
    test_rm_rf(dir);
}

/* Replications of a sweep are paired by seed: the interval of the change is printed, and a
 * change that is the same in every pair has no spread. */
Test(gate, diff_pairs_sweep_replications, .timeout = 120)
{
    char dir[64], cmd[2048], out[16384];
    cr_assert(test_tmpdir(dir, sizeof dir, "diffsw"));
    snprintf(cmd, sizeof cmd,
             "sed 's#file: mig/#file: %s/experiments/mig/#; s#file: sharing/#file: "
             "%s/experiments/sharing/#' experiments/default.yaml > %s/s.yaml && "
             "printf 'sweep:\\n  replications: 3\\n' >> %s/s.yaml && "
             "./slicesim sweep %s/s.yaml -o %s/a >/dev/null 2>&1 && "
             "./slicesim sweep %s/s.yaml -o %s/b --set cluster.nodes[1].count=1 >/dev/null 2>&1",
             getenv("PWD"), getenv("PWD"), dir, dir, dir, dir, dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    snprintf(cmd, sizeof cmd, "./slicesim diff %s/a %s/b 2>&1", dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "3 replications, paired by seed"), "%s", out);
    /* the job count is the same in every pair: an interval of zero width */
    cr_assert(strstr(out, "all                          jobs                    184.0        184.0"
                          "          0.0  +-          0.0"),
              "%s", out);
    test_rm_rf(dir);
}

/* validate --fail-on: a table's MAPE, or the worst table's; plan --fail-on needs -o. validate
 * reads a directory holding cern-simpletrack's scenario alone (--dir): the gates read the same
 * table, and three runs of every table (a minute and more under ASan) are not what is tested. */
Test(gate, validate_and_plan_gates, .timeout = 120)
{
    char out[16384], vdir[64], vcmd[1024];
    cr_assert(test_tmpdir(vdir, sizeof vdir, "valgate"));
    snprintf(vcmd, sizeof vcmd, "cp experiments/validation/cern-simpletrack.yaml %s/", vdir);
    cr_assert_eq(system(vcmd), 0);
    snprintf(vcmd, sizeof vcmd,
             "./slicesim validate --dir %s --fail-on 'table=cern-simpletrack/mape_predicted>5%%' "
             "--fail-on 'table=cern-simpletrack/max_predicted>2%%' 2>&1 | tail -2",
             vdir);
    int rc = test_sh(vcmd, out, sizeof out);
    cr_assert_eq(rc, 0, "%s", out);
    cr_assert(strstr(out, "gate table=cern-simpletrack/mape_predicted>5%: passed"), "%s", out);
    cr_assert(strstr(out, "gate table=cern-simpletrack/max_predicted>2%: FAILED"), "%s", out);
    snprintf(vcmd, sizeof vcmd,
             "./slicesim validate --dir %s --fail-on 'table=cern-simpletrack/mape_predicted>5%%'"
             " >/dev/null 2>&1",
             vdir);
    cr_assert_eq(test_sh(vcmd, out, sizeof out), 0);
    snprintf(vcmd, sizeof vcmd,
             "./slicesim validate --dir %s --fail-on 'table=cern-simpletrack/max_predicted>2%%'"
             " >/dev/null 2>&1",
             vdir);
    cr_assert_eq(test_sh(vcmd, out, sizeof out), 3);
    test_rm_rf(vdir);
    cr_assert_eq(test_sh("./slicesim validate --fail-on 'wait_p95>1h' 2>&1", out, sizeof out), 2);
    cr_assert(strstr(out, "FIGURE one of [mape_predicted, max_predicted]"), "%s", out);
    cr_assert_eq(test_sh("./slicesim plan experiments/examples/plan-a100-pool.yaml --fail-on "
                         "'wait_p95>15m' 2>&1",
                         out, sizeof out),
                 2);
    cr_assert(strstr(out, "--fail-on reads the answer's runs back; expected -o DIR"), "%s", out);
    /* the example writes no jobs.csv: refused before any candidate runs, nothing written */
    char dir[64], cmd[512];
    cr_assert(test_tmpdir(dir, sizeof dir, "plangate"));
    snprintf(cmd, sizeof cmd,
             "./slicesim plan experiments/examples/plan-a100-pool.yaml -o %s/p --fail-on "
             "'wait_p95>15m' 2>&1; test ! -e %s/p",
             dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "experiments/examples/plan-a100-pool.yaml:38:10: error: outputs.files: "
                          "plan --fail-on reads each run's run.json and jobs.csv back; expected "
                          "both among the outputs (or --set 'outputs.files=[run.json, "
                          "jobs.csv]'), got [run.json, report.html]"),
              "%s", out);
    snprintf(cmd, sizeof cmd,
             "./slicesim plan experiments/examples/plan-a100-pool.yaml -o %s/p --fail-on "
             "'wait_p95>15m' >/dev/null 2>&1; echo $?",
             dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_str_eq(out, "2\n");
    test_rm_rf(dir);
}
