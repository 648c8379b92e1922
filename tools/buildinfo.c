/* tools/buildinfo.c - build facts from the generated header (see buildinfo.h). */
#include "tools/buildinfo.h"

#include "buildinfo_gen.h" /* generated into build/$(BUILD)/gen/ by the Makefile */

#define SLICESIM_VERSION "0.1.0"

const char *buildinfo_version(void)
{
    return SLICESIM_VERSION;
}

const char *buildinfo_git_rev(void)
{
    return SIM_GIT_REV[0] ? SIM_GIT_REV : "not a git checkout";
}

int buildinfo_has_git_rev(void)
{
    return SIM_GIT_REV[0] != '\0';
}

const char *buildinfo_flavour(void)
{
    return SIM_BUILD_FLAVOUR;
}

const char *buildinfo_opt_flags(void)
{
    return SIM_OPT_FLAGS;
}
