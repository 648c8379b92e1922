/* experiments/embedded.h - data files compiled into the binary, so slicesim runs with no data
 * on disk (`make run` on a fresh machine, no network).
 *
 * Each file is embedded with .incbin from its repository path; the Makefile makes embedded.o
 * depend on every such file. To embed a new file, add one EMBED() line to embedded.c.
 * Ownership: the data and paths are static storage, borrowed for the life of the process, never
 * freed. Units: lengths in bytes.
 */
#ifndef SIMPROJ_EXPERIMENTS_EMBEDDED_H
#define SIMPROJ_EXPERIMENTS_EMBEDDED_H

#include <stdbool.h>
#include <stddef.h>

/* Find the embedded file with this repository path ("model/hw/gpus.yaml"). On success sets *data
 * (static storage, followed by one NUL byte not counted in *len) and *len and returns true. */
bool embedded_get(const char *path, const unsigned char **data, size_t *len);
/* Repository path of embedded file i, or NULL when i is past the last one. Static storage. */
const char *embedded_path(size_t i);

#endif
