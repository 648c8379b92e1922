/* Unit tests for experiments/k8s_snapshot (kubectl nodes and pods -> node groups and pod classes)
 * and `slicesim import cluster`: the example snapshot of experiments/k8s/, the bad-input corpus
 * tests/bad_input/k8s/ (expect.txt gives each file's exact message), Kubernetes quantities and
 * GPU product labels. Tests run from the repository root. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiments/catalog_load.h"
#include "experiments/k8s_manifest.h"
#include "experiments/k8s_snapshot.h"
#include "experiments/scenario.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "tests/unit/sh.h"
#include "tests/unit/diagfx.h"

#define EXAMPLE "experiments/k8s/gfd-readme-cluster.json"

typedef struct kfx {
    arena *a;
    diag *d;
    gpu_catalog cat;
} kfx;

static void kfx_init(kfx *f)
{
    f->a = arena_create();
    f->d = diag_create();
    cr_assert_eq(catalog_load_default(f->a, &f->cat, f->d), 0);
}

static void kfx_fini(kfx *f)
{
    diag_destroy(f->d);
    arena_destroy(f->a);
}

static const k8s_group *group(const k8s_snapshot *s, const char *name)
{
    for (size_t i = 0; i < s->n_groups; i++) {
        if (!strcmp(s->groups[i].name, name)) {
            return &s->groups[i];
        }
    }
    cr_assert_fail("no group %s", name);
    return NULL;
}

/* The class holding pod `who` (namespace/name). */
static const k8s_pod_class *class_of(const k8s_snapshot *s, const char *who)
{
    for (size_t i = 0; i < s->n_classes; i++) {
        for (size_t p = 0; p < s->classes[i].n_pods; p++) {
            if (!strcmp(s->classes[i].pods[p], who)) {
                return &s->classes[i];
            }
        }
    }
    cr_assert_fail("no pod %s", who);
    return NULL;
}

Test(k8s, quantities)
{
    uint64_t q;
    cr_assert(k8s_quantity("500m", 1000, &q) && q == 500);
    cr_assert(k8s_quantity("96", 1000, &q) && q == 96000);
    cr_assert(k8s_quantity("63500m", 1000, &q) && q == 63500);
    cr_assert(k8s_quantity("32Gi", 1, &q) && q == 32ull << 30);
    cr_assert(k8s_quantity("1031018028Ki", 1, &q) && q == 1031018028ull * 1024);
    cr_assert(k8s_quantity("129e6", 1, &q) && q == 129000000);
    cr_assert(k8s_quantity("1.5G", 1, &q) && q == 1500000000);
    cr_assert(k8s_quantity("0.1", 1000, &q) && q == 100);
    cr_assert_not(k8s_quantity("256GB", 1, &q));
    cr_assert_not(k8s_quantity("-1", 1, &q));
    cr_assert_not(k8s_quantity("12abc", 1, &q));
    cr_assert_not(k8s_quantity("", 1, &q));
    cr_assert_not(k8s_quantity(" 1", 1, &q));
}

/* GPU feature discovery's product labels, as documented and as GPU operators write them. */
Test(k8s, product_labels_map_to_catalog_types)
{
    static const struct {
        const char *product, *gpu;
    } cases[] = {{"A100-SXM4-40GB", "A100-SXM4-40GB"},
                 {"NVIDIA-A100-SXM4-40GB", "A100-SXM4-40GB"},
                 {"NVIDIA-A100-SXM4-80GB", "A100-SXM4-80GB"},
                 {"NVIDIA-H100-80GB-HBM3", "H100-SXM5-80GB"},
                 {"NVIDIA-A30", "A30-24GB"},
                 {"A100-SXM4-40GB-SHARED", "A100-SXM4-40GB"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kfx f;
        kfx_init(&f);
        char json[512];
        snprintf(json, sizeof json,
                 "{\"kind\": \"NodeList\", \"items\": [{\"metadata\": {\"name\": \"n\", "
                 "\"labels\": {\"nvidia.com/gpu.product\": \"%s\", \"nvidia.com/gpu.count\": "
                 "\"2\"}}}]}",
                 cases[i].product);
        k8s_snapshot s;
        int rc = k8s_snapshot_load_buffer("t.json", json, strlen(json), &f.cat, f.a, f.d, &s);
        cr_assert_eq(rc, 0, "%s: %s", cases[i].product, fx_diag_message(f.d, 0));
        cr_assert_eq(s.n_groups, 1);
        cr_assert_str_eq(s.groups[0].gpu, cases[i].gpu, "%s", cases[i].product);
        cr_assert_eq(s.groups[0].gpus_per_node, 2);
        kfx_fini(&f);
    }
}

/* The example: GFD's documented label sets on six nodes (one without GPUs), eleven pods. */
Test(k8s, example_snapshot_groups_and_classes)
{
    kfx f;
    kfx_init(&f);
    k8s_snapshot s;
    int rc = k8s_snapshot_load_file(EXAMPLE, &f.cat, f.a, f.d, &s);
    cr_assert_eq(rc, 0, "%s", fx_diag_message(f.d, 0));
    cr_assert_eq(s.n_gpu_nodes, 5);
    cr_assert_eq(s.n_cpu_nodes, 1);
    cr_assert_eq(s.n_groups, 4); /* the two DGX nodes differ only in name and timestamp */
    const k8s_group *dgx = group(&s, "a100-sxm4-40gb-1g");
    cr_assert_eq(dgx->n_nodes, 2);
    cr_assert_eq(dgx->cpu_milli, 63500);
    cr_assert_eq(dgx->mem_bytes, 1031018028ull * 1024);
    cr_assert_null(dgx->mig_config);
    /* single strategy: 56 MIG devices of all-1g.5gb = 8 GPUs of 7 instances */
    const k8s_group *single = group(&s, "a100-sxm4-40gb-8g");
    cr_assert_str_eq(single->mig_config, "all-1g.5gb");
    cr_assert_eq(single->mig_strategy, K8S_MIG_SINGLE);
    cr_assert_eq(single->gpus_per_node, 8);
    cr_assert_eq(single->n_taints, 1);
    cr_assert_str_eq(single->taints[0].key, "nvidia.com/gpu");
    const k8s_group *mixed = group(&s, "a100-sxm4-40gb-8g-2");
    cr_assert_eq(mixed->mig_strategy, K8S_MIG_MIXED);
    cr_assert_str_eq(mixed->mig_config, "all-balanced");
    const k8s_group *shared = group(&s, "a100-sxm4-40gb-8g-3");
    cr_assert_eq(shared->sharing, K8S_SHARE_TIMESLICE);
    cr_assert_eq(shared->replicas, 4);
    cr_assert_not(shared->rename_by_default);
    /* pods: 8 asking for GPUs (5 running), a finished one and a CPU-only one left out */
    cr_assert_eq(s.n_pods, 8);
    cr_assert_eq(s.n_pods_skipped, 2);
    cr_assert_eq(s.n_classes, 7);
    const k8s_pod_class *nb = class_of(&s, "dev/notebook-a");
    cr_assert_eq(nb->n_pods, 2); /* notebook-a and -b are alike */
    cr_assert(nb->running);
    cr_assert_str_eq(nb->groups, "a100-sxm4-40gb-8g");
    cr_assert_eq(nb->node_index[0], 0); /* both on mig-single-0, the group's first node */
    cr_assert_eq(nb->node_index[1], 0);
    cr_assert_eq(nb->place.n_tolerations, 0); /* bound: its node, whatever it tolerates */
    cr_assert_eq(nb->cpu_milli, 500);
    /* the group keeps its taint and the labels its nodes share (not their host names) */
    cr_assert_str_eq(single->taints[0].effect, "NoSchedule");
    bool host = false, machine = false;
    for (size_t i = 0; i < dgx->n_labels; i++) {
        host |= !strcmp(dgx->labels[i].key, "kubernetes.io/hostname");
        machine |= !strcmp(dgx->labels[i].key, "nvidia.com/gpu.machine") &&
                   !strcmp(dgx->labels[i].value, "NVIDIA DGX-2H");
    }
    cr_assert_not(host);
    cr_assert(machine);
    const k8s_pod_class *tr = class_of(&s, "ml/train-0");
    cr_assert_eq(tr->priority, 1000);
    cr_assert_str_eq(tr->priority_class, "training");
    cr_assert_eq(tr->mem_bytes, 64ull << 30);
    /* pending: nodeSelector pool=inference kept for the policies (no `nodes` list) */
    const k8s_pod_class *bi = class_of(&s, "serving/batch-infer");
    cr_assert_null(bi->groups);
    cr_assert_eq(bi->place.n_selector, 1);
    cr_assert_str_eq(bi->place.selector[0].key, "pool");
    cr_assert_str_eq(bi->place.selector[0].value, "inference");
    /* required affinity on gpu.machine (the scenario cannot state it) -> the DGX group */
    cr_assert_str_eq(class_of(&s, "ml/train-1")->groups, "a100-sxm4-40gb-1g");
    /* no constraint: no list; the tainted single-strategy node refuses it in the run */
    cr_assert_null(class_of(&s, "dev/any-gpu")->groups);
    cr_assert_eq(class_of(&s, "dev/any-gpu")->place.n_tolerations, 0);
    kfx_fini(&f);
}

/* The committed scenario is what the importer writes today, and it runs with every pod placed
 * (the five running on their node's group at once, the three pending where they may). */
Test(k8s, import_writes_the_example_scenario_and_it_runs, .timeout = 60)
{
    char dir[64], cmd[1024], out[4096];
    cr_assert(test_tmpdir(dir, sizeof dir, "k8s"));
    snprintf(cmd, sizeof cmd,
             "cp experiments/k8s/gfd-readme-cluster.json %s/ && mkdir -p %s/k8s %s/mig && "
             "cp experiments/mig/config-default.yaml %s/mig/ && "
             "./slicesim import cluster %s/gfd-readme-cluster.json -o %s/k8s/s.yaml "
             "--name gfd-readme-cluster --mig-parted ../mig/config-default.yaml 2>&1",
             dir, dir, dir, dir, dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    /* the header names the snapshot as given; the rest must equal the committed file */
    snprintf(cmd, sizeof cmd,
             "diff <(tail -n +2 %s/k8s/s.yaml) "
             "<(tail -n +2 experiments/k8s/gfd-readme-cluster.yaml) 2>&1",
             dir);
    char bash[1200];
    snprintf(bash, sizeof bash, "bash -c '%s'", cmd);
    cr_assert_eq(test_sh(bash, out, sizeof out), 0, "%s", out);
    snprintf(cmd, sizeof cmd,
             "./slicesim run experiments/k8s/gfd-readme-cluster.yaml -o %s/run --force 2>&1", dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "jobs: 8: 0 done, 0 failed (OOM), 8 running, 0 queued"), "%s", out);
    test_rm_rf(dir);
}

/* Each bad file: its exact message, exit 2, nothing written. */
Test(k8s, bad_input_corpus_gives_exact_messages, .timeout = 60)
{
    char expect[16384];
    cr_assert(test_read_text("tests/bad_input/k8s/expect.txt", expect, sizeof expect));
    DIR *dp = opendir("tests/bad_input/k8s");
    cr_assert_not_null(dp);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(dp))) {
        if (!strstr(de->d_name, ".json")) {
            continue;
        }
        char path[512], cmd[1024], out[2048];
        snprintf(path, sizeof path, "tests/bad_input/k8s/%s", de->d_name);
        snprintf(cmd, sizeof cmd,
                 "rm -f /tmp/slicesim-k8s-bad.yaml; ./slicesim import cluster %s -o "
                 "/tmp/slicesim-k8s-bad.yaml 2>&1",
                 path);
        cr_assert_eq(test_sh(cmd, out, sizeof out), 2, "%s: %s", path, out);
        cr_assert_neq(access("/tmp/slicesim-k8s-bad.yaml", F_OK), 0, "%s: a file was written",
                      path);
        cr_assert_not_null(strstr(expect, out), "%s: got %s", path, out);
        cr_assert(!strncmp(out, path, strlen(path)), "%s: message names another file", path);
        n++;
    }
    closedir(dp);
    cr_assert_geq(n, 9);
}

/* The manifests of experiments/k8s/manifests/ (the training-operator's PyTorchJob examples,
 * the device plugin's test Job, dcgm-exporter's test Pod): a PyTorchJob's Master and Worker are
 * one gang of two workers; the CPU-only examples are left out. */
Test(k8s, manifests_become_job_classes)
{
    kfx f;
    kfx_init(&f);
    static const char *const files[] = {
        "experiments/k8s/manifests/dcgm-exporter-gpu-pod.yaml",
        "experiments/k8s/manifests/device-plugin-job-1.yaml",
        "experiments/k8s/manifests/training-operator-deepspeed.yaml",
        "experiments/k8s/manifests/training-operator-elastic-imagenet.yaml",
        "experiments/k8s/manifests/training-operator-mnist-nccl.yaml",
        "experiments/k8s/manifests/training-operator-simple.yaml"};
    k8s_workload w;
    cr_assert_eq(k8s_manifests_load(files, 6, f.a, f.d, &w), 0, "%s", fx_diag_message(f.d, 0));
    cr_assert_eq(w.n, 4);
    cr_assert_eq(w.n_skipped, 2); /* elastic imagenet (cpu only) and simple (no resources) */
    cr_assert_str_eq(w.classes[0].kind, "Pod");
    cr_assert_str_eq(w.classes[0].name, "nbody-pod");
    cr_assert_eq(w.classes[0].cpu_milli, 100); /* the request, not the 200m limit */
    cr_assert_eq(w.classes[0].mem_bytes, 128ull << 20);
    cr_assert_str_eq(w.classes[1].kind, "Job");
    cr_assert_eq(w.classes[1].jobs, 1);
    for (size_t i = 2; i < 4; i++) {
        cr_assert_str_eq(w.classes[i].kind, "PyTorchJob");
        cr_assert_eq(w.classes[i].workers, 2); /* Master 1 + Worker 1 */
        cr_assert_str_eq(w.classes[i].resource, "nvidia.com/gpu");
        cr_assert_eq(w.classes[i].per_worker, 1);
    }
    kfx_fini(&f);
}

/* Annotations, completions and PriorityClass values in one multi-document file. */
Test(k8s, manifest_annotations_and_priorities)
{
    kfx f;
    kfx_init(&f);
    const char *y = "apiVersion: scheduling.k8s.io/v1\nkind: PriorityClass\nmetadata: {name: high}\n"
                    "value: 1000\n---\n"
                    "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: sweep\n  annotations:\n"
                    "    slicesim.io/interval: 10m\n    slicesim.io/duration: 45m\n"
                    "    slicesim.io/profile: resnet50-train\n"
                    "spec:\n  completions: 5\n  template:\n    spec:\n"
                    "      priorityClassName: high\n"
                    "      containers: [{name: a, resources: {limits: {nvidia.com/mig-1g.5gb: 1}}},"
                    " {name: b, resources: {requests: {nvidia.com/mig-1g.5gb: 1, cpu: 2}}}]\n";
    k8s_workload w;
    cr_assert_eq(k8s_manifests_load_buffer("m.yaml", y, strlen(y), f.a, f.d, &w), 0, "%s",
                 fx_diag_message(f.d, 0));
    cr_assert_eq(w.n, 1);
    cr_assert_eq(w.n_priority_classes, 1);
    const k8s_job_class *k = &w.classes[0];
    cr_assert_eq(k->jobs, 5);
    cr_assert_eq(k->per_worker, 2); /* two containers' units */
    cr_assert_eq(k->cpu_milli, 2000);
    cr_assert_eq(k->priority, 1000);
    cr_assert_str_eq(k->interval, "10m");
    cr_assert_str_eq(k->duration, "45m");
    cr_assert_str_eq(k->profile, "resnet50-train");
    cr_assert_null(k->rate);
    kfx_fini(&f);
}

/* import workload adds the classes to the imported cluster's scenario, which then runs. */
Test(k8s, import_workload_adds_classes_and_runs, .timeout = 60)
{
    char dir[64], cmd[1024], out[4096];
    cr_assert(test_tmpdir(dir, sizeof dir, "k8swl"));
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/k8s %s/mig && cp experiments/mig/config-default.yaml %s/mig/ && "
             "./slicesim import workload experiments/k8s/manifests --cluster "
             "experiments/k8s/gfd-readme-cluster.yaml -o %s/k8s/w.yaml --rate 2/h --count 4 "
             "--duration 30m 2>&1 && ./slicesim run %s/k8s/w.yaml -o %s/run 2>&1",
             dir, dir, dir, dir, dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "4 job class(es) from 6 file(s); 2 object(s) asking for no GPU left "
                          "out"),
              "%s", out);
    /* the snapshot's 8 pods and 4 jobs of each of the 4 manifests' classes */
    cr_assert(strstr(out, "jobs: 24: "), "%s", out);
    test_rm_rf(dir);
}

Test(k8s, manifest_bad_input_corpus_gives_exact_messages, .timeout = 60)
{
    char expect[8192];
    cr_assert(test_read_text("tests/bad_input/manifests/expect.txt", expect, sizeof expect));
    DIR *dp = opendir("tests/bad_input/manifests");
    cr_assert_not_null(dp);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(dp))) {
        if (!strstr(de->d_name, ".yaml")) {
            continue;
        }
        char path[512], cmd[1024], out[2048];
        snprintf(path, sizeof path, "tests/bad_input/manifests/%s", de->d_name);
        snprintf(cmd, sizeof cmd,
                 "./slicesim import workload %s --cluster experiments/k8s/gfd-readme-cluster.yaml"
                 " -o /tmp/slicesim-k8s-wl-bad.yaml --rate 1/h --duration 1h 2>&1",
                 path);
        cr_assert_eq(test_sh(cmd, out, sizeof out), 2, "%s: %s", path, out);
        cr_assert_neq(access("/tmp/slicesim-k8s-wl-bad.yaml", F_OK), 0, "%s: a file was written",
                      path);
        cr_assert_not_null(strstr(expect, out), "%s: got %s", path, out);
        n++;
    }
    closedir(dp);
    cr_assert_geq(n, 7);
}

/* `cluster.snapshot` reads the snapshot at load: the same groups and classes `import cluster`
 * writes, and the same run (docs/import.md's worked example: wait mean 1858.1 s, p95 7200 s). */
Test(k8s, scenario_key_reads_a_snapshot, .timeout = 60)
{
    char dir[64], path[128], out[4096];
    cr_assert(test_tmpdir(dir, sizeof dir, "k8skey"));
    snprintf(path, sizeof path, "%s/s.yaml", dir);
    char text[1024];
    snprintf(text, sizeof text,
             "name: snap\nseed: 1\nhorizon: 12h\ncluster:\n  snapshot: {file: %s/experiments/k8s/"
             "mig-queue-cluster.json, mig_parted: %s/experiments/mig/config-default.yaml, "
             "duration: 2h}\nworkload: {}\n",
             getenv("PWD"), getenv("PWD"));
    cr_assert(test_write_text(path, text));
    kfx f;
    kfx_init(&f);
    scenario_spec *s = NULL;
    cr_assert_eq(scenario_load_file(path, NULL, 0, 0, f.a, f.d, &s), 0, "%s",
                 fx_diag_message(f.d, 0));
    cr_assert_eq(s->cluster.n_groups, 2);
    cr_assert_str_eq(s->cluster.groups[1].label, "a100-sxm4-40gb-8g-2");
    cr_assert_str_eq(s->cluster.groups[1].sharing.mig.config, "all-balanced");
    cr_assert_eq(s->workload.n_jobs, 4);
    cr_assert_str_eq(s->workload.jobs[3].name, "snapshot-pending-1");
    cr_assert_eq(s->workload.jobs[3].start_ns, 24000000); /* after the 24 running notebooks */
    cr_assert_null(s->workload.jobs[3].nodes); /* pending: its selector and toleration */
    cr_assert_eq(s->workload.jobs[3].node_selector.n, 1);
    cr_assert_str_eq(s->workload.jobs[3].node_selector.items[0].value, "notebooks");
    cr_assert_eq(s->workload.jobs[3].n_tolerations, 1);
    cr_assert_str_eq(s->workload.jobs[3].tolerations[0].key, "dedicated");
    cr_assert_eq(s->cluster.groups[1].n_taints, 1);
    /* running: each on its node, train-0 and train-1 alternating */
    cr_assert_eq(s->workload.jobs[0].n_node_index, 6);
    cr_assert_eq(s->workload.jobs[0].node_index[1], 1);
    kfx_fini(&f);
    char cmd[512];
    snprintf(cmd, sizeof cmd, "./slicesim run %s -o %s/run 2>&1", path, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "wait: mean 1858.1 s, p50 0.0 s, p95 7200.0 s"), "%s", out);
    /* a MIG node without mig_parted */
    snprintf(text, sizeof text,
             "name: snap\nseed: 1\nhorizon: 12h\ncluster:\n  snapshot: {file: %s/experiments/k8s/"
             "mig-queue-cluster.json}\nworkload: {}\n",
             getenv("PWD"));
    cr_assert(test_write_text(path, text));
    kfx_init(&f);
    cr_assert_eq(scenario_load_file(path, NULL, 0, 0, f.a, f.d, &s), SIM_EINPUT);
    char want[512];
    snprintf(want, sizeof want,
             "%s:5:13: error: cluster.snapshot.mig_parted: missing; expected the mig-parted config "
             "the nodes' labels name (group a100-sxm4-40gb-8g has nvidia.com/mig.config="
             "all-balanced), got nothing",
             path);
    cr_assert_str_eq(fx_diag_message(f.d, 0), want);
    kfx_fini(&f);
    test_rm_rf(dir);
}
