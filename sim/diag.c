#include "sim/diag.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sim/xalloc.h"

struct diag {
    int n_errors;
    char *msgs[DIAG_MAX_ERRORS];
};

src_loc diag_loc_from_offset(const char *file, const void *buf, size_t len, size_t offset)
{
    const unsigned char *b = buf;
    src_loc at = {file, 1, 1};
    for (size_t i = 0; i < offset && i < len; i++) {
        if (b[i] == '\n') {
            at.line++;
            at.col = 1;
        } else if ((b[i] & 0xC0) != 0x80) {
            at.col++;
        }
    }
    return at;
}

diag *diag_create(void)
{
    return xcalloc(1, sizeof(diag), "diag");
}

void diag_clear(diag *d)
{
    int n = d->n_errors < DIAG_MAX_ERRORS ? d->n_errors : DIAG_MAX_ERRORS;
    for (int i = 0; i < n; i++) {
        free(d->msgs[i]);
        d->msgs[i] = NULL;
    }
    d->n_errors = 0;
}

void diag_destroy(diag *d)
{
    if (!d) {
        return;
    }
    diag_clear(d);
    free(d);
}

void diag_error(diag *d, src_loc at, const char *field_path, const char *fmt, ...)
{
    int idx = d->n_errors++;
    if (idx >= DIAG_MAX_ERRORS) {
        return;
    }
    char head[1024];
    const char *file = at.file ? at.file : "<input>";
    int hn;
    if (at.line > 0) {
        hn = snprintf(head, sizeof head, "%s:%d:%d: error: ", file, at.line, at.col > 0 ? at.col : 1);
    } else {
        hn = snprintf(head, sizeof head, "%s: error: ", file);
    }
    if (hn < 0) {
        hn = 0;
    }
    char body[2048];
    va_list ap;
    va_start(ap, fmt);
    int bn = vsnprintf(body, sizeof body, fmt, ap);
    va_end(ap);
    if (bn < 0) {
        body[0] = '\0';
    }
    size_t n = strlen(head) + (field_path ? strlen(field_path) : 0) + strlen(body) + 4;
    char *m = xmalloc(n, "diag message");
    if (field_path && field_path[0]) {
        snprintf(m, n, "%s%s: %s", head, field_path, body);
    } else {
        snprintf(m, n, "%s%s", head, body);
    }
    d->msgs[idx] = m;
}

int diag_error_count(const diag *d)
{
    return d->n_errors;
}

void diag_print(const diag *d, FILE *out)
{
    int n = d->n_errors < DIAG_MAX_ERRORS ? d->n_errors : DIAG_MAX_ERRORS;
    for (int i = 0; i < n; i++) {
        fprintf(out, "%s\n", d->msgs[i]);
    }
    if (d->n_errors > DIAG_MAX_ERRORS) {
        fprintf(out, "%d more errors not shown\n", d->n_errors - DIAG_MAX_ERRORS);
    }
}
