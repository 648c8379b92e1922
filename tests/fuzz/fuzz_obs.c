/* tests/fuzz/fuzz_obs.c - libFuzzer target: arbitrary bytes through the "bring your own model"
 * loaders (experiments/obs.h) and what runs on what they accept.
 *
 * The first byte picks the loader (modulo 4): observations, queries, profile, priors; the rest is
 * the file. Accepted observations (at most 8, to keep runs fast) are fitted with the generic
 * class as fit-workload fits them (through the DDP model when they hold DDP runs); accepted
 * queries are predicted with a fixed profile; an accepted profile answers a fixed set of queries,
 * DDP ones among them (its grad_bytes and DDP step terms through model/physics/ddp.h).
 * The catalog, physics, communication model and priors are the built-in ones, loaded once. Every allocation is
 * released: a crash, a sanitizer report or a leak is a bug.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "experiments/comm_load.h"
#include "experiments/embedded.h"
#include "experiments/obs.h"
#include "experiments/physics_load.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char profile_text[] =
    "schema_version: 1\nworkload: w\nunit: sample\nref_batch: 4\nparams:\n"
    "  host_s_fixed: {value: 0.01}\n  compute_sm_s_fixed: {value: 2.0}\n"
    "  mem_traffic_bytes_fixed: {value: 1e9}\n  mem_footprint_bytes_fixed: {value: 3e9}\n";

static const char queries_text[] =
    "gpu: A100-SXM4-40GB\nqueries:\n"
    "  - {config: {partition: full}, batch: 4, work: 100}\n"
    "  - {config: {partition: 1g.5gb, mig_busy: 7}, batch: 4}\n"
    "  - {config: {partition: 3g.20gb, sharing: mps, peers: 3, mps_percent: 40}, batch: 4}\n"
    "  - {config: {partition: full, peers: 5, with: [w]}, batch: 4}\n"
    "  - {config: {partition: full, workers: 8, topology: [4, 4]}, batch: 4}\n"
    "  - {config: {partition: 1g.5gb, workers: 56, per_gpu: 7}, batch: 4}\n"
    "  - {config: {partition: full, workers: 2, sharing: mps, peers: 2}, batch: 4}\n";

/* Built-in inputs shared by every run (loaded once; never modified). */
typedef struct world {
    arena *a;
    gpu_catalog cat;
    phys_params phys;
    comm_params comm;
    const obs_prior_class *generic;
    obs_profile *profile;
    obs_queries *queries;
} world;

static world *get_world(void)
{
    static world w;
    static int ready;
    if (!ready) {
        w.a = arena_create();
        diag *d = diag_create();
        const unsigned char *pd = NULL;
        size_t plen = 0;
        obs_priors *pr = NULL;
        if (catalog_load_default(w.a, &w.cat, d) || physics_load_default(d, &w.phys) ||
            comm_load_default(d, &w.comm) ||
            !embedded_get("workloads/priors.yaml", &pd, &plen) ||
            obs_load_priors("priors.yaml", pd, plen, w.a, d, &pr) ||
            obs_load_profile("p.yaml", profile_text, sizeof profile_text - 1, &w.phys, w.a, d,
                             &w.profile) ||
            obs_load_queries("q.yaml", queries_text, sizeof queries_text - 1, &w.cat, w.a, d,
                             &w.queries)) {
            diag_print(d, stderr);
            __builtin_trap();
        }
        w.generic = obs_priors_find(pr, "generic");
        diag_destroy(d);
        ready = 1;
    }
    return &w;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    world *w = get_world();
    int which = data[0] % 4;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    arena *a = arena_create();
    diag *d = diag_create();
    const obs_profile *others[1] = {w->profile};
    obs_prediction r;
    if (which == 0) {
        obs_file *f = NULL;
        if (obs_load_observations("o.yaml", text, len, &w->cat, a, d, &f) == 0 && f->n <= 8) {
            obs_profile *p = NULL;
            obs_fit_report rep;
            const obs_file *fit_on = f;
            int rc = obs_fit_needs_ddp(f) ? obs_fit_from_ddp(f, w->generic, &w->phys, &w->comm,
                                                             a, &fit_on, &p, &rep)
                                          : obs_fit(f, w->generic, &w->phys, a, &p, &rep);
            if (rc != SIM_EINPUT) {
                obs_fit_ddp(fit_on, p, &w->phys, &w->comm, &rep);
            }
        }
    } else if (which == 1) {
        obs_queries *q = NULL;
        if (obs_load_queries("q.yaml", text, len, &w->cat, a, d, &q) == 0) {
            for (size_t i = 0; i < q->n && i < 64; i++) {
                obs_predict(w->profile, others, 1, q, i, &w->phys, NULL, &r);
            }
        }
    } else if (which == 2) {
        obs_profile *p = NULL;
        if (obs_load_profile("p.yaml", text, len, &w->phys, a, d, &p) == 0) {
            for (size_t i = 0; i < w->queries->n; i++) {
                obs_predict(p, others, 1, w->queries, i, &w->phys, &w->comm, &r);
            }
        }
    } else {
        obs_priors *p = NULL;
        obs_load_priors("priors.yaml", text, len, a, d, &p);
    }
    diag_destroy(d);
    arena_destroy(a);
    return 0;
}
