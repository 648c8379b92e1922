/* sim/engine_int.h - sim_ctx internals shared by engine.c and verify.c only. */
#ifndef SIMPROJ_SIM_ENGINE_INT_H
#define SIMPROJ_SIM_ENGINE_INT_H

#include "sim/engine.h"

typedef struct sim_component {
    const sim_component_ops *ops; /* borrowed */
    void *state;                  /* owned */
} sim_component;

struct sim_ctx {
    evq *q;
    sim_time now;
    sim_time last_fired; /* time of the last handler run; never decreases */
    sim_event_id current;
    bool stop;
    uint64_t verify_every, until_verify;
    uint64_t observe_every, until_observe;
    sim_observer_fn *observer;
    void *observer_user;
    sim_counters c;
    sim_component *comps;
    size_t n_comps, cap_comps;
};

#endif
