#include "sim/gslerr.h"

#include <gsl/gsl_errno.h>
#include <stdio.h>
#include <stdlib.h>

void sim_gsl_error_handler(const char *reason, const char *file, int line, int gsl_errno)
{
    fprintf(stderr, "gsl: %s:%d: %s (gsl_errno %d)\n", file ? file : "?", line,
            reason ? reason : "?", gsl_errno);
    abort();
}

static void handler(const char *reason, const char *file, int line, int gsl_errno)
{
    sim_gsl_error_handler(reason, file, line, gsl_errno);
}

void sim_gsl_install_handler(void)
{
    gsl_set_error_handler(handler);
}
