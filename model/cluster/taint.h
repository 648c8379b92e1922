/* model/cluster/taint.h - Kubernetes node labels and taints, and a pod's nodeSelector and tolerations:
 * where a pod may be placed (kube-scheduler's NodeAffinity and TaintToleration plugins).
 *
 * Semantics (k8s.io/api core/v1 Toleration.ToleratesTaint, k8s.io/component-helpers
 * scheduling/corev1):
 *  - A node admits a pod when every label of the pod's node selector is on the node with that
 *    value, and the pod tolerates every NoSchedule and NoExecute taint of the node.
 *  - A toleration tolerates a taint when its effect is empty (every effect) or the taint's, and
 *    its key is the taint's (an empty key with operator Exists matches every key), and, with
 *    operator Equal, its value is the taint's (Exists matches any value).
 *  - PreferNoSchedule filters nothing: a node's PreferNoSchedule taints the pod does not
 *    tolerate are counted (taint_prefer_count) and the policies prefer nodes with fewer of
 *    them (model/policy/policy.h).
 *  - NoExecute evicts running pods that do not tolerate it when the taint is added; a scenario's
 *    taints hold from time 0 and never change, so here it filters exactly as NoSchedule does.
 * Ownership: every array and string is borrowed; the scenario's arena holds them for the run.
 */
#ifndef SIMPROJ_MODEL_TAINT_H
#define SIMPROJ_MODEL_TAINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum taint_effect {
    TAINT_ANY = 0,           /* a toleration's empty effect: every effect */
    TAINT_NO_SCHEDULE,       /* NoSchedule */
    TAINT_PREFER_NO_SCHEDULE, /* PreferNoSchedule */
    TAINT_NO_EXECUTE,        /* NoExecute */
} taint_effect;

/* A label (key=value) of a node, or one term of a pod's nodeSelector. */
typedef struct taint_label {
    const char *key, *value; /* value may be "" */
} taint_label;

/* A node's taint. */
typedef struct taint_entry {
    const char *key, *value; /* value may be "" */
    taint_effect effect;     /* not TAINT_ANY */
} taint_entry;

/* A pod's toleration. */
typedef struct taint_toleration {
    const char *key;     /* "" with exists: every key */
    bool exists;         /* operator Exists (else Equal) */
    const char *value;   /* Equal: the value to match ("" matches an empty value) */
    taint_effect effect; /* TAINT_ANY: every effect */
} taint_toleration;

/* Labels and taints of a node (of a node group: its nodes share them). */
typedef struct taint_node {
    size_t n_labels;
    const taint_label *labels;
    size_t n_taints;
    const taint_entry *taints;
} taint_node;

/* Where a pod may go: its nodeSelector and tolerations. */
typedef struct taint_pod {
    size_t n_selector;
    const taint_label *selector;
    size_t n_tolerations;
    const taint_toleration *tolerations;
} taint_pod;

/* Effect by its Kubernetes name ("NoSchedule", "PreferNoSchedule", "NoExecute"); false when
 * the name is none of them. */
bool taint_effect_parse(const char *name, taint_effect *out);
/* The Kubernetes name of effect e ("" for TAINT_ANY). Static storage. */
const char *taint_effect_name(taint_effect e);
/* Does toleration t tolerate taint x? */
bool taint_tolerates(const taint_toleration *t, const taint_entry *x);
/* Does a node with labels and taints n (NULL: none) admit pod p (NULL: no selector, no
 * tolerations)? */
bool taint_admits(const taint_node *n, const taint_pod *p);
/* PreferNoSchedule taints of n that p does not tolerate (0 when either is NULL and n has none). */
uint32_t taint_prefer_count(const taint_node *n, const taint_pod *p);
/* Do two pods have the same selector and tolerations (same constraints, in the same order)? */
bool taint_pod_same(const taint_pod *a, const taint_pod *b);

#endif
