/* experiments/fileio.h - whole-file input and all-or-nothing single-file output.
 *
 * fileio_read_all is the one file reader of the loaders (YAML through yamlx, calibration JSON,
 * physics files, validation CSVs). Files are read as bytes, up to a cap the caller gives (a YAML
 * or JSON input is small; the cap keeps /dev/zero, or a data dump named by mistake, from filling
 * memory). fileio_write_atomic writes one output file (a fitted profile, a model JSON) so that
 * the path holds either its old content or the whole new one, never half of it; the result files
 * of a run, which must appear together, are staged by tools/out.h instead.
 * Ownership: the caller owns *buf and frees it with free(). Units: sizes in bytes.
 */
#ifndef SIMPROJ_EXPERIMENTS_FILEIO_H
#define SIMPROJ_EXPERIMENTS_FILEIO_H

#include <stddef.h>
#include <stdio.h>

/* Largest input file the loaders read (64 MiB). */
#define FILEIO_MAX_BYTES ((size_t)64 << 20)

/* Read the file at `path` into a new buffer of *len bytes plus a terminating NUL (so text
 * parsers may use it as a string; the file itself may contain NUL bytes).
 * Returns 0 and sets *buf (caller frees) and *len; SIM_ENOENT when the file does not exist;
 * SIM_EIO when it cannot be opened or read, or is larger than max_bytes (errno EFBIG). On
 * failure *buf is NULL and errno holds the cause. */
int fileio_read_all(const char *path, size_t max_bytes, char **buf, size_t *len);

/* Writes the content of one file to f; write errors are found through ferror(f). */
typedef void fileio_writer(FILE *f, const void *arg);

/* Write `path` by calling write(f, arg) on a temporary file beside it (PATH.tmp<pid>), then
 * renaming it over `path`. Returns 0; or SIM_EIO with errno holding the cause, the temporary
 * file removed and `path` untouched. `arg` is borrowed for the call. */
int fileio_write_atomic(const char *path, fileio_writer *write, const void *arg);

#endif
