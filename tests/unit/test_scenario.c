/* Unit tests for experiments/scenario (the scenario language), `slicesim check`, and the
 * bad-input corpus tests/bad_input/ (one file per schema rule; the first lines
 * "# expect: MESSAGE" give the exact messages, in order; "# set: PATH=VALUE" lines give
 * overrides). Tests run from the repository root, so messages name files as
 * tests/bad_input/NAME.yaml. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments/scenario.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"

static const char *mig_parted =
    "version: v1\n"
    "mig-configs:\n"
    "  all-disabled:\n"
    "    - devices: all\n"
    "      mig-enabled: false\n"
    "  all-1g.5gb:\n"
    "    - devices: all\n"
    "      mig-enabled: true\n"
    "      mig-devices:\n"
    "        \"1g.5gb\": 7\n";

static const char *ts_config =
    "version: v1\n"
    "flags:\n"
    "  migStrategy: none\n"
    "sharing:\n"
    "  timeSlicing:\n"
    "    renameByDefault: true\n"
    "    resources:\n"
    "      - name: nvidia.com/gpu\n"
    "        replicas: 4\n";

static const char *scenario_text =
    "name: small-mixed\n"
    "seed: 42\n"
    "horizon: 2h\n"
    "cluster:\n"
    "  nodes:\n"
    "    - name: whole\n"
    "      count: 2\n"
    "      gpu: A100-SXM4-40GB\n"
    "      gpus_per_node: 8\n"
    "    - name: mig\n"
    "      gpu: A100-SXM4-40GB\n"
    "      gpus_per_node: 8\n"
    "      sharing:\n"
    "        mig: {file: mig/a100.yaml, config: all-1g.5gb}\n"
    "    - name: ts\n"
    "      gpu: A100-SXM4-40GB\n"
    "      gpus_per_node: 4\n"
    "      sharing:\n"
    "        timeslice: {file: sharing/ts4.yaml}\n"
    "    - name: mps\n"
    "      gpu: A100-SXM4-40GB\n"
    "      gpus_per_node: 2\n"
    "      sharing: {mps: {replicas: 2}}\n"
    "workload:\n"
    "  jobs:\n"
    "    - name: train\n"
    "      rate: 2/h\n"
    "      duration: {dist: lognormal, median: 30m, sigma: 0.8}\n"
    "      request: {nvidia.com/gpu: 1}\n"
    "    - name: notebook\n"
    "      arrival: fixed\n"
    "      interval: 5m\n"
    "      count: 10\n"
    "      duration: 20m\n"
    "      request: {nvidia.com/mig-1g.5gb: 1}\n"
    "      profile: notebook-small\n"
    "    - name: infer\n"
    "      rate: 10/h\n"
    "      start: 1m\n"
    "      duration: {dist: exponential, mean: 10m}\n"
    "      request: {nvidia.com/gpu.shared: 1}\n"
    "policy:\n"
    "  scheduler: fifo\n"
    "outputs:\n"
    "  files: [run.json, jobs.csv]\n";

static char tmpdir[64];

static void write_file(const char *rel, const char *text)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s", tmpdir, rel);
    FILE *f = fopen(p, "w");
    cr_assert_not_null(f, "cannot write %s", p);
    fputs(text, f);
    fclose(f);
}

static void make_tree(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/slicesim-scn-XXXXXX");
    cr_assert_not_null(mkdtemp(tmpdir));
    char p[256];
    snprintf(p, sizeof p, "%s/mig", tmpdir);
    mkdir(p, 0700);
    snprintf(p, sizeof p, "%s/sharing", tmpdir);
    mkdir(p, 0700);
    write_file("mig/a100.yaml", mig_parted);
    write_file("sharing/ts4.yaml", ts_config);
    write_file("s.yaml", scenario_text);
}

static void remove_tree(void)
{
    const char *files[] = {"mig/a100.yaml", "sharing/ts4.yaml", "s.yaml", "mig", "sharing", ""};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char p[256];
        snprintf(p, sizeof p, "%s/%s", tmpdir, files[i]);
        remove(p);
    }
}

TestSuite(scenario, .init = make_tree, .fini = remove_tree);

static scenario_spec *load_ok(arena *a, diag *d, const char *const *sets, size_t n_sets)
{
    char p[256];
    snprintf(p, sizeof p, "%s/s.yaml", tmpdir);
    scenario_spec *s = NULL;
    int rc = scenario_load_file(p, sets, n_sets, 0, a, d, &s);
    cr_assert_eq(rc, 0, "rc %d, first error: %s", rc,
                 diag_message(d, 0) ? diag_message(d, 0) : "(none)");
    return s;
}

Test(scenario, loads_plain_spec_with_units_converted)
{
    arena *a = arena_create();
    diag *d = diag_create();
    scenario_spec *s = load_ok(a, d, NULL, 0);
    cr_assert_str_eq(s->name, "small-mixed");
    cr_assert_eq(s->seed, 42);
    cr_assert_eq(s->horizon_ns, 7200ll * 1000000000ll);
    cr_assert_eq(s->cluster.n_groups, 4);
    cr_assert_eq(scenario_node_count(s), 5);
    cr_assert_eq(scenario_gpu_count(s), 2 * 8 + 8 + 4 + 2);

    const scenario_node_group *g = s->cluster.groups;
    cr_assert_str_eq(g[0].gpu, "A100-SXM4-40GB");
    cr_assert_eq(g[0].sharing.is_mig, false);
    cr_assert_eq(g[0].sharing.mode, SCN_SHARE_EXCLUSIVE);
    cr_assert_eq(g[1].count, 1);
    cr_assert_eq(g[1].sharing.is_mig, true);
    char want[300];
    snprintf(want, sizeof want, "%s/mig/a100.yaml", tmpdir);
    cr_assert_str_eq(g[1].sharing.mig.file, want);
    cr_assert_str_eq(g[1].sharing.mig.config, "all-1g.5gb");
    cr_assert_eq(g[1].sharing.mig.strategy, SCN_MIG_MIXED);
    cr_assert_eq(g[1].sharing.mig.config_at.line, 14);
    cr_assert_eq(g[2].sharing.mode, SCN_SHARE_TIMESLICE);
    cr_assert_eq(g[2].sharing.rename_by_default, true);
    cr_assert_eq(g[2].sharing.n_rules, 1);
    cr_assert_str_eq(g[2].sharing.rules[0].resource, "nvidia.com/gpu");
    cr_assert_eq(g[2].sharing.rules[0].replicas, 4);
    cr_assert_eq(g[3].sharing.mode, SCN_SHARE_MPS);
    cr_assert_eq(g[3].sharing.n_rules, 1);
    cr_assert_null(g[3].sharing.rules[0].resource);
    cr_assert_eq(g[3].sharing.rules[0].replicas, 2);

    cr_assert_eq(s->workload.n_jobs, 3);
    const scenario_job_class *j = s->workload.jobs;
    cr_assert_eq(j[0].arrival, SCN_ARRIVAL_POISSON);
    cr_assert_float_eq(j[0].rate_per_s, 2.0 / 3600.0, 1e-18);
    cr_assert_eq(j[0].count, 0);
    cr_assert_eq(j[0].duration.dist, SCN_DUR_LOGNORMAL);
    cr_assert_eq(j[0].duration.median_ns, 1800ll * 1000000000ll);
    cr_assert_float_eq(j[0].duration.sigma, 0.8, 1e-15);
    cr_assert_str_eq(j[0].request.resource, "nvidia.com/gpu");
    cr_assert_eq(j[0].request.count, 1);
    cr_assert_null(j[0].profile);
    cr_assert_eq(j[1].arrival, SCN_ARRIVAL_FIXED);
    cr_assert_eq(j[1].interval_ns, 300ll * 1000000000ll);
    cr_assert_eq(j[1].count, 10);
    cr_assert_eq(j[1].duration.dist, SCN_DUR_FIXED);
    cr_assert_eq(j[1].duration.value_ns, 1200ll * 1000000000ll);
    cr_assert_str_eq(j[1].request.resource, "nvidia.com/mig-1g.5gb");
    cr_assert_str_eq(j[1].profile, "notebook-small");
    cr_assert_eq(j[2].start_ns, 60ll * 1000000000ll);
    cr_assert_eq(j[2].duration.dist, SCN_DUR_EXPONENTIAL);
    cr_assert_eq(j[2].duration.mean_ns, 600ll * 1000000000ll);

    cr_assert_str_eq(s->policy.scheduler, "fifo");
    cr_assert_str_eq(s->outputs.dir, "results/small-mixed");
    cr_assert_eq(s->outputs.files, SCN_OUT_RUN_JSON | SCN_OUT_JOBS_CSV);
    cr_assert_eq(s->outputs.sample_interval_ns, 60ll * 1000000000ll);
    cr_assert_eq(s->n_refs, 2);
    cr_assert_str_eq(s->refs[0].what, "mig-parted config");
    cr_assert_eq(s->refs[1].at.line, 19);
    diag_destroy(d);
    arena_destroy(a);
}

Test(scenario, overrides_change_values_before_the_walk)
{
    arena *a = arena_create();
    diag *d = diag_create();
    const char *sets[] = {"workload.jobs[0].rate=30/min", "seed=7",
                          "workload.jobs[1].request.nvidia.com/mig-1g.5gb=2", "outputs.dir=out/x"};
    scenario_spec *s = load_ok(a, d, sets, 4);
    cr_assert_float_eq(s->workload.jobs[0].rate_per_s, 0.5, 1e-15);
    cr_assert_eq(s->seed, 7);
    cr_assert_eq(s->workload.jobs[1].request.count, 2);
    cr_assert_str_eq(s->outputs.dir, "out/x");
    cr_assert_eq(s->seed_at.line, 0);
    cr_assert_str_eq(s->seed_at.file, "--set seed=7");
    diag_destroy(d);
    arena_destroy(a);
}

Test(scenario, buffer_without_file_access_resolves_paths_only)
{
    arena *a = arena_create();
    diag *d = diag_create();
    scenario_spec *s = NULL;
    int rc = scenario_load_buffer("x/y.yaml", NULL, scenario_text, strlen(scenario_text), NULL, 0,
                                  SCENARIO_NO_FILES, a, d, &s);
    cr_assert_eq(rc, 0, "%s", diag_message(d, 0) ? diag_message(d, 0) : "");
    cr_assert_str_eq(s->dir, "x");
    cr_assert_str_eq(s->cluster.groups[1].sharing.mig.file, "x/mig/a100.yaml");
    cr_assert_str_eq(s->cluster.groups[2].sharing.sharing_file, "x/sharing/ts4.yaml");
    cr_assert_eq(s->cluster.groups[2].sharing.n_rules, 0);
    diag_destroy(d);
    arena_destroy(a);
}
