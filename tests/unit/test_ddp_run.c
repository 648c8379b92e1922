/* Data-parallel jobs in runs: a gang that spans nodes, and two gangs sharing a node's NIC.
 * Cluster: 3 nodes x 4 whole A100-PCIE-40GB on 25 Gb/s Ethernet, the 3DGAN what-if profile
 * (experiments/whatif/hep-gan/profile.yaml, 8 MB of gradients). First-fit places gang A (6
 * workers) on node 0 (4) and node 1 (2), and gang B (6 workers) on node 1 (2) and node 2 (4): both
 * rings cross node 1's NIC each way, so B is slower beside A than alone (where it sits on nodes 0
 * and 1, each NIC carrying its ring alone). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "experiments/comm_load.h"
#include "experiments/physics_load.h"
#include "model/physics/ddp.h"
#include "sim/arena.h"
#include "sim/diag.h"
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

/* One node of 2 H100-SXM5-80GB (NVSwitch), `n` 2-worker ResNet-50 gangs
 * (workloads/library/resnet50-train.yaml, 102.4 MB of gradients), the same samples each, its GPUs
 * shared as `sharing` says; fills jct[0..n) (jobs.csv column 12) and returns the work (column 7). */
static double shared_gangs(const char *sharing, int n, double *jct)
{
    char dir[64], text[2048];
    cr_assert(test_tmpdir(dir, sizeof dir, "ddpshr"));
    snprintf(text, sizeof text,
             "name: ddp-shared\nseed: 1\nhorizon: 30d\ncluster:\n"
             "  nodes: [{name: n, count: 1, gpu: H100-SXM5-80GB, gpus_per_node: 2, "
             "sharing: %s}]\n"
             "workload:\n  jobs:\n"
             "    - {name: a, arrival: fixed, interval: 1s, count: %d, samples: 1000000, "
             "workers: 2, request: {nvidia.com/gpu: 1}, "
             "profile: ../../workloads/library/resnet50-train.yaml}\n",
             sharing, n);
    double work = 0;
    char line[1024];
    run_and_get(dir, text, "a", line, sizeof line);
    char path[512];
    static char csv[8192];
    snprintf(path, sizeof path, "%s/out/jobs.csv", dir);
    cr_assert(test_read_text(path, csv, sizeof csv));
    int got = 0;
    for (char *l = strtok(csv, "\n"); l; l = strtok(NULL, "\n")) {
        if (!strncmp(l, "id,", 3)) {
            continue;
        }
        cr_assert(strstr(l, ",done,"), "%s", l);
        cr_assert(strstr(l, "n-0/0 n-0/1"), "one worker per GPU: %s", l);
        cr_assert_lt(got, n);
        jct[got++] = column(l, 12);
        work = column(l, 7);
    }
    cr_assert_eq(got, n);
    test_rm_rf(dir);
    return work;
}

/* A gang on MPS replicas or time-sliced GPUs is never faster than the same gang on the same GPUs
 * exclusive, alone or beside identical gangs: an MPS replica caps each client at 100 / replicas
 * % of the SMs (alone too), and a time-sliced context shares the GPU round-robin; the rings of
 * co-located gangs share the GPUs' NVLink ports. (Before: one gang on `mps: {replicas: 2}` took
 * 0.82 of the exclusive time and three on `replicas: 3` 0.60 each: its work was counted at the
 * replica's cap and its step on the whole GPU.) */
Test(ddp_run, shared_gang_is_never_faster_than_exclusive, .timeout = 120)
{
    double whole, one[1], three[3], work = shared_gangs("whole", 1, &whole);
    cr_assert_gt(whole, work); /* the all-reduce is not free */
    static const char *const modes[] = {"{mps: {replicas: 2}}", "{mps: {replicas: 3}}",
                                        "{timeslice: {replicas: 2}}",
                                        "{timeslice: {replicas: 3}}"};
    for (int m = 0; m < 4; m++) {
        cr_assert_eq(shared_gangs(modes[m], 1, one), work);
        cr_assert_geq(one[0], whole, "%s: one gang %.6g s, exclusive %.6g s", modes[m], one[0],
                      whole);
        if (m % 2 == 1) {
            shared_gangs(modes[m], 3, three);
            for (int k = 0; k < 3; k++) {
                cr_assert_gt(three[k], one[0], "%s: three gangs %.6g s, one %.6g s", modes[m],
                             three[k], one[0]);
            }
        }
    }
}

/* The 3DGAN what-if: a MIG worker needs the profile's footprint (8.42 GiB at batch 64, 5.27 GiB
 * at batch 32 with its bucket copies and NCCL's 12 MiB), so 1g.5gb (4.75 GiB) fails with OOM at start
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

/* A node group's `topology:` sets the links of a gang's ring. One 4-worker job on one node of 4
 * whole A100-SXM4-40GB, a profile whose iteration is H = 0.1 s of host time and ~1e-11 s of GPU
 * time, with G = 100 MiB of gradients: 4 buckets of 25 MiB (model/physics/comm.yaml's bucket_bytes), all
 * ready as the bucket copy (the whole backward: the pass itself takes ~0 s) goes, all-reduced
 * back to back, so step = H + dH + [copy beside the all-reduces] + copy back (ddp.h),
 *   t = 2(n-1) alpha + 2(n-1)/n S / x = 6 alpha_simple + 1.5 S / x
 * (Simple: 25 MiB is above ll_max_bytes; the ring beats the tree, 4 alpha + 2 S / x, since
 * S / x ~ 1 ms >> 4 alpha). Ring rate x:
 *   nvswitch      every hop over NVLink: x = NVLink per direction (catalog total / 2) x eff(nvlink),
 *                 plus NCCL's first loop (model/physics/comm.h)
 *   pcie          every hop over PCIe P2P (2 GPUs per root: hops 1->2 and 3->0 cross both roots'
 *                 uplinks once each way, every resource is crossed once): x = PCIe x eff(pcie)
 *   nvlink-pairs  0->1 and 2->3 over NVLink, 1->2 and 3->0 over PCIe: the slowest, PCIe
 *   (none)        the GPU type's: A100-SXM4 has NVLink, so as nvswitch
 * The host: H plus one collective per bucket, times 1 + host_spread e_4 (the slowest of 4).
 * A duration of D s is D s of solo iterations (H each), so JCT = D step / H. */
Test(ddp_run, node_topology_sets_the_ring, .timeout = 60)
{
    diag *d = diag_create();
    arena *a = arena_create();
    comm_params cp;
    gpu_catalog cat;
    cr_assert_eq(comm_load_default(d, &cp), 0);
    cr_assert_eq(catalog_load_default(a, &cat, d), 0);
    const gpu_type *g = gpu_catalog_find(&cat, "A100-SXM4-40GB");
    cr_assert_not_null(g);
    double S = cp.bucket_bytes, H = 0.1, D = 1000;
    double x_nvl = g->nvlink_bytes_per_s / 2 * cp.eff[COMM_LINK_NVLINK];
    double x_pcie = g->pcie_bytes_per_s * cp.eff[COMM_LINK_PCIE];
    double a_nvl = cp.alpha_s[COMM_LINK_NVLINK][COMM_PROTO_SIMPLE];
    double a_pcie = cp.alpha_s[COMM_LINK_PCIE][COMM_PROTO_SIMPLE];
    /* DDP's own terms (ddp.h): one collective per bucket on the host; the bucket copy (2 x 4S
     * bytes each way) is the whole backward, beside which the all-reduces run slowed */
    phys_params m;
    cr_assert_eq(physics_load_default(d, &m), 0);
    partition_cfg whole;
    partition_cfg_init(&whole, g);
    double cps = 2 * 4 * S / speed_partition_bandwidth(&whole, g->sms_total, &m);
    double f_sm = cp.nccl_channels / g->sms_total, q = cp.overlap_comm_frac;
    /* NVLink from the catalog: NCCL's first loop over its channels (comm.h), rho chunk-times
     * of S / (C n) each (a 25 MiB bucket is under one loop of 4 x 2 MiB per channel) */
    double ch = cp.nccl_channels;
    double t_nvl = 6 * a_nvl + 1.5 * S / x_nvl +
                   cp.ring_first_loop_idle * ch * fmin(cp.ring_chunk_bytes, S / (ch * 4)) / x_nvl;
    double t_pcie = 6 * fmax(a_nvl, a_pcie) + 1.5 * S / x_pcie;
    /* the gang waits for the slowest of its 4 hosts, each grown by (1 + host_spread e_4): the
     * loop's own host H (host_overlap 0) before the GPU path, DDP's dH beside it */
    double grow = 1 + cp.host_spread * ddp_expected_max(4), dh = 4 * cp.host_collective_s;
    double jct_nvl =
        D * (H * grow + fmax(dh * grow, ddp_overlap(0, cps, 4, t_nvl, f_sm, q) + cps)) / H;
    double jct_pcie =
        D * (H * grow + fmax(dh * grow, ddp_overlap(0, cps, 4, t_pcie, f_sm, q) + cps)) / H;
    const struct {
        const char *topo;
        double jct;
    } cases[] = {{"nvswitch", jct_nvl}, {"pcie", jct_pcie}, {"nvlink-pairs", jct_pcie},
                 {NULL, jct_nvl}};
    char dir[64], path[256], text[1024], cmd[512], out[4096], csv[4096];
    cr_assert(test_tmpdir(dir, sizeof dir, "ddptopo"));
    snprintf(path, sizeof path, "%s/probe.yaml", dir);
    snprintf(text, sizeof text,
             "schema_version: 1\nworkload: probe\nunit: iteration\ngpu: A100-SXM4-40GB\n"
             "ref_batch: 1\ngrad_bytes: %.0f\nparams:\n"
             "  host_s_fixed: {value: %g, from: fixed}\n"
             "  compute_sm_s_fixed: {value: 1e-9, from: fixed}\n"
             "  mem_footprint_bytes_fixed: {value: 1e9, from: fixed}\n",
             4 * S, H);
    cr_assert(test_write_text(path, text));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char topo[64] = "";
        if (cases[i].topo) {
            snprintf(topo, sizeof topo, ", topology: %s", cases[i].topo);
        }
        snprintf(text, sizeof text,
                 "name: ddp-topo\nseed: 1\nhorizon: 1d\ncluster:\n"
                 "  nodes: [{name: n, count: 1, gpu: A100-SXM4-40GB, gpus_per_node: 4%s}]\n"
                 "workload:\n  jobs:\n"
                 "    - {name: a, arrival: fixed, interval: 1s, count: 1, duration: %gs, "
                 "workers: 4, request: {nvidia.com/gpu: 1}, profile: probe.yaml}\n",
                 topo, D);
        snprintf(path, sizeof path, "%s/s.yaml", dir);
        cr_assert(test_write_text(path, text));
        snprintf(cmd, sizeof cmd, "./slicesim run %s -o %s/out --force 2>&1", path, dir);
        cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
        snprintf(path, sizeof path, "%s/out/jobs.csv", dir);
        cr_assert(test_read_text(path, csv, sizeof csv));
        const char *line = strchr(csv, '\n') + 1;
        cr_assert_float_eq(column(line, 12), cases[i].jct, 1e-6, "%s: %s",
                           cases[i].topo ? cases[i].topo : "(none)", line);
        /* run.json's resolved config names the wiring when the scenario does */
        static char json[1 << 16];
        snprintf(path, sizeof path, "%s/out/run.json", dir);
        cr_assert(test_read_text(path, json, sizeof json));
        const char *k = strstr(json, "\"topology\":");
        cr_assert_eq(k != NULL, cases[i].topo != NULL);
        if (k) {
            k += strlen("\"topology\":");
            k += strspn(k, " \t");
            char want[64];
            snprintf(want, sizeof want, "\"%s\"", cases[i].topo);
            cr_assert_eq(strncmp(k, want, strlen(want)), 0, "%.40s", k);
        }
    }
    cr_assert_gt(jct_pcie, jct_nvl + 10, "the two wirings differ by more than rounding");
    test_rm_rf(dir);
    arena_destroy(a);
    diag_destroy(d);
}
