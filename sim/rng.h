/* sim/rng.h - named, independent random streams over GSL generators (STYLE.md §6).
 *
 * One master seed (uint64) per run lives in an rng_root. A stream is named by purpose
 * ("arrivals", "durations", ...) and an index (a job class, a node); its GSL generator
 * (MT19937) is seeded from mix64(master ^ hash64(name), index), so opening, renaming or
 * drawing from one stream never changes another stream's draws. Stream names belong in one
 * header of the model (renaming a stream changes results). gsl_rng_env_setup is never called:
 * the environment cannot change a run.
 * Seeding note: MT19937 in GSL takes a 32-bit seed; the 64-bit mix is folded (hi ^ lo), so two
 * distinct (name, index) pairs share a generator with probability 2^-32 per pair.
 * Ownership: rng_stream_open returns a stream the caller owns (rng_stream_close); the name is
 * only read.
 * Units: whatever the caller's parameters are in (a mean in seconds gives draws in seconds).
 */
#ifndef SIMPROJ_SIM_RNG_H
#define SIMPROJ_SIM_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct rng_root {
    uint64_t master_seed;
} rng_root;

typedef struct rng_stream rng_stream;

/* A root for a master seed (a plain value; no resources). */
rng_root rng_root_make(uint64_t master_seed);

/* 64-bit hash of a NUL-terminated name (FNV-1a, then the splitmix64 finaliser). */
uint64_t rng_hash64(const char *name);
/* Mix a 64-bit key with an index into a well-spread 64-bit seed (splitmix64 finaliser). */
uint64_t rng_mix64(uint64_t key, uint64_t index);
/* The 64-bit seed of stream (name, index): rng_mix64(master ^ rng_hash64(name), index). */
uint64_t rng_stream_seed(const rng_root *root, const char *name, uint64_t index);

/* Open stream (name, index) of root; caller owns (rng_stream_close). */
rng_stream *rng_stream_open(const rng_root *root, const char *name, uint64_t index);
/* Free a stream; NULL is a no-op. */
void rng_stream_close(rng_stream *s);

/* Uniform on [0, 1). */
double rng_uniform01(rng_stream *s);
/* Uniform integer in [0, n), n >= 1. */
uint64_t rng_uniform_int(rng_stream *s, uint64_t n);
/* Exponential with the given mean (> 0). */
double rng_exponential(rng_stream *s, double mean);
/* Lognormal: exp(N(zeta, sigma)), i.e. zeta and sigma of the underlying normal. */
double rng_lognormal(rng_stream *s, double zeta, double sigma);


#endif
