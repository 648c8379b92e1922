/* sim/gslerr.h - the process-wide GSL error handler (STYLE.md §4).
 *
 * Inputs are validated at load, so a GSL error is a bug: the handler prints
 * "gsl: FILE:LINE: REASON (gsl_errno N)" to stderr and aborts. GSL keeps its handler in a
 * process global of its own; the CLI installs this one once at startup, before any run. (The
 * handler has no context argument, so it cannot print the simulated time; the abort's core
 * and the caller's sim_verify messages carry it.)
 * Ownership: nothing allocated; the handler is a static function. No units.
 */
#ifndef SIMPROJ_SIM_GSLERR_H
#define SIMPROJ_SIM_GSLERR_H

/* Install the aborting handler with gsl_set_error_handler. Idempotent. */
void sim_gsl_install_handler(void);

/* The handler itself (exposed for tests): prints the message and aborts. */
_Noreturn void sim_gsl_error_handler(const char *reason, const char *file, int line, int gsl_errno);

#endif
