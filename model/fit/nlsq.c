/* model/fit/nlsq.c - the fitters' GSL least-squares driver (see nlsq.h). */
#include "model/fit/nlsq.h"

gsl_multifit_nlinear_workspace *nlsq_start(gsl_multifit_nlinear_fdf *fdf, const gsl_vector *x0)
{
    gsl_multifit_nlinear_parameters fp = gsl_multifit_nlinear_default_parameters();
    gsl_multifit_nlinear_workspace *w =
        gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &fp, fdf->n, fdf->p);
    gsl_multifit_nlinear_init(x0, fdf, w);
    return w;
}

int nlsq_iterate(gsl_multifit_nlinear_workspace *w)
{
    int info = 0;
    return gsl_multifit_nlinear_driver(NLSQ_MAX_ITER, NLSQ_XTOL, NLSQ_GTOL, NLSQ_FTOL, NULL, NULL,
                                       &info, w);
}
