/* tests/unit/diagfx.h - reading a diag's messages back in tests, through what the program prints
 * (diag_print), so that sim/diag.h needs no accessor only tests call.
 * Ownership: the returned string is static storage, valid until 8 later calls. */
#ifndef SIMPROJ_TESTS_UNIT_DIAGFX_H
#define SIMPROJ_TESTS_UNIT_DIAGFX_H

#include "sim/diag.h"

/* Message i (0-based) as diag_print writes it, without its newline; NULL when i is not below
 * min(diag_error_count(d), DIAG_MAX_ERRORS). */
const char *fx_diag_message(const diag *d, int i);

#endif
