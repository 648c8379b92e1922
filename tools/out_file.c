/* tools/out_file.c - all-or-nothing staging of output files (see out.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/cleanup.h"
#include "tools/out.h"

#define OUT_MAX_FILES 16
#define OUT_MAX_DIRS 16

struct out_stage {
    char *dir;
    int n;
    char *tmp[OUT_MAX_FILES];
    char *final[OUT_MAX_FILES];
    FILE *f[OUT_MAX_FILES];
    int tmp_handle[OUT_MAX_FILES]; /* tools/cleanup.h handles of the staged files */
    int n_made;                    /* directories this stage created, outermost first */
    char *made[OUT_MAX_DIRS];
    int made_handle[OUT_MAX_DIRS];
};

static char *join(const char *dir, const char *a, const char *b, const char *c)
{
    size_t n = strlen(dir) + strlen(a) + strlen(b) + strlen(c) + 2;
    char *p = xmalloc(n, "output path");
    snprintf(p, n, "%s/%s%s%s", dir, a, b, c);
    return p;
}

/* mkdir -p; the directories it creates are recorded in st (and registered for removal on
 * interruption) so that an abort removes them again. */
static int make_dirs(out_stage *st, const char *dir)
{
    char *p = xstrdup(dir, "output dir");
    int rc = 0;
    /* from the second byte (a leading '/' is no directory to make), or the end of "" */
    for (char *s = p[0] ? p + 1 : p;; s++) {
        if (*s == '/' || *s == '\0') {
            char saved = *s;
            *s = '\0';
            bool track = st->n_made < OUT_MAX_DIRS;
            int h = track ? cleanup_register(p, true) : -1;
            int made = mkdir(p, 0777) == 0, e = errno;
            if (made && track) {
                st->made[st->n_made] = xstrdup(p, "output dir");
                st->made_handle[st->n_made++] = h;
            } else {
                cleanup_forget(h);
            }
            if (!made && e != EEXIST) {
                fprintf(stderr, "slicesim: %s: cannot create directory: %s\n", p, strerror(e));
                rc = SIM_EIO;
                break;
            }
            *s = saved;
            if (saved == '\0') {
                break;
            }
        }
    }
    struct stat sb;
    if (rc == 0 && (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))) {
        fprintf(stderr, "slicesim: %s: not a directory\n", dir);
        rc = SIM_EIO;
    }
    free(p);
    return rc;
}

static void free_stage(out_stage *st);
static void remove_made_dirs(out_stage *st);

out_stage *out_stage_begin(const char *dir)
{
    out_stage *st = xcalloc(1, sizeof *st, "output stage");
    st->dir = xstrdup(dir, "output dir");
    if (make_dirs(st, dir) != 0) {
        remove_made_dirs(st);
        free_stage(st);
        return NULL;
    }
    return st;
}

FILE *out_stage_open(out_stage *st, const char *name)
{
    SIM_ASSERT(st->n < OUT_MAX_FILES);
    char *tmp = join(st->dir, ".", name, ".tmp");
    int h = cleanup_register(tmp, false); /* before the file exists: no window without it */
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "slicesim: %s: %s\n", tmp, strerror(errno));
        cleanup_forget(h);
        free(tmp);
        return NULL;
    }
    st->tmp_handle[st->n] = h;
    st->tmp[st->n] = tmp;
    st->final[st->n] = join(st->dir, name, "", "");
    st->f[st->n] = f;
    st->n++;
    return f;
}

/* Frees st and unregisters every path it registered. */
static void free_stage(out_stage *st)
{
    for (int i = 0; i < st->n; i++) {
        cleanup_forget(st->tmp_handle[i]);
        free(st->tmp[i]);
        free(st->final[i]);
    }
    for (int i = 0; i < st->n_made; i++) {
        cleanup_forget(st->made_handle[i]);
        free(st->made[i]);
    }
    free(st->dir);
    free(st);
}

/* rmdir the directories this stage made, innermost first (only empty ones go). */
static void remove_made_dirs(out_stage *st)
{
    for (int i = st->n_made - 1; i >= 0; i--) {
        rmdir(st->made[i]);
    }
}

void out_stage_abort(out_stage *st)
{
    if (!st) {
        return;
    }
    for (int i = 0; i < st->n; i++) {
        if (st->f[i]) {
            fclose(st->f[i]);
        }
        remove(st->tmp[i]);
    }
    remove_made_dirs(st);
    free_stage(st);
}

int out_stage_commit(out_stage *st)
{
    int rc = 0;
    for (int i = 0; i < st->n; i++) {
        bool bad = ferror(st->f[i]) != 0;
        if (fclose(st->f[i]) != 0 || bad) {
            fprintf(stderr, "slicesim: %s: write failed: %s\n", st->tmp[i], strerror(errno));
            rc = SIM_EIO;
        }
        st->f[i] = NULL;
    }
    for (int i = 0; i < st->n && rc == 0; i++) {
        if (rename(st->tmp[i], st->final[i]) != 0) {
            fprintf(stderr, "slicesim: %s: %s\n", st->final[i], strerror(errno));
            rc = SIM_EIO;
        }
    }
    if (rc != 0) {
        for (int i = 0; i < st->n; i++) {
            remove(st->tmp[i]);
        }
        remove_made_dirs(st);
    }
    free_stage(st);
    return rc;
}
