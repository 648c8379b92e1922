/* tests/unit/oracle_frag.c - see oracle_frag.h. */
#include "tests/unit/oracle_frag.h"

/* GPUs of n with at least p's share free, are there p->n_gpu of them? */
static int gpus_fit(const frag_node *n, const frag_pod *p)
{
    uint32_t k = 0;
    for (uint32_t i = 0; i < n->n_gpus && k < p->n_gpu; i++) {
        k += n->milli_left[i] >= p->milli;
    }
    return k >= p->n_gpu;
}

static int frag_fits(const frag_node *n, const frag_pod *p)
{
    if (n->cpu_left < p->cpu_milli) {
        return 0;
    }
    if (p->n_gpu == 0) {
        return 1;
    }
    return frag_type_allowed(p->gpu_spec, n->gpu_type) && gpus_fit(n, p);
}

double frag_for_pod(const frag_node *n, const frag_pod *p)
{
    uint64_t idle = frag_idle(n);
    /* a CPU-only pod uses no GPU; a pod that cannot land here uses none of it (frag.go: every
     * class but Q3 "satisfied" counts all idle GPU share) */
    if (p->n_gpu == 0 || !frag_fits(n, p)) {
        return (double)idle;
    }
    uint64_t small = 0; /* Q3: the GPUs each too small for one of its GPUs */
    for (uint32_t i = 0; i < n->n_gpus; i++) {
        small += n->milli_left[i] < p->milli ? n->milli_left[i] : 0;
    }
    return (double)small;
}
