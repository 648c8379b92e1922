/* model/hw/mig.h - MIG layout validity, enumeration of maximal layouts and automatic placement.
 *
 * A layout is a set of GPU instances on one GPU, each a (profile, start) pair: `profile` indexes
 * gpu_type.profiles, `start` is the first memory slice it occupies (nvidia-smi -lgipp notation;
 * it occupies [start, start + mem_slices)). The rules are those of gpus.yaml `validity_rules`
 * (sources: NVIDIA MIG user guide, concepts and supported-profiles pages):
 *   - each instance sits at one of its profile's allowed starts, and no two overlap on memory
 *     slices;
 *   - at most max_instances of each profile, at most one media-extension (+me) instance, and at
 *     most gpu_type.max_mig_instances instances in all;
 *   - the compute slices of the instances add up to at most gpu_type.compute_slices;
 *   - driver minimums: the GPU's MIG minimum, each profile's minimum, and (on GPUs that give one)
 *     the branch from which a 4-compute-slice and a 3-compute-slice instance may coexist.
 * Every rule is monotone (removing an instance never breaks validity), which the enumeration
 * relies on. Driver versions are branch numbers (510 for R510); 0 means "newest", with no driver
 * restriction.
 * Pure computation on borrowed catalog data: no allocation, no I/O, deterministic.
 */
#ifndef SIMPROJ_MODEL_MIG_H
#define SIMPROJ_MODEL_MIG_H

#include <stdbool.h>
#include <stddef.h>

#include "model/hw/catalog.h"

#define MIG_MAX_INSTANCES GPU_MAX_SLICES /* one memory slice per instance at least */

/* One GPU instance: profile index into gpu_type.profiles, start in memory slices. */
typedef struct mig_instance {
    int profile;
    int start;
} mig_instance;

/* A layout: n instances, in the order the producer gives (enumeration: ascending start). */
typedef struct mig_layout {
    int n;
    mig_instance inst[MIG_MAX_INSTANCES];
} mig_layout;

/* Why a layout is invalid. MIG_OK = valid. */
typedef enum mig_verdict {
    MIG_OK = 0,
    MIG_BAD_PROFILE,      /* profile index out of range: inst[a] */
    MIG_NO_MIG,           /* the GPU type has no MIG (compute_slices == 0) */
    MIG_GPU_DRIVER,       /* driver older than the GPU's MIG minimum (need) */
    MIG_PROFILE_DRIVER,   /* inst[a]'s profile needs driver >= need */
    MIG_BAD_START,        /* inst[a] is not at one of its profile's allowed starts */
    MIG_OVERLAP,          /* inst[a] and inst[b] overlap on memory slices */
    MIG_MAX_PER_PROFILE,  /* more than need instances of inst[a]'s profile (have) */
    MIG_MEDIA_EXTENSION,  /* more than one +me instance: inst[a] and inst[b] */
    MIG_COMPUTE_BUDGET,   /* compute slices used (have) exceed the GPU's (need) */
    MIG_TOO_MANY,         /* more instances (have) than the GPU allows (need) */
    MIG_PAIR_4G_3G,       /* inst[a] (4g) and inst[b] (3g) together need driver >= need */
} mig_verdict;

/* The details of a verdict: instance indices and the numbers compared. */
typedef struct mig_violation {
    mig_verdict verdict;
    int a, b;       /* instance indices involved, -1 when none */
    int need, have; /* limit and actual value, where the verdict has them */
} mig_violation;

/* True when the profile is one of the "classic" set that NVIDIA's layout figure draws (MIG user
 * guide, concepts page, "Profile Placements on A100": 18 or 19 combinations): no media
 * extension, and not a 1-compute-slice profile spanning several memory slices (1g.10gb on
 * A100-40GB, 1g.20gb on 80 GB parts). */
bool mig_profile_is_classic(const mig_profile *p);

/* True when profile index p of g exists and is offered by driver branch `driver` (0 = newest). */
bool mig_profile_offered(const gpu_type *g, int p, int driver);

/* Check n instances (borrowed) against every rule. Returns the first violation found (rules in the
 * order listed in mig_verdict, instances in array order) and fills *why when non-NULL. */
mig_verdict mig_check(const gpu_type *g, int driver, const mig_instance *inst, int n,
                      mig_violation *why);

/* One-line English explanation of a violation into buf (always NUL-terminated), e.g.
 * "1g.5gb@4 overlaps 3g.20gb@4 on memory slices 4..4". Returns buf. */
const char *mig_describe(const gpu_type *g, const mig_instance *inst, const mig_violation *v,
                         char *buf, size_t len);

/* Compute slices left unused by the instances (may be 0; e.g. 3g.20gb + 3g.20gb on an A100
 * leaves 1). Instances must be valid profile indices. */
int mig_idle_compute_slices(const gpu_type *g, const mig_instance *inst, int n);
/* Memory slices not covered by any instance. */
int mig_idle_memory_slices(const gpu_type *g, const mig_instance *inst, int n);
/* Sum of the instances' SMs (0 when any profile's SM count is unsourced). */
int mig_layout_sms(const gpu_type *g, const mig_instance *inst, int n);

/* Options of the enumeration. */
typedef struct mig_enum_opts {
    int driver;        /* branch, 0 = newest */
    bool all_profiles; /* false: classic profiles only (mig_profile_is_classic) */
    bool maximal_only; /* true: only layouts to which no instance of an enumerated profile can be
                          added; false: every non-empty valid layout */
} mig_enum_opts;

/* Called for each layout (borrowed, valid during the call). Return non-zero to stop. */
typedef int mig_layout_fn(const mig_layout *l, void *ctx);

/* Enumerate valid layouts of g from the placement rules, deterministically: depth-first over
 * memory slices 0..7; at each slice an instance starting there (profiles by decreasing compute
 * then memory slices, then catalog order) is tried before leaving the slice empty. Instances in
 * each layout are in ascending start. fn may be NULL (count only). Returns the number of layouts
 * visited (up to and including the one where fn asked to stop). */
long mig_enumerate(const gpu_type *g, const mig_enum_opts *opt, mig_layout_fn *fn, void *ctx);

/* Automatic placement of counts[p] instances of each profile p (array of g->n_profiles).
 * Deterministic: instances largest first (compute slices, then memory slices, then catalog
 * order), each at its highest free allowed start, with backtracking, so a placement is found
 * whenever one exists. This reproduces the first choices the MIG user guide shows for the driver
 * (1g@6, 2g@4, 3g@4 on an empty A100) but not its whole policy, which NVIDIA does not document.
 * On success fills *out (instances largest first) and returns MIG_OK. Otherwise returns the
 * verdict, with *why filled (a and b index *out, which then holds the requested instances at
 * representative starts): a start-independent rule (driver, max per profile, +me, total count,
 * 4g+3g pair), MIG_BAD_START when a requested profile has no placement data, MIG_COMPUTE_BUDGET
 * (need = the GPU's compute slices, have = requested), or MIG_OVERLAP when the instances cannot
 * be laid out on the memory slices (need = the GPU's memory slices, have = requested). For the
 * last two *fit (when non-NULL) gets a maximal subset that does fit, built largest first by
 * dropping what cannot be added (empty when more than MIG_MAX_INSTANCES were requested). */
mig_verdict mig_place(const gpu_type *g, int driver, const int *counts, mig_layout *out,
                      mig_layout *fit, mig_violation *why);

/* Ids of the rules this module implements, as gpus.yaml `validity_rules` names them;
 * NULL-terminated, static storage. */
extern const char *const mig_rule_ids[];

/* Parse a driver branch: "R510", "r510", "510", or a full version "510.47.03" (branch 510).
 * Returns false unless the whole text is one of these with a branch in 1..9999. */
bool mig_parse_driver(const char *s, int *branch);

/* Write a layout as "4g.20gb@0 + 2g.10gb@4 + 1g.5gb@6" (in the layout's order; "(none)" when
 * empty) into buf, always NUL-terminated, truncated to n. Returns buf. */
const char *mig_layout_format(const gpu_type *g, const mig_layout *l, char *buf, size_t n);

/* Sort a layout's instances by ascending start (stable for equal starts). */
void mig_layout_sort(mig_layout *l);

#endif
