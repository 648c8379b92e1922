/* experiments/build_trace.h - a scenario's traced workload, for the run builder
 * (experiments/build_run.h): the trace read into jobs (workloads/traceload.h) with its rules'
 * work factors and memory (resolved at load: scenario_resolved.trules, experiments/resolve.h),
 * the count of jobs it will give for the estimate, and the merge of the traced and synthetic
 * jobs.
 * Checks (each an input error at its field, exit 2): the trace's own errors at their rows as
 * the run reads them (workloads/trace.h); a file that cannot be opened or read
 * (workload.trace.file, the loader's message: it may have gone since the loader opened it).
 * Traced jobs that no node of the empty cluster can ever hold are dropped and counted
 * (built_run.tstats.unplaceable): under FIFO one of them would block every later job forever.
 * Units: seconds, bytes.
 */
#ifndef SIMPROJ_EXPERIMENTS_BUILD_TRACE_H
#define SIMPROJ_EXPERIMENTS_BUILD_TRACE_H

#include "experiments/build_run.h"
#include "model/cluster/cluster.h"
#include "model/cluster/job.h"

/* Read the scenario's trace into b->tload (its counts into b->tstats), c the empty cluster:
 * every row is read and checked now, and kept as 16 bytes (workloads/traceload.h); the file
 * stays open (b->tfile, b->treader) for the rows read again as the run reaches them. Returns 0
 * or SIM_EINPUT (reported at its field; a file that cannot be opened or read, gone since the
 * loader checked it, too). */
int build_trace_load(built_run *b, const cluster *c);

/* A row could not be read again during the run (traceload_status: the file changed, reported
 * at the row, or a read error, reported here at workload.trace.file): the run is abandoned
 * (world_stop; the caller finds the error in b->d and writes nothing). Once. */
void build_trace_failed(built_run *b);

/* What the scenario's trace gives the estimate (experiments/estimate.h), from one streaming pass
 * over its records (errors are left to build_trace_load): the jobs (the records in the window,
 * times the inflation of an arrival-only replay), the records read and their distinct pod
 * shapes. All 0 when the file cannot be read. */
void build_trace_estimate(const built_run *b, est_trace *out);

/* The next n_synth + traced jobs of t come from b->synth (NULL: none) and b->tload (NULL:
 * none) merged in submission order (ties: the synthetic job first), each generated when the
 * run reaches it (job_table_set_source). */
void build_trace_source(built_run *b, job_table *t, size_t n_synth);

#endif
