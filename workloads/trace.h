/* workloads/trace.h - traced jobs, one record at a time, from the trace formats slicesim reads.
 *
 * Formats (../shared/traces/README.md describes the files):
 *   openb   Alibaba cluster-trace-gpu-v2023 pod list (FGD, ATC'23): name, cpu_milli, memory_mib,
 *           num_gpu, gpu_milli, gpu_spec, qos, creation_time, deletion_time (s from trace start).
 *           The multigpu variants have no time columns: they are read as arrivals only.
 *   philly  Microsoft Philly per-job (Pollux's philly.csv): timestamp (YYYY-MM-DD HH:MM:SS, the
 *           submission), duration (s), num_gpus, cluster (the virtual cluster -> queue).
 *   dlrm    Alibaba cluster-trace-gpu-v2025 inference instances: instance_sn, app_name (-> class
 *           key), cpu_request (vCPU), memory_request (GiB), gpu_request, creation_time,
 *           deletion_time (s; NaN/empty when outside the window: an instance that existed before
 *           the start is submitted at 0, one never deleted is open-ended).
 *   helios  SenseTime Helios (Venus) 10-minute series: time, submit_gpu_job, submit_gpu_num. Each
 *           bin's submit_gpu_job jobs arrive at uniform random instants of the bin and share its
 *           submit_gpu_num GPUs (floor(N/J) each, the first N mod J one more); the series has no
 *           durations, so they are drawn from the scenario's distribution.
 *   csv     any CSV with a header, its columns named by a trace_columns mapping.
 * Every format is a column mapping (trace_columns) over workloads/csvin.h: the built-in formats
 * are presets, so all share one row parser and one error shape:
 *   FILE:LINE:COL: error: COLUMN: PROBLEM; expected WHAT, got 'VALUE'
 * Times are seconds from the trace's origin (datetime columns: from 1970-01-01 UTC; the loader
 * re-bases them on the first submission).
 * Streaming: trace_next reads one line; the reader holds one line, nothing per job; a row can be
 * read again by its offset (trace_read_at).
 * Ownership: the reader borrows the FILE and the trace_src; the strings of a record are
 * borrowed until the next trace_next or trace_close.
 */
#ifndef SIMPROJ_WORKLOADS_TRACE_H
#define SIMPROJ_WORKLOADS_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/diag.h"
#include "sim/rng.h"
#include "workloads/synth.h"

/* Stream names of the helios expansion (renaming one changes results). */
#define TRACE_STREAM_HELIOS_ARRIVALS "trace.helios.arrivals"
#define TRACE_STREAM_HELIOS_DURATIONS "trace.helios.durations"

typedef enum trace_format {
    TRACE_OPENB,
    TRACE_PHILLY,
    TRACE_HELIOS,
    TRACE_DLRM,
    TRACE_CSV,
    TRACE_N_FORMATS
} trace_format;

/* "openb", "philly", "helios", "dlrm", "csv"; static storage. */
const char *trace_format_name(trace_format f);

/* How the submit column is written. */
typedef enum trace_time_format {
    TRACE_TIME_SECONDS,  /* a number of seconds */
    TRACE_TIME_DATETIME, /* YYYY-MM-DD HH:MM:SS (UTC) */
} trace_time_format;

/* Column names of a CSV trace; NULL = the trace has no such column. Names are borrowed. */
typedef struct trace_columns {
    const char *name;      /* job or pod id */
    const char *submit;    /* submission time */
    const char *duration;  /* run time, s */
    const char *end;       /* end time (same format as submit); duration = end - submit */
    const char *gpus;      /* GPUs requested (whole number; absent: 1) */
    const char *gpu_milli; /* fraction of each GPU, milli-GPU (1000 = whole) */
    const char *gpu_type;  /* GPU model the job ran on or asked for */
    const char *user;
    const char *queue;  /* queue or virtual cluster */
    const char *klass;  /* workload class, app or profile key */
    const char *cpu;    /* CPU request (cpu_unit_milli milli-cores per unit) */
    const char *memory; /* host memory request (mem_unit_bytes bytes per unit) */
    const char *qos;
    const char *gpu_spec; /* allowed GPU models, '|'-separated */
    trace_time_format time_format;
    double cpu_unit_milli; /* milli-cores per unit of the cpu column (1 or 1000) */
    double mem_unit_bytes; /* bytes per unit of the memory column (MiB, GiB...) */
} trace_columns;

/* Where a trace comes from and how to read it. */
typedef struct trace_src {
    trace_format format;
    const char *file;      /* display name (and path) of the trace; borrowed */
    trace_columns columns; /* TRACE_CSV: the mapping; other formats: filled by trace_preset */
    bool need_times;       /* the submit (and duration or end) columns are required */
    /* helios only */
    synth_dist duration_s; /* run time of each job (the series has none) */
    uint64_t seed;         /* master seed: arrival instants in the bins, durations */
} trace_src;

#define TRACE_OPEN_S (-1.0) /* trace_record.duration_s: no end in the trace (open-ended) */

/* One traced job as the file states it. */
typedef struct trace_record {
    double submit_s;    /* seconds; -1 when the trace has no submission column */
    double duration_s;  /* traced run time, s (>= 0); TRACE_OPEN_S when the trace gives none */
    uint32_t gpus;      /* GPUs asked for (0 = a CPU-only pod) */
    uint32_t gpu_milli; /* share of each GPU, milli-GPU, 1..1000 (1000 = whole) */
    uint32_t cpu_milli; /* 0 = not stated */
    uint64_t mem_bytes; /* host memory, 0 = not stated */
    const char *name, *gpu_type, *user, *queue, *klass, *qos, *gpu_spec; /* NULL when absent */
    int line; /* line of the file it came from (helios: of its bin); 0 when read again by
               * trace_read_at */
} trace_record;

typedef struct trace_reader trace_reader;

/* The column mapping of a built-in format (TRACE_CSV: all NULL). */
trace_columns trace_preset(trace_format f);

/* Open a reader over f (borrowed) for src (borrowed). The header is read and checked at once:
 * a mapped column that the header lacks is reported to d (the columns the format needs, or the
 * ones src->columns names) and gives SIM_EINPUT. Returns 0 and sets *out (caller owns,
 * trace_close). SIM_EIO on a read error. */
int trace_open(const trace_src *src, FILE *f, diag *d, trace_reader **out);
/* Next record: 1 when one was read, 0 at the end, SIM_EINPUT when a row is bad (reported; the
 * caller may go on to collect more errors), SIM_EIO on a read error. */
int trace_next(trace_reader *r, trace_record *out);
/* Free the reader; NULL is a no-op. */
void trace_close(trace_reader *r);
/* Report a problem (a bad-input error, FILE:LINE:COL: error: gpu_milli: MESSAGE) with the
 * gpu_milli cell of the row trace_next last returned; false (nothing reported) when the format
 * has no gpu_milli column. */
bool trace_error_gpu_milli(trace_reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Reading records again (workloads/traceload.h keeps 16 bytes a record, not the record): whether
 * the reader can (not helios, whose records are drawn from its bins; a file, not a pipe); where
 * the row trace_next last returned starts in the file and a hash of its bytes; and the record of
 * the row at byte off read again through the same row parser (csvin_read_at: 1, or SIM_EINPUT
 * for a bad row or one whose hash & mask is not hash & mask, reported at FILE:LINE:COL,
 * SIM_EIO). After trace_read_at, trace_next may not be called again. */
bool trace_seekable(const trace_reader *r);
uint64_t trace_row_offset(const trace_reader *r);
uint32_t trace_row_hash(const trace_reader *r);
int trace_read_at(trace_reader *r, uint64_t off, uint32_t hash, uint32_t mask, trace_record *out);

/* Report a problem with the row trace_next last returned as a whole (FILE:LINE:1: error:
 * MESSAGE). */
void trace_error_row(trace_reader *r, const char *msg);

/* Rows read so far (data lines, helios bins). */
uint64_t trace_rows(const trace_reader *r);

#endif
