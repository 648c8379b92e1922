/* What the build leaves behind: ./slicesim is the flavour the last `make` built (recorded in
 * build/slicesim.flavour), and `--version` reports the git revision of the tree it was built from
 * (the Makefile regenerates it on every build, so a commit without other changes updates it). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/sh.h"

Test(build, slicesim_is_the_flavour_just_built)
{
    char flavour[64], out[512], want[128];
    cr_assert(test_read_text("build/slicesim.flavour", flavour, sizeof flavour),
              "build/slicesim.flavour missing: ./slicesim was not made by the Makefile");
    flavour[strcspn(flavour, "\n")] = '\0';
    cr_assert_eq(test_sh("./slicesim --version", out, sizeof out), 0);
    snprintf(want, sizeof want, ", %s build: ", flavour);
    cr_assert_not_null(strstr(out, want), "flavour file says %s, --version says %s", flavour, out);
    cr_assert_eq(strncmp(out, "slicesim 0.", 11), 0, "%s", out);
}

Test(build, version_reports_the_current_git_revision)
{
    char rev[128], out[512], want[160];
    int rc = test_sh("git describe --always --dirty --abbrev=12 --exclude='*' 2>/dev/null", rev,
                     sizeof rev);
    rev[strcspn(rev, "\n")] = '\0';
    if (rc != 0 || !rev[0]) {
        strcpy(rev, "unknown"); /* not a git checkout: the Makefile records "unknown" */
    }
    cr_assert_eq(test_sh("./slicesim --version", out, sizeof out), 0);
    snprintf(want, sizeof want, "(git %s, ", rev);
    cr_assert_not_null(strstr(out, want), "expected revision %s in: %s", rev, out);
}
