/* Unit tests for the GPU catalog: model/hw/gpus.yaml as loaded by experiments/catalog_load.c, the
 * layout counts it records (each with its source) against the enumeration of model/hw/mig.c, the
 * A100-40GB layouts against ../shared/data/gpus.yaml, and bad catalog input. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "experiments/fileio.h"
#include "model/hw/catalog.h"
#include "model/hw/mig.h"
#include "sim/err.h"
#include "tests/unit/diagfx.h"

static arena *A;
static diag *D;
static gpu_catalog CAT;

static void load_default(void)
{
    A = arena_create();
    D = diag_create();
    int rc = catalog_load_default(A, &CAT, D);
    if (rc) {
        diag_print(D, stderr);
    }
    cr_assert_eq(rc, 0, "the embedded catalog loads");
}

static void unload(void)
{
    diag_destroy(D);
    arena_destroy(A);
}

TestSuite(catalog, .init = load_default, .fini = unload);

/* Whether the catalog's sources list `tag` (what a layout count cites). */
static bool cited(const gpu_catalog *c, const char *tag)
{
    for (size_t i = 0; i < c->n_sources; i++) {
        if (!strcmp(c->source_tags[i], tag)) {
            return true;
        }
    }
    return false;
}

Test(catalog, every_recorded_layout_count_is_reproduced)
{
    int checked = 0;
    for (size_t i = 0; i < CAT.n_gpus; i++) {
        const gpu_type *g = &CAT.gpus[i];
        for (int k = 0; k < g->n_layout_counts; k++) {
            const gpu_layout_count *lc = &g->layout_counts[k];
            mig_enum_opts o = {.driver = lc->driver, .all_profiles = lc->all_profiles,
                               .maximal_only = lc->maximal_only};
            long n = mig_enumerate(g, &o, NULL, NULL);
            cr_expect_eq(n, lc->count, "%s %s %s driver R%d: enumerated %ld, recorded %ld (src %s)",
                         g->name, lc->all_profiles ? "all" : "classic",
                         lc->maximal_only ? "maximal" : "non-empty", lc->driver, n, lc->count,
                         lc->src);
            checked++;
        }
    }
    cr_assert_geq(checked, 10);
}

/* The four GPUs the brief names must carry a classic maximal count with a source. */
Test(catalog, named_gpus_have_sourced_counts)
{
    const char *names[] = {"A100-40GB", "A100-80GB", "A30", "H100"};
    for (size_t i = 0; i < 4; i++) {
        const gpu_type *g = gpu_catalog_find(&CAT, names[i]);
        cr_assert_not_null(g, "%s is in the catalog", names[i]);
        bool found = false;
        for (int k = 0; k < g->n_layout_counts; k++) {
            const gpu_layout_count *lc = &g->layout_counts[k];
            if (!lc->all_profiles && lc->maximal_only && lc->driver == 0) {
                found = true;
                cr_assert(lc->src && strlen(lc->src) > 0);
                for (const char *t = lc->src; *t;) {
                    char tag[64];
                    size_t n = strcspn(t, " ");
                    snprintf(tag, sizeof tag, "%.*s", (int)n, t);
                    cr_assert(cited(&CAT, tag), "tag %s is cited", tag);
                    t += n + (t[n] == ' ');
                }
            }
        }
        cr_assert(found, "%s has a classic maximal count", names[i]);
    }
}

Test(catalog, three_g_plus_three_g_leaves_a_compute_slice_idle)
{
    const gpu_type *g = gpu_catalog_find(&CAT, "A100-SXM4-40GB");
    int p3 = gpu_profile_index(g, "3g.20gb");
    cr_assert_geq(p3, 0);
    mig_instance l[] = {{p3, 0}, {p3, 4}};
    cr_assert_eq(mig_check(g, 0, l, 2, NULL), MIG_OK);
    cr_assert_eq(mig_idle_compute_slices(g, l, 2), 1);
    cr_assert_eq(mig_idle_memory_slices(g, l, 2), 0);
    cr_assert_eq(mig_layout_sms(g, l, 2), 2 * g->profiles[p3].sms);
    /* With one compute slice idle nothing else can be added: it is a maximal layout. */
    int p1 = gpu_profile_index(g, "1g.5gb");
    for (int s = 0; s < 8; s++) {
        mig_instance l3[] = {{p3, 0}, {p3, 4}, {p1, s}};
        cr_assert_neq(mig_check(g, 0, l3, 3, NULL), MIG_OK);
    }
}

Test(catalog, lookups_and_units)
{
    const gpu_type *g = gpu_catalog_find(&CAT, "a100-sxm4-40gb");
    cr_assert_not_null(g);
    cr_assert_str_eq(g->name, "A100-SXM4-40GB");
    cr_assert_eq(gpu_catalog_find(&CAT, "A100-40GB"), g);
    cr_assert_null(gpu_catalog_find(&CAT, "A100-41GB"));
    const mig_profile *p = gpu_find_profile(g, "1g.5gb+me");
    cr_assert_not_null(p);
    cr_assert(p->is_media_extension);
    cr_assert_eq(p->min_driver, 470);
    /* mem_gib 4.75 in the file -> bytes */
    cr_assert_eq(gpu_find_profile(g, "1g.5gb")->mem_bytes, (uint64_t)(4.75 * 1073741824.0));
    cr_assert_eq(g->pair_4g_3g_min_driver, 510);
    cr_assert_eq(g->n_pci_ids, 1);
    cr_assert_eq(g->pci_device_ids[0], 0x20B0);
    const gpu_type *b = gpu_catalog_find(&CAT, "B200");
    cr_assert_not_null(b);
    cr_assert_eq(gpu_find_profile(b, "7g.180gb")->id, -1, "unsourced id is -1");
    cr_assert_eq(gpu_find_profile(b, "7g.180gb")->sms, 0, "unsourced SMs are 0");
    cr_assert_eq(b->sms_total, 148);
    cr_assert_not_null(strstr(b->unsourced, "sms_mig_full"), "7g.180gb's SMs are unsourced");
    cr_assert_gt(CAT.n_rules, 4);
}

/* ---- the A100-40GB layouts against the research notes in ../shared ---- */

static char *slurp(const char *path)
{
    char *buf = NULL;
    size_t len;
    return fileio_read_all(path, FILEIO_MAX_BYTES, &buf, &len) == 0 ? buf : NULL;
}

typedef struct layout_set {
    const gpu_type *g;
    int n;
    char text[64][160];
} layout_set;

static int add_layout(const mig_layout *l, void *ctx)
{
    layout_set *s = ctx;
    if (s->n < 64) {
        char *t = s->text[s->n];
        t[0] = '\0';
        for (int i = 0; i < l->n; i++) {
            size_t k = strlen(t);
            snprintf(t + k, 160 - k, "%s%s@%d", i ? " " : "", s->g->profiles[l->inst[i].profile].name,
                     l->inst[i].start);
        }
    }
    s->n++;
    return 0;
}

Test(catalog, a100_40gb_layouts_match_shared_notes)
{
    char *notes = slurp("../shared/data/gpus.yaml");
    if (!notes) {
        cr_skip_test("../shared/data/gpus.yaml is absent: cannot compare with the research notes");
    }
    const gpu_type *g = gpu_catalog_find(&CAT, "A100-SXM4-40GB");
    layout_set got = {.g = g};
    mig_enum_opts o = {.maximal_only = true};
    mig_enumerate(g, &o, add_layout, &got);

    /* counts: layout_counts_derived: {classic5_maximal_r510: N, classic5_maximal_pre_r510: M, ...} */
    const char *c = strstr(notes, "classic5_maximal_r510:");
    const char *cp = strstr(notes, "classic5_maximal_pre_r510:");
    cr_assert(c && cp, "the notes give the counts");
    long n510 = strtol(c + strlen("classic5_maximal_r510:"), NULL, 10);
    long npre = strtol(cp + strlen("classic5_maximal_pre_r510:"), NULL, 10);
    cr_assert_eq(got.n, n510);
    o.driver = 470;
    cr_assert_eq(mig_enumerate(g, &o, NULL, NULL), npre);

    /* the layouts themselves: valid_full_layouts_derived lines like - ["4g.20gb@0", "3g.20gb@4"] */
    const char *list = strstr(notes, "valid_full_layouts_derived:");
    const char *end = strstr(notes, "layout_counts_derived:");
    cr_assert(list && end && list < end);
    int listed = 0;
    for (const char *line = strchr(list, '\n'); line && line < end; line = strchr(line + 1, '\n')) {
        const char *open = strchr(line, '[');
        const char *nl = strchr(line + 1, '\n');
        if (!open || (nl && open > nl)) {
            continue;
        }
        char want[160] = "";
        for (const char *q = strchr(open, '"'); q && (!nl || q < nl); q = strchr(q + 1, '"')) {
            const char *qe = strchr(q + 1, '"');
            size_t k = strlen(want);
            snprintf(want + k, sizeof want - k, "%s%.*s", k ? " " : "", (int)(qe - q - 1), q + 1);
            q = qe;
        }
        bool found = false;
        for (int i = 0; i < got.n && !found; i++) {
            found = !strcmp(got.text[i], want);
        }
        cr_expect(found, "notes layout '%s' is enumerated", want);
        listed++;
    }
    cr_assert_eq(listed, got.n);
    free(notes);
}

/* ---- bad catalog input: exact messages ---- */

static const char *load_bad(const char *yaml)
{
    static char msg[1024];
    arena *a = arena_create();
    diag *d = diag_create();
    gpu_catalog c;
    int rc = catalog_load_buffer("bad.yaml", yaml, strlen(yaml), a, &c, d);
    cr_assert_eq(rc, SIM_EINPUT);
    cr_assert_geq(diag_error_count(d), 1);
    snprintf(msg, sizeof msg, "%s", fx_diag_message(d, 0));
    diag_destroy(d);
    arena_destroy(a);
    return msg;
}

#define HEAD                                                                                    \
    "schema_version: 1\n"                                                                       \
    "sources:\n"                                                                                \
    "  - {tag: S, text: a source}\n"                                                            \
    "validity_rules:\n"                                                                         \
    "  - {id: no_overlap, text: t, src: [S]}\n"                                                 \
    "gpus:\n"
#define GPU(extra, prof)                                                                        \
    "  - name: T1\n"                                                                            \
    "    arch: Ampere\n"                                                                        \
    "    compute_slices: 2\n"                                                                   \
    "    memory_slices: 2\n"                                                                    \
    "    max_mig_instances: 2\n"                                                                \
    "    memory_gb: 8\n"                                                                        \
    "    unsourced: [pci_device_ids, mig_min_driver, sms_total, sms_mig_full, "                 \
    "mem_bandwidth_gb_s, l2_mb, peak_tflops, tdp_w, nvlink_gb_s_total, pcie_gb_s_per_direction, " \
    "sm_clock_boost_mhz]\n"                                                                     \
    "    src: [S]\n" extra                                                                      \
    "    profiles:\n"                                                                           \
    "      - {name: 1g.4gb, id: 1, compute_slices: 1, placements: \"" prof "\", sms: 5, "       \
    "mem_gib: 4, copy_engines: 1, nvdec: 0, nvenc: 0, jpeg: 0, ofa: 0, max_instances: 2, src: [S]}\n"

Test(catalog_bad, a_minimal_catalog_loads)
{
    const char *y = HEAD GPU("", "{0,1}:1");
    arena *a = arena_create();
    diag *d = diag_create();
    gpu_catalog c;
    int rc = catalog_load_buffer("ok.yaml", y, strlen(y), a, &c, d);
    if (rc) {
        diag_print(d, stderr);
    }
    cr_assert_eq(rc, 0);
    cr_assert_eq(c.n_gpus, 1);
    mig_enum_opts o = {.maximal_only = true};
    cr_assert_eq(mig_enumerate(&c.gpus[0], &o, NULL, NULL), 1, "1g@0 + 1g@1");
    diag_destroy(d);
    arena_destroy(a);
}

Test(catalog_bad, placements_notation)
{
    cr_assert_str_eq(load_bad(HEAD GPU("", "{0,1}:2")),
                     "bad.yaml:16:62: error: gpus[0].profiles[0].placements: a placement runs past "
                     "the GPU's memory slices; expected nvidia-smi -lgipp notation like \"{0,2,4}:2\" "
                     "within 2 memory slices, got '{0,1}:2'");
    cr_assert_str_eq(load_bad(HEAD GPU("", "{1,0}:1")),
                     "bad.yaml:16:62: error: gpus[0].profiles[0].placements: starts are not in "
                     "ascending order; expected nvidia-smi -lgipp notation like \"{0,2,4}:2\" "
                     "within 2 memory slices, got '{1,0}:1'");
    cr_assert_str_eq(load_bad(HEAD GPU("", "0,1:1")),
                     "bad.yaml:16:62: error: gpus[0].profiles[0].placements: does not open with "
                     "'{'; expected nvidia-smi -lgipp notation like \"{0,2,4}:2\" within 2 memory "
                     "slices, got '0,1:1'");
}

Test(catalog_bad, unknown_key_and_unsourced)
{
    const char *m = load_bad(HEAD GPU("    sm_count: 5\n", "{0,1}:1"));
    cr_assert(strncmp(m, "bad.yaml:15:5: error: gpus[0].sm_count: unknown key", 51) == 0, "%s", m);
    cr_assert_str_eq(load_bad(HEAD GPU("    tdp_w: 300\n", "{0,1}:1")),
                     "bad.yaml:13:114: error: gpus[0].unsourced[7]: listed as unsourced but given; "
                     "expected a field that is absent, got 'tdp_w'");
}

Test(catalog_bad, missing_figure_must_be_listed)
{
    const char *y = HEAD
        "  - name: T1\n"
        "    arch: Ampere\n"
        "    compute_slices: 1\n"
        "    memory_slices: 1\n"
        "    max_mig_instances: 1\n"
        "    memory_gb: 8\n"
        "    unsourced: [pci_device_ids, mig_min_driver, sms_total, sms_mig_full, l2_mb, peak_tflops, "
        "tdp_w, nvlink_gb_s_total, pcie_gb_s_per_direction, sm_clock_boost_mhz]\n"
        "    src: [S]\n"
        "    profiles:\n"
        "      - {name: 1g.4gb, id: 1, compute_slices: 1, placements: \"{0}:1\", sms: 5, mem_gib: 4, "
        "copy_engines: 1, nvdec: 0, nvenc: 0, jpeg: 0, ofa: 0, max_instances: 1, src: [S]}\n";
    cr_assert_str_eq(load_bad(y),
                     "bad.yaml:7:5: error: gpus[0].mem_bandwidth_gb_s: missing; expected a value "
                     "with its source, or the key listed under unsourced, got nothing");
}

Test(catalog_bad, cross_references)
{
    const char *y = HEAD GPU("", "{0,1}:1");
    char buf[4096];
    /* unknown source tag */
    snprintf(buf, sizeof buf, "%s", y);
    char *s = strstr(buf, "    src: [S]\n");
    memcpy(s, "    src: [X]\n", 13);
    cr_assert_str_eq(load_bad(buf), "bad.yaml:14:11: error: gpus[0].src[0]: unknown source tag; "
                                    "expected a tag defined under sources, got 'X'");
    /* profile name and compute slices disagree */
    snprintf(buf, sizeof buf, "%s", y);
    s = strstr(buf, "name: 1g.4gb");
    memcpy(s, "name: 2g.4gb", 12);
    cr_assert_str_eq(load_bad(buf), "bad.yaml:16:16: error: gpus[0].profiles[0].name: name "
                                    "disagrees with compute_slices 1; expected 1g.*, got '2g.4gb'");
    /* a rule id the code does not implement */
    snprintf(buf, sizeof buf, "%s", y);
    s = strstr(buf, "id: no_overlap");
    memcpy(s, "id: no_overlaq", 14);
    cr_assert_str_eq(load_bad(buf),
                     "bad.yaml:5:10: error: validity_rules[0].id: not a rule model/hw/mig.c implements; "
                     "expected one of no_overlap, max_instances, compute_budget, pre_r510_4g_3g, "
                     "driver_minimums, auto_placement, got 'no_overlaq'");
}

/* Issue 22: every GPU type has its whole-GPU SM count and an FP32 peak (H200, A30, H100-NVL,
 * GH200 and B200 had none), and the H200's are what the device reports (132 SMs, 1980 MHz,
 * calib/results/2026-11-22-h200-sxm-x2.json). */
Test(catalog, every_gpu_has_its_sm_count_and_fp32_peak)
{
    for (size_t i = 0; i < CAT.n_gpus; i++) {
        const gpu_type *g = &CAT.gpus[i];
        cr_assert_gt(g->sms_total, 0, "%s has no sms_total", g->name);
        cr_assert_gt(g->peak_flops[GPU_FMT_FP32], 0, "%s has no fp32 peak", g->name);
        cr_assert(g->sms_mig_full <= g->sms_total, "%s: MIG SMs %d > %d", g->name, g->sms_mig_full,
                  g->sms_total);
    }
    const gpu_type *h = gpu_catalog_find(&CAT, "H200");
    cr_assert_eq(h->sms_total, 132);
    cr_assert_float_eq(h->sm_clock_boost_hz, 1980e6, 1);
    cr_assert_float_eq(h->peak_flops[GPU_FMT_BF16_TENSOR], 989.5e12, 1);
    cr_assert_eq(gpu_catalog_find(&CAT, "A30")->sms_total, 56);
    cr_assert_eq(gpu_catalog_find(&CAT, "GH200")->sms_total, 132);
    cr_assert_eq(gpu_find_profile(gpu_catalog_find(&CAT, "B200"), "4g.90gb")->sms, 72);
}
