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

char *jsonw_format_number(char *buf, double v)
{
    SIM_ASSERT(isfinite(v));
    if (v == floor(v) && fabs(v) <= 9007199254740992.0) {
        /* the digits "%.0f" prints; -0 becomes 0 */
        int64_t i = (int64_t)v;
        size_t k = 0;
        if (i < 0) {
            buf[k++] = '-';
        }
        numfmt_u64(buf + k, i < 0 ? (uint64_t)0 - (uint64_t)i : (uint64_t)i);
    } else {
        numfmt_g17(buf, v);
    }
    return buf;
}

void jsonw_init(jsonw *w, FILE *f)
{
    memset(w, 0, sizeof *w);
    w->f = f;
}

static void flush(jsonw *w)
{
    fwrite(w->buf, 1, w->n, w->f);
    w->n = 0;
}

/* Append n bytes (any length) to the buffer. */
static void put(jsonw *w, const void *p, size_t n)
{
    if (w->n + n > sizeof w->buf) {
        flush(w);
        if (n > sizeof w->buf) {
            fwrite(p, 1, n, w->f);
            return;
        }
    }
    memcpy(w->buf + w->n, p, n);
    w->n += n;
}

static void put_c(jsonw *w, char c)
{
    if (w->n == sizeof w->buf) {
        flush(w);
    }
    w->buf[w->n++] = c;
}

static void put_s(jsonw *w, const char *s)
{
    put(w, s, strlen(s));
}

static void tabs(jsonw *w, unsigned n)
{
    static const char t[JSONW_MAX_DEPTH + 1] = "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t"
                                               "\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t";
    SIM_ASSERT(n <= JSONW_MAX_DEPTH);
    put(w, t, n);
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
static void put_string(jsonw *w, const char *s)
{
    put_c(w, '"');
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        const unsigned char *run = p;
        while (*p > 31 && *p != '"' && *p != '\\') {
            p++;
        }
        put(w, run, (size_t)(p - run));
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
        put_c(w, '\\');
        put_s(w, esc);
    }
    put_c(w, '"');
}

void jsonw_key(jsonw *w, const char *key)
{
    SIM_ASSERT(w->depth > 0 && w->is_object[w->depth - 1] && !w->key_written);
    unsigned top = w->depth - 1;
    if (w->has_items[top]) {
        put(w, ",\n", 2);
    }
    w->has_items[top] = true;
    tabs(w, w->depth);
    put_string(w, key);
    put(w, ":\t", 2);
    w->key_written = true;
}

void jsonw_number(jsonw *w, double v)
{
    char buf[JSONW_NUM_LEN];
    before_value(w);
    put_s(w, jsonw_format_number(buf, v));
}

void jsonw_u64(jsonw *w, uint64_t v)
{
    char buf[NUMFMT_LEN];
    before_value(w);
    put(w, buf, numfmt_u64(buf, v));
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
    flush(w);
    return ferror(w->f) ? SIM_EIO : 0;
}
