/* tools/sweep_mpi.c - MPI for distributed sweeps (see sweep_mpi.h). */
#include "tools/sweep_mpi.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef SLICESIM_MPI
#include <mpi.h>
#endif

#ifndef SLICESIM_MPI
/* Ranks the launcher says this job has (1 when not started by a launcher, or unreadable). */
static long launcher_size(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) {
            char *end;
            long n = strtol(v, &end, 10);
            return *end == '\0' && n >= 1 ? n : 1;
        }
    }
    return getenv("PMIX_RANK") ? 2 : 1; /* a PMIx launch without a size: assume several */
}
#endif

static bool launched(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

int sweep_mpi_init(int *argc, char ***argv, sweep_mpi *m)
{
    *m = (sweep_mpi){.active = false, .rank = 0, .size = 1};
#ifdef SLICESIM_MPI
    if (launched()) {
        MPI_Init(argc, argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
        MPI_Comm_size(MPI_COMM_WORLD, &m->size);
        m->active = true;
    }
    return 0;
#else
    (void)argc;
    (void)argv;
    if (launched() && launcher_size() > 1) {
        fprintf(stderr,
                "slicesim sweep: error: started by mpirun with %ld ranks, but this "
                "slicesim was built without MPI (no mpicc at build time; install "
                "libopenmpi-dev and rebuild); every rank would run every point\n",
                launcher_size());
        return -1;
    }
    return 0;
#endif
}

void sweep_mpi_barrier(const sweep_mpi *m)
{
#ifdef SLICESIM_MPI
    if (m->active) {
        MPI_Barrier(MPI_COMM_WORLD);
    }
#else
    (void)m;
#endif
}

int sweep_mpi_max(const sweep_mpi *m, int v)
{
#ifdef SLICESIM_MPI
    if (m->active) {
        int out = v;
        MPI_Allreduce(&v, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        return out;
    }
#else
    (void)m;
#endif
    return v;
}

void sweep_mpi_finalize(sweep_mpi *m)
{
#ifdef SLICESIM_MPI
    if (m->active) {
        MPI_Finalize();
        m->active = false;
    }
#else
    (void)m;
#endif
}
