#include "sim/rng.h"

#include "sim/xalloc.h"

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>

struct rng_stream {
    gsl_rng *g;
};

rng_root rng_root_make(uint64_t master_seed)
{
    return (rng_root){master_seed};
}

/* splitmix64 finaliser (Steele, Lea, Flood 2014): a bijection with full avalanche. */
static uint64_t fmix(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t rng_hash64(const char *name)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a offset basis */
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ULL; /* FNV prime */
    }
    return fmix(h);
}

uint64_t rng_mix64(uint64_t key, uint64_t index)
{
    /* key + golden * (index + 1) is injective in index for a fixed key (the multiplier is odd),
     * and fmix is a bijection, so distinct indices of one name get distinct seeds. */
    return fmix(key + 0x9e3779b97f4a7c15ULL * (index + 1));
}

uint64_t rng_stream_seed(const rng_root *root, const char *name, uint64_t index)
{
    return rng_mix64(root->master_seed ^ rng_hash64(name), index);
}

rng_stream *rng_stream_open(const rng_root *root, const char *name, uint64_t index)
{
    SIM_ASSERT(root && name);
    rng_stream *s = xcalloc(1, sizeof *s, "rng stream");
    s->g = gsl_rng_alloc(gsl_rng_mt19937);
    if (!s->g) {
        xmalloc(SIZE_MAX, "gsl_rng"); /* aborts with the out-of-memory message */
    }
    uint64_t seed = rng_stream_seed(root, name, index);
    gsl_rng_set(s->g, (unsigned long)((seed ^ (seed >> 32)) & 0xffffffffu));
    return s;
}

void rng_stream_close(rng_stream *s)
{
    if (!s) {
        return;
    }
    gsl_rng_free(s->g);
    free(s);
}

double rng_uniform01(rng_stream *s)
{
    return gsl_rng_uniform(s->g);
}

uint64_t rng_uniform_int(rng_stream *s, uint64_t n)
{
    SIM_ASSERT(n >= 1);
    if (n <= gsl_rng_max(s->g) - gsl_rng_min(s->g)) {
        return gsl_rng_uniform_int(s->g, (unsigned long)n);
    }
    /* Larger than one draw covers: combine two 32-bit draws, reject the biased tail. */
    uint64_t lim = UINT64_MAX - UINT64_MAX % n;
    for (;;) {
        uint64_t hi = gsl_rng_get(s->g) & 0xffffffffu, lo = gsl_rng_get(s->g) & 0xffffffffu;
        uint64_t v = hi << 32 | lo;
        if (v < lim) {
            return v % n;
        }
    }
}

double rng_exponential(rng_stream *s, double mean)
{
    SIM_ASSERT(mean > 0);
    return gsl_ran_exponential(s->g, mean);
}

double rng_lognormal(rng_stream *s, double zeta, double sigma)
{
    SIM_ASSERT(sigma >= 0);
    return gsl_ran_lognormal(s->g, zeta, sigma);
}

