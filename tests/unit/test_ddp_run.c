/* Data-parallel jobs in runs: a gang that spans nodes, and two gangs sharing a node's NIC.
 * Cluster: 3 nodes x 4 whole A100-PCIE-40GB on 25 Gb/s Ethernet, the 3DGAN what-if profile
 * (experiments/whatif/hep-gan/profile.yaml, 8 MB of gradients). First-fit places gang A (6
 * workers) on node 0 (4) and node 1 (2), and gang B (6 workers) on node 1 (2) and node 2 (4): both
 * rings cross node 1's NIC each way, so B is slower beside A than alone (where it sits on nodes 0
 * and 1, each NIC carrying its ring alone). */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/sh.h"

static const char *head = "name: ddp-run\n"
                          "seed: 1\n"
                          "horizon: 1d\n"
                          "cluster:\n"
                          "  interconnect: eth-25g\n"
                          "  nodes: [{name: n, count: 3, gpu: A100-PCIE-40GB, gpus_per_node: 4}]\n"
                          "workload:\n"
                          "  jobs:\n";

static const char *gang_a = "    - {name: a, arrival: fixed, interval: 1s, count: 1, samples: 200000, "
                            "workers: 6, request: {nvidia.com/gpu: 1}, "
                            "profile: ../../experiments/whatif/hep-gan/profile.yaml}\n";
static const char *gang_b = "    - {name: b, arrival: fixed, interval: 2s, count: 1, samples: 200000, "
                            "workers: 6, request: {nvidia.com/gpu: 1}, "
                            "profile: ../../experiments/whatif/hep-gan/profile.yaml}\n";

/* Run the scenario text from a directory two levels below the repository (so the profile path
 * resolves); fills the jobs.csv line of class `cls` into line. */
static void run_and_get(const char *dir, const char *text, const char *cls, char *line, size_t n)
{
    char scen[256], cmd[1024], out[4096], csv[8192];
    snprintf(scen, sizeof scen, "tests/unit/ddp-run-%s.yaml", dir + strlen(dir) - 6);
    cr_assert(test_write_text(scen, text));
    snprintf(cmd, sizeof cmd, "./slicesim run %s -o %s/out --force 2>&1", scen, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    remove(scen);
    char path[512];
    snprintf(path, sizeof path, "%s/out/jobs.csv", dir);
    cr_assert(test_read_text(path, csv, sizeof csv));
    char key[32];
    snprintf(key, sizeof key, ",%s,", cls);
    char *p = strstr(csv, key);
    cr_assert_not_null(p, "%s", csv);
    while (p > csv && p[-1] != '\n') {
        p--;
    }
    size_t len = strcspn(p, "\n");
    cr_assert_lt(len, n);
    memcpy(line, p, len);
    line[len] = '\0';
}

/* jct_s (column 12) and work_s (column 7) of a jobs.csv line */
static double column(const char *line, int col)
{
    const char *p = line;
    for (int i = 1; i < col; i++) {
        p = strchr(p, ',') + 1;
    }
    return strtod(p, NULL);
}

Test(ddp_run, gang_spans_nodes_and_shares_a_nic, .timeout = 60)
{
    char dir[64];
    cr_assert(test_tmpdir(dir, sizeof dir, "ddprun"));
    char text[2048], a[1024], b_with[1024], b_alone[1024];
    snprintf(text, sizeof text, "%s%s%s", head, gang_a, gang_b);
    run_and_get(dir, text, "a", a, sizeof a);
    run_and_get(dir, text, "b", b_with, sizeof b_with);
    /* A spans nodes n-0 and n-1: its placement lists both */
    cr_assert(strstr(a, "n-0/") && strstr(a, "n-1/"), "%s", a);
    cr_assert(strstr(b_with, "n-1/") && strstr(b_with, "n-2/"), "%s", b_with);
    /* communication is not free: the job takes longer than its solo-iteration work */
    cr_assert_gt(column(a, 12), column(a, 7), "%s", a);
    char dir2[64];
    cr_assert(test_tmpdir(dir2, sizeof dir2, "ddprun"));
    snprintf(text, sizeof text, "%s%s", head, gang_b);
    run_and_get(dir2, text, "b", b_alone, sizeof b_alone);
    cr_assert(strstr(b_alone, "n-0/") && strstr(b_alone, "n-1/"), "%s", b_alone);
    /* same work; beside A (sharing node 1's NIC while both run) B takes longer */
    cr_assert_eq(column(b_with, 7), column(b_alone, 7));
    cr_assert_gt(column(b_with, 12), column(b_alone, 12), "with A %s; alone %s", b_with, b_alone);
    test_rm_rf(dir);
    test_rm_rf(dir2);
}

/* The 3DGAN what-if: a worker needs the profile's footprint (8.47 GiB at batch 64, 5.32 GiB at
 * batch 32 with its bucket copies and NCCL buffers), so 1g.5gb (4.75 GiB) fails with OOM at start
 * at both batch sizes while 2g.10gb (9.75 GiB) and larger hold it: every 1g.5gb job is failed_oom
 * and every other job is done. */
Test(ddp_run, hep_gan_whatif_runs_out_of_memory_on_1g, .timeout = 60)
{
    char dir[64], cmd[512], out[4096];
    static char csv[65536];
    cr_assert(test_tmpdir(dir, sizeof dir, "hepgan"));
    snprintf(cmd, sizeof cmd, "./slicesim run experiments/whatif/hep-gan-ddp.yaml -o %s/out 2>&1",
             dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    char path[256];
    snprintf(path, sizeof path, "%s/out/jobs.csv", dir);
    cr_assert(test_read_text(path, csv, sizeof csv));
    int n_oom = 0, n_done = 0;
    for (char *l = strtok(csv, "\n"); l; l = strtok(NULL, "\n")) {
        if (!strncmp(l, "id,", 3)) {
            continue;
        }
        bool small = strstr(l, ",1g.5gb-") != NULL;
        bool oom = strstr(l, ",failed_oom,") != NULL;
        cr_assert_eq(small, oom, "%s", l);
        n_oom += oom;
        n_done += strstr(l, ",done,") != NULL;
    }
    cr_assert_eq(n_oom, 2);
    cr_assert_eq(n_done, 38);
    test_rm_rf(dir);
}

/* Two runs of the topology study with one seed write byte-identical jobs.csv (the link sharing
 * solves on a scratch engine in a fixed order). */
Test(ddp_run, topology_study_is_deterministic, .timeout = 60)
{
    char dir[64], cmd[512], out[4096];
    static char a[1 << 17], b[1 << 17];
    cr_assert(test_tmpdir(dir, sizeof dir, "ddpdet"));
    for (int k = 0; k < 2; k++) {
        snprintf(cmd, sizeof cmd,
                 "./slicesim run experiments/whatif/ddp-topology.yaml --seed 3 -o %s/%d 2>&1", dir,
                 k);
        cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    }
    char pa[128], pb[128];
    snprintf(pa, sizeof pa, "%s/0/jobs.csv", dir);
    snprintf(pb, sizeof pb, "%s/1/jobs.csv", dir);
    cr_assert(test_read_text(pa, a, sizeof a));
    cr_assert(test_read_text(pb, b, sizeof b));
    cr_assert_gt(strlen(a), 1000);
    cr_assert_str_eq(a, b);
    test_rm_rf(dir);
}
