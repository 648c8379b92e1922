/* tools/cli_calib.c - --calibration for fit-workload and predict (cli_calib.h). */
#include "tools/cli_calib.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "experiments/calib_json.h"
#include "sim/err.h"
#include "tools/cli.h"

int cli_calib_arg(const char *cmd, int argc, char **argv, int *i, cli_calib *c)
{
    static const char *const opts[] = {"--calibration", "--calibration-gpu"};
    const char **const dsts[] = {&c->path, &c->gpu};
    return cli_option_value(cmd, argc, argv, i, opts, dsts, 2);
}

int cli_calib_apply(const char *cmd, cli_calib *c, gpu_catalog *cat, const phys_params *m, diag *d)
{
    if (!c->path) {
        if (c->gpu) {
            return cli_usage_error(cmd, "--calibration-gpu needs --calibration MODEL.json");
        }
        return CLI_EXIT_OK;
    }
    int rc = calmodel_apply_file(c->path, c->gpu, cat, m, d, &c->src, &c->applied);
    if (rc == SIM_EINPUT) {
        diag_print(d, stderr);
        return CLI_EXIT_INPUT;
    }
    if (rc != 0) {
        fprintf(stderr, "slicesim %s: error: --calibration: %s: %s\n", cmd, c->path,
                strerror(errno));
        return CLI_EXIT_ENV;
    }
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
