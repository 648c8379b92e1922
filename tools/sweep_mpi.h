/* tools/sweep_mpi.h - the few MPI calls a distributed sweep needs, behind one small interface.
 *
 * Built with MPI (Open MPI's mpicc found at build time: the Makefile defines SLICESIM_MPI and
 * links libmpi) a process started by mpirun joins MPI_COMM_WORLD; started any other way it stays
 * a single process and MPI is never initialised. Built without MPI, a process that finds itself
 * started by mpirun with more than one rank refuses to run (every rank would redo every point).
 * "Started by mpirun" is read from the launcher's environment (OMPI_COMM_WORLD_SIZE, or PMIX_RANK
 * / PMI_SIZE of other launchers).
 * Ownership: none (plain values); MPI's own state lives between init and finalize.
 */
#ifndef SIMPROJ_TOOLS_SWEEP_MPI_H
#define SIMPROJ_TOOLS_SWEEP_MPI_H

#include <stdbool.h>

typedef struct sweep_mpi {
    bool active; /* MPI_Init was called */
    int rank;    /* 0 .. size - 1; 0 when not active */
    int size;    /* ranks; 1 when not active */
} sweep_mpi;

/* Join MPI when started by mpirun. Returns 0; or -1 after printing why (mpirun with several
 * ranks but no MPI in this build). */
int sweep_mpi_init(int *argc, char ***argv, sweep_mpi *m);
/* Wait for every rank (no-op when not active). */
void sweep_mpi_barrier(const sweep_mpi *m);
/* The largest of every rank's v (v itself when not active). */
int sweep_mpi_max(const sweep_mpi *m, int v);
/* Leave MPI (no-op when not active). */
void sweep_mpi_finalize(sweep_mpi *m);

#endif
