/* tests/unit/oracle_frag.h - FGD's fragmentation of a node for one pod shape, written as its
 * definition (Weng et al., ATC'23; the FGD simulator's frag.go), the oracle the scheduler tests
 * hold model/policy/frag.h's frag_node_amount against. It lives with the tests because the
 * program computes all typical pods in one pass (frag_node_amount) and never one pod alone.
 * Units: milli-GPU. Ownership: both pointers borrowed for the call. */
#ifndef SIMPROJ_TESTS_UNIT_ORACLE_FRAG_H
#define SIMPROJ_TESTS_UNIT_ORACLE_FRAG_H

#include "model/policy/frag.h"

/* Fragmented milli-GPU of node n for pod shape p. */
double frag_for_pod(const frag_node *n, const frag_pod *p);

#endif
