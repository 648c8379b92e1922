/* sim/xalloc.h - allocation that never returns NULL, and the always-on assertion.
 *
 * xmalloc/xcalloc/xrealloc abort with "out of memory: N bytes for WHAT" (STYLE.md §5).
 * xcalloc checks count*size for overflow. The caller owns every returned block (free()).
 * SIM_ASSERT is for bugs only, never for input validation (STYLE.md §4).
 */
#ifndef SIMPROJ_SIM_XALLOC_H
#define SIMPROJ_SIM_XALLOC_H

#include <stddef.h>

void *xmalloc(size_t n, const char *what);
void *xcalloc(size_t count, size_t size, const char *what);
void *xrealloc(void *p, size_t n, const char *what);
/* Duplicate a NUL-terminated string; caller owns (free()). */
char *xstrdup(const char *s, const char *what);

/* Print "assertion failed: EXPR at FILE:LINE" and abort. */
_Noreturn void sim__assert_fail(const char *expr, const char *file, int line);

#define SIM_ASSERT(expr) ((expr) ? (void)0 : sim__assert_fail(#expr, __FILE__, __LINE__))

#endif
