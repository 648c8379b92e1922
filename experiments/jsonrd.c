/* experiments/jsonrd.c - JSON with positions (see jsonrd.h). */
#include "experiments/jsonrd.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/xalloc.h"

/* ------------------------------------------------------------------ parsing */

/* Parse len bytes; on a syntax error, or text after the JSON value, report FILE:LINE:COL and
 * return NULL. */
static cJSON *parse(jsonrd *r, const char *buf, size_t len)
{
    char *text = xmalloc(len + 1, "JSON text");
    memcpy(text, buf, len);
    text[len] = 0;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 0);
    const char *expect = "a JSON value";
    if (root && strlen(text) != len) {
        end = text + strlen(text); /* an embedded NUL byte: not JSON text */
        cJSON_Delete(root);
        root = NULL;
    } else if (root) {
        while (end && *end && (unsigned char)*end <= 32) {
            end++;
        }
        if (end && *end) { /* cJSON stops after the first value: more text would be ignored */
            expect = "the end of the file after the JSON value";
            cJSON_Delete(root);
            root = NULL;
        }
    }
    if (!root) {
        size_t off = end ? (size_t)(end - text) : 0;
        char got[16];
        if (off >= len) {
            snprintf(got, sizeof got, "end of file");
        } else if ((unsigned char)text[off] < 0x20 || (unsigned char)text[off] >= 0x7f) {
            snprintf(got, sizeof got, "\\x%02x", (unsigned char)text[off]);
        } else {
            snprintf(got, sizeof got, "%c", text[off]);
        }
        diag_error(r->d, diag_loc_from_offset(r->file, text, len, off), NULL,
                   "invalid JSON; expected %s, got '%s'", expect, got);
        r->errors++;
    }
    free(text);
    return root;
}

/* ------------------------------------------------------------------ positions */

/* locate walks the text that parsed beside the tree it gave and records where each value
 * starts. */
static size_t skip_ws(const jsonrd *r, size_t i)
{
    while (i < r->len && (unsigned char)r->text[i] <= 32) { /* what cJSON skips */
        i++;
    }
    return i;
}

static size_t skip_string(const jsonrd *r, size_t i)
{
    for (i++; i < r->len && r->text[i] != '"'; i++) {
        i += r->text[i] == '\\';
    }
    return i + 1;
}

static size_t locate(jsonrd *r, const cJSON *v, size_t i)
{
    i = skip_ws(r, i);
    if (r->n_pos == r->cap_pos) {
        r->cap_pos = r->cap_pos ? 2 * r->cap_pos : 256;
        r->pos = xrealloc(r->pos, r->cap_pos * sizeof *r->pos, "JSON positions");
    }
    r->pos[r->n_pos++] = (jsonrd_pos){v, i};
    if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
        i++; /* '{' or '[' */
        for (const cJSON *c = v->child; c; c = c->next) {
            if (cJSON_IsObject(v)) {
                i = skip_ws(r, skip_string(r, skip_ws(r, i))) + 1; /* "key" : */
            }
            i = skip_ws(r, locate(r, c, i));
            i += i < r->len && r->text[i] == ',';
        }
        return skip_ws(r, i) + 1; /* '}' or ']' */
    }
    if (cJSON_IsString(v)) {
        return skip_string(r, i);
    }
    while (i < r->len && !strchr(",]} \t\r\n", r->text[i])) { /* number, true, false, null */
        i++;
    }
    return i;
}

static int pos_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const jsonrd_pos *)a)->node;
    uintptr_t y = (uintptr_t)((const jsonrd_pos *)b)->node;
    return (x > y) - (x < y);
}

cJSON *jsonrd_parse(jsonrd *r)
{
    cJSON *root = parse(r, r->text, r->len);
    if (root) {
        size_t start = r->len >= 3 && !memcmp(r->text, "\xEF\xBB\xBF", 3) ? 3 : 0; /* BOM */
        r->n_pos = 0;
        locate(r, root, start);
        qsort(r->pos, r->n_pos, sizeof *r->pos, pos_cmp);
    }
    return root;
}

void jsonrd_fini(jsonrd *r)
{
    free(r->pos);
    r->pos = NULL;
    r->n_pos = r->cap_pos = 0;
}

static const jsonrd_pos *find(const jsonrd *r, const cJSON *v)
{
    const jsonrd_pos key = {v, 0};
    return v && r->n_pos ? bsearch(&key, r->pos, r->n_pos, sizeof *r->pos, pos_cmp) : NULL;
}

src_loc jsonrd_loc(const jsonrd *r, const cJSON *v)
{
    if (v && diag_error_count(r->d) < DIAG_MAX_ERRORS) {
        const jsonrd_pos *p = find(r, v);
        if (p) {
            return diag_loc_from_offset(r->file, r->text, r->len, p->off);
        }
    }
    return (src_loc){r->file, 0, 0};
}

/* ------------------------------------------------------------------ reporting */

void jsonrd_describe(const jsonrd *r, const cJSON *v, char *out, size_t n)
{
    const jsonrd_pos *p = find(r, v);
    if (!v) {
        snprintf(out, n, "nothing");
    } else if (cJSON_IsString(v)) {
        snprintf(out, n, "\"%.40s\"", v->valuestring);
    } else if (cJSON_IsNumber(v) && p) {
        size_t w = 0;
        while (w < 40 && p->off + w < r->len && strchr("0123456789.+-eE", r->text[p->off + w]) &&
               r->text[p->off + w]) {
            w++;
        }
        snprintf(out, n, "%.*s", (int)w, r->text + p->off);
    } else if (cJSON_IsNumber(v)) {
        snprintf(out, n, "%.10g", v->valuedouble);
    } else if (cJSON_IsBool(v)) {
        snprintf(out, n, "%s", cJSON_IsTrue(v) ? "true" : "false");
    } else if (cJSON_IsNull(v)) {
        snprintf(out, n, "null");
    } else if (cJSON_IsArray(v)) {
        snprintf(out, n, "an array");
    } else {
        snprintf(out, n, "an object");
    }
}

void jsonrd_check_duplicates(jsonrd *r, const cJSON *v, const char *path)
{
    int i = 0;
    for (const cJSON *c = v ? v->child : NULL; c; c = c->next, i++) {
        char sub[256];
        if (cJSON_IsObject(v)) {
            snprintf(sub, sizeof sub, "%s%s%s", path, path[0] ? "." : "", c->string);
            for (const cJSON *e = v->child; e != c; e = e->next) {
                if (!strcmp(e->string, c->string) && !cJSON_Compare(e, c, true)) {
                    char first[64], second[64];
                    jsonrd_describe(r, e, first, sizeof first);
                    jsonrd_describe(r, c, second, sizeof second);
                    diag_error(r->d, jsonrd_loc(r, c), sub,
                               "duplicate key with another value; expected each key once in an "
                               "object, got '%s' and '%s'",
                               first, second);
                    r->errors++;
                    break;
                }
            }
        } else {
            snprintf(sub, sizeof sub, "%s[%d]", path, i);
        }
        jsonrd_check_duplicates(r, c, sub);
    }
}

void jsonrd_bad(jsonrd *r, const char *path, const char *expect, const cJSON *v, const cJSON *in)
{
    char got[64];
    jsonrd_describe(r, v, got, sizeof got);
    diag_error(r->d, jsonrd_loc(r, v ? v : in), path, "expected %s, got '%s'", expect, got);
    r->errors++;
}

const cJSON *jsonrd_get(const cJSON *o, const char *key)
{
    return cJSON_IsObject(o) ? cJSON_GetObjectItemCaseSensitive(o, key) : NULL;
}
