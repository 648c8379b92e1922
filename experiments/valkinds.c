/* experiments/valkinds.c - per-kind errors of validation tables, alone or pooled (valkinds.h). */
#include "experiments/valkinds.h"

#include <string.h>

bool val_label_kind(const char *label, char kind[VAL_KIND_LEN])
{
    const char *sl = strchr(label, '/');
    if (!sl) {
        return false;
    }
    int len = 0;
    for (const char *c = sl + 1; *c && *c != ':' && len < VAL_KIND_LEN - 1; c++) {
        if (*c < '0' || *c > '9') {
            kind[len++] = *c;
        }
    }
    kind[len] = '\0';
    return true;
}

/* Index of kind in out[0 .. *n - 1], added when new and there is room; -1 when full. */
static int kind_slot(val_kind_stat *out, int *n, const char *kind)
{
    for (int j = 0; j < *n; j++) {
        if (!strcmp(out[j].kind, kind)) {
            return j;
        }
    }
    if (*n == VAL_MAX_KINDS) {
        return -1;
    }
    memset(&out[*n], 0, sizeof out[*n]);
    strcpy(out[*n].kind, kind);
    return (*n)++;
}

int val_kinds(const val_table *const *tables, int n, val_kind_stat out[VAL_MAX_KINDS])
{
    int n_k = 0;
    /* every labelled figure opens its kind (fitted ones too), so the order is the tables' */
    for (int i = 0; i < n; i++) {
        const val_table *t = tables[i];
        for (int k = 0; t->by_kind && !t->skipped[0] && k < t->n_figures; k++) {
            char kind[VAL_KIND_LEN];
            const val_figure *f = &t->figures[k];
            int j = val_label_kind(f->label, kind) ? kind_slot(out, &n_k, kind) : -1;
            if (j < 0 || f->fitted || f->excluded) {
                continue;
            }
            double err = val_figure_error_pct(f);
            val_kind_stat *s = &out[j];
            s->n++;
            s->mape += err;
            s->max = err > s->max ? err : s->max;
            if (f->noise_pct > 0) {
                s->n_noise++;
                s->noise_mean += f->noise_pct;
                s->n_within += err <= 2 * f->noise_pct;
            }
        }
    }
    int m = 0;
    for (int j = 0; j < n_k; j++) { /* averages; kinds without a predicted figure dropped */
        if (out[j].n > 0) {
            out[m] = out[j];
            out[m].mape /= out[m].n;
            out[m].noise_mean = out[m].n_noise > 0 ? out[m].noise_mean / out[m].n_noise : 0;
            m++;
        }
    }
    return m;
}
