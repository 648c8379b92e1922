/* experiments/comm_load.h - load the communication model's parameters (model/physics/comm.yaml) into
 * comm_params (model/physics/comm.h).
 *
 * Schema (every number is a mapping {value, src, note?} with a non-empty src):
 *   version: 1
 *   links: {nvlink|pcie|host|nic: {alpha_ll_s, alpha_simple_s, eff, ll_max_bytes}}  (all four)
 *   ll_bw_frac, host_mem_bytes_per_s, gpus_per_root: {value, src}
 *   networks: [{name, line_gbit_s, nics (default 1), src}]   (1..COMM_MAX_NETS, unique names)
 *   default_network: NAME                   (one of networks)
 *   topologies: [{name, nvlink: switch|pairs|none, gpus_per_root, src}]  (1..COMM_MAX_TOPOS,
 *                                            unique names; what a node group's topology: names)
 *   ddp: {bucket_bytes, backward_frac, grad_copy_frac, nccl_*: NCCL's device memory, ...}
 * Errors go through diag with the fixed message shape.
 * Ownership: comm_params is plain data filled in the caller's struct. Units: as in model/physics/comm.h
 * (seconds, bytes, bytes/s; line_gbit_s is converted to bytes/s).
 */
#ifndef SIMPROJ_EXPERIMENTS_COMM_LOAD_H
#define SIMPROJ_EXPERIMENTS_COMM_LOAD_H

#include <stddef.h>

#include "model/physics/comm.h"
#include "sim/diag.h"

/* Parse `len` bytes of YAML named `name`. Returns 0, or SIM_EINPUT after reporting to d. */
int comm_load_buffer(const char *name, const void *buf, size_t len, diag *d, comm_params *out);

/* Index of the network named `name` in p (p's default network when name is NULL); -1 after an
 * input error at `at` for `field`: "unknown network; expected one of [NAMES], got 'NAME'". */
int comm_load_net(const comm_params *p, const char *name, src_loc at, const char *field,
                  diag *d);

/* Load the embedded model/physics/comm.yaml. Returns 0, or SIM_EINPUT (reported) when it is broken. */
int comm_load_default(diag *d, comm_params *out);

#endif
