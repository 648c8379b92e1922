/* sim/verify.h - the engine's invariant checker (STYLE.md §7: tests run with it on).
 *
 * sim_verify checks: the event heap's order and handle links (evq_verify); that no pending
 * event lies before the clock and the clock never went backwards; then every registered
 * component's own verify callback in registration order (the fluid solver checks remaining
 * work >= 0, rates within caps and each resource's allocation <= its capacity).
 * Failing checks mean a bug, never bad input.
 * Ownership: the context is borrowed (read only); the reason goes into the caller's buffer.
 * Units: times in the messages are sim_time nanoseconds.
 */
#ifndef SIMPROJ_SIM_VERIFY_H
#define SIMPROJ_SIM_VERIFY_H

#include "sim/engine.h"

#include <stddef.h>

/* Check every invariant. Returns 0 when all hold, else SIM_ERANGE with a one-line reason in
 * why[0..why_len) (why may be NULL). */
int sim_verify(const sim_ctx *ctx, char *why, size_t why_len);

/* sim_verify, aborting with "sim_verify failed at t=... ns after event ...: REASON" on failure. */
void sim_verify_or_die(const sim_ctx *ctx);

#endif
