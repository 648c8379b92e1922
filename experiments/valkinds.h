/* experiments/valkinds.h - the error of a validation table's predicted figures per KIND (labels
 * WORKLOAD/KIND[:WITH], digits dropped: ts2, ts4 -> ts; cap50-mps2 -> cap-mps), for one table or
 * pooled over several tables (each figure keeps the prediction of its own table's fit).
 * Ownership: the tables are borrowed; results are written into caller-owned arrays.
 * Units: errors and noise in percent of the published value.
 */
#ifndef SIMPROJ_EXPERIMENTS_VALKINDS_H
#define SIMPROJ_EXPERIMENTS_VALKINDS_H

#include <stdbool.h>

#include "experiments/validation.h"

#define VAL_KIND_LEN 16
#define VAL_MAX_KINDS 16

typedef struct val_kind_stat {
    char kind[VAL_KIND_LEN];
    int n;              /* predicted figures of the kind */
    double mape, max;   /* their mean and largest absolute error (%) */
    int n_noise;        /* of them, figures whose table states their noise */
    double noise_mean;  /* mean stated noise (one sd, %) of those */
    int n_within;       /* of those, figures that miss by at most two sd */
} val_kind_stat;

/* KIND of a label WORKLOAD/KIND[:WITH], its digits dropped, into kind; false when the label has
 * no '/'. */
bool val_label_kind(const char *label, char kind[VAL_KIND_LEN]);

/* The per-kind errors of the predicted (neither fitted nor excluded) figures of the n by-kind
 * tables, kinds in the order they first appear (at most VAL_MAX_KINDS; kinds without a
 * predicted figure are left out). A table that is skipped or not by_kind adds nothing. Returns
 * the number of kinds written to out. */
int val_kinds(const val_table *const *tables, int n, val_kind_stat out[VAL_MAX_KINDS]);

/* The predicted figures of one KIND (as val_label_kind gives it) whose label states a count of
 * at least min_count (WORKLOAD/mps6: 6 clients), over the n tables as val_kinds counts them:
 * e.g. MPS rows with 4 or more clients, issue 25's target. out->kind is KIND, min_count and '+'
 * ("mps4+"). False (out->n = 0) when no such figure exists. */
bool val_kind_at_least(const val_table *const *tables, int n, const char *kind, int min_count,
                       val_kind_stat *out);

/* The MAPE target of KIND (as val_label_kind gives it) in table t: with a shared target
 * (t->shared_target_mape_pct > 0, the scenario's shared_target_mape_pct) that target for the
 * shared kinds ts (time-sliced) and mps, t->target_mape_pct for every other kind (issue 21: DDP
 * rows 5 %, shared rows 10 %); without one, t->target_mape_pct. */
double val_kind_target(const val_table *t, const char *kind);

#endif
