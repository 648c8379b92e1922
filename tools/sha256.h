/* tools/sha256.h - SHA-256 (FIPS 180-4), to record what a sweep's points were computed from
 * (tools/sweep_run.h, DIR/inputs.json) and notice when the inputs change.
 * Ownership: the caller provides every buffer. Units: lengths in bytes.
 */
#ifndef SIMPROJ_TOOLS_SHA256_H
#define SIMPROJ_TOOLS_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_HEX_LEN 64 /* hex digits of a digest, without the NUL */

typedef struct sha256_ctx {
    uint32_t h[8];
    uint64_t n_bytes;
    unsigned char block[64];
    size_t used;
} sha256_ctx;

/* Start a digest. */
void sha256_init(sha256_ctx *c);
/* Add n bytes (p may be NULL when n is 0). */
void sha256_update(sha256_ctx *c, const void *p, size_t n);
/* Add a NUL-terminated string and its NUL (so "ab","c" and "a","bc" differ). */
void sha256_update_str(sha256_ctx *c, const char *s);
/* Finish: the digest as 64 lowercase hex digits and a NUL into hex[SHA256_HEX_LEN + 1]. c is
 * spent (sha256_init it again to reuse). */
void sha256_final_hex(sha256_ctx *c, char *hex);

#endif
