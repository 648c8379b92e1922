/* workloads/csvin.c - streaming CSV input (see csvin.h). */
#include "workloads/csvin.h"

#include <errno.h>
#include <math.h>
#include <sys/types.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim/err.h"
#include "sim/xalloc.h"

/* Rows read again (csvin_read_at) come through a few blocks of the file, least recently used
 * replaced: rows read in submission order from a file in another order (Philly's is by end
 * time) land mostly in the blocks of the last few hours, so most reads need no I/O (philly.csv,
 * 82 247 rows: 649 blocks read). */
#define SEEK_BLOCK ((size_t)16384)
#define SEEK_BLOCKS 16

typedef struct seek_block {
    uint64_t start; /* file offset of data[0]; UINT64_MAX: empty */
    size_t len;     /* bytes held (less than SEEK_BLOCK at the end of the file) */
    uint64_t used;  /* when it was last read from (a counter) */
    char *data;
} seek_block;

struct csvin {
    FILE *f;
    const char *name;
    diag *d;
    char *line; /* current raw line, NUL-terminated; fields are cut out of it in place */
    size_t cap;
    bool ended; /* a line was too long: the rest is not read (see CSVIN_MAX_LINE) */
    int lineno; /* 1-based line of the current row; 0 for a row read again until an error needs
                 * it (counted then: line_no) */
    uint64_t start;   /* file offset where reading began (line 1); UINT64_MAX: not seekable */
    uint64_t pos;     /* file offset of the next byte */
    uint64_t row_off; /* file offset of the current row's line */
    uint32_t hash;    /* of the current row's bytes (line_hash) */
    bool seeking;     /* rows come from csvin_read_at (through the blocks) */
    seek_block blk[SEEK_BLOCKS];
    seek_block *cur; /* the block the last byte came from, or NULL */
    uint64_t clock;
    size_t n;   /* fields of the current row */
    char *field[CSVIN_MAX_FIELDS];
    int col[CSVIN_MAX_FIELDS]; /* 1-based character column where each field starts */
    size_t n_hdr;
    char *hdr[CSVIN_MAX_FIELDS]; /* header names (owned copies) */
};

/* A hash of a line's n bytes (a word at a time: about 10 ns for a Philly row). */
static uint32_t line_hash(const char *p, size_t n)
{
    uint64_t h = UINT64_C(0x9e3779b97f4a7c15) ^ n;
    for (; n >= 8; p += 8, n -= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        h = (h ^ w) * UINT64_C(0xff51afd7ed558ccd);
        h ^= h >> 32;
    }
    uint64_t w = 0;
    memcpy(&w, p, n);
    h = (h ^ w) * UINT64_C(0xc4ceb9fe1a85ec53);
    return (uint32_t)(h ^ h >> 32);
}

/* Block b of the file holding offset off, read in if needed; NULL at a read error (errno
 * set by the stream) or when the file ends before off. */
static seek_block *block_at(csvin *r, uint64_t off)
{
    uint64_t start = off - off % SEEK_BLOCK;
    seek_block *b = NULL, *lru = &r->blk[0];
    for (int i = 0; i < SEEK_BLOCKS && !b; i++) {
        b = r->blk[i].start == start && r->blk[i].data ? &r->blk[i] : NULL;
        lru = r->blk[i].used < lru->used ? &r->blk[i] : lru;
    }
    if (!b) {
        b = lru;
        if (!b->data) {
            b->data = xmalloc(SEEK_BLOCK, "csv blocks");
        }
        b->start = UINT64_MAX;
        if (fseeko(r->f, (off_t)start, SEEK_SET) != 0) {
            return NULL;
        }
        b->len = fread(b->data, 1, SEEK_BLOCK, r->f);
        if (ferror(r->f)) {
            return NULL;
        }
        b->start = start;
    }
    b->used = ++r->clock;
    return off - b->start < b->len ? b : NULL;
}

/* The next byte of the file (at r->pos), or EOF; -2 at a read error. */
static int next_byte(csvin *r)
{
    if (!r->seeking) {
        int ch = getc_unlocked(r->f); /* one thread reads the stream: no lock per byte */
        r->pos += ch != EOF;
        return ch;
    }
    seek_block *b = r->cur;
    if (!b || r->pos - b->start >= b->len) {
        b = r->cur = block_at(r, r->pos);
        if (!b) {
            return ferror(r->f) ? -2 : EOF;
        }
    }
    return (unsigned char)b->data[r->pos++ - b->start];
}

/* Line of the current row: counted from the start of the file for a row read again. */
static int line_no(csvin *r)
{
    if (r->lineno > 0 || !r->seeking) {
        return r->lineno;
    }
    char buf[8192];
    uint64_t at = r->start, nl = 0;
    r->cur = NULL; /* the stream moves */
    if (fseeko(r->f, (off_t)at, SEEK_SET) != 0) {
        return 1;
    }
    while (at < r->row_off) {
        uint64_t want = r->row_off - at < sizeof buf ? r->row_off - at : sizeof buf;
        size_t got = fread(buf, 1, (size_t)want, r->f);
        for (size_t i = 0; i < got; i++) {
            nl += buf[i] == '\n';
        }
        at += got;
        if (got < want) {
            break;
        }
    }
    r->lineno = nl + 1 <= (uint64_t)INT32_MAX ? (int)(nl + 1) : INT32_MAX;
    return r->lineno;
}

/* Read one physical line into r->line (without '\n'); 1 read, 0 EOF, SIM_EINPUT too long,
 * SIM_EIO read error. Reading ends at a too-long line: later calls return 0 (EOF). */
static int read_line(csvin *r)
{
    size_t len = 0;
    int ch = EOF;
    bool any = false, too_long = false;
    r->row_off = r->pos;
    while (!r->ended && (ch = next_byte(r)) >= 0) {
        any = true;
        if (ch == '\n') {
            break;
        }
        if (len + 1 >= CSVIN_MAX_LINE) {
            too_long = r->ended = true;
            break;
        }
        if (len + 1 >= r->cap) {
            r->cap = r->cap ? 2 * r->cap : 256;
            r->line = xrealloc(r->line, r->cap, "csv line");
        }
        r->line[len++] = (char)ch;
    }
    if (ch == -2 || (!r->seeking && ferror(r->f))) {
        return SIM_EIO;
    }
    if (!any) {
        return 0;
    }
    r->lineno = r->seeking ? 0 : r->lineno + 1;
    if (!r->line) {
        r->cap = 256;
        r->line = xmalloc(r->cap, "csv line");
    }
    if (len > 0 && r->line[len - 1] == '\r') {
        len--;
    }
    r->line[len] = '\0';
    r->hash = line_hash(r->line, len);
    if (too_long) {
        diag_error(r->d, (src_loc){r->name, line_no(r), 1}, NULL,
                   "line too long; expected at most %zu bytes, got more", CSVIN_MAX_LINE - 1);
        return SIM_EINPUT;
    }
    if (memchr(r->line, '\0', len)) {
        diag_error(r->d, (src_loc){r->name, line_no(r), 1}, NULL,
                   "NUL byte in a line; expected text, got binary data");
        return SIM_EINPUT;
    }
    return 1;
}

static bool is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* Split r->line into fields in place. */
static int split(csvin *r)
{
    char *p = r->line;
    r->n = 0;
    for (;;) {
        while (is_space(*p)) {
            p++;
        }
        if (r->n == CSVIN_MAX_FIELDS) {
            diag_error(r->d, (src_loc){r->name, line_no(r), (int)(p - r->line) + 1}, NULL,
                       "too many fields; expected at most %d, got more", CSVIN_MAX_FIELDS);
            return SIM_EINPUT;
        }
        r->col[r->n] = (int)(p - r->line) + 1;
        char *out = p, *start = p;
        if (*p == '"') {
            p++;
            for (;;) {
                if (*p == '\0') {
                    diag_error(r->d, (src_loc){r->name, line_no(r), r->col[r->n]}, NULL,
                               "unterminated quoted field; expected a closing '\"', got the end "
                               "of the line");
                    return SIM_EINPUT;
                }
                if (*p == '"' && p[1] == '"') {
                    *out++ = '"';
                    p += 2;
                } else if (*p == '"') {
                    p++;
                    break;
                } else {
                    *out++ = *p++;
                }
            }
            while (is_space(*p)) {
                p++;
            }
            if (*p != ',' && *p != '\0') {
                diag_error(r->d, (src_loc){r->name, line_no(r), (int)(p - r->line) + 1}, NULL,
                           "text after a quoted field; expected ',' or the end of the line, "
                           "got '%c'",
                           *p);
                return SIM_EINPUT;
            }
        } else {
            while (*p != ',' && *p != '\0') {
                *out++ = *p++;
            }
            while (out > start && is_space(out[-1])) {
                out--;
            }
        }
        char sep = *p;
        *out = '\0';
        r->field[r->n++] = start;
        if (sep == '\0') {
            return 0;
        }
        p++;
    }
}

int csvin_open(FILE *f, const char *name, bool has_header, diag *d, csvin **out)
{
    csvin *r = xcalloc(1, sizeof *r, "csv reader");
    r->f = f;
    r->name = name;
    r->d = d;
    off_t at = ftello(f);
    r->start = at >= 0 && fseeko(f, at, SEEK_SET) == 0 ? (uint64_t)at : UINT64_MAX;
    r->pos = r->start != UINT64_MAX ? r->start : 0;
    for (int i = 0; i < SEEK_BLOCKS; i++) {
        r->blk[i].start = UINT64_MAX;
    }
    *out = NULL;
    if (has_header) {
        int rc = read_line(r);
        if (rc == 0) {
            diag_error(d, (src_loc){name, 1, 1}, NULL,
                       "empty file; expected a header line naming the columns, got nothing");
            rc = SIM_EINPUT;
        } else if (rc == 1) {
            rc = split(r);
        }
        if (rc < 0) {
            csvin_close(r);
            return rc;
        }
        r->n_hdr = r->n;
        for (size_t i = 0; i < r->n; i++) {
            r->hdr[i] = xstrdup(r->field[i], "csv header");
        }
        r->n = 0;
    }
    *out = r;
    return 0;
}

void csvin_close(csvin *r)
{
    if (!r) {
        return;
    }
    for (size_t i = 0; i < r->n_hdr; i++) {
        free(r->hdr[i]);
    }
    for (int i = 0; i < SEEK_BLOCKS; i++) {
        free(r->blk[i].data);
    }
    free(r->line);
    free(r);
}

int csvin_next(csvin *r)
{
    SIM_ASSERT(!r->seeking); /* rows are read in order, or again by offset, not both */
    for (;;) {
        int rc = read_line(r);
        if (rc <= 0) {
            r->n = 0;
            return rc;
        }
        const char *p = r->line;
        while (is_space(*p)) {
            p++;
        }
        if (*p == '\0') {
            continue; /* empty line */
        }
        rc = split(r);
        if (rc < 0) {
            r->n = 0;
            return rc;
        }
        return 1;
    }
}

bool csvin_seekable(const csvin *r)
{
    return r->start != UINT64_MAX;
}

uint64_t csvin_row_offset(const csvin *r)
{
    return r->row_off;
}

uint32_t csvin_row_hash(const csvin *r)
{
    return r->hash;
}

int csvin_read_at(csvin *r, uint64_t off, uint32_t hash, uint32_t mask)
{
    if (!csvin_seekable(r) || off < r->start) {
        return SIM_EIO;
    }
    r->seeking = true;
    r->ended = false;
    r->lineno = 0;
    r->pos = off;
    r->n = 0;
    int rc = read_line(r);
    if (rc == 0 || (rc == 1 && (r->hash & mask) != (hash & mask))) {
        r->row_off = off;
        diag_error(r->d, (src_loc){r->name, line_no(r), 1}, NULL,
                   "the file changed during the run; expected the row read when the run began "
                   "at byte %llu, got %s",
                   (unsigned long long)off, rc == 0 ? "the end of the file" : "other text");
        return SIM_EINPUT;
    }
    if (rc == 1) {
        rc = split(r);
        if (rc < 0) {
            r->n = 0;
        }
    }
    return rc < 0 ? rc : 1;
}

int csvin_column(const csvin *r, const char *name)
{
    for (size_t i = 0; i < r->n_hdr; i++) {
        if (!strcmp(r->hdr[i], name)) {
            return (int)i;
        }
    }
    return -1;
}

size_t csvin_n_columns(const csvin *r)
{
    return r->n_hdr;
}

const char *csvin_column_name(const csvin *r, size_t i)
{
    return i < r->n_hdr ? r->hdr[i] : NULL;
}

const char *csvin_field(const csvin *r, size_t i)
{
    return i < r->n ? r->field[i] : "";
}

int csvin_line(const csvin *r)
{
    return r->lineno;
}

src_loc csvin_loc(csvin *r, size_t i)
{
    int col = 1;
    if (i < r->n) {
        col = r->col[i];
    } else if (r->n > 0) { /* a missing field: point past the last one */
        col = r->col[r->n - 1] + (int)strlen(r->field[r->n - 1]) + 1;
    }
    return (src_loc){r->name, line_no(r), col};
}

void csvin_error(csvin *r, size_t i, const char *fmt, ...)
{
    char col[32], msg[512];
    const char *cname = csvin_column_name(r, i);
    if (!cname) {
        snprintf(col, sizeof col, "column %zu", i + 1);
        cname = col;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    diag_error(r->d, csvin_loc(r, i), cname, "%s", msg);
}

void csvin_error_row(csvin *r, const char *msg)
{
    diag_error(r->d, (src_loc){r->name, line_no(r), 1}, NULL, "%s", msg);
}

bool csvin_is_missing(const csvin *r, size_t i)
{
    const char *t = csvin_field(r, i);
    return t[0] == '\0' || !strcmp(t, "NaN") || !strcmp(t, "nan");
}

/* A field that ends before its row does is reported as missing, not as an empty value. */
static bool present(csvin *r, size_t i, const char *expect)
{
    if (i >= r->n) {
        csvin_error(r, i, "missing field; expected %s, got nothing", expect);
        return false;
    }
    return true;
}

/* Report field i missing (problem NULL) or bad ("PROBLEM; expected EXPECT, got 'VALUE'");
 * false. */
static bool bad_field(csvin *r, size_t i, const char *problem, const char *expect)
{
    if (!problem) {
        return present(r, i, expect);
    }
    csvin_error(r, i, "%s; expected %s, got '%s'", problem, expect, r->field[i]);
    return false;
}

/* What csvin_u64 and csvin_double expect, written into buf (96 bytes) only for a message:
 * formatting it for every field cost more than the parse. */
static const char *u64_expect(char *buf, uint64_t lo, uint64_t hi)
{
    snprintf(buf, 96, "an integer from %llu to %llu", (unsigned long long)lo,
             (unsigned long long)hi);
    return buf;
}

static const char *double_expect(char *buf, double lo, double hi)
{
    snprintf(buf, 96, "a number from %g to %g", lo, hi);
    return buf;
}

bool csvin_u64(csvin *r, size_t i, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char e[96];
    if (i >= r->n) {
        return bad_field(r, i, NULL, u64_expect(e, lo, hi));
    }
    const char *t = r->field[i];
    char *end = NULL;
    errno = 0;
    /* a whole number written as "8.0" (pandas float columns) is accepted */
    unsigned long long v = 0;
    bool ok = t[0] >= '0' && t[0] <= '9';
    if (ok) {
        v = strtoull(t, &end, 10);
        ok = errno == 0 && end != t;
        if (ok && *end == '.') {
            const char *z = end + 1;
            while (*z == '0') {
                z++;
            }
            ok = z > end + 1 && *z == '\0';
        } else {
            ok = ok && *end == '\0';
        }
    }
    if (!ok) {
        return bad_field(r, i, "not a whole number", u64_expect(e, lo, hi));
    }
    if (v < lo || v > hi) {
        return bad_field(r, i, "out of range", u64_expect(e, lo, hi));
    }
    *out = v;
    return true;
}

bool csvin_double(csvin *r, size_t i, double lo, double hi, double *out)
{
    char e[96];
    if (i >= r->n) {
        return bad_field(r, i, NULL, double_expect(e, lo, hi));
    }
    const char *t = r->field[i];
    char *end = NULL;
    errno = 0;
    /* decimal only: strtod alone would also read hexadecimal ("0x10"), "inf" and "nan" */
    bool decimal = t[0] && t[strspn(t, "0123456789.+-eE")] == '\0';
    double v = decimal ? strtod(t, &end) : 0;
    if (!decimal || *end != '\0') {
        return bad_field(r, i, "not a number", double_expect(e, lo, hi));
    }
    if (errno == ERANGE || !isfinite(v) || v < lo || v > hi) {
        return bad_field(r, i, "out of range", double_expect(e, lo, hi));
    }
    *out = v;
    return true;
}

double csvin_epoch_s(int64_t year, int month, int day, int hour, int minute, double second)
{
    /* days from 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil) */
    int64_t y = year - (month <= 2);
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    int64_t yoe = y - era * 400;
    int64_t doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
    int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    int64_t days = era * 146097 + doe - 719468;
    return (double)days * 86400.0 + hour * 3600.0 + minute * 60.0 + second;
}

/* Parse exactly `n` digits at *p into *v; advances *p. */
static bool digits(const char **p, int n, int *v)
{
    int x = 0;
    for (int k = 0; k < n; k++) {
        char c = (*p)[k];
        if (c < '0' || c > '9') {
            return false;
        }
        x = 10 * x + (c - '0');
    }
    *p += n;
    *v = x;
    return true;
}

bool csvin_datetime(csvin *r, size_t i, double *out)
{
    static const char expect[] = "a date and time like 2017-10-09 07:01:55";
    if (!present(r, i, expect)) {
        return false;
    }
    const char *t = r->field[i], *p = t;
    int y, mo, d, h, mi, s;
    bool ok = digits(&p, 4, &y) && *p++ == '-' && digits(&p, 2, &mo) && *p++ == '-' &&
              digits(&p, 2, &d) && (*p == ' ' || *p == 'T') && (p++, digits(&p, 2, &h)) &&
              *p++ == ':' && digits(&p, 2, &mi) && *p++ == ':' && digits(&p, 2, &s) && *p == '\0';
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (!ok) {
        csvin_error(r, i, "not a date and time; expected %s, got '%s'", expect, t);
        return false;
    }
    if (y < 1970 || y > 2060) { /* keeps every span within the engine's clock */
        csvin_error(r, i, "out of range; expected a date from 1970 to 2060, got '%s'", t);
        return false;
    }
    bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap) ||
        h > 23 || mi > 59 || s > 60) {
        csvin_error(r, i, "no such date or time; expected %s, got '%s'", expect, t);
        return false;
    }
    *out = csvin_epoch_s(y, mo, d, h, mi, s);
    return true;
}
