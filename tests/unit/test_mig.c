/* Unit tests for model/hw/mig.c on GPU types built in code (toy geometries, counted by hand).
 * The real catalog's counts are checked in test_catalog.c against the data file's sources. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "model/hw/mig.h"

static mig_profile prof(const char *name, int cs, int ms, int max, const int *starts, int n_starts)
{
    mig_profile p = {.name = name, .id = 100 + cs * 10 + ms, .compute_slices = cs, .mem_slices = ms,
                     .sms = 10 * cs, .max_instances = max, .n_starts = n_starts};
    memcpy(p.starts, starts, (size_t)n_starts * sizeof(int));
    return p;
}

/* A 4-slice toy: 1s {0,1,2,3}:1 (max 4), 2s {0,2}:2 (max 2), 4s {0}:4, plus 1s+me (max 1).
 * Classic maximal layouts by hand: 4s; 2s+2s; 2s@0+1s@2+1s@3; 1s@0+1s@1+2s@2; 4x1s = 5. */
static gpu_type toy4(void)
{
    static const int s1[] = {0, 1, 2, 3}, s2[] = {0, 2}, s4[] = {0};
    gpu_type g = {.name = "toy4", .compute_slices = 4, .memory_slices = 4, .max_mig_instances = 4};
    g.profiles[g.n_profiles++] = prof("1s", 1, 1, 4, s1, 4);
    g.profiles[g.n_profiles++] = prof("2s", 2, 2, 2, s2, 2);
    g.profiles[g.n_profiles++] = prof("4s", 4, 4, 1, s4, 1);
    mig_profile me = prof("1s+me", 1, 1, 1, s1, 4);
    me.is_media_extension = true;
    me.min_driver = 470;
    g.profiles[g.n_profiles++] = me;
    return g;
}

/* A 7-compute/8-memory-slice toy with the -lgipp geometry: 1 {0..6}:1, 2 {0,2,4}:2,
 * 3 {0,4}:4, 4 {0}:4, 7 {0}:8; 4 and 3 coexist from driver 510. */
static gpu_type toy7(void)
{
    static const int s1[] = {0, 1, 2, 3, 4, 5, 6}, s2[] = {0, 2, 4}, s3[] = {0, 4}, s0[] = {0};
    gpu_type g = {.name = "toy7", .compute_slices = 7, .memory_slices = 8, .max_mig_instances = 7,
                  .pair_4g_3g_min_driver = 510, .mig_min_driver = 450};
    g.profiles[g.n_profiles++] = prof("1g", 1, 1, 7, s1, 7);
    g.profiles[g.n_profiles++] = prof("2g", 2, 2, 3, s2, 3);
    g.profiles[g.n_profiles++] = prof("3g", 3, 4, 2, s3, 2);
    g.profiles[g.n_profiles++] = prof("4g", 4, 4, 1, s0, 1);
    g.profiles[g.n_profiles++] = prof("7g", 7, 8, 1, s0, 1);
    return g;
}

typedef struct collect {
    int n;
    char text[64][64];
} collect;

static int collect_fn(const mig_layout *l, void *ctx)
{
    collect *c = ctx;
    if (c->n < 64) {
        char *t = c->text[c->n];
        t[0] = '\0';
        for (int i = 0; i < l->n; i++) {
            size_t k = strlen(t);
            snprintf(t + k, 64 - k, "%s%d@%d", i ? " " : "", l->inst[i].profile, l->inst[i].start);
        }
    }
    c->n++;
    return 0;
}

Test(mig, toy4_maximal_layouts_by_hand)
{
    gpu_type g = toy4();
    mig_enum_opts o = {.maximal_only = true};
    collect c = {0};
    cr_assert_eq(mig_enumerate(&g, &o, collect_fn, &c), 5);
    cr_assert_eq(c.n, 5);
    /* Larger profiles are tried first at each slice. */
    cr_assert_str_eq(c.text[0], "2@0");
    cr_assert_str_eq(c.text[1], "1@0 1@2");
    cr_assert_str_eq(c.text[2], "1@0 0@2 0@3");
    cr_assert_str_eq(c.text[3], "0@0 0@1 1@2");
    cr_assert_str_eq(c.text[4], "0@0 0@1 0@2 0@3");
}

Test(mig, toy4_all_profiles_and_media_extension)
{
    gpu_type g = toy4();
    /* With 1s+me (at most one): each layout with k 1s slots gains k variants: 1+1+3+3+5 = 13. */
    mig_enum_opts o = {.maximal_only = true, .all_profiles = true};
    cr_assert_eq(mig_enumerate(&g, &o, NULL, NULL), 13);
    /* Before R470 the +me profile is not offered. */
    o.driver = 460;
    cr_assert_eq(mig_enumerate(&g, &o, NULL, NULL), 5);
}

Test(mig, toy4_all_nonempty_layouts)
{
    gpu_type g = toy4();
    /* Non-empty subsets: 4s (1); 2s-only: {2s@0},{2s@2},{both} (3); 2s@0 with 1s on 2,3 (3);
     * 2s@2 with 1s on 0,1 (3); 1s-only: 2^4-1 = 15. Total 25. */
    mig_enum_opts o = {.maximal_only = false};
    cr_assert_eq(mig_enumerate(&g, &o, NULL, NULL), 25);
}

Test(mig, toy7_pre_r510_drops_4g_3g)
{
    gpu_type g = toy7();
    mig_enum_opts o = {.maximal_only = true};
    long newest = mig_enumerate(&g, &o, NULL, NULL);
    o.driver = 470;
    long old = mig_enumerate(&g, &o, NULL, NULL);
    cr_assert_eq(newest - old, 1, "only 4g@0+3g@4 goes: %ld vs %ld", newest, old);
    mig_instance pair[] = {{3, 0}, {2, 4}};
    mig_violation v;
    cr_assert_eq(mig_check(&g, 470, pair, 2, &v), MIG_PAIR_4G_3G);
    char buf[200];
    cr_assert_str_eq(mig_describe(&g, pair, &v, buf, sizeof buf),
                     "4g and 3g may coexist only from driver R510, got R470");
    cr_assert_eq(mig_check(&g, 510, pair, 2, NULL), MIG_OK);
    cr_assert_eq(mig_check(&g, 0, pair, 2, NULL), MIG_OK);
    cr_assert_eq(mig_check(&g, 440, pair, 2, &v), MIG_GPU_DRIVER);
    cr_assert_eq(v.need, 450);
}

Test(mig, three_plus_three_leaves_a_compute_slice_idle)
{
    gpu_type g = toy7();
    mig_instance l[] = {{2, 0}, {2, 4}};
    cr_assert_eq(mig_check(&g, 0, l, 2, NULL), MIG_OK);
    cr_assert_eq(mig_idle_compute_slices(&g, l, 2), 1);
    cr_assert_eq(mig_idle_memory_slices(&g, l, 2), 0);
    cr_assert_eq(mig_layout_sms(&g, l, 2), 60);
}

Test(mig, violations_are_described)
{
    gpu_type g = toy7();
    char buf[200];
    mig_violation v;
    mig_instance overlap[] = {{2, 4}, {0, 5}};
    cr_assert_eq(mig_check(&g, 0, overlap, 2, &v), MIG_OVERLAP);
    cr_assert_str_eq(mig_describe(&g, overlap, &v, buf, sizeof buf),
                     "3g@4 overlaps 1g@5 on memory slices 5..5");
    mig_instance bad[] = {{1, 6}};
    cr_assert_eq(mig_check(&g, 0, bad, 1, &v), MIG_BAD_START);
    cr_assert_str_eq(mig_describe(&g, bad, &v, buf, sizeof buf),
                     "2g cannot start at memory slice 6; allowed starts {0,2,4}:2");
    mig_instance seven[] = {{0, 0}, {0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}};
    cr_assert_eq(mig_check(&g, 0, seven, 7, NULL), MIG_OK);
    cr_assert_eq(mig_idle_memory_slices(&g, seven, 7), 1);
    gpu_type t = toy4();
    mig_instance me2[] = {{3, 0}, {3, 1}};
    cr_assert_eq(mig_check(&t, 0, me2, 2, &v), MIG_MAX_PER_PROFILE);
    t.profiles[3].max_instances = 2;
    cr_assert_eq(mig_check(&t, 0, me2, 2, &v), MIG_MEDIA_EXTENSION);
    cr_assert_eq(mig_check(&t, 460, me2, 2, &v), MIG_PROFILE_DRIVER);
    cr_assert_eq(v.need, 470);
}

Test(mig, placement_largest_first_highest_start)
{
    gpu_type g = toy7();
    int counts[5] = {2, 1, 1, 0, 0}; /* 2x1g + 2g + 3g: the "balanced" shape */
    mig_layout out, fit;
    mig_violation v;
    cr_assert_eq(mig_place(&g, 0, counts, &out, &fit, &v), MIG_OK);
    cr_assert_eq(out.n, 4);
    cr_assert_eq(mig_check(&g, 0, out.inst, out.n, NULL), MIG_OK);
    cr_assert_eq(out.inst[0].profile, 2);
    cr_assert_eq(out.inst[0].start, 4);
    cr_assert_eq(out.inst[1].start, 2);
    cr_assert_eq(out.inst[2].start, 1);
    cr_assert_eq(out.inst[3].start, 0);
    /* The guide's failing order 19,19,14,9 is placed, because larger profiles go first. */
    int one[5] = {1, 0, 0, 0, 0};
    cr_assert_eq(mig_place(&g, 0, one, &out, NULL, NULL), MIG_OK);
    cr_assert_eq(out.inst[0].start, 6);
}

Test(mig, placement_reports_what_fits)
{
    gpu_type g = toy7();
    int counts[5] = {7, 1, 0, 0, 0}; /* seven 1g and a 2g */
    mig_layout out, fit;
    mig_violation v;
    cr_assert_eq(mig_place(&g, 0, counts, &out, &fit, &v), MIG_COMPUTE_BUDGET);
    cr_assert_eq(v.need, 7);
    cr_assert_eq(v.have, 9);
    cr_assert_eq(mig_check(&g, 0, fit.inst, fit.n, NULL), MIG_OK);
    cr_assert_eq(fit.n, 6, "2g + five 1g fit");
    cr_assert_eq(mig_idle_compute_slices(&g, fit.inst, fit.n), 0);
    int too_many[5] = {8, 0, 0, 0, 0};
    cr_assert_eq(mig_place(&g, 0, too_many, &out, &fit, &v), MIG_MAX_PER_PROFILE);
    cr_assert_eq(v.have, 8);
    cr_assert_eq(v.need, 7);
    int mem[5] = {0, 0, 2, 1, 0}; /* 3g+3g+4g: 10 compute slices */
    cr_assert_eq(mig_place(&g, 0, mem, &out, &fit, &v), MIG_COMPUTE_BUDGET);
    int geo[5] = {0, 3, 0, 1, 0}; /* 4g + 3x2g: 10 compute */
    cr_assert_eq(mig_place(&g, 0, geo, &out, &fit, &v), MIG_COMPUTE_BUDGET);
    int tight[5] = {0, 1, 0, 1, 0}; /* 4g@0 and 2g at 4: fits */
    cr_assert_eq(mig_place(&g, 0, tight, &out, &fit, &v), MIG_OK);
    int memonly[5] = {1, 0, 2, 0, 0}; /* 3g+3g+1g: 7 compute but 9 memory slices */
    cr_assert_eq(mig_place(&g, 0, memonly, &out, &fit, &v), MIG_OVERLAP);
    cr_assert_eq(v.have, 9);
    cr_assert_eq(fit.n, 2);
}

Test(mig, driver_parse)
{
    int b = 0;
    cr_assert(mig_parse_driver("R510", &b));
    cr_assert_eq(b, 510);
    cr_assert(mig_parse_driver("r470", &b));
    cr_assert_eq(b, 470);
    cr_assert(mig_parse_driver("525.85.12", &b));
    cr_assert_eq(b, 525);
    cr_assert_not(mig_parse_driver("R", &b));
    cr_assert_not(mig_parse_driver("R510x", &b));
    cr_assert_not(mig_parse_driver("510.", &b));
    cr_assert_not(mig_parse_driver("", &b));
    cr_assert_not(mig_parse_driver("-5", &b));
}

Test(mig, classic_profiles)
{
    static const int s[] = {0, 2, 4, 6};
    mig_profile wide = prof("1g.10gb", 1, 2, 4, s, 4);
    cr_assert_not(mig_profile_is_classic(&wide));
    mig_profile two = prof("2g.10gb", 2, 2, 3, s, 3);
    cr_assert(mig_profile_is_classic(&two));
    two.is_media_extension = true;
    cr_assert_not(mig_profile_is_classic(&two));
}
