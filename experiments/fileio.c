/* experiments/fileio.c - whole-file reader, atomic single-file writer (see fileio.h). */
#include "experiments/fileio.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/err.h"
#include "sim/xalloc.h"

int fileio_read_all(const char *path, size_t max_bytes, char **buf, size_t *len)
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

int fileio_write_atomic(const char *path, fileio_writer *write, const void *arg)
{
    size_t n = strlen(path) + 32;
    char *tmp = xmalloc(n, "temporary file name");
    snprintf(tmp, n, "%s.tmp%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        int e = errno;
        free(tmp);
        errno = e;
        return SIM_EIO;
    }
    write(f, arg);
    int e = ferror(f) ? (errno ? errno : EIO) : 0;
    if (fclose(f) != 0 && !e) {
        e = errno;
    }
    if (!e && rename(tmp, path) != 0) {
        e = errno;
    }
    if (e) {
        remove(tmp);
    }
    free(tmp);
    errno = e;
    return e ? SIM_EIO : 0;
}
