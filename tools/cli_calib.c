/* tools/cli_calib.c - --calibration for fit-workload and predict (cli_calib.h). */
#include "tools/cli_calib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/calib_json.h"
#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/cli.h"

int cli_calib_arg(const char *cmd, int argc, char **argv, int *i, cli_calib *c)
{
    static const char *const opts[] = {"--calibration", "--calibration-gpu"};
    const char **const dsts[] = {&c->path, &c->gpu};
    return cli_option_value(cmd, argc, argv, i, opts, dsts, 2);
}

int cli_calib_apply(const char *cmd, cli_calib *c, const gpu_catalog *cat, const phys_params *m,
                    arena *a, diag *d, gpu_catalog *out)
{
    *out = *cat;
    if (!c->path) {
        if (c->gpu) {
            return cli_usage_error(cmd, "--calibration-gpu needs --calibration MODEL.json");
        }
        return CLI_EXIT_OK;
    }
    cal_fit *fit = xmalloc(sizeof *fit, "calibration model");
    int rc = calmodel_load_source(c->path, fit, &c->src, d);
    if (rc == SIM_ENOENT || rc == SIM_EIO) {
        fprintf(stderr, "slicesim %s: error: --calibration: %s: %s\n", cmd, c->path,
                strerror(errno));
        free(fit);
        return CLI_EXIT_ENV;
    }
    /* a wrong type is the flag's fault; no match, the measured device's (in the model file) */
    char flag[256];
    snprintf(flag, sizeof flag, "--calibration-gpu %s", c->gpu ? c->gpu : "");
    calmodel_site site = {.gpu = c->gpu,
                          .file_at = c->src.device_at,
                          .file_path = "source.device",
                          .gpu_at = {flag, 0, 0},
                          .gpu_path = ""};
    gpu_type t;
    if (rc == 0 && calmodel_apply(fit, &c->src, &site, cat, m, d, &t) != 0) {
        rc = SIM_EINPUT;
    }
    free(fit);
    if (rc != 0) {
        diag_print(d, stderr);
        return CLI_EXIT_INPUT;
    }
    gpu_catalog_with(cat, &t, 1, a, out);
    c->applied = gpu_catalog_find(out, t.name);
    return CLI_EXIT_OK;
}

bool cli_calib_check_gpu(const cli_calib *c, const gpu_type *have, src_loc at, const char *field,
                         diag *d)
{
    if (!c->applied || !have || have == c->applied) {
        return true;
    }
    diag_error(d, at, field,
               "not the calibrated GPU type; expected %s (--calibration %s, measured on '%s'), "
               "got '%s'",
               c->applied->name, c->path, c->src.device, have->name);
    return false;
}
