/* tools/progress.h - the progress line of a long run, on standard error.
 *
 * A run longer than PROGRESS_DELAY_S of wall-clock time shows one line, rewritten in place at
 * most every PROGRESS_REFRESH_S, e.g.
 *   simulated 12.3 d of 30.0 d (41%), jobs 410000 of 1000000 ended, 312k events/s, ETA 14 s
 * and erases it when the run is over (the summary follows on standard output). Only a terminal
 * gets it: when the stream is not a terminal (a pipe, a file, CI), nothing is written, so logs
 * and outputs stay free of carriage returns. It observes the world (model/cluster/world.h,
 * world_set_progress) and reads the wall clock, which only tools/ may do: simulated results never
 * depend on it. ETA: the wall time so far scaled by the fraction of simulated time still to go
 * (of jobs still to end when the run has no horizon); events/s is the mean over the run so far.
 * Ownership: progress_create returns an object the caller owns (progress_destroy); the stream
 * is borrowed. Units: wall-clock seconds; simulated time shown in s, min, h or d.
 */
#ifndef SIMPROJ_TOOLS_PROGRESS_H
#define SIMPROJ_TOOLS_PROGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "model/cluster/world.h"

#define PROGRESS_DELAY_S 2.0       /* no line for runs shorter than this */
#define PROGRESS_REFRESH_S 0.25    /* at most four redraws a second */
#define PROGRESS_EVERY_EVENTS 4096 /* how often the world calls progress_observe */

typedef struct progress progress;

/* A progress display on f (borrowed). With force false it is silent unless f is a terminal;
 * force true (tests) draws on any stream, without the initial delay. Caller owns. */
progress *progress_create(FILE *f, bool force);
/* Erase the line if one was drawn, and free p. NULL is a no-op. */
void progress_destroy(progress *p);
/* The world's progress callback (world_progress_fn): redraw with the run's state; user is a
 * progress *. */
void progress_observe(void *user, const world_progress *wp);
/* Replace the line with a short note of what happens next (e.g. "writing outputs"), when a
 * line is shown. */
void progress_note(progress *p, const char *what);
/* The text of the line for state wp after elapsed_s wall-clock seconds, into buf (len bytes,
 * NUL-terminated, truncated if short). Returns buf. */
char *progress_format(char *buf, size_t len, const world_progress *wp, double elapsed_s);

#endif
