/* experiments/build_trace.h - a scenario's traced workload, for the run builder
 * (experiments/build_run.h): the trace read into jobs (workloads/traceload.h) with its rules'
 * work factors and memory (resolved at load: scenario_resolved.trules, experiments/resolve.h),
 * the count of jobs it will give for the estimate, and the merge of the traced and synthetic
 * jobs.
 * Checks (each an input error at its field, exit 2): the trace's own errors at their rows as
 * the run reads them (workloads/trace.h); a file that cannot be opened or read
 * (workload.trace.file, the loader's message: it may have gone since the loader opened it).
 * Traced jobs that no node of the empty cluster can ever hold are dropped and counted
 * (built_run.n_unplaceable): under FIFO one of them would block every later job forever.
 * Units: seconds, bytes.
 */
#ifndef SIMPROJ_EXPERIMENTS_BUILD_TRACE_H
#define SIMPROJ_EXPERIMENTS_BUILD_TRACE_H

#include "experiments/build_run.h"
#include "model/cluster/cluster.h"
#include "model/cluster/job.h"

/* Read the scenario's trace into t (chronological), c the empty cluster. Returns 0 or SIM_EINPUT
 * (reported at its field; a file that cannot be opened or read, gone since the loader checked
 * it, too). */
int build_trace_load(built_run *b, const cluster *c, job_table *t);

/* Jobs the scenario's trace will give, for the estimate (experiments/estimate.h): its records
 * counted by one streaming pass (errors are left to build_trace_load), times the inflation of an
 * arrival-only replay. 0 when the file cannot be read. */
double build_trace_jobs_estimate(const built_run *b);

/* Merge the chronological tables a (synthetic) and b (traced) into out, in submission order
 * (ties: a first), dropping and counting (run->n_unplaceable) traced jobs the empty cluster c can
 * never hold. */
void build_trace_merge(built_run *run, const cluster *c, const job_table *a, const job_table *b,
                       job_table *out);

#endif
