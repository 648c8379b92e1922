/* tests/fuzz/fuzz_trace.c - libFuzzer target: arbitrary bytes read as a trace in every format
 * (openb, philly, helios, dlrm, and csv with a fixed column mapping), timed and arrival-only,
 * through workloads/traceload.h into a job table, and as an openb node list
 * (workloads/tracenodes.h). The first byte picks the format; the rest is the file. A crash, a
 * sanitizer report, a leak or a hang is a bug. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "model/cluster/job.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "workloads/trace.h"
#include "workloads/traceload.h"
#include "workloads/tracenodes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) {
        return 0;
    }
    unsigned pick = data[0];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    arena *a = arena_create();
    diag *d = diag_create();
    FILE *f = fmemopen((void *)text, len ? len : 1, "r");
    if (!f) {
        diag_destroy(d);
        arena_destroy(a);
        return 0;
    }
    if (len == 0) {
        fgetc(f); /* fmemopen needs a size >= 1: read the one byte so the file reads as empty */
    }
    if (pick % 7 == 6) {
        tracenodes tn;
        tracenodes_read(f, "fuzz.csv", a, d, &tn);
    } else {
        trace_format fmt = (trace_format)(pick % 7 % TRACE_N_FORMATS);
        trace_src src = {.format = fmt,
                         .file = "fuzz.csv",
                         .need_times = (pick & 8) == 0,
                         .duration_s = {SYNTH_EXPONENTIAL, 3600, 0},
                         .seed = pick};
        src.columns = trace_preset(fmt);
        if (fmt == TRACE_CSV) {
            src.columns = (trace_columns){.name = "name",
                                          .submit = "t",
                                          .duration = "d",
                                          .gpus = "g",
                                          .queue = "q",
                                          .user = "u",
                                          .gpu_milli = "m",
                                          .cpu_unit_milli = 1000,
                                          .mem_unit_bytes = 1048576.0,
                                          .time_format = (pick & 16) ? TRACE_TIME_DATETIME
                                                                     : TRACE_TIME_SECONDS};
        }
        traceload_rule rule = {.gpus_min = 2, .name = "a*", .class_name = "r", .work_factor = 0.5};
        traceload_opts o = {.arrival_only = fmt == TRACE_OPENB && (pick & 8),
                            .start_s = 10,
                            .length_s = (pick & 32) ? 1e6 : 0,
                            .resource = "nvidia.com/gpu",
                            .default_class = "fuzz",
                            .max_per_worker = 8,
                            .fallback_factor = 1.5,
                            .n_rules = 1,
                            .rules = &rule,
                            .shuffle = true,
                            .inflate = (pick & 64) ? 1.3 : 0.5,
                            .capacity_milli = 16000,
                            .interval_s = 1,
                            .seed = pick};
        trace_reader *r = NULL;
        if (trace_open(&src, f, d, &r) == 0) {
            job_table *t = job_table_create();
            traceload_stats st;
            traceload_stream *s = NULL;
            if (traceload_open(r, &o, a, d, &st, &s) == 0) {
                job_table_set_source(t, traceload_count(s), traceload_next, s);
                if (job_table_count(t) > 0) { /* every job, given one at a time */
                    job_table_get(t, (job_id)(job_table_count(t) - 1));
                }
            }
            job_table_destroy(t);
            traceload_destroy(s);
        }
        trace_close(r);
    }
    fclose(f);
    diag_destroy(d);
    arena_destroy(a);
    return 0;
}
