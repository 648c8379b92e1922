#include "experiments/cfg.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "sim/xalloc.h"

enum { PATH_MAX_LEN = 256, EXPECT_LEN = 512, PROBLEM_LEN = 128, SHOW_LEN = 64, MAX_FIELDS = 64 };

/* ---- unit tables (SimGrid style: suffix -> factor in the base unit) ------------------------ */

typedef struct unit {
    const char *suffix;
    double factor;
} unit;

static const unit size_units[] = {
    {"B", 1.0},
    {"kB", 1e3},
    {"KB", 1e3},
    {"MB", 1e6},
    {"GB", 1e9},
    {"TB", 1e12},
    {"KiB", 1024.0},
    {"MiB", 1048576.0},
    {"GiB", 1073741824.0},
    {"TiB", 1099511627776.0},
    {NULL, 0},
};

/* Seconds per unit. */
static const unit time_units[] = {
    {"ns", 1e-9},  {"us", 1e-6},  {"ms", 1e-3},   {"s", 1.0}, {"m", 60.0},
    {"min", 60.0}, {"h", 3600.0}, {"d", 86400.0}, {NULL, 0},
};

/* Nanoseconds per unit, kept exact for CFG_DURATION. */
static const int64_t time_units_ns[] = {
    1, 1000, 1000000, 1000000000, 60000000000, 60000000000, 3600000000000, 86400000000000,
};

/* ---- scalar parsers ------------------------------------------------------------------------ */

static void set_problem(char *problem, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_problem(char *problem, size_t n, const char *fmt, ...)
{
    if (!problem || n == 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(problem, n, fmt, ap);
    va_end(ap);
}

/* Length of the leading run of characters that can belong to a decimal number. Restricting
 * strtod to this run keeps out "inf", "nan" and hexadecimal floats. */
static size_t number_span(const char *t)
{
    size_t i = 0;
    while (t[i] && strchr("0123456789.+-eE", t[i])) {
        i++;
    }
    /* "5e" followed by a unit letter: the 'e' is not part of the number */
    while (i > 0 && (t[i - 1] == 'e' || t[i - 1] == 'E' || t[i - 1] == '+' || t[i - 1] == '-')) {
        i--;
    }
    return i;
}

/* Parse exactly `len` chars of `t` as a finite double. */
static bool parse_number_span(const char *t, size_t len, double *out, char *problem, size_t n)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf) {
        set_problem(problem, n, "not a number");
        return false;
    }
    memcpy(buf, t, len);
    buf[len] = '\0';
    char *end = NULL;
    errno = 0;
    double v = strtod(buf, &end);
    if (end == buf || *end != '\0') {
        set_problem(problem, n, "not a number");
        return false;
    }
    if (errno == ERANGE || !isfinite(v)) {
        set_problem(problem, n, "out of range");
        return false;
    }
    *out = v;
    return true;
}

static bool all_digits(const char *t)
{
    if (!*t) {
        return false;
    }
    for (; *t; t++) {
        if (*t < '0' || *t > '9') {
            return false;
        }
    }
    return true;
}

/* "not an integer" for a valid decimal like 1.5, "not a number" otherwise. */
static void int_problem(const char *text, char *problem, size_t n)
{
    size_t span = number_span(text);
    double v;
    if (span && !text[span] && parse_number_span(text, span, &v, NULL, 0)) {
        set_problem(problem, n, "not an integer");
    } else {
        set_problem(problem, n, "not a number");
    }
}

bool cfg_parse_i64(const char *text, int64_t *out, char *problem, size_t n)
{
    const char *digits = (text[0] == '-' || text[0] == '+') ? text + 1 : text;
    if (!all_digits(digits)) {
        int_problem(text, problem, n);
        return false;
    }
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno == ERANGE) {
        set_problem(problem, n, "out of range");
        return false;
    }
    if (end == text || *end != '\0') {
        set_problem(problem, n, "not a number");
        return false;
    }
    *out = (int64_t)v;
    return true;
}

bool cfg_parse_u64(const char *text, uint64_t *out, char *problem, size_t n)
{
    const char *digits = text[0] == '+' ? text + 1 : text;
    if (text[0] == '-' && all_digits(text + 1)) {
        set_problem(problem, n, "out of range");
        return false;
    }
    if (!all_digits(digits)) {
        int_problem(text, problem, n);
        return false;
    }
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(digits, &end, 10);
    if (errno == ERANGE) {
        set_problem(problem, n, "out of range");
        return false;
    }
    if (end == digits || *end != '\0') {
        set_problem(problem, n, "not a number");
        return false;
    }
    *out = (uint64_t)v;
    return true;
}

bool cfg_parse_double(const char *text, double *out, char *problem, size_t n)
{
    size_t span = number_span(text);
    if (text[span] != '\0') {
        set_problem(problem, n, "not a number");
        return false;
    }
    return parse_number_span(text, span, out, problem, n);
}

bool cfg_parse_bool(const char *text, bool *out, char *problem, size_t n)
{
    if (!strcmp(text, "true") || !strcmp(text, "True") || !strcmp(text, "TRUE")) {
        *out = true;
        return true;
    }
    if (!strcmp(text, "false") || !strcmp(text, "False") || !strcmp(text, "FALSE")) {
        *out = false;
        return true;
    }
    set_problem(problem, n, "not a boolean");
    return false;
}

/* Split "NUMBER[ ]UNIT": parse the number, return the unit index in `units` or -1. */
static int parse_with_unit(const char *text, const unit *units, double *num, char *problem,
                           size_t n)
{
    size_t span = number_span(text);
    if (span == 0) {
        set_problem(problem, n, "not a number");
        return -1;
    }
    if (!parse_number_span(text, span, num, problem, n)) {
        return -1;
    }
    const char *u = text + span;
    if (*u == ' ') {
        u++;
    }
    if (*u == '\0') {
        set_problem(problem, n, "missing unit");
        return -1;
    }
    for (int i = 0; units[i].suffix; i++) {
        if (!strcmp(u, units[i].suffix)) {
            return i;
        }
    }
    set_problem(problem, n, "unknown unit '%.*s'", SHOW_LEN, u);
    return -1;
}

bool cfg_parse_bytes(const char *text, uint64_t *out, char *problem, size_t n)
{
    double v;
    int u = parse_with_unit(text, size_units, &v, problem, n);
    if (u < 0) {
        return false;
    }
    double bytes = v * size_units[u].factor;
    /* 18446744073709551616.0 is 2^64, the first value a uint64_t cannot hold */
    if (!(bytes >= 0) || bytes >= 18446744073709551616.0) {
        set_problem(problem, n, "out of range");
        return false;
    }
    /* llround works on long long; above 2^63 a double is already a whole number */
    *out = bytes < 9.2e18 ? (uint64_t)llround(bytes) : (uint64_t)bytes;
    return true;
}

bool cfg_parse_seconds(const char *text, double *out, char *problem, size_t n)
{
    double v;
    int u = parse_with_unit(text, time_units, &v, problem, n);
    if (u < 0) {
        return false;
    }
    double s = v * time_units[u].factor;
    if (!isfinite(s)) {
        set_problem(problem, n, "out of range");
        return false;
    }
    *out = s;
    return true;
}

bool cfg_parse_duration_ns(const char *text, int64_t *out, char *problem, size_t n)
{
    double v;
    int u = parse_with_unit(text, time_units, &v, problem, n);
    if (u < 0) {
        return false;
    }
    double ns = v * (double)time_units_ns[u];
    /* int64 ns holds about +-292 years */
    if (!(fabs(ns) < 9.2e18)) {
        set_problem(problem, n, "out of range");
        return false;
    }
    *out = (int64_t)llround(ns);
    return true;
}

bool cfg_parse_rate(const char *text, double *out, char *problem, size_t n)
{
    size_t span = number_span(text);
    double v;
    if (span == 0) {
        set_problem(problem, n, "not a number");
        return false;
    }
    if (!parse_number_span(text, span, &v, problem, n)) {
        return false;
    }
    const char *u = text + span;
    if (*u == ' ') {
        u++;
    }
    if (*u == '\0') {
        set_problem(problem, n, "missing unit");
        return false;
    }
    if (*u == '/') {
        for (int i = 3; time_units[i].suffix; i++) { /* per s, m, min, h, d */
            if (!strcmp(u + 1, time_units[i].suffix)) {
                *out = v / time_units[i].factor;
                return true;
            }
        }
    }
    set_problem(problem, n, "unknown unit '%.*s'", SHOW_LEN, u);
    return false;
}

/* ---- expectation texts --------------------------------------------------------------------- */

static void fmt_bytes(char *buf, size_t n, double v)
{
    static const unit order[] = {{"TiB", 1099511627776.0},
                                 {"GiB", 1073741824.0},
                                 {"MiB", 1048576.0},
                                 {"KiB", 1024.0},
                                 {"TB", 1e12},
                                 {"GB", 1e9},
                                 {"MB", 1e6},
                                 {"kB", 1e3}};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        if (v != 0 && fmod(v, order[i].factor) == 0) {
            snprintf(buf, n, "%.15g%s", v / order[i].factor, order[i].suffix);
            return;
        }
    }
    snprintf(buf, n, "%.15gB", v);
}

static void fmt_seconds(char *buf, size_t n, double v)
{
    static const unit order[] = {{"d", 86400.0}, {"h", 3600.0}, {"m", 60.0}, {"s", 1.0},
                                 {"ms", 1e-3},   {"us", 1e-6},  {"ns", 1e-9}};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        double q = v / order[i].factor;
        if (v != 0 && fabs(q) >= 1 && fabs(q - round(q)) < 1e-9 * fabs(q)) {
            snprintf(buf, n, "%.15g%s", round(q), order[i].suffix);
            return;
        }
    }
    snprintf(buf, n, "%.15gs", v);
}

static void fmt_bound(cfg_type t, double v, char *buf, size_t n)
{
    switch (t) {
    case CFG_BYTES:
        fmt_bytes(buf, n, v);
        break;
    case CFG_DURATION:
    case CFG_SECONDS:
        fmt_seconds(buf, n, v);
        break;
    case CFG_RATE:
        if (v > 0 && v < 1) {
            snprintf(buf, n, "%.15g/h", v * 3600.0);
        } else {
            snprintf(buf, n, "%.15g/s", v);
        }
        break;
    default:
        snprintf(buf, n, "%.15g", v);
        break;
    }
}

static void append(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void append(char *buf, size_t n, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= n) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, n - used, fmt, ap);
    va_end(ap);
}

static void append_names(char *buf, size_t n, const char *const *names)
{
    append(buf, n, "one of [");
    for (size_t i = 0; names[i]; i++) {
        append(buf, n, "%s%s", i ? ", " : "", names[i]);
    }
    append(buf, n, "]");
}

static const char *type_phrase(cfg_type t)
{
    switch (t) {
    case CFG_STRING:
        return "a string";
    case CFG_BOOL:
        return "true or false";
    case CFG_INT:
    case CFG_I64:
    case CFG_U32:
    case CFG_U64:
        return "an integer";
    case CFG_DOUBLE:
        return "a number";
    case CFG_BYTES:
        return "a size like 80GiB";
    case CFG_DURATION:
    case CFG_SECONDS:
        return "a duration like 90s";
    case CFG_RATE:
        return "a rate like 2/h";
    case CFG_MAP:
        return "a mapping";
    case CFG_SEQ:
        return "a sequence";
    case CFG_ENUM:
    case CFG_CUSTOM:
    case CFG_SELF_LOC:
        break;
    }
    return "a value";
}

/* Expectation for a value of type t (the field's own type, or a sequence item's). */
static const char *expect_for(const cfg_field *f, cfg_type t, bool item, char *buf, size_t n)
{
    buf[0] = '\0';
    if (f->expect && !item) {
        snprintf(buf, n, "%s", f->expect);
        return buf;
    }
    if ((t == CFG_ENUM || t == CFG_STRING) && f->names) {
        append_names(buf, n, f->names);
        return buf;
    }
    append(buf, n, "%s", type_phrase(t));
    if (t == CFG_SEQ && !item) {
        if (f->has_min && f->has_max) {
            append(buf, n, " of %.15g to %.15g items", f->min, f->max);
        } else if (f->has_min) {
            append(buf, n, " of at least %.15g item%s", f->min, f->min == 1 ? "" : "s");
        } else if (f->has_max) {
            append(buf, n, " of at most %.15g items", f->max);
        }
        return buf;
    }
    /* the bounds of a sequence field count its items, so items show none */
    if (item || t == CFG_SEQ || t == CFG_MAP || t == CFG_BOOL || t == CFG_STRING) {
        return buf;
    }
    char lo[48], hi[48];
    fmt_bound(t, f->min, lo, sizeof lo);
    fmt_bound(t, f->max, hi, sizeof hi);
    if (f->has_min && f->min_open) {
        append(buf, n, " above %s", lo);
        if (f->has_max) {
            append(buf, n, " and at most %s", hi);
        }
    } else if (f->has_min && f->has_max) {
        append(buf, n, " from %s to %s", lo, hi);
    } else if (f->has_min) {
        append(buf, n, " of at least %s", lo);
    } else if (f->has_max) {
        append(buf, n, " of at most %s", hi);
    }
    return buf;
}

const char *cfg_expect(const cfg_field *f, char *buf, size_t n)
{
    return expect_for(f, f->type, false, buf, n);
}

/* ---- paths and messages -------------------------------------------------------------------- */

void cfg_path_key(char *buf, size_t n, const char *parent, const char *key)
{
    if (parent && parent[0]) {
        snprintf(buf, n, "%s.%s", parent, key);
    } else {
        snprintf(buf, n, "%s", key);
    }
}

void cfg_path_index(char *buf, size_t n, const char *parent, size_t i)
{
    snprintf(buf, n, "%s[%zu]", parent ? parent : "", i);
}

/* A value as quoted in a message: one line, at most SHOW_LEN bytes, cut on a UTF-8 boundary. */
static const char *show(const char *text, char *buf, size_t n)
{
    size_t len = strlen(text), cut = len;
    if (cut > SHOW_LEN) {
        cut = SHOW_LEN;
        while (cut > 0 && ((unsigned char)text[cut] & 0xC0) == 0x80) {
            cut--;
        }
    }
    size_t j = 0;
    for (size_t i = 0; i < cut && j + 4 < n; i++) {
        unsigned char c = (unsigned char)text[i];
        buf[j++] = (c < 0x20 || c == 0x7f) ? '?' : (char)c;
    }
    if (cut < len && j + 4 < n) {
        memcpy(buf + j, "...", 3);
        j += 3;
    }
    buf[j] = '\0';
    return buf;
}

src_loc cfg_loc(const cfg_walker *w, const yaml_node_t *node)
{
    return yamlx_loc(w->doc, node);
}

void cfg_error(cfg_walker *w, const yaml_node_t *node, const char *path, const char *fmt, ...)
{
    char body[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    diag_error(w->diag, cfg_loc(w, node), path, "%s", body);
}

/* "wrong type; expected X, got Y" where Y is a quoted scalar or "a mapping"/"a sequence". */
static void wrong_type(cfg_walker *w, yaml_node_t *node, const char *path, const char *expect)
{
    const char *s = yamlx_scalar(node);
    char sb[SHOW_LEN * 4];
    if (s) {
        cfg_error(w, node, path, "wrong type; expected %s, got '%s'", expect,
                  show(s, sb, sizeof sb));
    } else {
        cfg_error(w, node, path, "wrong type; expected %s, got %s", expect, yamlx_kind(node));
    }
}

/* ---- walker -------------------------------------------------------------------------------- */

void cfg_walker_init(cfg_walker *w, yamlx_doc *doc, arena *a, diag *d, void *user)
{
    w->doc = doc;
    w->arena = a;
    w->diag = d;
    w->user = user;
    w->n_seen = 0;
    w->seen = NULL;
}

void cfg_walker_fini(cfg_walker *w)
{
    free(w->seen);
    w->seen = NULL;
    w->n_seen = 0;
}

bool cfg_visit(cfg_walker *w, yaml_node_t *node, const char *path)
{
    int id = yamlx_node_id(w->doc, node);
    int count = yamlx_node_count(w->doc);
    if (count > w->n_seen) {
        w->seen = xrealloc(w->seen, (size_t)count, "walked nodes");
        memset(w->seen + w->n_seen, 0, (size_t)(count - w->n_seen));
        w->n_seen = count;
    }
    SIM_ASSERT(id >= 1 && id <= w->n_seen);
    if (w->seen[id - 1]) {
        /* Only an alias reaches a node twice. Refusing aliases also bounds the walk: a chain of
         * aliases cannot expand into an exponential number of values. */
        cfg_error(w, node, path,
                  "repeated node; expected each value written out once, "
                  "got a YAML alias");
        return false;
    }
    w->seen[id - 1] = 1;
    return true;
}

static bool within_bounds(const cfg_field *f, double v)
{
    if (f->has_min && (f->min_open ? v <= f->min : v < f->min)) {
        return false;
    }
    return !(f->has_max && v > f->max);
}

/* The integer types: parse, check the type's range and the field's bounds, store. */
static bool parse_integer(const cfg_field *f, cfg_type t, bool bounded, const char *text, void *dst,
                          char *problem, size_t n)
{
    bool is_signed = t == CFG_INT || t == CFG_I64;
    int64_t sx = 0;
    uint64_t ux = 0;
    if (is_signed ? !cfg_parse_i64(text, &sx, problem, n) : !cfg_parse_u64(text, &ux, problem, n)) {
        return false;
    }
    bool fits = (t == CFG_INT)   ? (sx >= INT_MIN && sx <= INT_MAX)
                : (t == CFG_U32) ? ux <= UINT32_MAX
                                 : true;
    double v = is_signed ? (double)sx : (double)ux;
    if (!fits || (bounded && !within_bounds(f, v))) {
        set_problem(problem, n, "out of range");
        return false;
    }
    switch (t) {
    case CFG_INT:
        *(int *)dst = (int)sx;
        break;
    case CFG_I64:
        *(int64_t *)dst = sx;
        break;
    case CFG_U32:
        *(uint32_t *)dst = (uint32_t)ux;
        break;
    default:
        *(uint64_t *)dst = ux;
        break;
    }
    return true;
}

/* Parse scalar `text` as type t for field f into `dst` (the member itself). `item` is true for
 * an item of a scalar sequence (the field's bounds count items, not values). */
static bool parse_scalar(const cfg_field *f, cfg_type t, bool item, const char *text, void *dst,
                         arena *a, char *problem, size_t n)
{
    bool bounded = !item;
    double v = 0;
    switch (t) {
    case CFG_STRING:
        if (f->names) {
            bool found = false;
            for (size_t i = 0; f->names[i]; i++) {
                found = found || !strcmp(f->names[i], text);
            }
            if (!found) {
                set_problem(problem, n, "unknown value");
                return false;
            }
        }
        *(const char **)dst = arena_strdup(a, text);
        return true;
    case CFG_BOOL:
        return cfg_parse_bool(text, (bool *)dst, problem, n);
    case CFG_ENUM:
        for (size_t i = 0; f->names[i]; i++) {
            if (!strcmp(f->names[i], text)) {
                *(int *)dst = (int)i;
                return true;
            }
        }
        set_problem(problem, n, "unknown value");
        return false;
    case CFG_INT:
    case CFG_I64:
    case CFG_U32:
    case CFG_U64:
        return parse_integer(f, t, bounded, text, dst, problem, n);
    case CFG_DOUBLE:
    case CFG_SECONDS:
    case CFG_RATE: {
        bool ok = t == CFG_DOUBLE    ? cfg_parse_double(text, &v, problem, n)
                  : t == CFG_SECONDS ? cfg_parse_seconds(text, &v, problem, n)
                                     : cfg_parse_rate(text, &v, problem, n);
        if (!ok) {
            return false;
        }
        if (bounded && !within_bounds(f, v)) {
            set_problem(problem, n, "out of range");
            return false;
        }
        *(double *)dst = v;
        return true;
    }
    case CFG_BYTES: {
        uint64_t x;
        if (!cfg_parse_bytes(text, &x, problem, n)) {
            return false;
        }
        if (bounded && !within_bounds(f, (double)x)) {
            set_problem(problem, n, "out of range");
            return false;
        }
        *(uint64_t *)dst = x;
        return true;
    }
    case CFG_DURATION: {
        int64_t x;
        if (!cfg_parse_duration_ns(text, &x, problem, n)) {
            return false;
        }
        if (bounded && !within_bounds(f, (double)x * 1e-9)) {
            set_problem(problem, n, "out of range");
            return false;
        }
        *(int64_t *)dst = x;
        return true;
    }
    case CFG_MAP:
    case CFG_SEQ:
    case CFG_CUSTOM:
    case CFG_SELF_LOC:
        break;
    }
    SIM_ASSERT(!"parse_scalar: not a scalar type");
    return false;
}

static size_t scalar_size(cfg_type t)
{
    switch (t) {
    case CFG_STRING:
        return sizeof(const char *);
    case CFG_BOOL:
        return sizeof(bool);
    case CFG_INT:
    case CFG_ENUM:
        return sizeof(int);
    case CFG_I64:
    case CFG_DURATION:
        return sizeof(int64_t);
    case CFG_U32:
        return sizeof(uint32_t);
    case CFG_U64:
    case CFG_BYTES:
        return sizeof(uint64_t);
    case CFG_DOUBLE:
    case CFG_SECONDS:
    case CFG_RATE:
        return sizeof(double);
    case CFG_MAP:
    case CFG_SEQ:
    case CFG_CUSTOM:
    case CFG_SELF_LOC:
        break;
    }
    SIM_ASSERT(!"scalar_size: not a scalar type");
    return 0;
}

/* Walk a scalar value node of type t into dst. */
static bool walk_scalar(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                        cfg_type t, bool item, void *dst)
{
    char expect[EXPECT_LEN];
    const char *text = yamlx_scalar(node);
    if (!text) {
        wrong_type(w, node, path, expect_for(f, t, item, expect, sizeof expect));
        return false;
    }
    if (!text[0]) {
        cfg_error(w, node, path, "missing value; expected %s, got ''",
                  expect_for(f, t, item, expect, sizeof expect));
        return false;
    }
    char problem[PROBLEM_LEN];
    if (!parse_scalar(f, t, item, text, dst, w->arena, problem, sizeof problem)) {
        char sb[SHOW_LEN * 4];
        cfg_error(w, node, path, "%s; expected %s, got '%s'", problem,
                  expect_for(f, t, item, expect, sizeof expect), show(text, sb, sizeof sb));
        return false;
    }
    return true;
}

static bool walk_seq(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                     void *base)
{
    char expect[EXPECT_LEN];
    if (node->type != YAML_SEQUENCE_NODE) {
        wrong_type(w, node, path, cfg_expect(f, expect, sizeof expect));
        return false;
    }
    size_t count = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
    if (!within_bounds(f, (double)count)) {
        cfg_error(w, node, path, "wrong number of items; expected %s, got %zu item%s",
                  cfg_expect(f, expect, sizeof expect), count, count == 1 ? "" : "s");
        return false;
    }
    size_t size = f->sub ? f->elem_size : scalar_size(f->elem);
    SIM_ASSERT(size > 0);
    unsigned char *items = count ? arena_calloc(w->arena, count, size) : NULL;
    bool ok = true;
    for (size_t i = 0; i < count; i++) {
        char ipath[PATH_MAX_LEN];
        cfg_path_index(ipath, sizeof ipath, path, i);
        yaml_node_t *item = yamlx_node(w->doc, node->data.sequence.items.start[i]);
        if (f->sub) {
            ok = cfg_walk_map(w, item, ipath, f->sub, items + i * size) && ok;
        } else if (cfg_visit(w, item, ipath)) {
            ok = walk_scalar(w, item, ipath, f, f->elem, true, items + i * size) && ok;
        } else {
            ok = false;
        }
    }
    *(void **)((unsigned char *)base + f->off) = items;
    *(size_t *)((unsigned char *)base + f->count_off) = count;
    return ok;
}

bool cfg_walk_field(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *f,
                    void *base)
{
    unsigned char *dst = (unsigned char *)base + f->off;
    if (f->has_loc) {
        *(src_loc *)((unsigned char *)base + f->loc_off) = cfg_loc(w, node);
    }
    switch (f->type) {
    case CFG_MAP:
        return cfg_walk_map(w, node, path, f->sub, dst);
    case CFG_SEQ:
        return cfg_visit(w, node, path) && walk_seq(w, node, path, f, base);
    case CFG_CUSTOM:
        return f->parse(w, node, path, f, dst);
    case CFG_SELF_LOC:
        SIM_ASSERT(!"cfg_walk_field: CFG_SELF_LOC has no value");
        return false;
    default:
        return cfg_visit(w, node, path) && walk_scalar(w, node, path, f, f->type, false, dst);
    }
}

/* Default of one field into the struct at base. */
static void apply_default(const cfg_field *f, void *base, arena *a)
{
    unsigned char *dst = (unsigned char *)base + f->off;
    if (f->type == CFG_MAP) {
        cfg_apply_defaults(f->sub, dst, a);
        return;
    }
    if (!f->dflt) {
        return;
    }
    SIM_ASSERT(f->type != CFG_SEQ && f->type != CFG_CUSTOM && f->type != CFG_SELF_LOC);
    char problem[PROBLEM_LEN];
    bool ok = parse_scalar(f, f->type, false, f->dflt, dst, a, problem, sizeof problem);
    SIM_ASSERT(ok && "schema default does not satisfy its own field");
}

void cfg_apply_defaults(const cfg_field *table, void *dst, arena *a)
{
    for (const cfg_field *f = table; f->key; f++) {
        if (f->type != CFG_SELF_LOC && !(f->out & CFG_OUT_ONLY)) {
            apply_default(f, dst, a);
        }
    }
}

static void list_keys(const cfg_field *table, char *buf, size_t n)
{
    buf[0] = '\0';
    append(buf, n, "one of [");
    bool first = true;
    for (const cfg_field *f = table; f->key; f++) {
        if (f->type != CFG_SELF_LOC && !(f->out & CFG_OUT_ONLY)) {
            append(buf, n, "%s%s", first ? "" : ", ", f->key);
            first = false;
        }
    }
    append(buf, n, "]");
}

bool cfg_walk_map(cfg_walker *w, yaml_node_t *node, const char *path, const cfg_field *table,
                  void *dst)
{
    int errors_before = diag_error_count(w->diag);
    if (!cfg_visit(w, node, path)) {
        return false;
    }
    if (node->type != YAML_MAPPING_NODE) {
        wrong_type(w, node, path, "a mapping");
        return false;
    }
    size_t n_fields = 0;
    while (table[n_fields].key) {
        n_fields++;
    }
    SIM_ASSERT(n_fields <= MAX_FIELDS);
    bool present[MAX_FIELDS] = {false};
    size_t first_pair[MAX_FIELDS] = {0}; /* pair index of each present field */

    yaml_node_pair_t *pairs = node->data.mapping.pairs.start;
    size_t n_pairs = (size_t)(node->data.mapping.pairs.top - pairs);
    for (size_t i = 0; i < n_pairs; i++) {
        yaml_node_t *knode = yamlx_node(w->doc, pairs[i].key);
        yaml_node_t *vnode = yamlx_node(w->doc, pairs[i].value);
        const char *key = yamlx_scalar(knode);
        if (!key) {
            cfg_error(w, knode, path, "wrong type; expected a plain key, got %s",
                      yamlx_kind(knode));
            continue;
        }
        char kpath[PATH_MAX_LEN];
        cfg_path_key(kpath, sizeof kpath, path, key);
        char sb[SHOW_LEN * 4];
        size_t fi = 0;
        while (fi < n_fields && (table[fi].type == CFG_SELF_LOC || (table[fi].out & CFG_OUT_ONLY) ||
                                 strcmp(table[fi].key, key))) {
            fi++;
        }
        if (fi == n_fields) {
            char keys[EXPECT_LEN];
            list_keys(table, keys, sizeof keys);
            cfg_error(w, knode, kpath, "unknown key; expected %s, got '%s'", keys,
                      show(key, sb, sizeof sb));
            continue;
        }
        /* Duplicates are found per known field, so a mapping costs O(keys x fields), not
         * O(keys^2); a repeated unknown key is reported as unknown each time. */
        if (present[fi]) {
            src_loc first = cfg_loc(w, yamlx_node(w->doc, pairs[first_pair[fi]].key));
            cfg_error(w, knode, kpath,
                      "duplicate key (first at line %d); expected each key once, "
                      "got '%s'",
                      first.line, show(key, sb, sizeof sb));
            continue;
        }
        first_pair[fi] = i;
        present[fi] = true;
        cfg_walk_field(w, vnode, kpath, &table[fi], dst);
    }
    for (size_t fi = 0; fi < n_fields; fi++) {
        const cfg_field *f = &table[fi];
        if (f->type == CFG_SELF_LOC) {
            *(src_loc *)((unsigned char *)dst + f->off) = cfg_loc(w, node);
        } else if (f->out & CFG_OUT_ONLY) {
            continue; /* the loader's, not the input's */
        } else if (!present[fi] && f->required) {
            char kpath[PATH_MAX_LEN], expect[EXPECT_LEN];
            cfg_path_key(kpath, sizeof kpath, path, f->key);
            cfg_error(w, node, kpath, "missing required field; expected %s, got nothing",
                      cfg_expect(f, expect, sizeof expect));
        } else if (!present[fi]) {
            apply_default(f, dst, w->arena);
        }
    }
    return diag_error_count(w->diag) == errors_before;
}

bool cfg_walk_root(cfg_walker *w, const cfg_field *table, void *dst)
{
    yaml_node_t *root = yamlx_root(w->doc);
    if (!root) {
        cfg_error(w, NULL, NULL, "empty document; expected a mapping, got nothing");
        return false;
    }
    return cfg_walk_map(w, root, "", table, dst);
}

bool cfg_walk_doc(yamlx_doc *doc, arena *a, diag *d, const cfg_field *table, void *dst)
{
    cfg_walker w;
    cfg_walker_init(&w, doc, a, d, NULL);
    bool ok = cfg_walk_root(&w, table, dst);
    cfg_walker_fini(&w);
    return ok;
}

int cfg_load_section(yamlx_doc *doc, arena *a, diag *d, const char *key, cfg_section_fn *walk,
                     void *out)
{
    yaml_node_t *node = yamlx_map_get(doc, yamlx_root(doc), key);
    int rc = 0;
    if (node) {
        cfg_walker w;
        cfg_walker_init(&w, doc, a, d, NULL);
        rc = walk(&w, node, out);
        cfg_walker_fini(&w);
    }
    yamlx_destroy(doc);
    return rc;
}

int cfg_load_buffer(const char *name, const void *buf, size_t len, const cfg_field *table,
                    void *dst, cfg_finish_fn *finish, void *ctx, diag *d)
{
    arena *a = arena_create();
    yamlx_doc *doc = NULL;
    int before = diag_error_count(d);
    if (yamlx_load_buffer(name, buf, len, a, d, &doc) != 0) {
        arena_destroy(a);
        return SIM_EINPUT;
    }
    cfg_walk_doc(doc, a, d, table, dst);
    if (diag_error_count(d) == before) {
        finish(dst, ctx, d);
    }
    yamlx_destroy(doc);
    arena_destroy(a);
    return diag_error_count(d) == before ? 0 : SIM_EINPUT;
}
