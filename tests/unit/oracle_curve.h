/* tests/unit/oracle_curve.h - the allocation curve by a sweep over every job's events in time
 * order (the way model/cluster/fragstat.c computed it before it evaluated the state at the
 * curve's points only): ends, submissions and starts sorted by (time, kind, job), the state
 * after everything at a time, a point where arrived workload crosses a step and at the last
 * event, of jobs[0..n_jobs) (job j the j-th). The oracle of fragstat_acc's curve. Ownership: *out caller-owned (free()). */
#ifndef SIMPROJ_TESTS_UNIT_ORACLE_CURVE_H
#define SIMPROJ_TESTS_UNIT_ORACLE_CURVE_H

#include "model/cluster/fragstat.h"

size_t oracle_curve(const cluster *c, const job *const *jobs, size_t n_jobs, double step,
                    fragstat_point **out);

#endif
