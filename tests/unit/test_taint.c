/* Unit tests for model/taint (Kubernetes labels, taints, nodeSelector, tolerations) and the
 * policies honouring them: hand-solved scenarios run under every registered policy. Tests run
 * from the repository root. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "model/policy/policy.h"
#include "model/cluster/taint.h"
#include "tests/unit/sh.h"

static const taint_entry no_sched = {"dedicated", "train", TAINT_NO_SCHEDULE};
static const taint_entry no_exec = {"gpu", "", TAINT_NO_EXECUTE};
static const taint_entry prefer = {"spot", "yes", TAINT_PREFER_NO_SCHEDULE};

/* core/v1 Toleration.ToleratesTaint, case by case */
Test(taint, toleration_semantics)
{
    taint_toleration eq = {"dedicated", false, "train", TAINT_ANY};
    taint_toleration eq_other = {"dedicated", false, "infer", TAINT_ANY};
    taint_toleration ex = {"dedicated", true, "", TAINT_NO_SCHEDULE};
    taint_toleration ex_wrong_effect = {"dedicated", true, "", TAINT_NO_EXECUTE};
    taint_toleration all = {"", true, "", TAINT_ANY};
    taint_toleration empty_equal = {"", false, "", TAINT_ANY};
    cr_assert(taint_tolerates(&eq, &no_sched));
    cr_assert_not(taint_tolerates(&eq_other, &no_sched));
    cr_assert(taint_tolerates(&ex, &no_sched));
    cr_assert_not(taint_tolerates(&ex_wrong_effect, &no_sched));
    cr_assert(taint_tolerates(&all, &no_sched));
    cr_assert(taint_tolerates(&all, &no_exec));
    cr_assert_not(taint_tolerates(&empty_equal, &no_sched));
    cr_assert_not(taint_tolerates(&eq, &no_exec)); /* another key */
}

Test(taint, admits_needs_every_hard_taint_tolerated_and_every_selector_label)
{
    const taint_label labels[] = {{"pool", "train"}, {"nvidia.com/gpu.product", "A100"}};
    const taint_entry taints[] = {no_sched, no_exec, prefer};
    taint_node node = {2, labels, 3, taints};
    const taint_toleration one[] = {{"dedicated", true, "", TAINT_ANY}};
    const taint_toleration two[] = {{"dedicated", true, "", TAINT_ANY}, {"gpu", true, "", TAINT_ANY}};
    const taint_label sel_ok[] = {{"pool", "train"}};
    const taint_label sel_bad[] = {{"pool", "open"}};
    taint_pod p1 = {0, NULL, 1, one}, p2 = {1, sel_ok, 2, two}, p3 = {1, sel_bad, 2, two};
    cr_assert_not(taint_admits(&node, NULL));
    cr_assert_not(taint_admits(&node, &p1)); /* NoExecute not tolerated */
    cr_assert(taint_admits(&node, &p2));     /* PreferNoSchedule filters nothing */
    cr_assert_not(taint_admits(&node, &p3));
    cr_assert_eq(taint_prefer_count(&node, &p2), 1);
    cr_assert(taint_admits(NULL, NULL));
    cr_assert_not(taint_admits(NULL, &p2)); /* a selector on a node without labels */
    taint_effect e;
    cr_assert(taint_effect_parse("PreferNoSchedule", &e));
    cr_assert_eq(e, TAINT_PREFER_NO_SCHEDULE);
    cr_assert_not(taint_effect_parse("NoWay", &e));
}

/* Two single-GPU nodes: `train` (labels pool=train, taint dedicated=train:NoSchedule) and `open`
 * (pool=open). Class train: 2 jobs at 1 s and 2 s, 100 s each, nodeSelector pool=train and a
 * toleration of the taint; class plain: 2 jobs at 4 s and 5 s, 100 s each, no toleration.
 * By hand: train-1 runs [1, 101] on train; train-2 finds train busy and open not labelled, so it
 * waits although open is free until 4 s, and runs [101, 201] on train; plain-1 and plain-2 may use
 * open only: [4, 104] and [104, 204] (fifo: head-of-line blocking behind train-2 until 101, so
 * [101, 201] and [201, 301]). The tainted node holds only tolerating jobs under every policy. */
#define TAINT_SCENARIO                                                                             \
    "name: taint\nseed: 1\nhorizon: 1h\ncluster:\n  nodes:\n"                                     \
    "    - {name: train, gpu: A100-SXM4-40GB, gpus_per_node: 1, labels: {pool: train},\n"         \
    "       taints: [{key: dedicated, value: train, effect: NoSchedule}]}\n"                      \
    "    - {name: open, gpu: A100-SXM4-40GB, gpus_per_node: 1, labels: {pool: open}}\n"           \
    "workload:\n  jobs:\n"                                                                         \
    "    - {name: train, arrival: fixed, interval: 1s, count: 2, duration: 100s,\n"               \
    "       request: {nvidia.com/gpu: 1}, node_selector: {pool: train},\n"                        \
    "       tolerations: [{key: dedicated, operator: Exists}]}\n"                                  \
    "    - {name: plain, arrival: fixed, start: 3s, interval: 1s, count: 2, duration: 100s,\n"    \
    "       request: {nvidia.com/gpu: 1}}\n"

/* jobs.csv rows as "class start placement;" for every job. */
static void rows(const char *dir, char *out, size_t n)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "cut -d, -f2,9,14 %s/jobs.csv | tail -n +2 | tr '\\n' ';'", dir);
    cr_assert_eq(test_sh(cmd, out, n), 0, "%s", out);
}

/* Run scenario `path` under `policy` into dir/r and check its jobs.csv rows against `want`. */
static void expect_rows(const char *path, const char *dir, const char *policy, const char *want)
{
    char cmd[512], out[4096];
    snprintf(cmd, sizeof cmd, "./slicesim run %s --set policy.scheduler=%s -o %s/r --force 2>&1",
             path, policy, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s: %s", policy, out);
    char rdir[96];
    snprintf(rdir, sizeof rdir, "%s/r", dir);
    rows(rdir, out, sizeof out);
    cr_assert_str_eq(out, want, "%s", policy);
}

Test(taint, tainted_group_takes_only_tolerating_pods_under_every_policy, .timeout = 120)
{
    char dir[64], path[128];
    cr_assert(test_tmpdir(dir, sizeof dir, "taint"));
    snprintf(path, sizeof path, "%s/taint.yaml", dir);
    cr_assert(test_write_text(path, TAINT_SCENARIO));
    size_t n = 0;
    for (const policy_ops *op; (op = pol_at(n)); n++) {
        const char *want =
            !strcmp(op->name, "fifo")
                ? "train,1.000000000,train-0/0;train,101.000000000,train-0/0;"
                  "plain,101.000000000,open-0/0;plain,201.000000000,open-0/0;"
                : "train,1.000000000,train-0/0;train,101.000000000,train-0/0;"
                  "plain,4.000000000,open-0/0;plain,104.000000000,open-0/0;";
        expect_rows(path, dir, op->name, want);
    }
    cr_assert_geq(n, 10);
    test_rm_rf(dir);
}

/* PreferNoSchedule filters nothing but is avoided: node `spot` (first in node order, tainted
 * spot=yes:PreferNoSchedule) and node `ondemand`. Three 100 s jobs at 1, 2, 3 s: the first goes to
 * ondemand (first fit would take spot), the second to spot (ondemand busy), the third waits for
 * the first to end (101 s) and takes ondemand. */
Test(taint, prefer_no_schedule_is_avoided_not_refused, .timeout = 60)
{
    char dir[64], path[128];
    cr_assert(test_tmpdir(dir, sizeof dir, "prefer"));
    snprintf(path, sizeof path, "%s/prefer.yaml", dir);
    cr_assert(test_write_text(
        path, "name: prefer\nseed: 1\nhorizon: 1h\ncluster:\n  nodes:\n"
              "    - {name: spot, gpu: A100-SXM4-40GB, gpus_per_node: 1,\n"
              "       taints: [{key: spot, value: 'yes', effect: PreferNoSchedule}]}\n"
              "    - {name: ondemand, gpu: A100-SXM4-40GB, gpus_per_node: 1}\n"
              "workload:\n  jobs:\n"
              "    - {name: j, arrival: fixed, interval: 1s, count: 3, duration: 100s,\n"
              "       request: {nvidia.com/gpu: 1}}\n"));
    const char *const pols[] = {"fifo", "k8s", "binpack"};
    for (size_t i = 0; i < 3; i++) {
        expect_rows(path, dir, pols[i],
                    "j,1.000000000,ondemand-0/0;j,2.000000000,spot-0/0;"
                    "j,101.000000000,ondemand-0/0;");
    }
    test_rm_rf(dir);
}

/* node_index pins each job of a class on one node of its group (a snapshot's running pods on
 * their spec.nodeName): three single-GPU nodes; two jobs pinned on nodes 2 and 0 take exactly
 * those under first fit and under kube-scheduler's spread, which would otherwise pick nodes 0
 * and 1. A third class without a pin then takes node 1 (the only one left). */
Test(taint, node_index_places_each_job_on_its_node, .timeout = 60)
{
    char dir[64], path[128];
    cr_assert(test_tmpdir(dir, sizeof dir, "pin"));
    snprintf(path, sizeof path, "%s/pin.yaml", dir);
    cr_assert(test_write_text(
        path, "name: pin\nseed: 1\nhorizon: 1h\ncluster:\n  nodes:\n"
              "    - {name: g, label: g, count: 3, gpu: A100-SXM4-40GB, gpus_per_node: 1}\n"
              "workload:\n  jobs:\n"
              "    - {name: running, arrival: fixed, interval: 1ms, count: 2, duration: 1h,\n"
              "       request: {nvidia.com/gpu: 1}, nodes: [g], node_index: [2, 0]}\n"
              "    - {name: later, arrival: fixed, start: 1s, interval: 1s, count: 1,\n"
              "       duration: 10s, request: {nvidia.com/gpu: 1}}\n"));
    const char *const pols[] = {"fifo", "k8s", "fgd"};
    for (size_t i = 0; i < 3; i++) {
        expect_rows(path, dir, pols[i],
                    "running,0.001000000,g-2/0;running,0.002000000,g-0/0;"
                    "later,2.000000000,g-1/0;");
    }
    test_rm_rf(dir);
}
