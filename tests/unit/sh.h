/* tests/unit/sh.h - run a shell command from a test and capture what it prints.
 * Ownership: `out` is the caller's buffer. No units. */
#ifndef SIMPROJ_TESTS_UNIT_SH_H
#define SIMPROJ_TESTS_UNIT_SH_H

#include <stddef.h>

/* Run `cmd` with /bin/sh (append "2>&1" to capture stderr too); its first n-1 bytes of stdout go
 * to out (NUL-terminated). Returns the exit status, 128+signal when killed, -1 when it could not
 * start. */
int test_sh(const char *cmd, char *out, size_t n);

/* Read the whole file `path` into out (NUL-terminated, at most n-1 bytes); false when missing. */
int test_read_text(const char *path, char *out, size_t n);

/* Write text to path (replacing it); false on failure. */
int test_write_text(const char *path, const char *text);
/* Make a fresh directory /tmp/slicesim-TAG-XXXXXX into buf (n >= 40); false on failure. */
int test_tmpdir(char *buf, size_t n, const char *tag);
/* rm -rf dir (a directory test_tmpdir made); false on failure. */
int test_rm_rf(const char *dir);

/* A death test: run fn(arg) in a child process with its stderr captured into out (NUL-terminated,
 * at most n-1 bytes). Returns the signal that ended the child, or 0 when fn returned. The captured
 * message is printed as one line labelled "expected abort (death test): ...", so a reader of
 * `make test` knows the "assertion failed" it shows is the test passing. */
int test_death(void (*fn)(void *arg), void *arg, char *out, size_t n);

#endif
