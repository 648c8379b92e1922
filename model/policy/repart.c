/* model/policy/repart.c - the layout-policy registry (see repart.h). */
#include "model/policy/repart.h"

#include <string.h>

/* The registry, in name order. Add a layout policy here. */
extern const repart_ops repart_demand_ops;

static const repart_ops *const registry[] = {
    &repart_demand_ops,
};

#define N_REGISTRY (sizeof registry / sizeof registry[0])

const repart_ops *repart_find(const char *name)
{
    for (size_t i = 0; i < N_REGISTRY; i++) {
        if (!strcmp(registry[i]->name, name)) {
            return registry[i];
        }
    }
    return NULL;
}
