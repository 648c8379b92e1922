/* tools/cleanup.h - remove staged output files and half-made directories when the process is
 * interrupted (SIGINT, SIGTERM), say so on stderr, and exit 130 / 143 (128 + the signal).
 *
 * A writer registers each path it creates before the path exists (a staged `.NAME.tmp` file or
 * a directory it is about to make) and unregisters it once the path is final (renamed into
 * place) or already removed. The signal handler is async-signal-safe: it only reads a fixed
 * table (no allocation, no stdio) and calls kill(2), waitpid(2), unlink(2), rmdir(2), write(2)
 * and _exit(2). Paths
 * are removed newest first, so files go before the directories that hold them; a directory is
 * removed only when it is empty (rmdir), never recursively.
 *
 * This is the one piece of process-wide mutable state in slicesim: a signal handler can reach
 * nothing else. Ownership: paths are copied into the table (at most CLEANUP_PATH_MAX bytes each,
 * CLEANUP_MAX_PATHS of them); callers keep their own strings. No units.
 */
#ifndef SIMPROJ_TOOLS_CLEANUP_H
#define SIMPROJ_TOOLS_CLEANUP_H

#include <stdbool.h>
#include <sys/types.h>

#define CLEANUP_MAX_PATHS 64
#define CLEANUP_PATH_MAX 4096
#define CLEANUP_MAX_CHILDREN 1024 /* as many as `-j` allows */

/* Install the SIGINT and SIGTERM handlers (idempotent). Returns 0, or -1 with errno set. */
int cleanup_install(void);
/* Register `path` for removal on interruption: a file (unlink) or, with is_dir, a directory
 * (rmdir, only when empty). Returns a handle >= 0 for cleanup_forget, or -1 when the table is
 * full or the path too long (then nothing is registered; the caller goes on without it). */
int cleanup_register(const char *path, bool is_dir);
/* Unregister a handle from cleanup_register (a negative handle is a no-op). */
void cleanup_forget(int handle);
/* How many paths are registered now: a test hook (module__name, STYLE.md section 3), the one
 * observer of the handler's registry; the program itself never needs the count. */
int cleanup__count_for_test(void);

/* fork(2) a worker process that the handler stops: on SIGINT/SIGTERM the parent first sends the
 * same signal to every registered worker and reaps them (so none runs on, or writes, after the
 * parent exits; the message then says "stopped N worker processes"), and only then removes its
 * own paths and exits. The signals are blocked across the fork, so no worker escapes the table.
 * In the worker the inherited table is emptied (the parent's paths are not its own) and, on
 * Linux, it gets SIGTERM should the parent die without running the handler (SIGKILL).
 * Returns as fork(2) does; -1 with errno EAGAIN when CLEANUP_MAX_CHILDREN are registered. */
pid_t cleanup_fork(void);
/* The parent reaped worker `pid` (waitpid): forget it. */
void cleanup_child_done(pid_t pid);

#endif
