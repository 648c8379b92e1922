/* tools/cmd_policies.c - `slicesim policies`: list the registered scheduling policies. */
#include <stdio.h>
#include <string.h>

#include "model/policy/policy.h"
#include "tools/cli.h"

int cmd_policies(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        printf("usage: slicesim policies\n\nLists the scheduling and placement policies a "
               "scenario may name in `policy:`.\n");
        return CLI_EXIT_OK;
    }
    if (argc > 1) {
        return cli_usage_error("policies", "unexpected argument '%s'; expected none", argv[1]);
    }
    for (size_t i = 0; pol_at(i); i++) {
        printf("%-14s %s\n", pol_at(i)->name, pol_at(i)->summary);
    }
    return CLI_EXIT_OK;
}
