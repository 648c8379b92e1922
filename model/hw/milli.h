/* model/hw/milli.h - milli-GPU, the unit of a GPU share: one GPU is MILLI_PER_GPU. openb's
 * gpu_milli column (Weng et al., ATC '23), FGD's fragmentation measure (model/policy/frag.h), the
 * cluster's shareable devices (model/cluster/cluster.h), the policies' view (policy.h) and the
 * trace readers all count GPU shares in it; a whole unit holds MILLI_PER_GPU.
 * Ownership: definitions only. Units: milli-GPU.
 */
#ifndef SIMPROJ_MODEL_HW_MILLI_H
#define SIMPROJ_MODEL_HW_MILLI_H

#define MILLI_PER_GPU 1000u /* milli-GPU in one GPU */

#endif
