/* experiments/readfile.c - whole-file reader (see readfile.h). */
#include "experiments/readfile.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim/err.h"
#include "sim/xalloc.h"

int readfile_all(const char *path, size_t max_bytes, char **buf, size_t *len)
{
    *buf = NULL;
    *len = 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        return errno == ENOENT ? SIM_ENOENT : SIM_EIO;
    }
    size_t cap = 1 << 16, n = 0;
    char *b = xmalloc(cap + 1, "input file");
    int e = 0;
    for (;;) {
        size_t got = fread(b + n, 1, cap - n, f);
        n += got;
        if (n > max_bytes) {
            e = EFBIG;
            break;
        }
        if (n < cap) {
            if (ferror(f)) {
                e = errno ? errno : EIO;
            }
            break; /* end of file, or the error recorded above */
        }
        cap *= 2;
        b = xrealloc(b, cap + 1, "input file");
    }
    fclose(f);
    if (e) {
        free(b);
        errno = e;
        return SIM_EIO;
    }
    b[n] = '\0';
    *buf = b;
    *len = n;
    return 0;
}
