/* tests/unit/diagfx.c - see diagfx.h. */
#include "tests/unit/diagfx.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *fx_diag_message(const diag *d, int i)
{
    static char ring[8][4096];
    static int next;
    int n = diag_error_count(d);
    if (i < 0 || i >= n || i >= DIAG_MAX_ERRORS) {
        return NULL;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        abort();
    }
    diag_print(d, f);
    fclose(f);
    const char *line = text;
    for (int k = 0; k < i && line; k++) {
        line = strchr(line, '\n');
        line = line ? line + 1 : NULL;
    }
    char *out = ring[next++ % 8];
    size_t m = line ? strcspn(line, "\n") : 0;
    snprintf(out, sizeof ring[0], "%.*s", (int)m, line ? line : "");
    free(text);
    return out;
}
