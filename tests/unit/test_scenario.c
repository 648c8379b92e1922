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

#include "experiments/resolve.h"
#include "experiments/scenario.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "tests/unit/diagfx.h"

static const char *mig_parted = "version: v1\n"
                                "mig-configs:\n"
                                "  all-disabled:\n"
                                "    - devices: all\n"
                                "      mig-enabled: false\n"
                                "  all-1g.5gb:\n"
                                "    - devices: all\n"
                                "      mig-enabled: true\n"
                                "      mig-devices:\n"
                                "        \"1g.5gb\": 7\n";

static const char *ts_config = "version: v1\n"
                               "flags:\n"
                               "  migStrategy: none\n"
                               "sharing:\n"
                               "  timeSlicing:\n"
                               "    renameByDefault: true\n"
                               "    resources:\n"
                               "      - name: nvidia.com/gpu\n"
                               "        replicas: 4\n";

static const char *scenario_text = "name: small-mixed\n"
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
                                   "      profile: vit-b16-infer\n"
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
                 fx_diag_message(d, 0) ? fx_diag_message(d, 0) : "(none)");
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
    cr_assert_str_eq(j[1].profile, "vit-b16-infer");
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

    /* resolved at load (experiments/resolve.h): the run's catalog, the one profile loaded once
     * and carried by its class, a group's wiring as its GPU type says */
    const scenario_resolved *r = s->resolved;
    cr_assert_not_null(r);
    cr_assert_not_null(gpu_catalog_find(&r->cat, "A100-SXM4-40GB"));
    cr_assert_eq(r->n_profiles, 1);
    cr_assert_str_eq(r->profiles[0].name, "vit-b16-infer");
    cr_assert_null(r->classes[0].profile);
    cr_assert_str_eq(r->classes[1].profile, "vit-b16-infer");
    cr_assert_eq(r->classes[1].count, 10);
    cr_assert_null(r->group_topo[0]);
    cr_assert_null(r->trules); /* no trace */
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
    cr_assert_eq(rc, 0, "%s", fx_diag_message(d, 0) ? fx_diag_message(d, 0) : "");
    cr_assert_str_eq(s->dir, "x");
    cr_assert_str_eq(s->cluster.groups[1].sharing.mig.file, "x/mig/a100.yaml");
    cr_assert_str_eq(s->cluster.groups[2].sharing.sharing_file, "x/sharing/ts4.yaml");
    cr_assert_eq(s->cluster.groups[2].sharing.n_rules, 0);
    diag_destroy(d);
    arena_destroy(a);
}

/* ---- bad-input corpus ------------------------------------------------------------------------ */

#define BAD_DIR "tests/bad_input"
enum { MAX_LINES = 32, LINE_LEN = 1024 };

typedef struct bad_case {
    size_t n_expect, n_sets;
    char expect[MAX_LINES][LINE_LEN];
    char set[MAX_LINES][LINE_LEN];
    const char *sets[MAX_LINES];
} bad_case;

/* Read the header comments ("# expect: ", "# set: ") of a bad-input file. */
static void read_case(const char *path, bad_case *bc)
{
    memset(bc, 0, sizeof *bc);
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    char line[LINE_LEN];
    while (fgets(line, sizeof line, f) && line[0] == '#') {
        line[strcspn(line, "\n")] = '\0';
        if (!strncmp(line, "# expect: ", 10) && bc->n_expect < MAX_LINES) {
            snprintf(bc->expect[bc->n_expect++], LINE_LEN, "%s", line + 10);
        } else if (!strncmp(line, "# set: ", 7) && bc->n_sets < MAX_LINES) {
            snprintf(bc->set[bc->n_sets], LINE_LEN, "%s", line + 7);
            bc->sets[bc->n_sets] = bc->set[bc->n_sets];
            bc->n_sets++;
        }
    }
    fclose(f);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Sorted names of the *.yaml files of BAD_DIR (caller frees each and the array). */
static size_t list_bad_files(char ***out)
{
    DIR *dir = opendir(BAD_DIR);
    cr_assert_not_null(dir, "cannot open %s (tests run from the repository root)", BAD_DIR);
    size_t n = 0, cap = 16;
    char **names = malloc(cap * sizeof *names);
    struct dirent *e;
    while ((e = readdir(dir))) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".yaml")) {
            if (n == cap) {
                cap *= 2;
                names = realloc(names, cap * sizeof *names);
            }
            names[n++] = strdup(e->d_name);
        }
    }
    closedir(dir);
    qsort(names, n, sizeof *names, cmp_str);
    *out = names;
    return n;
}

Test(bad_input, every_file_gives_exactly_its_expected_messages)
{
    char **names;
    size_t n = list_bad_files(&names);
    cr_assert_geq(n, 40, "only %zu bad-input files", n);
    bad_case *bc = malloc(sizeof *bc);
    for (size_t i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", BAD_DIR, names[i]);
        read_case(path, bc);
        cr_expect_gt(bc->n_expect, 0, "%s has no '# expect:' line", path);
        arena *a = arena_create();
        diag *d = diag_create();
        scenario_spec *s = NULL;
        int rc = scenario_load_file(path, bc->sets, bc->n_sets, 0, a, d, &s);
        cr_expect_eq(rc, SIM_EINPUT, "%s: status %d", path, rc);
        cr_expect_null(s, "%s: a spec came back", path);
        cr_expect_eq((size_t)diag_error_count(d), bc->n_expect, "%s: %d errors, %zu expected", path,
                     diag_error_count(d), bc->n_expect);
        for (size_t k = 0; k < bc->n_expect && k < (size_t)diag_error_count(d); k++) {
            cr_expect_str_eq(fx_diag_message(d, (int)k), bc->expect[k], "%s message %zu", path, k);
        }
        diag_destroy(d);
        arena_destroy(a);
        free(names[i]);
    }
    free(bc);
    free(names);
}

/* Run ./slicesim with args; capture stdout and stderr; return the exit status. */
static int run_slicesim(const char *args, char *out, size_t n_out, char *err, size_t n_err)
{
    char o[] = "/tmp/slicesim-out-XXXXXX", e[] = "/tmp/slicesim-err-XXXXXX";
    int fo = mkstemp(o), fe = mkstemp(e);
    cr_assert(fo >= 0 && fe >= 0);
    close(fo);
    close(fe);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "./slicesim %s >%s 2>%s", args, o, e);
    int st = system(cmd);
    FILE *f = fopen(o, "r");
    size_t k = fread(out, 1, n_out - 1, f);
    out[k] = '\0';
    fclose(f);
    f = fopen(e, "r");
    k = fread(err, 1, n_err - 1, f);
    err[k] = '\0';
    fclose(f);
    remove(o);
    remove(e);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(bad_input, check_command_prints_errors_and_exits_2)
{
    if (access("./slicesim", X_OK) != 0) {
        cr_skip_test("./slicesim is not built (make test builds it first)");
    }
    bad_case *bc = malloc(sizeof *bc);
    read_case(BAD_DIR "/many_errors.yaml", bc);
    char out[4096], err[8192], want[8192] = "";
    int st = run_slicesim("check " BAD_DIR "/many_errors.yaml", out, sizeof out, err, sizeof err);
    cr_assert_eq(st, 2);
    cr_assert_str_empty(out);
    for (size_t k = 0; k < bc->n_expect; k++) {
        strcat(want, bc->expect[k]);
        strcat(want, "\n");
    }
    cr_assert_eq(bc->n_expect, 4);
    cr_assert_str_eq(err, want);

    read_case(BAD_DIR "/bad_set_value.yaml", bc);
    st = run_slicesim("check " BAD_DIR "/bad_set_value.yaml --set workload.jobs[0].rate=fast", out,
                      sizeof out, err, sizeof err);
    cr_assert_eq(st, 2);
    snprintf(want, sizeof want, "%s\n", bc->expect[0]);
    cr_assert_str_eq(err, want);
    free(bc);
}

Test(scenario, check_command_ok_and_missing_file)
{
    if (access("./slicesim", X_OK) != 0) {
        cr_skip_test("./slicesim is not built (make test builds it first)");
    }
    char out[4096], err[4096], args[512], want[512];
    /* the loader loads the workload profiles a run uses: notebook-small is no library profile */
    snprintf(args, sizeof args,
             "check %s/s.yaml --set seed=9 --set workload.jobs[1].profile=notebook-small", tmpdir);
    cr_assert_eq(run_slicesim(args, out, sizeof out, err, sizeof err), 2, "%s", err);
    cr_assert_not_null(strstr(err, "got 'notebook-small'"), "%s", err);
    snprintf(args, sizeof args, "check %s/s.yaml --set seed=9", tmpdir);
    cr_assert_eq(run_slicesim(args, out, sizeof out, err, sizeof err), 0, "%s", err);
    snprintf(want, sizeof want, "%s/s.yaml: ok (5 nodes, 30 GPUs, 3 job classes)\n", tmpdir);
    cr_assert_eq(strncmp(out, want, strlen(want)), 0, "%s", out);
    cr_assert_not_null(strstr(out, "\nestimate: about "), "%s", out);
    cr_assert_str_empty(err);
    snprintf(args, sizeof args, "check %s/absent.yaml", tmpdir);
    cr_assert_eq(run_slicesim(args, out, sizeof out, err, sizeof err), 1);
    snprintf(want, sizeof want,
             "slicesim check: error: cannot read '%s/absent.yaml': No such file or directory\n",
             tmpdir);
    cr_assert_str_eq(err, want);
    /* an endless file stops at the size cap instead of exhausting memory */
    cr_assert_eq(run_slicesim("check /dev/zero", out, sizeof out, err, sizeof err), 1);
    cr_assert_str_eq(err, "slicesim check: error: cannot read '/dev/zero': File too large\n");
}
