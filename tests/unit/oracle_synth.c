/* tests/unit/oracle_synth.c - the generator before streaming (see oracle_synth.h). */
#include "tests/unit/oracle_synth.h"

#include <stdlib.h>

#include "sim/xalloc.h"

typedef struct pending_job {
    job_spec spec;
    size_t cls, seq;
} pending_job;

static int by_submit(const void *pa, const void *pb)
{
    const pending_job *a = pa, *b = pb;
    if (a->spec.submit != b->spec.submit) {
        return a->spec.submit < b->spec.submit ? -1 : 1;
    }
    if (a->cls != b->cls) {
        return a->cls < b->cls ? -1 : 1;
    }
    return a->seq < b->seq ? -1 : (a->seq > b->seq);
}

size_t oracle_synth_generate(const synth_class *classes, size_t n, const rng_root *root,
                      sim_time horizon_ns, job_table *t)
{
    pending_job *all = NULL;
    size_t n_all = 0, cap = 0;
    for (size_t c = 0; c < n; c++) {
        const synth_class *k = &classes[c];
        SIM_ASSERT(k->count > 0 || horizon_ns < SIM_TIME_MAX);
        uint64_t idx = rng_hash64(k->name);
        rng_stream *arr = rng_stream_open(root, SYNTH_STREAM_ARRIVALS, idx);
        rng_stream *dur = rng_stream_open(root, SYNTH_STREAM_DURATIONS, idx);
        double at_s = k->start_s;
        for (size_t seq = 0; k->count == 0 || seq < k->count; seq++) {
            at_s += synth_draw(&k->interarrival_s, arr);
            /* A rate below ~1e-10/s draws an arrival past sim_time's range (+-292 years), so past
             * any horizon: stop before converting it (the conversion asserts). */
            if (!sim_time_s_in_range(at_s)) {
                break;
            }
            sim_time at = sim_time_from_s(at_s);
            if (at > horizon_ns) {
                break;
            }
            double work_s = synth_draw(&k->duration_s, dur);
            if (work_s < 1e-9) {
                work_s = 1e-9;
            }
            if (n_all == cap) {
                cap = cap ? 2 * cap : 256;
                all = xrealloc(all, cap * sizeof *all, "synthetic jobs");
            }
            all[n_all++] = (pending_job){
                .spec = {.class_name = k->name,
                         .req = k->req,
                         .submit = at,
                         .work_s = work_s,
                         .mem_bytes = k->mem_bytes,
                         .profile = k->profile,
                         .pod = {.priority = k->priority,
                                 .gpu_spec = k->gpu_spec,
                                 .cpu_milli = k->cpu_milli,
                                 .host_mem_bytes = k->host_mem_bytes,
                                 .place = k->place,
                                 .node_pin = seq < k->n_node_pin ? k->node_pin[seq] : 0}},
                .cls = c,
                .seq = seq,
            };
        }
        rng_stream_close(arr);
        rng_stream_close(dur);
    }
    if (n_all > 1) {
        qsort(all, n_all, sizeof *all, by_submit);
    }
    for (size_t i = 0; i < n_all; i++) {
        job_table_add(t, &all[i].spec);
    }
    free(all);
    return n_all;
}
