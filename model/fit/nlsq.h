/* model/fit/nlsq.h - the one GSL non-linear least-squares driver of the fitters (calfit, wfit):
 * gsl_multifit_nlinear's trust region with GSL's default parameters (Levenberg-Marquardt steps,
 * a finite-difference Jacobian when fdf->df is NULL), at most NLSQ_MAX_ITER iterations, stopping
 * when GSL's tests pass: relative step below NLSQ_XTOL, gradient below NLSQ_GTOL, or the cost's
 * relative change below NLSQ_FTOL (gsl_multifit_nlinear_driver's xtol, gtol, ftol).
 * Ownership: nlsq_start returns a workspace the caller frees with gsl_multifit_nlinear_free;
 * fdf must outlive it (GSL keeps the pointer).
 */
#ifndef SIMPROJ_MODEL_FIT_NLSQ_H
#define SIMPROJ_MODEL_FIT_NLSQ_H

#include <gsl/gsl_multifit_nlinear.h>

#define NLSQ_MAX_ITER 200
#define NLSQ_XTOL 1e-10
#define NLSQ_GTOL 1e-10
#define NLSQ_FTOL 1e-12

/* A workspace for fdf (fdf->n residuals, fdf->p parameters) started at x0. */
gsl_multifit_nlinear_workspace *nlsq_start(gsl_multifit_nlinear_fdf *fdf, const gsl_vector *x0);
/* Iterate w to convergence under the settings above; returns GSL's status. */
int nlsq_iterate(gsl_multifit_nlinear_workspace *w);

#endif
