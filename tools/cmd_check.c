/* tools/cmd_check.c - `slicesim check FILE [--set PATH=VALUE]...`: load and validate a scenario
 * without running it. Prints "FILE: ok (N nodes, G GPUs, J job classes)" on success; otherwise
 * every error on stderr and exit 2 (bad input) or 1 (the file cannot be read). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/scenario.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "tools/cli.h"

int cmd_check(int argc, char **argv)
{
    const char *file = NULL;
    const char **sets = calloc((size_t)argc, sizeof *sets);
    size_t n_sets = 0;
    if (!sets) {
        fprintf(stderr, "slicesim check: out of memory\n");
        return CLI_EXIT_ENV;
    }
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: slicesim check FILE [--set PATH=VALUE]...\n"
                   "Load and validate a scenario without running it; print every error.\n");
            free(sets);
            return CLI_EXIT_OK;
        }
        if (!strcmp(argv[i], "--set")) {
            if (i + 1 >= argc) {
                free(sets);
                return cli_usage_error("check", "--set needs PATH=VALUE");
            }
            sets[n_sets++] = argv[++i];
        } else if (!strncmp(argv[i], "--set=", 6)) {
            sets[n_sets++] = argv[i] + 6;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            free(sets);
            return cli_usage_error("check", "unknown option '%s'; expected --set PATH=VALUE",
                                   argv[i]);
        } else if (file) {
            free(sets);
            return cli_usage_error("check", "one scenario file expected, got '%s' and '%s'", file,
                                   argv[i]);
        } else {
            file = argv[i];
        }
    }
    if (!file) {
        free(sets);
        return cli_usage_error("check",
                               "missing scenario file; usage: check FILE [--set PATH=VALUE]...");
    }
    arena *a = arena_create();
    diag *d = diag_create();
    scenario_spec *s = NULL;
    int rc = scenario_load_file(file, sets, n_sets, 0, a, d, &s);
    int status = cli_load_status("check", file, rc, d);
    if (status == CLI_EXIT_OK) {
        printf("%s: ok (%llu nodes, %llu GPUs, %zu job classes)\n", file,
               (unsigned long long)scenario_node_count(s),
               (unsigned long long)scenario_gpu_count(s), s->workload.n_jobs);
    }
    diag_destroy(d);
    arena_destroy(a);
    free(sets);
    return status;
}
