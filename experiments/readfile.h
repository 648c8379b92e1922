/* experiments/readfile.h - read a whole input file into memory: the one file reader of the
 * loaders (YAML through yamlx, calibration JSON, physics files, validation CSVs).
 *
 * Files are read as bytes, up to a cap the caller gives (a YAML or JSON input is small; the cap
 * keeps /dev/zero, or a data dump named by mistake, from filling memory).
 * Ownership: the caller owns *buf and frees it with free(). Units: sizes in bytes.
 */
#ifndef SIMPROJ_EXPERIMENTS_READFILE_H
#define SIMPROJ_EXPERIMENTS_READFILE_H

#include <stddef.h>

/* Largest input file the loaders read (64 MiB). */
#define READFILE_MAX_BYTES ((size_t)64 << 20)

/* Read the file at `path` into a new buffer of *len bytes plus a terminating NUL (so text
 * parsers may use it as a string; the file itself may contain NUL bytes).
 * Returns 0 and sets *buf (caller frees) and *len; SIM_ENOENT when the file does not exist;
 * SIM_EIO when it cannot be opened or read, or is larger than max_bytes (errno EFBIG). On
 * failure *buf is NULL and errno holds the cause. */
int readfile_all(const char *path, size_t max_bytes, char **buf, size_t *len);

#endif
