/* tests/unit/corpus.h - bad-input corpora checked through the CLI: every FILE.yaml of a folder
 * starts with "# expect: MESSAGE"; a command run on it must exit 2, print exactly MESSAGE (one
 * line, stderr), and create nothing at its output path.
 * Ownership: borrowed strings. No units. */
#ifndef SIMPROJ_TESTS_UNIT_CORPUS_H
#define SIMPROJ_TESTS_UNIT_CORPUS_H

#include <stddef.h>

/* For each FILE.yaml of `dir`: run `./slicesim SUBCMD FILE -o OUT` (OUT a path under `tmp`) and,
 * when check is nonzero, `./slicesim check FILE` too, and expect as above (Criterion
 * expectations). Returns the number of files. */
size_t test_bad_corpus(const char *dir, const char *subcmd, int check, const char *tmp);

#endif
