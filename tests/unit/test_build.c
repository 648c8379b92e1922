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
    cr_assert_eq(test_sh("./slicesim --version", out, sizeof out), 0);
    if (rc != 0 || !rev[0]) { /* a `git archive` tree: .version's commit, or none */
        cr_assert_eq(
            test_sh("make --no-print-directory echo | sed -n 's/^GIT_REV=//p'", rev, sizeof rev),
            0);
        rev[strcspn(rev, "\n")] = '\0';
        snprintf(want, sizeof want, strchr(rev, ' ') ? "(%s, " : "(git %s, ", rev);
    } else {
        snprintf(want, sizeof want, "(git %s, ", rev);
    }
    cr_assert_not_null(strstr(out, want), "expected revision %s in: %s", rev, out);
}

/* Without git (a `git archive` tarball, a copied tree) the revision comes from .version, which
 * export-subst fills in; an unfilled .version gives "not a git checkout", never "unknown". */
Test(build, revision_without_git_comes_from_dot_version)
{
    char dir[64], path[96], cmd[512], out[1024];
    cr_assert(test_tmpdir(dir, sizeof dir, "version"));
    snprintf(path, sizeof path, "%s/.version", dir);
    cr_assert(test_write_text(path, "$Format:%H$\n")); /* as the checkout holds it */
    snprintf(cmd, sizeof cmd,
             "cp Makefile '%s'/ && cd '%s' && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL "
             "GIT_CEILING_DIRECTORIES=/ "
             "make --no-print-directory echo 2>&1",
             dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_not_null(strstr(out, "GIT_REV=not a git checkout\n"), "%s", out);
    snprintf(cmd, sizeof cmd,
             "cd '%s' && echo 0123456789abcdef0123456789abcdef01234567 > .version"
             " && env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL GIT_CEILING_DIRECTORIES=/ "
             "make --no-print-directory echo 2>&1",
             dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_not_null(strstr(out, "GIT_REV=0123456789ab\n"), "%s", out);
    cr_assert(test_rm_rf(dir));
    /* and git archive fills it in: the attribute is set on .version */
    if (test_sh("git rev-parse --is-inside-work-tree 2>/dev/null", out, sizeof out) == 0) {
        cr_assert_eq(test_sh("git check-attr export-subst .version", out, sizeof out), 0);
        cr_assert_str_eq(out, ".version: export-subst: set\n");
    } else {
        cr_assert(test_read_text(".version", out, sizeof out));
        cr_assert_eq(strspn(out, "0123456789abcdef"), 40, "unfilled .version: %s", out);
    }
}

/* Objects depend on the flags that built them (the stamps in build/$(BUILD)/flags/, rewritten
 * only when the text changes): `make run` without Open MPI then `make test` with it must rebuild
 * tools/sweep_mpi.o, and nothing is rebuilt when no flag changed. Built in a scratch object
 * directory (O=) so the tree's own build is untouched; MPICC= is a build without Open MPI. */
static void make_sweep_mpi_o(const char *vars, int want_compiled, int want_mpi)
{
    char cmd[512], out[4096], n_init[64];
    snprintf(cmd, sizeof cmd,
             "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "
             "O=build/stamp-test %s build/stamp-test/tools/sweep_mpi.o 2>&1",
             vars);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_eq(strstr(out, "CC      tools/sweep_mpi.c") != NULL, want_compiled,
                 "make %s: expected tools/sweep_mpi.c %s:\n%s", vars,
                 want_compiled ? "recompiled" : "left alone", out);
    cr_assert_eq(strstr(out, "CC ") != NULL, want_compiled, "%s", out);
    /* the object calls MPI_Init exactly when built with Open MPI */
    cr_assert_eq(test_sh("nm -u build/stamp-test/tools/sweep_mpi.o | grep -c MPI_Init", n_init,
                         sizeof n_init) == 0,
                 want_mpi, "make %s: MPI_Init references: %s", vars, n_init);
}

Test(build, objects_rebuild_when_their_flags_change)
{
    char mpicc[256];
    cr_assert_eq(test_sh("command -v mpicc", mpicc, sizeof mpicc), 0,
                 "mpicc missing: `make test` installs Open MPI (libopenmpi-dev)");
    cr_assert(test_rm_rf("build/stamp-test"));
    make_sweep_mpi_o("MPICC=", 1, 0); /* as `make run` builds before Open MPI is installed */
    make_sweep_mpi_o("MPICC=", 0, 0); /* no flag changed: nothing rebuilt */
    make_sweep_mpi_o("", 1, 1);       /* Open MPI now present: rebuilt with it (the bug: not) */
    make_sweep_mpi_o("", 0, 1);
    make_sweep_mpi_o("CFLAGS=-DSTAMP_TEST", 1, 1); /* any flag: CFLAGS= reaches every compile */
    cr_assert(test_rm_rf("build/stamp-test"));
}
