/* Tests of the streaming JSON writer (tools/jsonw.h): a document written value by value must be
 * byte-identical to cJSON_Print of the same tree (cJSON is the reference, so these expectations
 * come from the library, not from the writer), and numbers follow printf's definitions. */
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/jsonw.h"
#include "tools/numfmt.h"
#include "tools/out.h"

/* Write item through the writer as it would be streamed; containers at depth 4 go through
 * jsonw_tree, so that both streamed nesting and re-indenting a cJSON-printed subtree deep inside
 * a streamed document are exercised. */
static void walk(jsonw *w, const cJSON *item, unsigned depth)
{
    if (depth == 4 && (cJSON_IsObject(item) || cJSON_IsArray(item))) {
        cr_assert_eq(jsonw_tree(w, item), 0);
        return;
    }
    if (cJSON_IsObject(item)) {
        jsonw_object_begin(w);
        const cJSON *c;
        cJSON_ArrayForEach(c, item)
        {
            jsonw_key(w, c->string);
            walk(w, c, depth + 1);
        }
        jsonw_object_end(w);
    } else if (cJSON_IsArray(item)) {
        jsonw_array_begin(w);
        const cJSON *c;
        cJSON_ArrayForEach(c, item)
        {
            walk(w, c, depth + 1);
        }
        jsonw_array_end(w);
    } else if (cJSON_IsRaw(item) && !strcmp(item->valuestring, "18446744073709551615")) {
        jsonw_u64(w, UINT64_MAX);
    } else if (cJSON_IsRaw(item)) { /* numbers in the project's format (out_json_number) */
        jsonw_number(w, strtod(item->valuestring, NULL));
    } else if (cJSON_IsString(item)) {
        jsonw_string(w, item->valuestring);
    } else if (cJSON_IsBool(item)) {
        jsonw_bool(w, cJSON_IsTrue(item));
    } else {
        cr_assert(cJSON_IsNull(item));
        jsonw_null(w);
    }
}

/* The writer's bytes for tree, from a memory stream; caller frees. */
static char *stream(const cJSON *tree)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    cr_assert_not_null(f);
    jsonw *w = malloc(sizeof *w);
    jsonw_init(w, f);
    walk(w, tree, 0);
    cr_assert_eq(w->depth, 0u);
    cr_assert_eq(jsonw_finish(w), 0);
    free(w);
    fclose(f);
    return buf;
}

static void expect_same_as_cjson(const cJSON *tree)
{
    char *want = cJSON_Print(tree);
    char *got = stream(tree);
    cr_assert_str_eq(got, want);
    free(got);
    cJSON_free(want);
}

static void add_num(cJSON *o, const char *k, double v)
{
    cJSON_AddItemToObject(o, k, out_json_number(v));
}

Test(jsonw, a_nested_document_matches_cjson_print)
{
    cJSON *root = cJSON_CreateObject();
    add_num(root, "schema_version", 1);
    cJSON_AddItemToObject(root, "seed", out_json_u64(UINT64_MAX));
    cJSON_AddItemToObject(root, "empty_object", cJSON_CreateObject());
    cJSON_AddItemToObject(root, "empty_array", cJSON_CreateArray());
    cJSON_AddNullToObject(root, "nothing");
    cJSON_AddTrueToObject(root, "yes");
    cJSON_AddFalseToObject(root, "no");
    cJSON *nums = cJSON_AddArrayToObject(root, "numbers");
    const double vals[] = {
        0, -0.0, 1, -7, 0.1, 1e300, -9007199254740992.0, 9007199254740994.0, 2.5e-9, 123456789.125};
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        cJSON_AddItemToArray(nums, out_json_number(vals[i]));
    }
    cJSON *jobs = cJSON_AddArrayToObject(root, "jobs");
    for (int k = 0; k < 3; k++) {
        cJSON *j = cJSON_CreateObject();
        add_num(j, "id", k);
        cJSON *rq = cJSON_AddObjectToObject(j, "request");
        cJSON_AddStringToObject(rq, "resource", "nvidia.com/mig-1g.5gb");
        cJSON_AddItemToObject(rq, "inner_empty", cJSON_CreateObject());
        cJSON *pl = cJSON_AddArrayToObject(j, "placement");
        for (int u = 0; u < k; u++) { /* 0, 1 and 2 elements */
            cJSON *e = cJSON_CreateObject();
            cJSON_AddStringToObject(e, "node", "n-0");
            cJSON_AddNullToObject(e, "profile");
            cJSON_AddItemToArray(pl, e);
        }
        cJSON *deep = cJSON_AddArrayToObject(j, "deep");
        cJSON *a = cJSON_CreateArray();
        cJSON_AddItemToArray(a, cJSON_CreateObject());
        cJSON_AddItemToArray(a, cJSON_CreateArray());
        cJSON_AddItemToArray(deep, a);
        cJSON_AddItemToArray(jobs, j);
    }
    expect_same_as_cjson(root);
    cJSON_Delete(root);
}

Test(jsonw, every_byte_in_strings_and_keys_is_escaped_as_cjson_does)
{
    char all[256];
    for (int c = 1; c < 256; c++) {
        all[c - 1] = (char)c;
    }
    all[255] = '\0';
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, all, all);
    cJSON_AddStringToObject(root, "quote\"back\\slash", "tab\tnew\nline");
    cJSON_AddStringToObject(root, "", "");
    cJSON *a = cJSON_AddArrayToObject(root, "strings");
    cJSON_AddItemToArray(a, cJSON_CreateString(all));
    expect_same_as_cjson(root);
    cJSON_Delete(root);
}

Test(jsonw, an_empty_top_level_object_and_array)
{
    cJSON *o = cJSON_CreateObject();
    expect_same_as_cjson(o);
    cJSON_Delete(o);
    cJSON *a = cJSON_CreateArray();
    expect_same_as_cjson(a);
    cJSON_Delete(a);
}

Test(jsonw, numbers_are_integers_or_17_significant_digits)
{
    char buf[JSONW_NUM_LEN];
    /* integral and within 2^53: the integer's digits */
    cr_assert_str_eq(jsonw_format_number(buf, 3), "3");
    cr_assert_str_eq(jsonw_format_number(buf, -42), "-42");
    cr_assert_str_eq(jsonw_format_number(buf, -0.0), "0");
    cr_assert_str_eq(jsonw_format_number(buf, 9007199254740992.0), "9007199254740992");
    cr_assert_str_eq(jsonw_format_number(buf, 1e15), "1000000000000000");
    /* otherwise %.17g: 0.5 is exact in binary; 0.1's nearest double is 0.1000000000000000055...;
     * 2^53 + 2 is beyond the integer range, so it gets an exponent-free %.17g (16 digits) */
    cr_assert_str_eq(jsonw_format_number(buf, 0.5), "0.5");
    cr_assert_str_eq(jsonw_format_number(buf, 0.1), "0.10000000000000001");
    cr_assert_str_eq(jsonw_format_number(buf, 9007199254740994.0), "9007199254740994");
    cr_assert_str_eq(jsonw_format_number(buf, 1e17), "1e+17");
}

/* numfmt_g17 against the C library's own "%.17g" (the reference): a splitmix64 stream of bit
 * patterns over every exponent, doubles of every magnitude between 1e-6 and 1e18, nanosecond
 * times as seconds, values next to powers of ten, and exact ties (a dyadic value whose 18th
 * significant digit is its last, a 5: rounded to even). */
static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void same_as_printf(double v)
{
    char want[64], got[NUMFMT_LEN];
    snprintf(want, sizeof want, "%.17g", v);
    size_t n = numfmt_g17(got, v);
    cr_assert_str_eq(got, want, "%.17g", v);
    cr_assert_eq(n, strlen(want));
}

Test(jsonw, numfmt_g17_prints_what_printf_prints)
{
    uint64_t s = 42;
    for (int i = 0; i < 300000; i++) {
        uint64_t b = splitmix(&s);
        double v;
        memcpy(&v, &b, sizeof v);
        if (isfinite(v)) {
            same_as_printf(v);
        }
        same_as_printf(ldexp((double)(splitmix(&s) >> 11), -53) *
                       pow(10.0, (double)(int)(splitmix(&s) % 25) - 6.0));
        same_as_printf((double)(int64_t)(splitmix(&s) >> 10) / 1e9); /* ns up to ~570 years */
        same_as_printf(-(double)(splitmix(&s) % 100000000000ULL) / 1e9);
    }
    for (int k = -6; k <= 18; k++) { /* either side of 10^k */
        double p = pow(10.0, k);
        same_as_printf(p);
        same_as_printf(nextafter(p, 0));
        same_as_printf(nextafter(p, INFINITY));
        same_as_printf(nextafter(nextafter(p, 0), 0));
    }
    for (int sh = 1; sh <= 17; sh++) { /* m / 2^sh has sh decimals: 18 significant digits */
        for (int i = 0; i < 2000; i++) {
            double lo = pow(10.0, 17 - sh),
                   m = floor(lo * (1 + (double)(splitmix(&s) % 1000) / 128));
            same_as_printf(ldexp(m * 2 + 1, -sh));
        }
    }
    same_as_printf(0.1);
    same_as_printf(1e-4);
    same_as_printf(9007199254740991.5);
    same_as_printf(123456.789);
}

Test(jsonw, numfmt_integers_and_nanosecond_times)
{
    char b[NUMFMT_LEN];
    cr_assert_eq(numfmt_u64(b, 0), 1);
    cr_assert_str_eq(b, "0");
    numfmt_u64(b, UINT64_MAX);
    cr_assert_str_eq(b, "18446744073709551615");
    cr_assert_eq(numfmt_fixed9(b, 0), 11);
    cr_assert_str_eq(b, "0.000000000");
    numfmt_fixed9(b, 1234567890123LL);
    cr_assert_str_eq(b, "1234.567890123");
    numfmt_fixed9(b, 5);
    cr_assert_str_eq(b, "0.000000005");
}

/* numfmt_u64 and numfmt_fixed9 against printf's "%" PRIu64 and "%lld.%09lld" (the reference):
 * every 4-digit group in both halves of an 8-digit word (numfmt.c digits8), random values of
 * every length, either side of each power of ten, and the largest. */
static void u64_as_printf(uint64_t v)
{
    char want[32], got[NUMFMT_LEN];
    snprintf(want, sizeof want, "%" PRIu64, v);
    cr_assert_eq(numfmt_u64(got, v), strlen(want), "%s", want);
    cr_assert_str_eq(got, want);
}

static void fixed9_as_printf(int64_t ns)
{
    char want[40], got[NUMFMT_LEN];
    snprintf(want, sizeof want, "%lld.%09lld", (long long)(ns / 1000000000),
             (long long)(ns % 1000000000));
    cr_assert_eq(numfmt_fixed9(got, ns), strlen(want), "%s", want);
    cr_assert_str_eq(got, want);
}

Test(jsonw, numfmt_u64_and_fixed9_print_what_printf_prints)
{
    for (uint64_t a = 0; a < 10000; a++) {
        u64_as_printf(a * 10001);
        fixed9_as_printf((int64_t)(a * 10001 + 100000000 * (a % 10)));
    }
    uint64_t s = 7;
    for (int i = 0; i < 200000; i++) {
        u64_as_printf(splitmix(&s) >> (splitmix(&s) % 64));
        fixed9_as_printf((int64_t)(splitmix(&s) >> (1 + splitmix(&s) % 63)));
    }
    uint64_t p = 1;
    for (int k = 0; k < 20; k++, p *= 10) {
        u64_as_printf(p - 1);
        u64_as_printf(p);
        u64_as_printf(p + 1);
    }
    u64_as_printf(UINT64_MAX);
    fixed9_as_printf(INT64_MAX);
}

/* run.json's times (tools/out_json.c seconds_at) below 2^53 ns print a whole second's count by
 * numfmt_u64 and any other count by numfmt_g17, skipping jsonw_number_text's test for a whole
 * value: the same text, because (double)ns is exact there and its quotient by 1e9 is whole only
 * when ns is a whole number of seconds. Counts of every size below 2^53, a third of them next to
 * a whole second, and the largest. */
static void time_as_run_json(int64_t ns)
{
    char a[NUMFMT_LEN], b[JSONW_NUM_LEN];
    double v = (double)ns / 1e9;
    size_t n = ns % 1000000000 == 0 ? numfmt_u64(a, (uint64_t)(ns / 1000000000))
                                    : numfmt_g17(a, v);
    size_t nb = jsonw_number_text(b, v);
    cr_assert_str_eq(a, b, "%lld ns", (long long)ns);
    cr_assert_eq(n, nb);
}

Test(jsonw, times_as_run_json_prints_them)
{
    uint64_t s = 11;
    for (int i = 0; i < 300000; i++) {
        int64_t ns = (int64_t)(splitmix(&s) >> (11 + splitmix(&s) % 40)); /* below 2^53 */
        if (i % 3 == 0) {
            ns = ns / 1000000000 * 1000000000 + (int64_t)(splitmix(&s) % 2000) - 1000;
            ns = ns < 0 ? 0 : ns;
        }
        time_as_run_json(ns);
    }
    const int64_t top = ((int64_t)1 << 53) - 1;
    time_as_run_json(top);
    time_as_run_json(top / 1000000000 * 1000000000);
    time_as_run_json(top / 1000000000 * 1000000000 - 1);
}
