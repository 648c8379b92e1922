/* tools/cmd_predict.c - `slicesim predict PROFILE.yaml [MORE.yaml...] QUERIES.yaml`: predict a
 * fitted workload on configurations never run (DESIGN.md §8, experiments/obs.h).
 *
 * Prints CSV on stdout, one row per query, with the header
 *   index,time_s,throughput,outcome,time_s_lo,time_s_hi,reason
 * index is the query's position (0-based); time_s the wall time for the query's work; throughput
 * units/s of one process; outcome ok | oom | invalid; time_s_lo..time_s_hi the range that the
 * fit's uncertainty and the model's loss-factor uncertainty give; reason says why for oom and
 * invalid (numeric columns are then empty). Numbers are printed with 6 significant digits.
 * The first profile is the one predicted; the others are the workloads that `with:` may name.
 * Exit 0, 2 on bad input, 1 when a file cannot be read. */
#include "tools/cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "experiments/obs.h"
#include "experiments/comm_load.h"
#include "experiments/physics_load.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/cli_calib.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: slicesim predict [--calibration MODEL.json [--calibration-gpu NAME]]\n"
            "                        PROFILE.yaml [MORE.yaml...] QUERIES.yaml\n"
            "  Predicts the workload of PROFILE.yaml (written by fit-workload) on every query of\n"
            "  QUERIES.yaml (format: DESIGN.md section 8) and prints CSV:\n"
            "  index,time_s,throughput,outcome,time_s_lo,time_s_hi,reason\n"
            "  MORE.yaml are the profiles of other workloads that a query's `with:` names.\n"
            "  --calibration MODEL.json  a measured node (`slicesim fit` output) in place of the\n"
            "                  catalog defaults of its GPU type (the queries' gpu must be it)\n"
            "  --calibration-gpu NAME    the catalog GPU type the model applies to, when the\n"
            "                  measured device name does not say\n");
}

/* Write s as one CSV field (quoted when it holds a comma, quote or newline). */
static void csv_field(const char *s)
{
    if (!strpbrk(s, ",\"\n\r")) {
        fputs(s, stdout);
        return;
    }
    putchar('"');
    for (const char *c = s; *c; c++) {
        if (*c == '"') {
            putchar('"');
        }
        putchar(*c == '\n' || *c == '\r' ? ' ' : *c);
    }
    putchar('"');
}

/* Predict with the profiles files[0..n_files-1) on the queries files[n_files-1]. */
static int predict(int n_files, char **files, cli_calib *cal)
{
    if (n_files < 2) {
        usage(stderr);
        return cli_usage_error("predict", "expected PROFILE.yaml and QUERIES.yaml");
    }
    arena *a = arena_create();
    diag *d = diag_create();
    int status = CLI_EXIT_OK;
    int n_prof = n_files - 1;
    obs_profile **prof = xcalloc((size_t)n_prof, sizeof *prof, "profiles");
    gpu_catalog loaded, cat; /* cat: with the calibrated type */
    phys_params phys;
    comm_params comm;
    obs_queries *qs = NULL;
    if (catalog_load_default(a, &loaded, d) != 0 || physics_load_default(d, &phys) != 0 ||
        comm_load_default(d, &comm) != 0) {
        diag_print(d, stderr);
        status = CLI_EXIT_ENV;
        goto done;
    }
    status = cli_calib_apply("predict", cal, &loaded, &phys, a, d, &cat);
    if (status != CLI_EXIT_OK) {
        goto done;
    }
    int env_rc = 0;
    const char *env_path = NULL;
    for (int i = 0; i < n_prof; i++) {
        int rc = obs_load_profile(files[i], NULL, 0, &phys, a, d, &prof[i]);
        if (rc != 0 && rc != SIM_EINPUT && !env_rc) {
            env_rc = rc;
            env_path = files[i];
        }
    }
    if (!env_rc) {
        int rc = obs_load_queries(files[n_files - 1], NULL, 0, &cat, a, d, &qs);
        if (rc != 0 && rc != SIM_EINPUT) {
            env_rc = rc;
            env_path = files[n_files - 1];
        }
    }
    if (env_rc) {
        fprintf(stderr, "slicesim predict: error: %s: %s\n", env_path, strerror(errno));
        status = CLI_EXIT_ENV;
        goto done;
    }
    if (qs) {
        cli_calib_check_gpu(cal, qs->gpu, qs->gpu_at, "gpu", d);
    }
    if (diag_error_count(d) > 0) {
        diag_print(d, stderr);
        status = CLI_EXIT_INPUT;
        goto done;
    }
    printf("index,time_s,throughput,outcome,time_s_lo,time_s_hi,reason\n");
    for (size_t i = 0; i < qs->n; i++) {
        obs_prediction r;
        obs_predict(prof[0], (const obs_profile *const *)prof + 1, (size_t)(n_prof - 1), qs, i,
                    &phys, &comm, &r);
        if (r.outcome == SPEED_OK) {
            printf("%zu,%.6g,%.6g,ok,%.6g,%.6g,\n", i, r.time_s, r.throughput, r.time_lo_s,
                   r.time_hi_s);
        } else {
            printf("%zu,,,%s,,,", i, speed_outcome_name(r.outcome));
            csv_field(r.reason);
            putchar('\n');
        }
    }
done:
    free(prof);
    diag_destroy(d);
    arena_destroy(a);
    return status;
}

int cmd_predict(int argc, char **argv)
{
    cli_calib cal = {0};
    char **files = xcalloc((size_t)argc, sizeof *files, "arguments");
    int n_files = 0;
    for (int i = 1; i < argc; i++) {
        int took = cli_calib_arg("predict", argc, argv, &i, &cal);
        if (took < 0) {
            free(files);
            return CLI_EXIT_INPUT;
        }
        if (took) {
            continue;
        }
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            free(files);
            return CLI_EXIT_OK;
        }
        if (argv[i][0] == '-') {
            usage(stderr);
            free(files);
            return cli_usage_error("predict", "unknown option '%s'", argv[i]);
        }
        files[n_files++] = argv[i];
    }
    int status = predict(n_files, files, &cal);
    free(files);
    return status;
}
