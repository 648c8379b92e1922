/* tools/cmd_fit_workload.c - `slicesim fit-workload OBS.yaml -o PROFILE.yaml [--class NAME]`:
 * fit a workload profile to observed runs (DESIGN.md §8, experiments/obs.h).
 *
 * Prints the fitted parameters with their standard errors, names every parameter the data did
 * not pin together with the prior it was left to, prints the residual of every observation, and
 * writes PROFILE.yaml atomically (nothing is written on error). Exit 0 on success, 2 on bad input
 * (observations, priors, usage), on a fit that does not converge or leaves a parameter or
 * chi^2 not finite, and on a fit whose observations disagree with the model far beyond their
 * noise (experiments/obs.h OBS_POOR_FIT_P; unless --accept-poor-fit) (the report is printed, no
 * profile written), 1 when a file cannot be read or written. */
#include "tools/cli.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "experiments/embedded.h"
#include "experiments/obs.h"
#include "experiments/comm_load.h"
#include "experiments/physics_load.h"
#include "tools/cli_calib.h"
#include "model/fit/wfit.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"

/* CPU of the fit per observation, release build on this project's 2-core VM: 1 000 time-sliced
 * and MPS observations of resnet50-train (byom-h100) take 6.0 s, 200 MIG-partition ones of
 * my-tracker (byom) 0.8 s; linear in the observations (10, 40, 100: 0.05, 0.21, 0.59 s). */
#define FIT_CPU_S_PER_OBSERVATION 6.0e-3
/* A fit estimated to take this long or longer says so before it starts. */
#define FIT_NOTICE_S 1.0

#define PRIORS_PATH "workloads/priors.yaml"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: slicesim fit-workload OBS.yaml -o PROFILE.yaml [--class NAME] [--priors FILE]\n"
            "                             [--source TEXT] [--calibration MODEL.json\n"
            "                             [--calibration-gpu NAME]] [--accept-poor-fit]\n"
            "  Fits a workload profile (host time, compute, parallelism, memory traffic,\n"
            "  footprint) to the runs in OBS.yaml (format: DESIGN.md section 8) and writes it to\n"
            "  PROFILE.yaml, which `slicesim predict` and scenarios read.\n"
            "  --class NAME   workload class whose priors fill what the runs leave open\n"
            "                 (default generic; the classes are listed in " PRIORS_PATH ")\n"
            "  --priors FILE  read priors from FILE instead of the built-in " PRIORS_PATH "\n"
            "  --source TEXT  where the observations come from, written as the profile's\n"
            "                 provenance\n"
            "  --accept-poor-fit  write the profile even when the observations disagree with the\n"
            "                 model far beyond their noise (refused otherwise, exit 2)\n"
            "  --calibration MODEL.json  a measured node (`slicesim fit` output) in place of\n"
            "                 the catalog defaults of its GPU type (OBS.yaml's gpu must be it)\n"
            "  --calibration-gpu NAME    the catalog GPU type the model applies to, when the\n"
            "                 measured device name does not say\n");
}

/* What each observation's `telemetry:` gave (experiments/telemetry.h): the gpu_util and the
 * footprint (the largest frame buffer in use, over the peers: obs_footprint_bytes) the fit used,
 * and power, which it prints only (why: below). */
static void print_telemetry(const obs_file *f)
{
    bool any = false, power = false;
    for (size_t i = 0; i < f->n; i++) {
        const obs_telemetry *t = &f->obs[i].telemetry;
        if (!t->at.line || !t->util_source) {
            continue;
        }
        if (!any) {
            printf("\ntelemetry (fitted: gpu_util, and FB used over the peers as the device-memory "
                   "footprint; power printed only):\n");
            any = true;
        }
        printf("%5zu  GPU %u%s%.0d: %zu samples of %s -> gpu_util %.3f", i, t->gpu,
               t->instance >= 0 ? " instance " : "", t->instance >= 0 ? t->instance : 0,
               t->n_util, t->util_source, f->obs[i].gpu_util);
        if (!isnan(t->sm_active)) {
            printf(", sm_active %.3f", t->sm_active);
        }
        if (!isnan(t->dram_active)) {
            printf(", dram_active %.3f", t->dram_active);
        }
        if (!isnan(t->fb_used_bytes)) {
            printf(", FB used max %.2f GiB", t->fb_used_bytes / 1073741824.0);
            double fp = obs_footprint_bytes(&f->obs[i]);
            if (fp > 0) {
                printf(" -> footprint %.2f GiB", fp / 1073741824.0);
            }
        }
        if (!isnan(t->power_w)) {
            printf(", power %.1f W", t->power_w);
            power = true;
        }
        printf("\n");
    }
    if (power) {
        printf("power is printed only: the model's power terms (model/physics/physics.yaml power_sm_w "
               "per work class,\npower_alpha, power_idle_frac, power_board_idle_frac) are device "
               "physics shared by every\nworkload, not parameters of this profile; they lower "
               "the clock only when the busy SMs'\ndemand exceeds the board's budget (the "
               "catalog's tdp_w), so a reading below the cap says\nnothing about run time, and "
               "the board power the model reports (model/physics/power.h power_board_w:\nidle share plus "
               "the busy SMs' draw) has no term for memory traffic to lay a reading on\n");
    }
}

/* Load the priors from `path` or the embedded file. Returns 0, or the exit status. */
static int load_priors(const char *path, arena *a, diag *d, obs_priors **out)
{
    int rc;
    if (path) {
        rc = obs_load_priors(path, NULL, 0, a, d, out);
    } else {
        const unsigned char *data = NULL;
        size_t len = 0;
        if (!embedded_get(PRIORS_PATH, &data, &len)) {
            fprintf(stderr, "slicesim fit-workload: error: %s is not built in\n", PRIORS_PATH);
            return CLI_EXIT_ENV;
        }
        rc = obs_load_priors(PRIORS_PATH, data, len, a, d, out);
    }
    if (rc == SIM_EINPUT) {
        diag_print(d, stderr);
        return CLI_EXIT_INPUT;
    }
    if (rc != 0) {
        fprintf(stderr, "slicesim fit-workload: error: %s: %s\n", path, strerror(errno));
        return CLI_EXIT_ENV;
    }
    return 0;
}

static void print_report(const obs_file *f, const obs_profile *p, const obs_fit_report *rep)
{
    int used = 0;
    for (size_t i = 0; i < rep->n_rows; i++) {
        used += rep->rows[i].used;
    }
    printf("workload %s on %s: %d of %zu observations used, class %s\n", f->workload, f->gpu_name,
           used, f->n, p->prior_class);
    printf("fit: %s after %d iterations, chi^2 %.4g",
           rep->status == 0 ? "converged" : "NOT converged", rep->iterations, rep->chisq);
    if (rep->dof > 0) {
        printf(", %d degrees of freedom\n\n", rep->dof);
    } else {
        printf(", %d parameters for %d observations: the priors decide the rest\n\n",
               rep->n_params, used);
    }
    printf("%-32s %14s %14s  %s\n", "parameter", "value", "std_err", "status");
    for (int i = 0; i < rep->n_params; i++) {
        const obs_fit_param *q = &rep->params[i];
        printf("%-32s %14.6g %14.6g  %s\n", wl_param_name(q->which), q->value, q->std_err,
               q->pinned ? "fitted" : "NOT PINNED by the observations");
    }
    int n_open = 0;
    for (int i = 0; i < rep->n_params; i++) {
        const obs_fit_param *q = &rep->params[i];
        if (!q->pinned) {
            if (!n_open++) {
                printf("\nunder-determined parameters (left to their prior: the class, or the measured split):\n");
            }
            printf("  %s: prior median %.4g (one-sd range %.4g..%.4g), kept at %.4g; source: %s\n",
                   wl_param_name(q->which), q->prior_median, q->prior_lo, q->prior_hi, q->value,
                   q->prior_src ? q->prior_src : "-");
            if (q->family_open) {
                printf("    the observations fit it equally from %.4g upwards (family of "
                       "profiles; predict spans them)\n", q->family_lo);
            } else if (q->family_hi > q->family_lo) {
                printf("    the observations fit it equally from %.4g to %.4g (family of "
                       "profiles; predict spans them)\n", q->family_lo, q->family_hi);
            }
        }
    }
    if (rep->n_ddp > 0) {
        char open[160];
        snprintf(open, sizeof open,
                 "NOT PINNED by the DDP observations: %.3g fits them as well (hidden "
                 "communication, or another bucket count)",
                 rep->grad_alt_bytes);
        printf("\ngrad_bytes %.6g (%s); %d DDP observations: time per unit of the whole job\n",
               p->p.grad_bytes,
               rep->grad_fitted && rep->grad_pinned ? "fitted to the DDP observations"
               : rep->grad_fitted                   ? open
               : p->p.grad_bytes > 0                ? "given"
                                     : "unknown: give grad_bytes or a timed DDP observation",
               rep->n_ddp);
    }
    if (rep->derived_last) {
        const obs_entry *e = &f->obs[f->n - 1];
        printf("\nno one-process run: observation %zu below is derived, the one-process run on %s "
               "at batch %u that the DDP observations imply through the DDP model (its time per "
               "unit chosen with grad_bytes to fit them; both lean on the host/GPU split the class "
               "priors give, which DDP runs alone cannot pin); the profile is fitted to it\n",
               f->n - 1, e->config.partition, e->batch);
    }
    printf("\n%5s  %-10s %-9s %5s %5s %14s %14s %9s\n", "obs", "partition", "sharing", "peers",
           "batch", "measured_s/u", "predicted_s/u", "residual");
    for (size_t i = 0; i < rep->n_rows; i++) {
        const obs_entry *e = &f->obs[i];
        const obs_fit_row *r = &rep->rows[i];
        const char *sh = e->config.sharing_at.line ? share_mode_name((share_mode)e->config.sharing)
                         : e->config.peers > 1     ? "timeslice"
                                                   : "exclusive";
        printf("%5zu  %-10s %-9s %5lld %5u ", i, e->config.partition, sh,
               (long long)e->config.peers, e->batch);
        if (!r->used) {
            printf("%s\n", r->note);
        } else if (e->outcome == OBS_OUTCOME_OOM) {
            printf("%14s %14s %9s\n", "oom", r->rel_residual == 0 ? "oom" : "fits",
                   r->rel_residual == 0 ? "agrees" : "DISAGREES");
        } else {
            printf("%14.6g %14.6g %+8.2f%%\n", r->measured_unit_s, r->predicted_unit_s,
                   100.0 * r->rel_residual);
        }
    }
    print_telemetry(f);
}

int cmd_fit_workload(int argc, char **argv)
{
    const char *obs_path = NULL, *out_path = NULL, *cls = NULL, *priors_path = NULL;
    const char *source = NULL;
    cli_calib cal = {0};
    bool accept_poor = false;
    static const char *const opts[] = {"-o", "--class", "--priors", "--source"};
    const char **const dsts[] = {&out_path, &cls, &priors_path, &source};
    for (int i = 1; i < argc; i++) {
        int took = cli_calib_arg("fit-workload", argc, argv, &i, &cal);
        took = took ? took : cli_option_value("fit-workload", argc, argv, &i, opts, dsts, 4);
        if (took < 0) {
            return CLI_EXIT_INPUT;
        } else if (took) {
            continue;
        } else if (!strcmp(argv[i], "--accept-poor-fit")) {
            accept_poor = true;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return CLI_EXIT_OK;
        } else if (argv[i][0] == '-') {
            usage(stderr);
            return cli_usage_error("fit-workload", "unknown option '%s'", argv[i]);
        } else if (!obs_path) {
            obs_path = argv[i];
        } else {
            return cli_usage_error("fit-workload", "unexpected argument '%s'", argv[i]);
        }
    }
    cls = cls ? cls : "generic";
    if (!obs_path || !out_path) {
        usage(stderr);
        return cli_usage_error("fit-workload", "expected OBS.yaml and -o PROFILE.yaml");
    }
    arena *a = arena_create();
    diag *d = diag_create();
    int status = CLI_EXIT_OK;
    gpu_catalog loaded, cat; /* cat: with the calibrated type */
    phys_params phys;
    comm_params comm;
    obs_priors *priors = NULL;
    obs_file *f = NULL;
    if (catalog_load_default(a, &loaded, d) != 0 || physics_load_default(d, &phys) != 0 ||
        comm_load_default(d, &comm) != 0) {
        diag_print(d, stderr);
        status = CLI_EXIT_ENV;
        goto done;
    }
    status = cli_calib_apply("fit-workload", &cal, &loaded, &phys, a, d, &cat);
    if (status) {
        goto done;
    }
    status = load_priors(priors_path, a, d, &priors);
    if (status) {
        goto done;
    }
    const obs_prior_class *pc = obs_priors_find(priors, cls);
    if (!pc) {
        fprintf(stderr, "slicesim fit-workload: error: --class: unknown class; expected one of");
        for (size_t i = 0; i < priors->n; i++) {
            fprintf(stderr, "%s %s", i ? "," : "", priors->classes[i].name);
        }
        fprintf(stderr, ", got '%s'\n", cls);
        status = CLI_EXIT_INPUT;
        goto done;
    }
    int rc = obs_load_observations(obs_path, NULL, 0, &cat, a, d, &f);
    if (rc == 0 && !cli_calib_check_gpu(&cal, f->gpu, f->gpu_at, "gpu", d)) {
        rc = SIM_EINPUT;
    }
    if (rc == SIM_EINPUT) {
        diag_print(d, stderr);
        status = CLI_EXIT_INPUT;
        goto done;
    } else if (rc != 0) {
        fprintf(stderr, "slicesim fit-workload: error: %s: %s\n", obs_path, strerror(errno));
        status = CLI_EXIT_ENV;
        goto done;
    }
    double est_s = (double)f->n * FIT_CPU_S_PER_OBSERVATION;
    if (est_s >= FIT_NOTICE_S) {
        fprintf(stderr,
                "slicesim fit-workload: %zu observations: the fit takes about %.0f s of CPU "
                "(up to %.0f ms per observation, measured)\n",
                f->n, est_s, 1e3 * FIT_CPU_S_PER_OBSERVATION);
    }
    obs_profile *p = NULL;
    obs_fit_report rep;
    const obs_file *fit_on = f;
    rc = obs_fit_needs_ddp(f) ? obs_fit_from_ddp(f, pc, &phys, &comm, a, &fit_on, &p, &rep)
                              : obs_fit(f, pc, &phys, a, &p, &rep);
    if (rc == SIM_EINPUT) {
        fprintf(stderr, "%s: error: %s\n", obs_path, rep.error);
        status = CLI_EXIT_INPUT;
        goto done;
    }
    p->p.provenance = source;
    obs_fit_ddp(fit_on, p, &phys, &comm, &rep);
    print_report(fit_on, p, &rep);
    int n_bad = 0;
    for (int i = 0; i < rep.n_params; i++) {
        n_bad += !isfinite(rep.params[i].value);
    }
    if (rc == SIM_ENOCONV || !isfinite(rep.chisq) || n_bad > 0) {
        fprintf(stderr,
                "%s: error: fit: did not converge; expected a finite chi^2 and finite "
                "parameters, got chi^2 %g after %d iterations with %d of %d parameters not "
                "finite (nothing written to '%s')\n",
                obs_path, rep.chisq, rep.iterations, n_bad, rep.n_params, out_path);
        status = CLI_EXIT_INPUT;
        goto done;
    }
    double limit = obs_fit_chisq_limit(&rep);
    if (rep.data_chisq > limit) {
        int worst = -1;
        for (size_t i = 0; i < rep.n_rows; i++) {
            const obs_fit_row *r = &rep.rows[i];
            if (r->used && (worst < 0 || fabs(r->rel_residual) > fabs(rep.rows[worst].rel_residual))) {
                worst = (int)i;
            }
        }
        fprintf(stderr,
                "%s: error: fit: the observations disagree with the model far beyond their "
                "noise; expected a chi^2 of the observations of at most %.4g (p >= %g were the "
                "noise %g times the stated %g %% of a time, %d degree%s of freedom), got %.4g",
                obs_path, limit, OBS_POOR_FIT_P, OBS_POOR_FIT_NOISE_FACTOR,
                100.0 * WFIT_TIME_REL_SD, rep.dof > 1 ? rep.dof : 1, rep.dof > 1 ? "s" : "",
                rep.data_chisq);
        if (worst >= 0) {
            fprintf(stderr, " (largest residual %+.1f %% at observations[%d])",
                    100.0 * rep.rows[worst].rel_residual, worst);
        }
        if (!accept_poor) {
            fprintf(stderr, "; nothing written to '%s' (--accept-poor-fit writes it anyway)\n",
                    out_path);
            status = CLI_EXIT_INPUT;
            goto done;
        }
        fprintf(stderr, "; written anyway (--accept-poor-fit)\n");
    }
    char comment[1024];
    snprintf(comment, sizeof comment,
             "%s - workload profile written by `slicesim fit-workload %s --class %s`.\n"
             "Format: experiments/obs.h (obs_write_profile); read by `slicesim predict` and "
             "scenarios.\nparams: per iteration at ref_batch; from: fit (pinned by the "
             "observations, sd = standard error),\nprior (left to the class prior, lo..hi = its "
             "one-sd range) or fixed (not part of the model here).",
             out_path, obs_path, cls);
    if (cal.applied) {
        size_t len = strlen(comment);
        snprintf(comment + len, sizeof comment - len,
                 "\nFitted with --calibration %s: %s measured as '%s' (%s, driver %s).", cal.path,
                 cal.applied->name, cal.src.device, cal.src.date_utc, cal.src.driver);
    }
    if (obs_write_profile(out_path, p, comment) != 0) {
        fprintf(stderr, "slicesim fit-workload: error: %s: %s\n", out_path, strerror(errno));
        status = CLI_EXIT_ENV;
        goto done;
    }
    printf("\nwrote %s\n", out_path);
done:
    diag_destroy(d);
    arena_destroy(a);
    return status;
}
