/* tools/buildinfo.h - what this binary is: version, git revision, build flavour, compile flags.
 *
 * The values come from a header the Makefile regenerates on every build
 * (build/$(BUILD)/gen/buildinfo_gen.h, rewritten only when its text changes), so a commit without
 * any other change still updates the revision that `--version` and run_info.json report.
 * Ownership: every returned string is static (never free it). No units.
 */
#ifndef SIMPROJ_TOOLS_BUILDINFO_H
#define SIMPROJ_TOOLS_BUILDINFO_H

/* The release number of slicesim, e.g. "0.1.0". */
const char *buildinfo_version(void);
/* The git revision the binary was built from (`git describe --always --dirty`, or outside a git
 * checkout the commit `git archive` wrote into .version), or "not a git checkout". */
const char *buildinfo_git_rev(void);
/* 1 when the build knew its git revision, 0 when buildinfo_git_rev() says "not a git checkout". */
int buildinfo_has_git_rev(void);
/* The build flavour: opt (default), debug, release, asan, or fuzz. */
const char *buildinfo_flavour(void);
/* The optimisation and user flags the flavour compiled with, e.g. "-O2 -g". */
const char *buildinfo_opt_flags(void);

#endif
