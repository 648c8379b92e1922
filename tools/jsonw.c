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

char *jsonw_format_number(char *buf, double v)
{
    SIM_ASSERT(isfinite(v));
    if (v == floor(v) && fabs(v) <= 9007199254740992.0) {
        /* the digits "%.0f" prints, without its multi-precision path; -0 becomes 0 */
        snprintf(buf, JSONW_NUM_LEN, "%" PRId64, (int64_t)v);
    } else {
        snprintf(buf, JSONW_NUM_LEN, "%.17g", v);
    }
    return buf;
}

void jsonw_init(jsonw *w, FILE *f)
{
    memset(w, 0, sizeof *w);
    w->f = f;
}

static void tabs(FILE *f, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        putc('\t', f);
    }
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
        fputs(", ", w->f);
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
    fputs("{\n", w->f);
    push(w, true);
}

void jsonw_object_end(jsonw *w)
{
    bool had = w->has_items[w->depth - 1];
    pop(w, true);
    if (had) {
        putc('\n', w->f);
    }
    tabs(w->f, w->depth);
    putc('}', w->f);
}

void jsonw_array_begin(jsonw *w)
{
    before_value(w);
    putc('[', w->f);
    push(w, false);
}

void jsonw_array_end(jsonw *w)
{
    pop(w, false);
    putc(']', w->f);
}

/* s quoted and escaped as cJSON's print_string_ptr does it. */
static void put_string(FILE *f, const char *s)
{
    putc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned char c = *p;
        if (c > 31 && c != '"' && c != '\\') {
            putc(c, f);
            continue;
        }
        putc('\\', f);
        switch (c) {
        case '\\':
        case '"':
            putc(c, f);
            break;
        case '\b':
            putc('b', f);
            break;
        case '\f':
            putc('f', f);
            break;
        case '\n':
            putc('n', f);
            break;
        case '\r':
            putc('r', f);
            break;
        case '\t':
            putc('t', f);
            break;
        default:
            fprintf(f, "u%04x", c);
            break;
        }
    }
    putc('"', f);
}

void jsonw_key(jsonw *w, const char *key)
{
    SIM_ASSERT(w->depth > 0 && w->is_object[w->depth - 1] && !w->key_written);
    unsigned top = w->depth - 1;
    if (w->has_items[top]) {
        fputs(",\n", w->f);
    }
    w->has_items[top] = true;
    tabs(w->f, w->depth);
    put_string(w->f, key);
    fputs(":\t", w->f);
    w->key_written = true;
}

void jsonw_number(jsonw *w, double v)
{
    char buf[JSONW_NUM_LEN];
    before_value(w);
    fputs(jsonw_format_number(buf, v), w->f);
}

void jsonw_u64(jsonw *w, uint64_t v)
{
    before_value(w);
    fprintf(w->f, "%" PRIu64, v);
}

void jsonw_string(jsonw *w, const char *s)
{
    before_value(w);
    if (s) {
        put_string(w->f, s);
    } else {
        fputs("null", w->f);
    }
}

void jsonw_null(jsonw *w)
{
    before_value(w);
    fputs("null", w->f);
}

void jsonw_bool(jsonw *w, bool v)
{
    before_value(w);
    fputs(v ? "true" : "false", w->f);
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
            fputs(p, w->f);
            break;
        }
        fwrite(p, 1, (size_t)(nl - p) + 1, w->f);
        tabs(w->f, w->depth);
    }
    cJSON_free(s);
    return 0;
}

int jsonw_error(const jsonw *w)
{
    return ferror(w->f) ? SIM_EIO : 0;
}
