/* tests/unit/oracle_synth.h - the synthetic generator as it was before arrivals were streamed:
 * every class's jobs drawn whole (arrivals, then durations, from the class's own streams), then
 * sorted by (submit time, class index, index in class) into the table. The oracle that
 * workloads/synth.h's stream (drawing each class's next job only when it is due) is held to.
 * Ownership: classes and root borrowed for the call; t receives the jobs (strings borrowed). */
#ifndef SIMPROJ_TESTS_UNIT_ORACLE_SYNTH_H
#define SIMPROJ_TESTS_UNIT_ORACLE_SYNTH_H

#include "workloads/synth.h"

/* Append the jobs of n classes to t, chronological; returns how many. */
size_t oracle_synth_generate(const synth_class *classes, size_t n, const rng_root *root,
                             sim_time horizon_ns, job_table *t);

#endif
