/* tools/spill.h - the store a run's job table spills its ended pages to (model/cluster/job.h
 * job_spill_ops): an unnamed temporary file (tmpfile(3), removed by the system when it is closed
 * or the process ends), written once per page and read back by the writers after the run.
 *
 * Pages are appended in the order they are spilled; an index (per key: offset and length) says
 * where each is. The file lives in the page cache and on disk, not in the process's memory: a
 * 10 M-job run writes about 2 GB there (job records of 208 bytes plus their units).
 * Ownership: spill_create returns an object the caller owns (spill_destroy), which must outlive
 * the job table it serves (the table reads pages back until it is destroyed).
 */
#ifndef SIMPROJ_TOOLS_SPILL_H
#define SIMPROJ_TOOLS_SPILL_H

#include "model/cluster/job.h"

typedef struct spill_store spill_store;

/* A store over a fresh temporary file, or NULL when none can be made (the run then keeps every
 * job in memory, as before). Caller owns (spill_destroy). */
spill_store *spill_create(void);
/* Close and remove the file; NULL is a no-op. */
void spill_destroy(spill_store *s);
/* The operations to give job_table_set_spill with s as their context. Static. */
const job_spill_ops *spill_ops(void);

#endif
