#include "tools/cli.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/catalog_load.h"
#include "experiments/cfg.h"
#include "sim/err.h"
#include "sim/xalloc.h"

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "slicesim %s: error: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_EXIT_INPUT;
}

int cli_load_status(const char *cmd, const char *path, int rc, const diag *d)
{
    if (rc == SIM_ENOENT || rc == SIM_EIO) {
        fprintf(stderr, "slicesim %s: error: cannot read '%s': %s\n", cmd, path, strerror(errno));
        return CLI_EXIT_ENV;
    }
    if (rc) {
        diag_print(d, stderr);
        return CLI_EXIT_INPUT;
    }
    return CLI_EXIT_OK;
}

int cli_load_catalog(const char *cmd, const char *path, const char *gpu, arena *a, diag *d,
                     gpu_catalog *cat, const gpu_type **g)
{
    int rc = path ? catalog_load_file(path, a, cat, d) : catalog_load_default(a, cat, d);
    int status = cli_load_status(cmd, path ? path : CATALOG_DEFAULT_PATH, rc, d);
    if (status != CLI_EXIT_OK || !gpu) {
        return status;
    }
    if (!(*g = gpu_catalog_find(cat, gpu))) {
        char names[1024];
        return cli_usage_error(cmd, "unknown GPU '%s'; expected one of %s", gpu,
                               gpu_catalog_names(cat, names, sizeof names));
    }
    return CLI_EXIT_OK;
}

/* Both parsers are the scenario's scalar parsers (experiments/cfg.h), so a number means the same
 * on the command line as in a file. */
bool cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
    char problem[64];
    uint64_t v;
    if (!s || s[0] == '+' || !cfg_parse_u64(s, &v, problem, sizeof problem) || v < min || v > max) {
        return false;
    }
    *out = v;
    return true;
}

bool cli_parse_double(const char *s, double *out)
{
    char problem[64];
    return s && cfg_parse_double(s, out, problem, sizeof problem);
}

char *cli_join_args(int argc, char **argv)
{
    size_t n = 16;
    for (int i = 0; i < argc; i++) {
        n += strlen(argv[i]) + 1;
    }
    char *s = xmalloc(n, "command line");
    strcpy(s, "slicesim");
    for (int i = 0; i < argc; i++) {
        strcat(s, " ");
        strcat(s, argv[i]);
    }
    return s;
}

int cli_add_set(const char *cmd, const char *v, const char **sets, size_t *n_sets)
{
    const char *eq = strchr(v, '=');
    sets[(*n_sets)++] = v;
    if (!eq || eq == v) {
        return cli_usage_error(cmd, "--set: not an assignment; expected PATH=VALUE, got '%s'", v);
    }
    return CLI_EXIT_OK;
}

int cli_nonempty(const char *cmd, const char *opt, const char *v)
{
    if (v[0] != '\0') {
        return CLI_EXIT_OK;
    }
    return cli_usage_error(cmd, "option '%s' needs a value; expected a non-empty value, got ''",
                           opt);
}

int cli_option_value(const char *cmd, int argc, char **argv, int *i, const char *const *names,
                     const char **const *dst, size_t n)
{
    const char *a = argv[*i];
    for (size_t k = 0; k < n; k++) {
        if (strcmp(a, names[k]) != 0) {
            continue;
        }
        if (*i + 1 >= argc) {
            cli_usage_error(cmd, "option '%s' needs a value", a);
            return -1;
        }
        if (*dst[k]) {
            cli_usage_error(cmd, "option '%s' given twice; expected one value, got '%s' and '%s'",
                            a, *dst[k], argv[*i + 1]);
            return -1;
        }
        if (cli_nonempty(cmd, a, argv[*i + 1]) != CLI_EXIT_OK) {
            return -1;
        }
        *dst[k] = argv[++*i];
        return 1;
    }
    return 0;
}

int cli_scenario_arg(const char *cmd, int argc, char **argv, int *i, const char **sets,
                     size_t *n_sets, const char **scenario, const char *expect)
{
    const char *a = argv[*i];
    if (!strncmp(a, "--set=", 6)) {
        return cli_add_set(cmd, a + 6, sets, n_sets);
    }
    if (!strcmp(a, "--set")) {
        if (*i + 1 >= argc) {
            return cli_usage_error(cmd, "option '%s' needs a value; %s", a, expect);
        }
        return cli_add_set(cmd, argv[++*i], sets, n_sets);
    }
    if (a[0] == '-' && a[1] != '\0') {
        return cli_usage_error(cmd, "unknown option '%s'; %s", a, expect);
    }
    if (*scenario) {
        return cli_usage_error(cmd, "unexpected argument '%s' after the scenario '%s'; %s", a,
                               *scenario, expect);
    }
    *scenario = a;
    return CLI_EXIT_OK;
}

int cli_exit_status(int st)
{
    return st == 0 ? CLI_EXIT_OK : st == SIM_EINPUT ? CLI_EXIT_INPUT : CLI_EXIT_ENV;
}
