#include "sim/xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static _Noreturn void oom(size_t n, const char *what)
{
    fprintf(stderr, "out of memory: %zu bytes for %s\n", n, what ? what : "?");
    abort();
}

void *xmalloc(size_t n, const char *what)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        oom(n, what);
    }
    return p;
}

void *xcalloc(size_t count, size_t size, const char *what)
{
    if (size && count > SIZE_MAX / size) {
        oom(SIZE_MAX, what);
    }
    void *p = calloc(count ? count : 1, size ? size : 1);
    if (!p) {
        oom(count * size, what);
    }
    return p;
}

void *xrealloc(void *p, size_t n, const char *what)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        oom(n, what);
    }
    return q;
}

char *xstrdup(const char *s, const char *what)
{
    size_t n = strlen(s) + 1;
    char *d = xmalloc(n, what);
    memcpy(d, s, n);
    return d;
}

void sim__assert_fail(const char *expr, const char *file, int line)
{
    fprintf(stderr, "assertion failed: %s at %s:%d\n", expr, file, line);
    abort();
}
