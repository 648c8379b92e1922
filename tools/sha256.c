/* tools/sha256.c - SHA-256 as FIPS 180-4 §6.2 gives it (see sha256.h); checked against the
 * standard's own examples ("abc", the 448-bit message, a million 'a') in tests/unit/test_sweep.c. */
#include "tools/sha256.h"

#include <stdio.h>
#include <string.h>

/* FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the first
 * 64 primes. */
static const uint32_t k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t ror(uint32_t x, unsigned n)
{
    return (x >> n) | (x << (32 - n));
}

static void compress(sha256_ctx *c, const unsigned char *b)
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++) {
        w[t] = (uint32_t)b[4 * t] << 24 | (uint32_t)b[4 * t + 1] << 16 |
               (uint32_t)b[4 * t + 2] << 8 | (uint32_t)b[4 * t + 3];
    }
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = ror(w[t - 15], 7) ^ ror(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = ror(w[t - 2], 17) ^ ror(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = c->h[0], bb = c->h[1], cc = c->h[2], d = c->h[3];
    uint32_t e = c->h[4], f = c->h[5], g = c->h[6], h = c->h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + k[t] + w[t];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & bb) ^ (a & cc) ^ (bb & cc));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = cc;
        cc = bb;
        bb = a;
        a = t1 + t2;
    }
    c->h[0] += a;
    c->h[1] += bb;
    c->h[2] += cc;
    c->h[3] += d;
    c->h[4] += e;
    c->h[5] += f;
    c->h[6] += g;
    c->h[7] += h;
}

void sha256_init(sha256_ctx *c)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(c->h, h0, sizeof h0);
    c->n_bytes = 0;
    c->used = 0;
}

void sha256_update(sha256_ctx *c, const void *p, size_t n)
{
    const unsigned char *s = p;
    c->n_bytes += n;
    while (n > 0) {
        size_t take = 64 - c->used < n ? 64 - c->used : n;
        memcpy(c->block + c->used, s, take);
        c->used += take;
        s += take;
        n -= take;
        if (c->used == 64) {
            compress(c, c->block);
            c->used = 0;
        }
    }
}

void sha256_update_str(sha256_ctx *c, const char *s)
{
    sha256_update(c, s, strlen(s) + 1);
}

void sha256_final_hex(sha256_ctx *c, char *hex)
{
    uint64_t bits = c->n_bytes * 8;
    unsigned char pad = 0x80;
    sha256_update(c, &pad, 1);
    pad = 0;
    while (c->used != 56) {
        sha256_update(c, &pad, 1);
    }
    unsigned char len[8];
    for (int i = 0; i < 8; i++) {
        len[i] = (unsigned char)(bits >> (56 - 8 * i));
    }
    sha256_update(c, len, 8);
    for (int i = 0; i < 8; i++) {
        snprintf(hex + 8 * i, 9, "%08x", (unsigned)c->h[i]);
    }
}
