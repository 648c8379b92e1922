/* workloads/trace.c - trace formats as column mappings over csvin (see trace.h). */
#include "workloads/trace.h"


#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "model/hw/milli.h"
#include "sim/err.h"
#include "sim/xalloc.h"
#include "workloads/csvin.h"

#define HELIOS_BIN_S 600.0 /* the Venus series' bins are 10 minutes */
/* Largest time or duration a trace may state, s (~95 years; the engine's clock spans ~292). */
#define MAX_SECONDS 3e9
#define MAX_GPUS 100000u

enum {
    C_NAME,
    C_SUBMIT,
    C_DURATION,
    C_END,
    C_GPUS,
    C_GPU_MILLI,
    C_GPU_TYPE,
    C_USER,
    C_QUEUE,
    C_CLASS,
    C_CPU,
    C_MEMORY,
    C_QOS,
    C_GPU_SPEC,
    C_COUNT
};

struct trace_reader {
    const trace_src *src;
    csvin *in;
    int col[C_COUNT]; /* header index of each mapped column, -1 when not mapped */
    uint64_t rows;
    /* helios: the bin being expanded */
    rng_stream *arrivals, *durations;
    double bin_s;
    uint64_t bin_jobs, bin_gpus, bin_done;
    int bin_line;
};

static const char *const format_names[TRACE_N_FORMATS] = {"openb", "philly", "helios", "dlrm",
                                                          "csv"};

const char *trace_format_name(trace_format f)
{
    return f < TRACE_N_FORMATS ? format_names[f] : "?";
}

trace_columns trace_preset(trace_format f)
{
    trace_columns c = {.cpu_unit_milli = 1, .mem_unit_bytes = 1};
    switch (f) {
    case TRACE_OPENB:
        c.name = "name";
        c.submit = "creation_time";
        c.end = "deletion_time";
        c.gpus = "num_gpu";
        c.gpu_milli = "gpu_milli";
        c.cpu = "cpu_milli";
        c.memory = "memory_mib";
        c.mem_unit_bytes = 1048576.0;
        c.qos = "qos";
        c.gpu_spec = "gpu_spec";
        break;
    case TRACE_PHILLY:
        c.submit = "timestamp";
        c.time_format = TRACE_TIME_DATETIME;
        c.duration = "duration";
        c.gpus = "num_gpus";
        c.queue = "cluster";
        break;
    case TRACE_DLRM:
        c.name = "instance_sn";
        c.klass = "app_name";
        c.submit = "creation_time";
        c.end = "deletion_time";
        c.gpus = "gpu_request";
        c.cpu = "cpu_request";
        c.cpu_unit_milli = 1000.0;
        c.memory = "memory_request";
        c.mem_unit_bytes = 1073741824.0;
        break;
    case TRACE_HELIOS:
        c.submit = "time";
        c.time_format = TRACE_TIME_DATETIME;
        c.gpus = "submit_gpu_num";
        c.klass = "submit_gpu_job"; /* jobs per bin; read by the helios expansion */
        break;
    default:
        break;
    }
    return c;
}

static const char *mapped(const trace_columns *c, int k)
{
    switch (k) {
    case C_NAME:
        return c->name;
    case C_SUBMIT:
        return c->submit;
    case C_DURATION:
        return c->duration;
    case C_END:
        return c->end;
    case C_GPUS:
        return c->gpus;
    case C_GPU_MILLI:
        return c->gpu_milli;
    case C_GPU_TYPE:
        return c->gpu_type;
    case C_USER:
        return c->user;
    case C_QUEUE:
        return c->queue;
    case C_CLASS:
        return c->klass;
    case C_CPU:
        return c->cpu;
    case C_MEMORY:
        return c->memory;
    case C_QOS:
        return c->qos;
    default:
        return c->gpu_spec;
    }
}

/* Columns a format must have; the others are read when present. openb's multigpu variants have
 * only name, cpu_milli, memory_mib, num_gpu, gpu_milli. */
static bool required(const trace_src *s, int k)
{
    if (s->format == TRACE_CSV) {
        return mapped(&s->columns, k) != NULL;
    }
    switch (k) {
    case C_SUBMIT:
        return s->need_times || s->format == TRACE_PHILLY || s->format == TRACE_HELIOS;
    case C_DURATION:
    case C_END:
        return s->need_times && mapped(&s->columns, k) != NULL && s->format != TRACE_HELIOS;
    case C_GPUS:
    case C_CLASS:
        return s->format == TRACE_HELIOS || k == C_GPUS;
    case C_GPU_MILLI:
    case C_CPU:
    case C_MEMORY:
        return s->format == TRACE_OPENB;
    default:
        return false;
    }
}

int trace_open(const trace_src *src, FILE *f, diag *d, trace_reader **out)
{
    *out = NULL;
    csvin *in = NULL;
    int rc = csvin_open(f, src->file, true, d, &in);
    if (rc) {
        return rc;
    }
    trace_reader *r = xcalloc(1, sizeof *r, "trace reader");
    r->src = src;
    r->in = in;
    bool ok = true;
    for (int k = 0; k < C_COUNT; k++) {
        const char *name = mapped(&src->columns, k);
        r->col[k] = name ? csvin_column(in, name) : -1;
        if (name && r->col[k] < 0 && required(src, k)) {
            char have[512] = "";
            for (size_t i = 0, used = 0; i < csvin_n_columns(in) && used < sizeof have; i++) {
                int n = snprintf(have + used, sizeof have - used, "%s%s", i ? ", " : "",
                                 csvin_column_name(in, i));
                used += n > 0 ? (size_t)n : 0;
            }
            diag_error(d, (src_loc){src->file, 1, 1}, name,
                       "missing column in the header; expected a %s trace with a column '%s', "
                       "got [%s]",
                       trace_format_name(src->format), name, have);
            ok = false;
        }
    }
    if (src->format == TRACE_CSV && !src->columns.submit && src->need_times) {
        diag_error(d, (src_loc){src->file, 1, 1}, "columns.submit",
                   "no submission column mapped; expected columns.submit for a timed csv "
                   "trace, got nothing");
        ok = false;
    }
    if (src->need_times && src->format != TRACE_HELIOS && r->col[C_DURATION] < 0 &&
        r->col[C_END] < 0) {
        diag_error(d, (src_loc){src->file, 1, 1}, "columns.duration",
                   "no run time in the trace; expected a duration or an end column, got "
                   "neither");
        ok = false;
    }
    if (!ok) {
        trace_close(r);
        return SIM_EINPUT;
    }
    if (src->format == TRACE_HELIOS) {
        rng_root root = rng_root_make(src->seed);
        r->arrivals = rng_stream_open(&root, TRACE_STREAM_HELIOS_ARRIVALS, 0);
        r->durations = rng_stream_open(&root, TRACE_STREAM_HELIOS_DURATIONS, 0);
    }
    *out = r;
    return 0;
}

void trace_close(trace_reader *r)
{
    if (!r) {
        return;
    }
    csvin_close(r->in);
    rng_stream_close(r->arrivals);
    rng_stream_close(r->durations);
    free(r);
}

uint64_t trace_rows(const trace_reader *r)
{
    return r->rows;
}

/* Text of mapped column k, or NULL when it is not mapped or the field is empty. */
static const char *text(trace_reader *r, int k)
{
    if (r->col[k] < 0 || csvin_is_missing(r->in, (size_t)r->col[k])) {
        return NULL;
    }
    return csvin_field(r->in, (size_t)r->col[k]);
}

static bool read_time(trace_reader *r, int k, double *out)
{
    size_t i = (size_t)r->col[k];
    if (r->src->columns.time_format == TRACE_TIME_DATETIME) {
        return csvin_datetime(r->in, i, out);
    }
    return csvin_double(r->in, i, 0, MAX_SECONDS, out);
}

/* The fields every format shares; false when a field was bad (reported). */
static bool read_row(trace_reader *r, trace_record *rec)
{
    const trace_columns *c = &r->src->columns;
    bool ok = true;
    *rec = (trace_record){.submit_s = -1,
                          .duration_s = TRACE_OPEN_S,
                          .gpus = 1,
                          .gpu_milli = MILLI_PER_GPU,
                          .line = csvin_line(r->in)};
    if (r->col[C_SUBMIT] >= 0) {
        if (csvin_is_missing(r->in, (size_t)r->col[C_SUBMIT])) {
            /* an instance that existed before the trace started (dlrm): submitted at 0 */
            if (r->src->format != TRACE_DLRM) {
                csvin_error(r->in, (size_t)r->col[C_SUBMIT],
                            "missing value; expected a submission time, got '%s'",
                            csvin_field(r->in, (size_t)r->col[C_SUBMIT]));
                ok = false;
            } else {
                rec->submit_s = 0;
            }
        } else {
            ok = read_time(r, C_SUBMIT, &rec->submit_s) && ok;
        }
    }
    if (r->col[C_DURATION] >= 0 && !csvin_is_missing(r->in, (size_t)r->col[C_DURATION])) {
        ok =
            csvin_double(r->in, (size_t)r->col[C_DURATION], 0, MAX_SECONDS, &rec->duration_s) && ok;
    } else if (r->col[C_DURATION] >= 0 && r->src->need_times) {
        csvin_error(r->in, (size_t)r->col[C_DURATION],
                    "missing value; expected a run time in seconds, got '%s'",
                    csvin_field(r->in, (size_t)r->col[C_DURATION]));
        ok = false;
    } else if (r->col[C_END] >= 0 && !csvin_is_missing(r->in, (size_t)r->col[C_END])) {
        double end = 0;
        if (read_time(r, C_END, &end) && rec->submit_s >= 0) {
            if (end < rec->submit_s) {
                csvin_error(r->in, (size_t)r->col[C_END],
                            "ends before it is submitted; expected a time >= %.17g, got '%s'",
                            rec->submit_s, csvin_field(r->in, (size_t)r->col[C_END]));
                ok = false;
            } else {
                rec->duration_s = end - rec->submit_s;
            }
        } else {
            ok = false;
        }
    }
    uint64_t v = 0;
    if (r->col[C_GPUS] >= 0) {
        if (csvin_u64(r->in, (size_t)r->col[C_GPUS], 0, MAX_GPUS, &v)) {
            rec->gpus = (uint32_t)v;
        } else {
            ok = false;
        }
    }
    if (r->col[C_GPU_MILLI] >= 0) {
        uint64_t lo = rec->gpus > 0 ? 1 : 0;
        if (csvin_u64(r->in, (size_t)r->col[C_GPU_MILLI], lo, MILLI_PER_GPU, &v)) {
            rec->gpu_milli = v > 0 ? (uint32_t)v : MILLI_PER_GPU;
        } else {
            ok = false;
        }
    }
    double x = 0;
    if (r->col[C_CPU] >= 0 && !csvin_is_missing(r->in, (size_t)r->col[C_CPU])) {
        if (csvin_double(r->in, (size_t)r->col[C_CPU], 0, 4e9 / c->cpu_unit_milli, &x)) {
            rec->cpu_milli = (uint32_t)llround(x * c->cpu_unit_milli);
        } else {
            ok = false;
        }
    }
    if (r->col[C_MEMORY] >= 0 && !csvin_is_missing(r->in, (size_t)r->col[C_MEMORY])) {
        if (csvin_double(r->in, (size_t)r->col[C_MEMORY], 0, 1.8e19 / c->mem_unit_bytes, &x)) {
            rec->mem_bytes = (uint64_t)llround(x * c->mem_unit_bytes);
        } else {
            ok = false;
        }
    }
    rec->name = text(r, C_NAME);
    rec->gpu_type = text(r, C_GPU_TYPE);
    rec->user = text(r, C_USER);
    rec->queue = text(r, C_QUEUE);
    rec->klass = text(r, C_CLASS);
    rec->qos = text(r, C_QOS);
    rec->gpu_spec = text(r, C_GPU_SPEC);
    return ok;
}

/* helios: the next job of the current bin, reading bins until one has jobs. */
static int helios_next(trace_reader *r, trace_record *out)
{
    while (r->bin_done >= r->bin_jobs) {
        int rc = csvin_next(r->in);
        if (rc <= 0) {
            return rc;
        }
        r->rows++;
        double t = 0;
        uint64_t jobs = 0, gpus = 0;
        bool ok = read_time(r, C_SUBMIT, &t);
        ok = csvin_u64(r->in, (size_t)r->col[C_CLASS], 0, 1000000, &jobs) && ok;
        ok = csvin_u64(r->in, (size_t)r->col[C_GPUS], 0, 100000000, &gpus) && ok;
        if (ok && gpus < jobs) {
            csvin_error(r->in, (size_t)r->col[C_GPUS],
                        "fewer GPUs than GPU jobs in the bin; expected at least %llu, got '%s'",
                        (unsigned long long)jobs, csvin_field(r->in, (size_t)r->col[C_GPUS]));
            ok = false;
        }
        if (!ok) {
            return SIM_EINPUT;
        }
        r->bin_s = t;
        r->bin_jobs = jobs;
        r->bin_gpus = gpus;
        r->bin_done = 0;
        r->bin_line = csvin_line(r->in);
    }
    uint64_t k = r->bin_done++;
    uint64_t each = r->bin_gpus / r->bin_jobs, extra = r->bin_gpus % r->bin_jobs;
    double dur = synth_draw(&r->src->duration_s, r->durations);
    *out = (trace_record){
        .submit_s = r->bin_s + HELIOS_BIN_S * rng_uniform01(r->arrivals),
        .duration_s = dur > 1e-9 ? dur : 1e-9,
        .gpus = (uint32_t)(each + (k < extra)),
        .gpu_milli = MILLI_PER_GPU,
        .line = r->bin_line,
    };
    return 1;
}

int trace_next(trace_reader *r, trace_record *out)
{
    if (r->src->format == TRACE_HELIOS) {
        return helios_next(r, out);
    }
    int rc = csvin_next(r->in);
    if (rc <= 0) {
        return rc;
    }
    r->rows++;
    return read_row(r, out) ? 1 : SIM_EINPUT;
}

bool trace_seekable(const trace_reader *r)
{
    return r->src->format != TRACE_HELIOS && csvin_seekable(r->in);
}

uint64_t trace_row_offset(const trace_reader *r)
{
    return csvin_row_offset(r->in);
}

uint32_t trace_row_hash(const trace_reader *r)
{
    return csvin_row_hash(r->in);
}

int trace_read_at(trace_reader *r, uint64_t off, uint32_t hash, uint32_t mask, trace_record *out)
{
    SIM_ASSERT(r->src->format != TRACE_HELIOS);
    int rc = csvin_read_at(r->in, off, hash, mask);
    if (rc <= 0) {
        return rc;
    }
    return read_row(r, out) ? 1 : SIM_EINPUT;
}

void trace_error_row(trace_reader *r, const char *msg)
{
    csvin_error_row(r->in, msg);
}

bool trace_error_gpu_milli(trace_reader *r, const char *fmt, ...)
{
    if (r->col[C_GPU_MILLI] < 0) {
        return false;
    }
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    csvin_error(r->in, (size_t)r->col[C_GPU_MILLI], "%s", msg);
    return true;
}
