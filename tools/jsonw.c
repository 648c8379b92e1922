/* tools/jsonw.c - streaming JSON in cJSON's formatted layout (see jsonw.h).
 *
 * The layout rules mirror cJSON 1.7's print_object / print_array / print_string_ptr; the unit
 * test (tests/unit/test_jsonw.c) writes trees through this writer and compares the bytes with
 * cJSON_Print, so a cJSON change that moved a byte would show there.
 */
#include "tools/jsonw.h"

#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/numfmt.h"

/* jsonw_format_number's text into buf; returns its length. */
static size_t format_number(char *buf, double v)
{
    SIM_ASSERT(isfinite(v));
    if (v == floor(v) && fabs(v) <= 9007199254740992.0) {
        /* the digits "%.0f" prints; -0 becomes 0 */
        int64_t i = (int64_t)v;
        size_t k = 0;
        if (i < 0) {
            buf[k++] = '-';
        }
        return k + numfmt_u64(buf + k, i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i);
    }
    return numfmt_g17(buf, v);
}

size_t jsonw_number_text(char *buf, double v)
{
    return format_number(buf, v);
}

char *jsonw_format_number(char *buf, double v)
{
    format_number(buf, v);
    return buf;
}

void jsonw_init(jsonw *w, FILE *f)
{
    memset(w, 0, sizeof *w);
    bufw_init(&w->out, f);
}

static void put(jsonw *w, const void *p, size_t n)
{
    bufw_put(&w->out, p, n);
}

static void put_c(jsonw *w, char c)
{
    bufw_c(&w->out, c);
}

static void put_s(jsonw *w, const char *s)
{
    put(w, s, strlen(s));
}

const char jsonw_tabs[JSONW_MAX_DEPTH + 1] = "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t"
                                             "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t";

static void tabs(jsonw *w, unsigned n)
{
    SIM_ASSERT(n <= JSONW_MAX_DEPTH);
    put(w, jsonw_tabs, n);
}

/* The separator before a value: none at the top, the key's in an object, ", " in an array. */
static void before_value(jsonw *w)
{
    if (w->depth == 0) {
        return;
    }
    unsigned top = w->depth - 1;
    if (w->is_object[top]) {
        SIM_ASSERT(w->key_written);
        w->key_written = false;
        return;
    }
    if (w->has_items[top]) {
        put(w, ", ", 2);
    }
    w->has_items[top] = true;
}

static void push(jsonw *w, bool is_object)
{
    SIM_ASSERT(w->depth < JSONW_MAX_DEPTH);
    w->is_object[w->depth] = is_object;
    w->has_items[w->depth] = false;
    w->depth++;
}

static void pop(jsonw *w, bool is_object)
{
    SIM_ASSERT(w->depth > 0 && w->is_object[w->depth - 1] == is_object && !w->key_written);
    w->depth--;
}

void jsonw_object_begin(jsonw *w)
{
    before_value(w);
    put(w, "{\n", 2);
    push(w, true);
}

void jsonw_object_end(jsonw *w)
{
    bool had = w->has_items[w->depth - 1];
    pop(w, true);
    if (had) {
        put_c(w, '\n');
    }
    tabs(w, w->depth);
    put_c(w, '}');
}

void jsonw_array_begin(jsonw *w)
{
    before_value(w);
    put_c(w, '[');
    push(w, false);
}

void jsonw_array_end(jsonw *w)
{
    pop(w, false);
    put_c(w, ']');
}

/* s quoted and escaped as cJSON's print_string_ptr does it. Runs of bytes that need no escape
 * (all of them in the usual names) are written whole. */
void jsonw_put_quoted(bufw *b, const char *s)
{
    size_t n = 0;
    while ((unsigned char)s[n] > 31 && s[n] != '"' && s[n] != '\\') {
        n++;
    }
    if (!s[n] && n + 2 <= BUFW_LEN) { /* nothing to escape: one copy */
        char *p = bufw_room(b, n + 2);
        p[0] = '"';
        memcpy(p + 1, s, n);
        p[n + 1] = '"';
        bufw_used(b, n + 2);
        return;
    }
    bufw_c(b, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        const unsigned char *run = p;
        while (*p > 31 && *p != '"' && *p != '\\') {
            p++;
        }
        bufw_put(b, run, (size_t)(p - run));
        if (!*p) {
            break;
        }
        char esc[8];
        switch (*p) {
        case '\\':
        case '"':
            esc[0] = (char)*p;
            esc[1] = '\0';
            break;
        case '\b':
            strcpy(esc, "b");
            break;
        case '\f':
            strcpy(esc, "f");
            break;
        case '\n':
            strcpy(esc, "n");
            break;
        case '\r':
            strcpy(esc, "r");
            break;
        case '\t':
            strcpy(esc, "t");
            break;
        default:
            snprintf(esc, sizeof esc, "u%04x", *p);
            break;
        }
        bufw_c(b, '\\');
        bufw_put(b, esc, strlen(esc));
    }
    bufw_c(b, '"');
}

static void put_string(jsonw *w, const char *s)
{
    jsonw_put_quoted(&w->out, s);
}

void jsonw_key(jsonw *w, const char *key)
{
    SIM_ASSERT(w->depth > 0 && w->is_object[w->depth - 1] && !w->key_written);
    unsigned top = w->depth - 1;
    char *p = bufw_room(&w->out, 2 + w->depth); /* ",\n" and the indent in one go */
    size_t k = 0;
    if (w->has_items[top]) {
        p[k++] = ',';
        p[k++] = '\n';
    }
    w->has_items[top] = true;
    memset(p + k, '\t', w->depth);
    bufw_used(&w->out, k + w->depth);
    put_string(w, key);
    put(w, ":\t", 2);
    w->key_written = true;
}

void jsonw_number(jsonw *w, double v)
{
    before_value(w);
    bufw_used(&w->out, format_number(bufw_room(&w->out, JSONW_NUM_LEN), v));
}

void jsonw_u64(jsonw *w, uint64_t v)
{
    before_value(w);
    bufw_u64(&w->out, v);
}

void jsonw_string(jsonw *w, const char *s)
{
    before_value(w);
    if (s) {
        put_string(w, s);
    } else {
        put(w, "null", 4);
    }
}

void jsonw_null(jsonw *w)
{
    before_value(w);
    put(w, "null", 4);
}

void jsonw_bool(jsonw *w, bool v)
{
    before_value(w);
    put_s(w, v ? "true" : "false");
}

bufw *jsonw_raw_value(jsonw *w)
{
    before_value(w);
    return &w->out;
}

unsigned jsonw_depth(const jsonw *w)
{
    return w->depth;
}

int jsonw_tree(jsonw *w, const cJSON *item)
{
    char *s = cJSON_Print(item);
    if (!s) {
        return SIM_ENOMEM;
    }
    before_value(w);
    /* cJSON indents from level 0; every line break it prints starts a line one level deeper
     * per container open here (strings never hold a raw newline: cJSON escapes it) */
    for (const char *p = s, *nl; *p; p = nl + 1) {
        nl = strchr(p, '\n');
        if (!nl) {
            put_s(w, p);
            break;
        }
        put(w, p, (size_t)(nl - p) + 1);
        tabs(w, w->depth);
    }
    cJSON_free(s);
    return 0;
}

int jsonw_finish(jsonw *w)
{
    SIM_ASSERT(w->depth == 0 && !w->key_written);
    return bufw_flush(&w->out);
}
