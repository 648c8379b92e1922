/* Unit tests for experiments/migparted.c (mig-parted files) and the `slicesim layouts` command. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "experiments/migparted.h"
#include "sim/err.h"
#include "tests/unit/diagfx.h"

static arena *A;
static diag *D;
static gpu_catalog CAT;

static void setup(void)
{
    A = arena_create();
    D = diag_create();
    cr_assert_eq(catalog_load_default(A, &CAT, D), 0);
}

static void teardown(void)
{
    diag_destroy(D);
    arena_destroy(A);
}

TestSuite(migparted, .init = setup, .fini = teardown);

static void load_fixture(const char *path, migparted_config *cfg)
{
    int rc = migparted_load(path, A, cfg, D);
    if (rc) {
        diag_print(D, stderr);
    }
    cr_assert_eq(rc, 0, "%s loads", path);
}

static migparted_result apply(const char *gpu, const migparted_config *cfg, const char *name,
                              int index, int driver)
{
    const gpu_type *g = gpu_catalog_find(&CAT, gpu);
    cr_assert_not_null(g);
    migparted_result r;
    int rc = migparted_apply(&CAT, g, cfg, name, index, driver, &r, D);
    if (rc) {
        diag_print(D, stderr);
    }
    cr_assert_eq(rc, 0, "%s applies to %s", name, gpu);
    cr_assert_eq(mig_check(g, driver, r.layout.inst, r.layout.n, NULL), MIG_OK);
    return r;
}

static int count_of(const char *gpu, const migparted_result *r, const char *profile)
{
    const gpu_type *g = gpu_catalog_find(&CAT, gpu);
    int p = gpu_profile_index(g, profile), n = 0;
    for (int i = 0; i < r->layout.n; i++) {
        n += r->layout.inst[i].profile == p;
    }
    return n;
}

Test(migparted, default_fixture_device_filters)
{
    migparted_config cfg;
    load_fixture("experiments/mig/config-default.yaml", &cfg);
    cr_assert_str_eq(cfg.version, "v1");
    cr_assert_not_null(migparted_find(&cfg, "all-disabled"));
    /* all-1g.10gb: 7 on 80 GB parts (first entry), 4 double-slice ones on the 40 GB (second). */
    migparted_result r = apply("A100-SXM4-80GB", &cfg, "all-1g.10gb", 0, 0);
    cr_assert_eq(r.entry, 0);
    cr_assert_eq(count_of("A100-SXM4-80GB", &r, "1g.10gb"), 7);
    r = apply("A100-SXM4-40GB", &cfg, "all-1g.10gb", 0, 0);
    cr_assert_eq(r.entry, 1);
    cr_assert_eq(count_of("A100-SXM4-40GB", &r, "1g.10gb"), 4);
    r = apply("H100", &cfg, "all-1g.10gb", 0, 0);
    cr_assert_eq(r.entry, 0);
    /* all-balanced: 2x1g + 2g + 3g on A100-40GB; the A30 entry has a single-string filter. */
    r = apply("A100-40GB", &cfg, "all-balanced", 3, 0);
    cr_assert(r.selected && r.mig_enabled);
    cr_assert_eq(r.layout.n, 4);
    cr_assert_eq(count_of("A100-40GB", &r, "1g.5gb"), 2);
    r = apply("A30", &cfg, "all-balanced", 0, 0);
    cr_assert_eq(count_of("A30", &r, "2g.12gb"), 1);
    /* all-disabled: selected, MIG off */
    r = apply("A100-40GB", &cfg, "all-disabled", 0, 0);
    cr_assert(r.selected);
    cr_assert_not(r.mig_enabled);
    cr_assert_eq(r.layout.n, 0);
    /* a config for another family is recognised as such */
    const char *missing = NULL;
    cr_assert(migparted_not_for(gpu_catalog_find(&CAT, "H100"), migparted_find(&cfg, "all-1g.5gb"),
                                0, &missing));
    cr_assert_str_eq(missing, "1g.5gb");
}

Test(migparted, placement_of_balanced_mirrors_guide_first_choices)
{
    migparted_config cfg;
    load_fixture("experiments/mig/config-default.yaml", &cfg);
    migparted_result r = apply("A100-40GB", &cfg, "all-balanced", 0, 0);
    const gpu_type *g = gpu_catalog_find(&CAT, "A100-40GB");
    /* largest first: the 3g goes to its highest start, 4 (the guide: "-cgi 9,..." gives 3g@4) */
    cr_assert_str_eq(g->profiles[r.layout.inst[0].profile].name, "3g.20gb");
    cr_assert_eq(r.layout.inst[0].start, 4);
    char text[256];
    mig_layout_sort(&r.layout);
    cr_assert_str_eq(mig_layout_format(g, &r.layout, text, sizeof text),
                     "1g.5gb@0 + 1g.5gb@1 + 2g.10gb@2 + 3g.20gb@4");
}

Test(migparted, device_index_lists)
{
    migparted_config cfg;
    load_fixture("experiments/mig/mixed-node.yaml", &cfg);
    migparted_result r = apply("A100-40GB", &cfg, "half-whole-half-split", 2, 0);
    cr_assert_not(r.mig_enabled);
    r = apply("A100-40GB", &cfg, "half-whole-half-split", 5, 0);
    cr_assert_eq(count_of("A100-40GB", &r, "3g.20gb"), 2);
    const gpu_type *g = gpu_catalog_find(&CAT, "A100-40GB");
    cr_assert_eq(mig_idle_compute_slices(g, r.layout.inst, r.layout.n), 1);
    r = apply("A100-40GB", &cfg, "half-whole-half-split", 8, 0);
    cr_assert_not(r.selected, "no entry lists GPU 8");
}

/* ---- errors, exact messages ---- */

static const char *apply_error(const char *yaml, const char *gpu, const char *name, int driver)
{
    static char msg[1024];
    migparted_config cfg;
    diag_clear(D);
    cr_assert_eq(migparted_load_buffer("m.yaml", yaml, strlen(yaml), A, &cfg, D), 0);
    migparted_result r;
    int rc = migparted_apply(&CAT, gpu_catalog_find(&CAT, gpu), &cfg, name, 0, driver, &r, D);
    cr_assert_eq(rc, SIM_EINPUT);
    snprintf(msg, sizeof msg, "%s", fx_diag_message(D, 0));
    return msg;
}

static const char *load_error(const char *yaml)
{
    static char msg[1024];
    migparted_config cfg;
    diag_clear(D);
    cr_assert_eq(migparted_load_buffer("m.yaml", yaml, strlen(yaml), A, &cfg, D), SIM_EINPUT);
    snprintf(msg, sizeof msg, "%s", fx_diag_message(D, 0));
    return msg;
}

Test(migparted, seven_small_and_one_two_slice_do_not_fit)
{
    const char *y = "version: v1\n"
                    "mig-configs:\n"
                    "  too-many:\n"
                    "    - devices: all\n"
                    "      mig-enabled: true\n"
                    "      mig-devices:\n"
                    "        \"1g.5gb\": 7\n"
                    "        \"2g.10gb\": 1\n";
    cr_assert_str_eq(apply_error(y, "A100-40GB", "too-many", 0),
                     "m.yaml:7:9: error: mig-configs.too-many[0].mig-devices: does not fit "
                     "A100-SXM4-40GB: needs 9 compute slices; A100-SXM4-40GB has 7; expected "
                     "instances that fit, e.g. 2g.10gb x1 + 1g.5gb x5 (1g.5gb@0 + 1g.5gb@1 + "
                     "1g.5gb@2 + 1g.5gb@3 + 2g.10gb@4 + 1g.5gb@6), got '1g.5gb x7 + 2g.10gb x1'");
}

Test(migparted, apply_errors)
{
    const char *y = "version: v1\n"
                    "mig-configs:\n"
                    "  h100:\n"
                    "    - devices: all\n"
                    "      mig-enabled: true\n"
                    "      mig-devices: {\"1g.10gb\": 7}\n"
                    "  pair:\n"
                    "    - devices: all\n"
                    "      mig-enabled: true\n"
                    "      mig-devices: {\"4g.20gb\": 1, \"3g.20gb\": 1}\n"
                    "  ci:\n"
                    "    - devices: all\n"
                    "      mig-enabled: true\n"
                    "      mig-devices: {\"1c.3g.20gb\": 1}\n"
                    "  twice:\n"
                    "    - devices: all\n"
                    "      mig-enabled: false\n"
                    "    - devices: [0]\n"
                    "      mig-enabled: false\n";
    cr_assert_str_eq(apply_error(y, "A100-40GB", "h100", 0),
                     "m.yaml:6:20: error: mig-configs.h100[0].mig-devices: invalid on "
                     "A100-SXM4-40GB: 7 instances of 1g.10gb; at most 4 fit on A100-SXM4-40GB; "
                     "expected a valid MIG layout, got '1g.10gb x7'");
    cr_assert_str_eq(apply_error(y, "A30", "h100", 0),
                     "m.yaml:6:21: error: mig-configs.h100[0].mig-devices.1g.10gb: not a profile "
                     "of A30-24GB but of A100-SXM4-40GB; expected one of 1g.6gb, 1g.6gb+me, "
                     "2g.12gb, 2g.12gb+me, 4g.24gb, got '1g.10gb'");
    cr_assert_str_eq(apply_error(y, "A100-40GB", "pair", 470),
                     "m.yaml:10:20: error: mig-configs.pair[0].mig-devices: invalid on "
                     "A100-SXM4-40GB: 4g.20gb and 3g.20gb may coexist only from driver R510, got "
                     "R470; expected a valid MIG layout, got '4g.20gb x1 + 3g.20gb x1'");
    cr_assert_str_eq(apply_error(y, "A100-40GB", "ci", 0),
                     "m.yaml:14:21: error: mig-configs.ci[0].mig-devices.1c.3g.20gb: "
                     "compute-instance profiles are not modelled; expected a GPU-instance profile "
                     "of A100-SXM4-40GB like 1g.5gb, got '1c.3g.20gb'");
    cr_assert_str_eq(apply_error(y, "A100-40GB", "twice", 0),
                     "m.yaml:18:16: error: mig-configs.twice[1].devices: GPU 0 (A100-SXM4-40GB) is "
                     "already selected by entry 0; expected one entry per GPU, got a second");
    cr_assert_str_eq(apply_error(y, "A100-40GB", "nope", 0),
                     "m.yaml:3:3: error: mig-configs: no config named so; expected one of h100, "
                     "pair, ci, twice, got 'nope'");
}

Test(migparted, schema_errors)
{
    cr_assert_str_eq(load_error("version: v2\nmig-configs: {a: [{devices: all, mig-enabled: false}]}\n"),
                     "m.yaml:1:10: error: version: unknown value; expected one of [v1], got 'v2'");
    cr_assert_str_eq(load_error("version: v1\nmig-configs: {}\n"),
                     "m.yaml:2:14: error: mig-configs: wrong type; expected a non-empty map of "
                     "named configs, got an empty map");
    cr_assert_str_eq(load_error("version: v1\nmig-configs:\n  a:\n    - devices: all\n"
                                "      mig-enabled: true\n"),
                     "m.yaml:4:7: error: mig-configs.a[0].mig-devices: missing; required when "
                     "mig-enabled is true; expected a map of profile counts like {\"1g.5gb\": 7}, "
                     "got nothing");
    cr_assert_str_eq(load_error("version: v1\nmig-configs:\n  a:\n    - devices: some\n"
                                "      mig-enabled: false\n"),
                     "m.yaml:4:16: error: mig-configs.a[0].devices: wrong value; expected all or a "
                     "list of GPU indices like [0, 1], got 'some'");
    cr_assert_str_eq(load_error("version: v1\nmig-configs:\n  a:\n    - devices: all\n"
                                "      device-filter: 0x20B0\n      mig-enabled: false\n"),
                     "m.yaml:5:22: error: mig-configs.a[0].device-filter: not a PCI id; expected "
                     "0x, the device id and the vendor id in 8 hex digits like \"0x20B010DE\", got "
                     "'0x20B0'");
    cr_assert_str_eq(load_error("version: v1\nmig-configs:\n  a:\n    - devices: all\n"
                                "      mig-enabled: true\n      mig-devices: {\"1g.5gb\": -1}\n"),
                     "m.yaml:6:31: error: mig-configs.a[0].mig-devices.1g.5gb: not a count; "
                     "expected an integer from 0 to 64, got '-1'");
    const char *m = load_error("version: v1\nmig-configs:\n  a:\n    - devices: all\n"
                               "      mig-enable: true\n");
    cr_assert_str_eq(m, "m.yaml:5:7: error: mig-configs.a[0].mig-enable: unknown key; expected "
                        "one of [device-filter, devices, mig-enabled, mig-devices], got "
                        "'mig-enable'");
}

/* ---- the command line ---- */

static char *run(const char *cmd, int *status)
{
    FILE *p = popen(cmd, "r");
    cr_assert_not_null(p);
    size_t cap = 1 << 20, len = 0;
    char *out = malloc(cap);
    size_t got;
    while ((got = fread(out + len, 1, cap - 1 - len, p)) > 0) {
        len += got;
    }
    out[len] = '\0';
    int st = pclose(p);
    *status = WEXITSTATUS(st);
    return out;
}

static long json_layouts(const char *args)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "./slicesim layouts %s --format json", args);
    int st;
    char *out = run(cmd, &st);
    cr_assert_eq(st, 0);
    cJSON *root = cJSON_Parse(out);
    cr_assert_not_null(root, "valid JSON");
    cJSON *arr = cJSON_GetObjectItemCaseSensitive(root, "layouts");
    cr_assert(cJSON_IsArray(arr), "a top-level layouts array");
    long n = cJSON_GetArraySize(arr);
    cJSON *first = cJSON_GetArrayItem(arr, 0);
    cJSON *inst = cJSON_GetObjectItemCaseSensitive(first, "instances");
    cJSON *i0 = cJSON_GetArrayItem(inst, 0);
    cr_assert(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(i0, "profile")));
    cr_assert(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(i0, "start")));
    cr_assert_eq((long)cJSON_GetObjectItemCaseSensitive(root, "count")->valuedouble, n);
    cJSON_Delete(root);
    free(out);
    return n;
}

/* The counts the catalog records with their sources (test_catalog.c checks them against the
 * enumeration); here the command must print the same. */
static long recorded(const char *gpu, bool all, int driver)
{
    const gpu_type *g = gpu_catalog_find(&CAT, gpu);
    for (int k = 0; k < g->n_layout_counts; k++) {
        const gpu_layout_count *lc = &g->layout_counts[k];
        if (lc->all_profiles == all && lc->maximal_only && lc->driver == driver) {
            return lc->count;
        }
    }
    cr_assert_fail("%s has no recorded count", gpu);
    return -1;
}

Test(migparted, layouts_command_json)
{
    cr_assert_eq(json_layouts("A100-40GB"), recorded("A100-40GB", false, 0));
    cr_assert_eq(json_layouts("A100-40GB --driver R470"), recorded("A100-40GB", false, 470));
    cr_assert_eq(json_layouts("A100-80GB"), recorded("A100-80GB", false, 0));
    cr_assert_eq(json_layouts("A30"), recorded("A30", false, 0));
    cr_assert_eq(json_layouts("H100"), recorded("H100", false, 0));
    cr_assert_eq(json_layouts("A100-40GB --all-profiles"), recorded("A100-40GB", true, 0));
}

Test(migparted, layouts_command_errors)
{
    int st;
    char *out = run("./slicesim layouts A100-41GB 2>&1", &st);
    cr_assert_eq(st, 2);
    cr_assert(strstr(out, "unknown GPU 'A100-41GB'; expected one of A100-SXM4-40GB"), "%s", out);
    free(out);
    out = run("./slicesim layouts H100 --driver R470 2>&1", &st);
    cr_assert_eq(st, 2);
    cr_assert(strstr(out, "MIG on H100-SXM5-80GB needs driver R525 or newer"), "%s", out);
    free(out);
    out = run("./slicesim layouts A100-40GB --mig-config experiments/mig/config-default.yaml "
              "--name all-balanced", &st);
    cr_assert_eq(st, 0);
    cr_assert(strstr(out, "all-balanced         entry 3: 1g.5gb@0 + 1g.5gb@1 + 2g.10gb@2 + "
                          "3g.20gb@4\n"), "%s", out);
    free(out);
    out = run("./slicesim layouts A100-40GB --mig-config experiments/mig/config-default.yaml "
              "--name all-1g.20gb 2>&1", &st);
    cr_assert_eq(st, 2);
    cr_assert(strstr(out, "mig-devices.1g.20gb: not a profile of A100-SXM4-40GB but of "
                          "A100-SXM4-80GB"), "%s", out);
    free(out);
    out = run("./slicesim layouts A100-40GB --mig-config /nonexistent.yaml 2>&1", &st);
    cr_assert_eq(st, 1);
    free(out);
}

Test(migparted, layouts_command_sharing)
{
    int st;
    char *out = run("./slicesim layouts A100-40GB --mig-config experiments/mig/config-default.yaml "
                    "--name all-1g.5gb --sharing experiments/sharing/time-slicing-mig-mixed.yaml",
                    &st);
    cr_assert_eq(st, 0);
    cr_assert(strstr(out, "advertises 14 x nvidia.com/mig-1g.5gb.shared\n"), "%s", out);
    free(out);
    FILE *f = fopen("build/test-bad-sharing.yaml", "w");
    cr_assert_not_null(f);
    fputs("version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
          "      - name: nvidia.com/gpus\n        replicas: 2\n", f);
    fclose(f);
    out = run("./slicesim layouts A100-40GB --mig-config experiments/mig/config-default.yaml "
              "--sharing build/test-bad-sharing.yaml 2>&1", &st);
    cr_assert_eq(st, 2);
    cr_assert(strstr(out, "build/test-bad-sharing.yaml:5:9: error: sharing.timeSlicing.resources[0]"
                          ".name: not a device-plugin resource"), "%s", out);
    free(out);
    remove("build/test-bad-sharing.yaml");
}

/* ---- the GPU operator's ConfigMap around a mig-parted file (experiments/configmap.h) ---- */

Test(migparted, configmap_holds_the_config)
{
    migparted_config cfg;
    load_fixture("experiments/mig/configmap-chep.yaml", &cfg);
    migparted_result r = apply("A100-40GB", &cfg, "3g.20gb-2x2g.10gb", 0, 0);
    cr_assert_eq(count_of("A100-40GB", &r, "2g.10gb"), 2);
    cr_assert_eq(count_of("A100-40GB", &r, "3g.20gb"), 1);
}

#define CM_HEAD "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: m}\ndata:\n"

Test(migparted, configmap_errors_point_into_the_configmap)
{
    /* the config starts on line 6, indented by 4: its line 3 col 5 is the file's 8:9 */
    cr_assert_str_eq(load_error(CM_HEAD "  config.yaml: |\n"
                                        "    version: v1\n"
                                        "    mig-configs:\n"
                                        "      c:\n"
                                        "        - devices: all\n"
                                        "          mig-enabld: false\n"),
                     "m.yaml:10:11: error: mig-configs.c[0].mig-enabld: unknown key; expected one "
                     "of [device-filter, devices, mig-enabled, mig-devices], got 'mig-enabld'");
    cr_assert_str_eq(load_error(CM_HEAD "  config.yaml: |\n    version: v1\n    mig-configs: [\n"),
                     "m.yaml:8:5: error: did not find expected node content");
    cr_assert_str_eq(load_error("apiVersion: v2\nkind: ConfigMap\ndata:\n  a: |\n    x: 1\n"),
                     "m.yaml:1:13: error: apiVersion: not a v1 ConfigMap; expected v1, got 'v2'");
    cr_assert_str_eq(load_error(CM_HEAD "  a: |\n    version: v1\n  b: |\n    version: v1\n"),
                     "m.yaml:5:3: error: data: a ConfigMap holds one config here; expected a "
                     "mapping with one entry like `config.yaml: |`, got several entries");
    cr_assert_str_eq(load_error(CM_HEAD "  config.yaml: \"version: v1\\nmig-configs: {}\\n\"\n"),
                     "m.yaml:5:16: error: data.config.yaml: not a literal block; expected the "
                     "config as a literal block scalar (`config.yaml: |` and the config indented "
                     "below it), got another scalar style");
    cr_assert_str_eq(load_error(CM_HEAD "  c: |\n    version: v1\nspec: {}\n"),
                     "m.yaml:7:1: error: spec: unknown key of a ConfigMap; expected one of "
                     "[apiVersion, kind, metadata, data, binaryData, immutable], got 'spec'");
}
