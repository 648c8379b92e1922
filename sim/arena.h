/* sim/arena.h - bump allocator for spec data that lives until the run ends.
 *
 * Loaders copy every string and array out of parser trees into an arena, so no pointer into a
 * yaml_document_t or cJSON tree survives loading (STYLE.md §5). Blocks are 16-byte aligned and
 * zeroed. The arena owns every block; arena_destroy frees them all at once.
 */
#ifndef SIMPROJ_SIM_ARENA_H
#define SIMPROJ_SIM_ARENA_H

#include <stddef.h>

typedef struct arena arena;

/* Create an empty arena; caller owns (arena_destroy). */
arena *arena_create(void);
/* Free every block; NULL is a no-op. */
void arena_destroy(arena *a);
/* Zeroed block of n bytes owned by the arena. Aborts on out of memory. */
void *arena_alloc(arena *a, size_t n);
/* Zeroed array of count*size bytes (overflow-checked) owned by the arena. */
void *arena_calloc(arena *a, size_t count, size_t size);
/* Copy of s (NULL gives NULL) owned by the arena. */
char *arena_strdup(arena *a, const char *s);
/* Copy of the first n bytes of s plus a NUL, owned by the arena. */
char *arena_strndup(arena *a, const char *s, size_t n);

#endif
