/* Unit tests for experiments/yamlx (YAML documents, locations, overrides) and experiments/cfg
 * (declarative schema walker, unit parsers, exact message shapes). */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/cfg.h"
#include "experiments/yamlx.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "tests/unit/diagfx.h"

typedef struct t_item {
    const char *name;
    uint32_t count;
    src_loc at;
} t_item;

typedef struct t_inner {
    bool on;
    double ratio;
} t_inner;

typedef struct t_spec {
    const char *name;
    uint64_t seed;
    int level;
    int64_t offset;
    uint64_t mem_bytes;
    int64_t horizon_ns;
    double period_s;
    double rate_per_s;
    int mode;
    const char *flavour;
    t_inner inner;
    t_item *items;
    size_t n_items;
    const char **tags;
    size_t n_tags;
    src_loc name_at;
    src_loc at;
} t_spec;

static const char *const mode_names[] = {"alpha", "beta", "gamma", NULL};
static const char *const flavour_names[] = {"sweet", "sour", NULL};

static const cfg_field inner_fields[] = {
    {"on", CFG_BOOL, .dflt = "true", .off = offsetof(t_inner, on)},
    {"ratio", CFG_DOUBLE, CFG_MIN(0), CFG_MAX(1), .dflt = "0.5", .off = offsetof(t_inner, ratio)},
    {0},
};

static const cfg_field item_fields[] = {
    CFG_SELF(t_item, at),
    {"name", CFG_STRING, .required = true, .off = offsetof(t_item, name)},
    {"count", CFG_U32, CFG_MIN(1), CFG_MAX(64), .dflt = "8", .off = offsetof(t_item, count)},
    {0},
};

static const cfg_field spec_fields[] = {
    CFG_SELF(t_spec, at),
    {"name", CFG_STRING, .required = true, .off = offsetof(t_spec, name), CFG_LOC(t_spec, name_at)},
    {"seed", CFG_U64, .required = true, .off = offsetof(t_spec, seed)},
    {"level", CFG_INT, CFG_MIN(-3), CFG_MAX(3), .dflt = "0", .off = offsetof(t_spec, level)},
    {"offset", CFG_I64, .off = offsetof(t_spec, offset)},
    {"memory", CFG_BYTES, CFG_MIN(1), .off = offsetof(t_spec, mem_bytes)},
    {"horizon", CFG_DURATION, CFG_MIN(1), CFG_MAX(86400), .dflt = "1h",
     .off = offsetof(t_spec, horizon_ns)},
    {"period", CFG_SECONDS, .off = offsetof(t_spec, period_s)},
    {"rate", CFG_RATE, CFG_MIN(0), .off = offsetof(t_spec, rate_per_s)},
    {"mode", CFG_ENUM, .names = mode_names, .dflt = "beta", .off = offsetof(t_spec, mode)},
    {"flavour", CFG_STRING, .names = flavour_names, .off = offsetof(t_spec, flavour)},
    {"inner", CFG_MAP, .sub = inner_fields, .off = offsetof(t_spec, inner)},
    {"items", CFG_SEQ, CFG_MIN(1), CFG_SEQ_OF(t_spec, items, n_items, t_item, item_fields)},
    {"tags", CFG_SEQ, .elem = CFG_STRING, .off = offsetof(t_spec, tags),
     .count_off = offsetof(t_spec, n_tags)},
    {0},
};

typedef struct fixture {
    arena *a;
    diag *d;
    yamlx_doc *doc;
    t_spec *spec;
} fixture;

/* Load `text` as "t.yaml", apply overrides, walk spec_fields. Returns the load status. */
static int load(fixture *fx, const char *text, const char *const *sets)
{
    fx->a = arena_create();
    fx->d = diag_create();
    fx->spec = arena_alloc(fx->a, sizeof *fx->spec);
    int rc = yamlx_load_buffer("t.yaml", text, strlen(text), fx->a, fx->d, &fx->doc);
    if (rc) {
        return rc;
    }
    for (size_t i = 0; sets && sets[i]; i++) {
        yamlx_set(fx->doc, sets[i], fx->d);
    }
    cfg_walker w;
    cfg_walker_init(&w, fx->doc, fx->a, fx->d, NULL);
    cfg_walk_root(&w, spec_fields, fx->spec);
    cfg_walker_fini(&w);
    return diag_error_count(fx->d) ? SIM_EINPUT : 0;
}

static void unload(fixture *fx)
{
    yamlx_destroy(fx->doc);
    diag_destroy(fx->d);
    arena_destroy(fx->a);
}

/* Load and expect exactly one message. */
static void expect_one(const char *text, const char *msg)
{
    fixture fx = {0};
    load(&fx, text, NULL);
    cr_assert_eq(diag_error_count(fx.d), 1, "errors: %d, first: %s", diag_error_count(fx.d),
                 fx_diag_message(fx.d, 0) ? fx_diag_message(fx.d, 0) : "(none)");
    cr_assert_str_eq(fx_diag_message(fx.d, 0), msg);
    unload(&fx);
}

static const char *good = "name: demo\n"
                          "seed: 18446744073709551615\n"
                          "level: -2\n"
                          "memory: 80GiB\n"
                          "horizon: 1.5h\n"
                          "period: 250ms\n"
                          "rate: 2/h\n"
                          "mode: gamma\n"
                          "flavour: sour\n"
                          "inner: {ratio: 0.25}\n"
                          "items:\n"
                          "  - name: a\n"
                          "  - {name: b, count: 3}\n"
                          "tags: [x, y, z]\n";

Test(cfg, walks_every_type_with_units_converted)
{
    fixture fx = {0};
    cr_assert_eq(load(&fx, good, NULL), 0, "%s", fx_diag_message(fx.d, 0));
    t_spec *s = fx.spec;
    cr_assert_str_eq(s->name, "demo");
    cr_assert_eq(s->seed, UINT64_MAX);
    cr_assert_eq(s->level, -2);
    cr_assert_eq(s->mem_bytes, 80ull << 30);
    cr_assert_eq(s->horizon_ns, 5400ll * 1000000000ll);
    cr_assert_float_eq(s->period_s, 0.25, 1e-15);
    cr_assert_float_eq(s->rate_per_s, 2.0 / 3600.0, 1e-18);
    cr_assert_eq(s->mode, 2);
    cr_assert_str_eq(s->flavour, "sour");
    cr_assert_eq(s->inner.on, true);
    cr_assert_float_eq(s->inner.ratio, 0.25, 1e-15);
    cr_assert_eq(s->n_items, 2);
    cr_assert_str_eq(s->items[0].name, "a");
    cr_assert_eq(s->items[0].count, 8);
    cr_assert_eq(s->items[1].count, 3);
    cr_assert_eq(s->items[1].at.line, 13);
    cr_assert_eq(s->items[1].at.col, 5);
    cr_assert_eq(s->n_tags, 3);
    cr_assert_str_eq(s->tags[2], "z");
    cr_assert_eq(s->name_at.line, 1);
    cr_assert_eq(s->name_at.col, 7);
    cr_assert_str_eq(s->name_at.file, "t.yaml");
    cr_assert_eq(s->at.line, 1);
    unload(&fx);
}

Test(cfg, defaults_fill_absent_fields_and_nested_maps)
{
    fixture fx = {0};
    cr_assert_eq(load(&fx, "name: d\nseed: 1\nitems: [{name: q}]\n", NULL), 0);
    cr_assert_eq(fx.spec->mode, 1);
    cr_assert_eq(fx.spec->horizon_ns, 3600ll * 1000000000ll);
    cr_assert_eq(fx.spec->inner.on, true);
    cr_assert_float_eq(fx.spec->inner.ratio, 0.5, 1e-15);
    cr_assert_null(fx.spec->flavour);
    cr_assert_eq(fx.spec->n_tags, 0);
    cr_assert_eq(fx.spec->name_at.line, 1);
    unload(&fx);
}

Test(cfg, strings_outlive_the_document)
{
    fixture fx = {0};
    cr_assert_eq(load(&fx, good, NULL), 0);
    yamlx_destroy(fx.doc);
    fx.doc = NULL;
    cr_assert_str_eq(fx.spec->items[1].name, "b");
    cr_assert_str_eq(fx.spec->name_at.file, "t.yaml");
    unload(&fx);
}

Test(cfg, unknown_key_lists_valid_keys)
{
    expect_one("name: a\nseed: 1\nitems: [{name: x}]\ninner: {ration: 2}\n",
               "t.yaml:4:9: error: inner.ration: unknown key; expected one of [on, ratio], "
               "got 'ration'");
}

Test(cfg, wrong_node_type)
{
    expect_one("name: a\nseed: 1\nitems: {name: x}\n",
               "t.yaml:3:8: error: items: wrong type; expected a sequence of at least 1 item, "
               "got a mapping");
    expect_one("name: a\nseed: 1\nitems: [{name: x}]\ninner: 3\n",
               "t.yaml:4:8: error: inner: wrong type; expected a mapping, got '3'");
    expect_one("name: [a]\nseed: 1\nitems: [{name: x}]\n",
               "t.yaml:1:7: error: name: wrong type; expected a string, got a sequence");
}

Test(cfg, duplicate_key)
{
    expect_one("name: a\nseed: 1\nitems: [{name: x}]\nseed: 2\n",
               "t.yaml:4:1: error: seed: duplicate key (first at line 2); expected each key once, "
               "got 'seed'");
}

Test(cfg, missing_required_in_item)
{
    expect_one("name: a\nseed: 1\nitems:\n  - count: 2\n",
               "t.yaml:4:5: error: items[0].name: missing required field; expected a string, "
               "got nothing");
}

Test(cfg, bounds_and_numbers)
{
    expect_one("name: a\nseed: 1\nitems: [{name: x, count: 0}]\n",
               "t.yaml:3:26: error: items[0].count: out of range; expected an integer from 1 to "
               "64, got '0'");
    expect_one("name: a\nseed: 12abc\nitems: [{name: x}]\n",
               "t.yaml:2:7: error: seed: not a number; expected an integer, got '12abc'");
    expect_one("name: a\nseed: 1.5\nitems: [{name: x}]\n",
               "t.yaml:2:7: error: seed: not an integer; expected an integer, got '1.5'");
    expect_one("name: a\nseed: -1\nitems: [{name: x}]\n",
               "t.yaml:2:7: error: seed: out of range; expected an integer, got '-1'");
    expect_one("name: a\nseed: 18446744073709551616\nitems: [{name: x}]\n",
               "t.yaml:2:7: error: seed: out of range; expected an integer, got "
               "'18446744073709551616'");
    expect_one("name: a\nseed: 1\nitems: [{name: x}]\ninner: {ratio: nan}\n",
               "t.yaml:4:16: error: inner.ratio: not a number; expected a number from 0 to 1, "
               "got 'nan'");
    expect_one("name: a\nseed: 1\nitems: []\n",
               "t.yaml:3:8: error: items: wrong number of items; expected a sequence of at least "
               "1 item, got 0 items");
}

Test(cfg, units)
{
    expect_one("name: a\nseed: 1\nitems: [{name: x}]\nmemory: 80GB/s\n",
               "t.yaml:4:9: error: memory: unknown unit 'GB/s'; expected a size like 80GiB of at "
               "least 1B, got '80GB/s'");
    expect_one("name: a\nseed: 1\nitems: [{name: x}]\nmemory: 80\n",
               "t.yaml:4:9: error: memory: missing unit; expected a size like 80GiB of at least "
               "1B, got '80'");
    expect_one("name: a\nseed: 1\nitems: [{name: x}]\nhorizon: 2d\n",
               "t.yaml:4:10: error: horizon: out of range; expected a duration like 90s from 1s "
               "to 1d, got '2d'");
    expect_one("name: a\nseed: 1\nitems: [{name: x}]\nrate: 2/fortnight\n",
               "t.yaml:4:7: error: rate: unknown unit '/fortnight'; expected a rate like 2/h of "
               "at least 0/s, got '2/fortnight'");
}

Test(cfg, enums_and_one_of_strings)
{
    expect_one("name: a\nseed: 1\nitems: [{name: x}]\nmode: delta\n",
               "t.yaml:4:7: error: mode: unknown value; expected one of [alpha, beta, gamma], "
               "got 'delta'");
    expect_one("name: a\nseed: 1\nitems: [{name: x}]\nflavour: bitter\n",
               "t.yaml:4:10: error: flavour: unknown value; expected one of [sweet, sour], "
               "got 'bitter'");
    expect_one("name: a\nseed: 1\nitems: [{name: x}]\ninner: {on: yes}\n",
               "t.yaml:4:13: error: inner.on: not a boolean; expected true or false, got 'yes'");
}

Test(cfg, reports_all_errors)
{
    fixture fx = {0};
    load(&fx, "name: a\nseed: x\nlevel: 9\nitems: [{count: 0}]\nbogus: 1\n", NULL);
    cr_assert_eq(diag_error_count(fx.d), 5);
    cr_assert_str_eq(fx_diag_message(fx.d, 0),
                     "t.yaml:2:7: error: seed: not a number; expected an integer, got 'x'");
    cr_assert_str_eq(fx_diag_message(fx.d, 1), "t.yaml:3:8: error: level: out of range; expected "
                                            "an integer from -3 to 3, got '9'");
    cr_assert_str_eq(fx_diag_message(fx.d, 2), "t.yaml:4:17: error: items[0].count: out of range; "
                                            "expected an integer from 1 to 64, got '0'");
    cr_assert_str_eq(fx_diag_message(fx.d, 3), "t.yaml:4:9: error: items[0].name: missing required "
                                            "field; expected a string, got nothing");
    cr_assert_str_eq(fx_diag_message(fx.d, 4), "t.yaml:5:1: error: bogus: unknown key; expected "
                                            "one of [name, seed, level, offset, memory, horizon, "
                                            "period, rate, mode, flavour, inner, items, tags], "
                                            "got 'bogus'");
    unload(&fx);
}

Test(cfg, yaml_syntax_error_has_position)
{
    fixture fx = {0};
    cr_assert_eq(load(&fx, "name: a\nseed: [1, 2\n", NULL), SIM_EINPUT);
    cr_assert_eq(diag_error_count(fx.d), 1);
    cr_assert_str_eq(fx_diag_message(fx.d, 0), "t.yaml:3:1: error: did not find expected ',' or ']'");
    unload(&fx);
}

Test(cfg, aliases_are_refused)
{
    expect_one("name: a\nseed: 1\nitems: [&x {name: x}, *x]\n",
               "t.yaml:3:9: error: items[1]: repeated node; expected each value written out "
               "once, got a YAML alias");
}

Test(cfg, empty_document_and_second_document)
{
    expect_one("", "t.yaml:1:1: error: empty document; expected a mapping, got nothing");
    fixture fx = {0};
    cr_assert_eq(load(&fx, "name: a\n---\nname: b\n", NULL), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(fx.d, 0), "t.yaml:2:1: error: second YAML document; expected "
                                            "one document per file, got '---'");
    unload(&fx);
}

Test(yamlx, overrides_replace_add_and_name_themselves)
{
    fixture fx = {0};
    const char *sets[] = {"items[1].count=5", "inner.on=false", "offset=-7", NULL};
    cr_assert_eq(load(&fx, good, sets), 0, "%s", fx_diag_message(fx.d, 0));
    cr_assert_eq(fx.spec->items[1].count, 5);
    cr_assert_eq(fx.spec->inner.on, false);
    cr_assert_eq(fx.spec->offset, -7);
    unload(&fx);

    const char *bad[] = {"items[1].count=500", "inner.bogus=1", "items[7].name=x",
                         "name.x=1",           "noequals",      NULL};
    load(&fx, good, bad);
    cr_assert_eq(diag_error_count(fx.d), 5);
    cr_assert_str_eq(fx_diag_message(fx.d, 0), "--set items[7].name=x: error: items[7].name: no "
                                            "item 'items[7]'; expected an index below 2, got '7'");
    cr_assert_str_eq(fx_diag_message(fx.d, 1), "--set name.x=1: error: name.x: not a mapping at "
                                            "'name'; expected a mapping to hold 'x', got a scalar");
    cr_assert_str_eq(fx_diag_message(fx.d, 2), "--set noequals: error: malformed override; expected "
                                            "PATH=VALUE, got 'noequals'");
    cr_assert_str_eq(fx_diag_message(fx.d, 3), "--set inner.bogus=1: error: inner.bogus: unknown key; "
                                            "expected one of [on, ratio], got 'bogus'");
    cr_assert_str_eq(fx_diag_message(fx.d, 4),
                     "--set items[1].count=500: error: items[1].count: out "
                     "of range; expected an integer from 1 to 64, got '500'");
    unload(&fx);
}

Test(cfg, scalar_parsers_reject_trailing_text)
{
    char p[64];
    uint64_t b;
    int64_t ns;
    double v;
    cr_assert(cfg_parse_bytes("512MiB", &b, p, sizeof p));
    cr_assert_eq(b, 512ull << 20);
    cr_assert(cfg_parse_bytes("40GB", &b, p, sizeof p));
    cr_assert_eq(b, 40000000000ull);
    cr_assert(cfg_parse_bytes("1.5 KiB", &b, p, sizeof p));
    cr_assert_eq(b, 1536);
    cr_assert_not(cfg_parse_bytes("0x10GiB", &b, p, sizeof p));
    cr_assert_str_eq(p, "unknown unit 'x10GiB'");
    cr_assert(cfg_parse_duration_ns("90s", &ns, p, sizeof p));
    cr_assert_eq(ns, 90000000000ll);
    cr_assert(cfg_parse_duration_ns("5m", &ns, p, sizeof p));
    cr_assert_eq(ns, 300000000000ll);
    cr_assert(cfg_parse_duration_ns("1.5d", &ns, p, sizeof p));
    cr_assert_eq(ns, 129600000000000ll);
    cr_assert(cfg_parse_duration_ns("1e3ms", &ns, p, sizeof p));
    cr_assert_eq(ns, 1000000000ll);
    cr_assert_not(cfg_parse_duration_ns("1000000d", &ns, p, sizeof p));
    cr_assert_str_eq(p, "out of range");
    cr_assert(cfg_parse_rate("30/min", &v, p, sizeof p));
    cr_assert_float_eq(v, 0.5, 1e-15);
    cr_assert_not(cfg_parse_double("12abc", &v, p, sizeof p));
    cr_assert_str_eq(p, "not a number");
    cr_assert_not(cfg_parse_double("inf", &v, p, sizeof p));
    cr_assert_not(cfg_parse_double("1e999", &v, p, sizeof p));
    cr_assert_str_eq(p, "out of range");
    int64_t i;
    cr_assert_not(cfg_parse_i64(" 12", &i, p, sizeof p));
    cr_assert_not(cfg_parse_i64("9223372036854775808", &i, p, sizeof p));
    cr_assert_str_eq(p, "out of range");
    cr_assert(cfg_parse_i64("-9223372036854775808", &i, p, sizeof p));
    cr_assert_eq(i, INT64_MIN);
}

/* 100 000 nested sequences (libyaml's loader alone took 34 s on them) are refused at the 65th
 * level, before the tree is built; 64 levels are still accepted. */
Test(yamlx, nesting_depth_is_limited, .timeout = 10)
{
    enum { DEEP = 100000 };
    char *text = malloc(2 * DEEP + 16);
    cr_assert_not_null(text);
    size_t n = 0;
    n += (size_t)sprintf(text, "a: ");
    memset(text + n, '[', DEEP);
    memset(text + n + DEEP, ']', DEEP);
    n += 2 * DEEP;
    arena *a = arena_create();
    diag *d = diag_create();
    yamlx_doc *doc = NULL;
    cr_assert_eq(yamlx_load_buffer("deep.yaml", text, n, a, d, &doc), SIM_EINPUT);
    cr_assert_null(doc);
    cr_assert_eq(diag_error_count(d), 1);
    /* the root mapping is level 1; the 64th '[' (column 4 + 63) opens level 65 */
    cr_assert_str_eq(fx_diag_message(d, 0), "deep.yaml:1:67: error: nesting too deep; expected at "
                                         "most 64 nested mappings and sequences, got more");
    diag_destroy(d);
    d = diag_create();
    n = 3 + 63 + 63; /* a: + 63 '[' + 63 ']': depth 64 */
    memset(text + 3, '[', 63);
    memset(text + 3 + 63, ']', 63);
    cr_assert_eq(yamlx_load_buffer("ok.yaml", text, n, a, d, &doc), 0);
    yamlx_destroy(doc);
    diag_destroy(d);
    arena_destroy(a);
    free(text);
}

/* ---- writing back (cfg_write_map) ---------------------------------------------------------- */

static cJSON *num_g(double v)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%g", v);
    return cJSON_CreateRaw(buf);
}

/* The walked struct written back: every field in table order, units converted and named. */
Test(cfg, writes_back_every_field_under_its_unit_key)
{
    fixture fx = {0};
    cr_assert_eq(load(&fx, good, NULL), 0);
    const cfg_out o = {num_g};
    cJSON *j = cfg_write_map(&o, spec_fields, fx.spec);
    char *text = cJSON_PrintUnformatted(j);
    cr_assert_str_eq(text, "{\"name\":\"demo\",\"seed\":18446744073709551615,\"level\":-2,"
                           "\"offset\":0,\"memory_bytes\":85899345920,\"horizon_s\":5400,"
                           "\"period_s\":0.25,\"rate_per_s\":0.000555556,\"mode\":\"gamma\","
                           "\"flavour\":\"sour\",\"inner\":{\"on\":true,\"ratio\":0.25},"
                           "\"items\":[{\"name\":\"a\",\"count\":8},{\"name\":\"b\",\"count\":3}],"
                           "\"tags\":[\"x\",\"y\",\"z\"]}");
    free(text);
    cJSON_Delete(j);
    unload(&fx);
}

typedef struct t_flags {
    const char *note, *resolved, *secret;
    uint32_t extra;
    t_inner inner;
    t_item *items;
    size_t n_items;
} t_flags;

static const cfg_field flag_fields[] = {
    {"note", CFG_STRING, .off = offsetof(t_flags, note), .out = CFG_OUT_IF_SET},
    {"secret", CFG_STRING, .off = offsetof(t_flags, secret), .out = CFG_OUT_HIDDEN},
    {"resolved", CFG_STRING, .off = offsetof(t_flags, resolved), .out = CFG_OUT_ONLY},
    {"extra", CFG_U32, .off = offsetof(t_flags, extra), .out_key = "extra_count"},
    {"inner", CFG_MAP, .sub = inner_fields, .off = offsetof(t_flags, inner)},
    {"items", CFG_SEQ, CFG_SEQ_OF(t_flags, items, n_items, t_item, item_fields),
     .out = CFG_OUT_IF_SET},
    {0},
};

/* IF_SET leaves zero out, HIDDEN is never written, OUT_ONLY is written but not read (the walker
 * neither accepts nor lists it), out_key renames. */
Test(cfg, write_flags)
{
    arena *a = arena_create();
    diag *d = diag_create();
    yamlx_doc *doc = NULL;
    const char *text = "secret: s\nextra: 2\nresolved: r\n";
    cr_assert_eq(yamlx_load_buffer("f.yaml", text, strlen(text), a, d, &doc), 0);
    t_flags *f = arena_calloc(a, 1, sizeof *f);
    cfg_walker w;
    cfg_walker_init(&w, doc, a, d, NULL);
    cfg_walk_root(&w, flag_fields, f);
    cfg_walker_fini(&w);
    cr_assert_eq(diag_error_count(d), 1);
    cr_assert_str_eq(fx_diag_message(d, 0),
                     "f.yaml:3:1: error: resolved: unknown key; expected one of [note, secret, "
                     "extra, inner, items], got 'resolved'");
    cr_assert_str_eq(f->secret, "s");
    f->resolved = "by the loader";
    const cfg_out o = {num_g};
    cJSON *j = cfg_write_map(&o, flag_fields, f);
    char *out = cJSON_PrintUnformatted(j);
    cr_assert_str_eq(out, "{\"resolved\":\"by the loader\",\"extra_count\":2,"
                          "\"inner\":{\"on\":true,\"ratio\":0.5}}");
    free(out);
    cJSON_Delete(j);
    yamlx_destroy(doc);
    diag_destroy(d);
    arena_destroy(a);
}
