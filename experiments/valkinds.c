/* experiments/valkinds.c - per-kind errors of validation tables, alone or pooled (valkinds.h). */
#include "experiments/valkinds.h"

#include <stdio.h>
#include <stdlib.h>
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

/* One predicted figure into its kind's sums. */
static void add_figure(val_kind_stat *s, const val_figure *f)
{
    double err = val_figure_error_pct(f);
    s->n++;
    s->mape += err;
    s->max = err > s->max ? err : s->max;
    if (f->noise_pct > 0) {
        s->n_noise++;
        s->noise_mean += f->noise_pct;
        s->n_within += err <= 2 * f->noise_pct;
    }
}

/* Sums into means (a kind with figures). */
static void finish(val_kind_stat *s)
{
    s->mape = s->n > 0 ? s->mape / s->n : 0;
    s->noise_mean = s->n_noise > 0 ? s->noise_mean / s->n_noise : 0;
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
            add_figure(&out[j], f);
        }
    }
    int m = 0;
    for (int j = 0; j < n_k; j++) { /* averages; kinds without a predicted figure dropped */
        if (out[j].n > 0) {
            out[m] = out[j];
            finish(&out[m]);
            m++;
        }
    }
    return m;
}

/* The count a label's kind part states (the digits of WORKLOAD/mps6 -> 6; -1 when none). */
static int label_count(const char *label)
{
    const char *c = strchr(label, '/');
    for (c = c ? c + 1 : label; *c && *c != ':' && (*c < '0' || *c > '9'); c++) {
    }
    return *c >= '0' && *c <= '9' ? atoi(c) : -1;
}

bool val_kind_at_least(const val_table *const *tables, int n, const char *kind, int min_count,
                       val_kind_stat *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->kind, sizeof out->kind, "%s%d+", kind, min_count);
    for (int i = 0; i < n; i++) {
        const val_table *t = tables[i];
        for (int k = 0; t->by_kind && !t->skipped[0] && k < t->n_figures; k++) {
            char fk[VAL_KIND_LEN];
            const val_figure *f = &t->figures[k];
            if (!f->fitted && !f->excluded && val_label_kind(f->label, fk) &&
                !strcmp(fk, kind) && label_count(f->label) >= min_count) {
                add_figure(out, f);
            }
        }
    }
    finish(out);
    return out->n > 0;
}

double val_kind_target(const val_table *t, const char *kind)
{
    bool shared = !strcmp(kind, "ts") || !strcmp(kind, "mps");
    return shared && t->shared_target_mape_pct > 0 ? t->shared_target_mape_pct
                                                   : t->target_mape_pct;
}
