/* model/physics/share.c - what the sharing models have in common: shared memory capacity.
 * See share.h; time-slicing is model/physics/share_ts.c, MPS model/physics/share_mps.c. */
#include "model/physics/share.h"

bool share_mem_fits(const wl_profile *p, double batch, const partition_cfg *c, double *need_bytes)
{
    double need = wl_mem_footprint_bytes(p, batch);
    double have = speed_partition_mem_bytes(c);
    if (c->share > 0) {
        /* a fractional GPU: each context holds its own slice of the memory */
        have *= c->share;
    } else if (c->sharing != SHARE_EXCLUSIVE) {
        need *= c->peers;
        for (int i = 0; i < c->n_with; i++) {
            if (c->with[i]) { /* without a profile: no footprint to count */
                need += wl_mem_footprint_bytes(c->with[i], c->with_batch[i]) *
                        (c->with_n[i] > 0 ? c->with_n[i] : 1);
            }
        }
    }
    if (need_bytes) {
        *need_bytes = need;
    }
    return have <= 0 || need <= have;
}
