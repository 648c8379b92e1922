/* experiments/valkinds.h: per-kind errors of one validation table and pooled over two hand-made
 * tables (each figure keeps its own table's prediction). Expected values worked by hand. */
#include <criterion/criterion.h>
#include <string.h>

#include "experiments/valkinds.h"

static val_figure fig(const char *label, double published, double predicted, bool fitted,
                      double noise_pct)
{
    val_figure f = {.published = published, .predicted = predicted, .fitted = fitted,
                    .noise_pct = noise_pct};
    strcpy(f.label, label);
    return f;
}

Test(valkinds, label_kind_drops_digits_and_partner)
{
    char k[VAL_KIND_LEN];
    cr_assert(val_label_kind("tfm_infer/cap50-mps2:stream", k));
    cr_assert_str_eq(k, "cap-mps");
    cr_assert(val_label_kind("w/solo-mps", k));
    cr_assert_str_eq(k, "solo-mps");
    cr_assert(val_label_kind("10000/7g.40gb", k));
    cr_assert_str_eq(k, "g.gb");
    cr_assert(!val_label_kind("no-slash", k));
}

Test(valkinds, one_table_and_a_pool_of_two)
{
    /* table a: ts errors 10 % (110 vs 100) and 10 % (45 vs 50, noise 4 %: 10 > 2 x 4, not
     * within); cap 20 % (12 vs 10, noise 12 %: within) */
    val_figure fa[] = {fig("a/solo", 10, 10, true, 0), fig("a/ts2", 100, 110, false, 0),
                       fig("a/ts4", 50, 45, false, 4), fig("a/cap50", 10, 12, false, 12)};
    /* table b (another machine): cap 5 % (19 vs 20), solo-mps 5 % (42 vs 40); an excluded cap
     * row (100 % off) counts nowhere */
    val_figure fb[] = {fig("b/solo", 10, 10, true, 0), fig("b/cap25", 20, 19, false, 0),
                       fig("b/solo-mps", 40, 42, false, 0), fig("b/cap10", 1, 2, false, 0)};
    fb[3].excluded = true;
    val_table a = {.name = "a", .by_kind = true, .n_figures = 4, .figures = fa};
    val_table b = {.name = "b", .by_kind = true, .n_figures = 4, .figures = fb};
    val_kind_stat st[VAL_MAX_KINDS];

    const val_table *one[] = {&a};
    cr_assert_eq(val_kinds(one, 1, st), 2); /* solo has no predicted row: left out */
    cr_assert_str_eq(st[0].kind, "ts");
    cr_assert_eq(st[0].n, 2);
    cr_assert_float_eq(st[0].mape, 10.0, 1e-9);
    cr_assert_eq(st[0].n_noise, 1);
    cr_assert_eq(st[0].n_within, 0);
    cr_assert_str_eq(st[1].kind, "cap");
    cr_assert_float_eq(st[1].mape, 20.0, 1e-9);
    cr_assert_eq(st[1].n_within, 1);

    const val_table *pool[] = {&a, &b};
    cr_assert_eq(val_kinds(pool, 2, st), 3);
    cr_assert_str_eq(st[1].kind, "cap"); /* a's 20 % and b's 5 %: mean 12.5, max 20 */
    cr_assert_eq(st[1].n, 2);
    cr_assert_float_eq(st[1].mape, 12.5, 1e-9);
    cr_assert_float_eq(st[1].max, 20.0, 1e-9);
    cr_assert_eq(st[1].n_noise, 1);
    cr_assert_float_eq(st[1].noise_mean, 12.0, 1e-9);
    cr_assert_str_eq(st[2].kind, "solo-mps");
    cr_assert_eq(st[2].n, 1);
    cr_assert_float_eq(st[2].mape, 5.0, 1e-9);

    /* a skipped table and one not labelled by kind add nothing */
    strcpy(b.skipped, "no csv");
    cr_assert_eq(val_kinds(pool, 2, st), 2);
    cr_assert_float_eq(st[1].mape, 20.0, 1e-9);
    b.skipped[0] = '\0';
    b.by_kind = false;
    cr_assert_eq(val_kinds(pool, 2, st), 2);
}

Test(valkinds, mps_rows_of_four_or_more_clients_have_a_line_of_their_own)
{
    /* mps2 (10 %) stays out; mps4 20 % (noise 15 %: within), mps8 10 %; a cap-mps4 row is
     * another kind and a fitted mps6 row is not predicted: both out */
    val_figure fa[] = {fig("a/mps2", 10, 11, false, 0), fig("a/mps4", 10, 12, false, 15),
                       fig("a/mps8", 10, 9, false, 0), fig("a/cap50-mps4", 10, 15, false, 0),
                       fig("a/mps6", 10, 20, true, 0)};
    /* table b: mps6 40 % off in a pool with a */
    val_figure fb[] = {fig("b/mps6:x", 10, 14, false, 0), fig("b/ts8", 10, 10, false, 0)};
    val_table a = {.name = "a", .by_kind = true, .n_figures = 5, .figures = fa};
    val_table b = {.name = "b", .by_kind = true, .n_figures = 2, .figures = fb};
    val_kind_stat s;
    const val_table *one[] = {&a};
    cr_assert(val_kind_at_least(one, 1, "mps", 4, &s));
    cr_assert_str_eq(s.kind, "mps4+");
    cr_assert_eq(s.n, 2);
    cr_assert_float_eq(s.mape, 15.0, 1e-9);
    cr_assert_float_eq(s.max, 20.0, 1e-9);
    cr_assert_eq(s.n_noise, 1);
    cr_assert_eq(s.n_within, 1);
    const val_table *pool[] = {&a, &b};
    cr_assert(val_kind_at_least(pool, 2, "mps", 4, &s));
    cr_assert_eq(s.n, 3);
    cr_assert_float_eq(s.mape, 70.0 / 3, 1e-9);
    cr_assert_float_eq(s.max, 40.0, 1e-9);
    const val_table *only_b[] = {&b};
    cr_assert(val_kind_at_least(only_b, 1, "mps", 4, &s));
    cr_assert(!val_kind_at_least(only_b, 1, "mps", 8, &s));
    cr_assert_eq(s.n, 0);
}

Test(valkinds, a_shared_target_judges_the_shared_kinds_apart)
{
    /* issue 21's targets: ddp 5 %, ts and mps 10 %; other kinds keep the table's target */
    val_table t = {.name = "d", .by_kind = true, .target_mape_pct = 5,
                   .shared_target_mape_pct = 10};
    cr_assert_float_eq(val_kind_target(&t, "ddp"), 5.0, 0);
    cr_assert_float_eq(val_kind_target(&t, "ts"), 10.0, 0);
    cr_assert_float_eq(val_kind_target(&t, "mps"), 10.0, 0);
    cr_assert_float_eq(val_kind_target(&t, "cap-mps"), 5.0, 0);
    cr_assert_float_eq(val_kind_target(&t, "solo-mps"), 5.0, 0);
    /* without one, every kind has the table's target */
    t.shared_target_mape_pct = 0;
    cr_assert_float_eq(val_kind_target(&t, "ts"), 5.0, 0);
    cr_assert_float_eq(val_kind_target(&t, "mps"), 5.0, 0);
}
