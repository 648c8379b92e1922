/* model/cluster/taint.c - node labels and taints against a pod's nodeSelector and tolerations (see
 * taint.h). */
#include "model/cluster/taint.h"

#include <string.h>

static const char *const effect_names[] = {"", "NoSchedule", "PreferNoSchedule", "NoExecute"};

bool taint_effect_parse(const char *name, taint_effect *out)
{
    for (int e = TAINT_NO_SCHEDULE; e <= TAINT_NO_EXECUTE; e++) {
        if (name && !strcmp(name, effect_names[e])) {
            *out = (taint_effect)e;
            return true;
        }
    }
    return false;
}

const char *taint_effect_name(taint_effect e)
{
    return e >= TAINT_ANY && e <= TAINT_NO_EXECUTE ? effect_names[e] : "";
}

bool taint_tolerates(const taint_toleration *t, const taint_entry *x)
{
    if (t->effect != TAINT_ANY && t->effect != x->effect) {
        return false;
    }
    if (!t->key[0]) { /* an empty key tolerates every taint with Exists, nothing with Equal */
        return t->exists;
    }
    return !strcmp(t->key, x->key) && (t->exists || !strcmp(t->value, x->value));
}

static bool tolerated(const taint_pod *p, const taint_entry *x)
{
    for (size_t i = 0; p && i < p->n_tolerations; i++) {
        if (taint_tolerates(&p->tolerations[i], x)) {
            return true;
        }
    }
    return false;
}

bool taint_admits(const taint_node *n, const taint_pod *p)
{
    for (size_t i = 0; p && i < p->n_selector; i++) {
        const taint_label *want = &p->selector[i];
        bool found = false;
        for (size_t k = 0; n && k < n->n_labels && !found; k++) {
            found = !strcmp(n->labels[k].key, want->key) &&
                    !strcmp(n->labels[k].value, want->value);
        }
        if (!found) {
            return false;
        }
    }
    for (size_t i = 0; n && i < n->n_taints; i++) {
        const taint_entry *x = &n->taints[i];
        if (x->effect != TAINT_PREFER_NO_SCHEDULE && !tolerated(p, x)) {
            return false;
        }
    }
    return true;
}

uint32_t taint_prefer_count(const taint_node *n, const taint_pod *p)
{
    uint32_t k = 0;
    for (size_t i = 0; n && i < n->n_taints; i++) {
        k += n->taints[i].effect == TAINT_PREFER_NO_SCHEDULE && !tolerated(p, &n->taints[i]);
    }
    return k;
}

static bool same_label(const taint_label *a, const taint_label *b)
{
    return !strcmp(a->key, b->key) && !strcmp(a->value, b->value);
}

bool taint_pod_same(const taint_pod *a, const taint_pod *b)
{
    if (a == b) {
        return true;
    }
    size_t ns = a ? a->n_selector : 0, nt = a ? a->n_tolerations : 0;
    if (ns != (b ? b->n_selector : 0) || nt != (b ? b->n_tolerations : 0)) {
        return false;
    }
    for (size_t i = 0; i < ns; i++) {
        if (!same_label(&a->selector[i], &b->selector[i])) {
            return false;
        }
    }
    for (size_t i = 0; i < nt; i++) {
        const taint_toleration *x = &a->tolerations[i], *y = &b->tolerations[i];
        if (x->exists != y->exists || x->effect != y->effect || strcmp(x->key, y->key) ||
            strcmp(x->value, y->value)) {
            return false;
        }
    }
    return true;
}
