/* tests/unit/test_spill.c - the job table's spilled pages (model/cluster/job.h job_table_spill)
 * and the run's store over a temporary file (tools/spill.h): what is read back is what was
 * written, pages still live stay, a failing store keeps everything, and a world that spills
 * runs every job as one that does not. */
#include <criterion/criterion.h>
#include <string.h>

#include "model/cluster/job.h"
#include "model/cluster/world.h"
#include "sim/err.h"
#include "sim/xalloc.h"
#include "tests/unit/fixtures.h"
#include "tests/unit/oracle_synth.h"
#include "tests/unit/worldfx.h"
#include "tools/out.h"
#include "tools/spill.h"
#include "workloads/synth.h"

/* A store that refuses every page. */
static int put_fail(void *ctx, uint32_t key, const void *buf, size_t n)
{
    (void)ctx, (void)key, (void)buf, (void)n;
    return SIM_EIO;
}

static int get_fail(void *ctx, uint32_t key, void *buf, size_t n)
{
    (void)ctx, (void)key, (void)buf, (void)n;
    return SIM_EIO;
}

static const job_spill_ops failing = {put_fail, get_fail};

/* n jobs spilling to ops/ctx (ops NULL: none); job k asks for 1 + k % 3 units, and every job but
 * those of the last `live` ids ends: failed with OOM (k % 10 == 4) or done, on devices k, k+1,
 * k+2. */
static job_table *table_of(size_t n, size_t live, const job_spill_ops *ops, void *ctx)
{
    job_table *t = job_table_create();
    if (ops) {
        job_table_set_spill(t, ops, ctx);
    }
    for (size_t k = 0; k < n; k++) {
        job_spec s = {.class_name = "c",
                      .req = {"nvidia.com/gpu", (uint32_t)(1 + k % 3), 1},
                      .submit = (sim_time)k,
                      .work_s = 1.0 + (double)k,
                      .mem_bytes = k};
        job_table_add(t, &s);
    }
    for (size_t k = 0; k < n; k++) {
        job_id id = (job_id)k;
        dev_id u[3] = {(dev_id)k, (dev_id)k + 1, (dev_id)k + 2};
        job_submit(t, id, (sim_time)k);
        if (k >= n - live) {
            continue;
        }
        if (k % 10 == 4) {
            job_fail_oom(t, id, (sim_time)k + 1, u, (uint32_t)(1 + k % 3));
        } else {
            job_start(t, id, (sim_time)k + 2, u, (uint32_t)(1 + k % 3));
            job_finish(t, id, (sim_time)(3 * k + 7));
        }
    }
    return t;
}

static void expect_records(const job_table *t, size_t n, size_t live)
{
    for (size_t k = 0; k < n; k++) {
        const job *j = job_table_get(t, (job_id)k);
        cr_assert_eq(j->id, k);
        cr_assert_eq(j->spec.req.per_worker, 1 + k % 3);
        cr_assert_eq(j->spec.mem_bytes, k);
        cr_assert_float_eq(j->spec.work_s, 1.0 + (double)k, 0);
        if (k >= n - live) {
            cr_assert_eq(j->state, JOB_QUEUED);
            cr_assert_eq(j->n_units, 0);
            continue;
        }
        cr_assert_eq(j->state, k % 10 == 4 ? JOB_FAILED_OOM : JOB_DONE, "job %zu", k);
        cr_assert_eq(j->end, k % 10 == 4 ? (sim_time)k + 1 : (sim_time)(3 * k + 7));
        cr_assert_eq(j->n_units, 1 + k % 3);
        for (uint32_t u = 0; u < j->n_units; u++) {
            cr_assert_eq(j->units[u], k + u, "job %zu unit %u", k, u);
        }
    }
}

Test(spill, ended_pages_leave_and_read_back_as_written)
{
    size_t n = 3 * JOB_PAGE + 100, live = JOB_PAGE / 2; /* the last page and a half live */
    spill_store *s = spill_create();
    cr_assert_not_null(s);
    job_table *t = table_of(n, live, spill_ops(), s);
    job_table_spill(t);
    /* pages 0 and 1 ended whole; page 2 holds 412 live jobs; page 3 is not full */
    cr_assert_eq(job_table_n_spilled(t), 2);
    job_table_spill(t); /* nothing new ended: nothing more */
    cr_assert_eq(job_table_n_spilled(t), 2);
    expect_records(t, n, live);
    expect_records(t, n, live); /* a second pass reads the pages again */
    /* two records of different spilled pages held at once (neighbours across a page edge) */
    const job *a = job_table_get(t, JOB_PAGE - 1), *b = job_table_get(t, JOB_PAGE);
    cr_assert_eq(a->id + 1, b->id);
    cr_assert_eq(a->units[0], JOB_PAGE - 1);
    cr_assert_eq(b->units[0], JOB_PAGE);
    job_table_destroy(t);
    spill_destroy(s);
}

/* A full page down to its last JOB_PAGE / 8 live jobs goes out with them kept as records of
 * their own, which still change (start, end); once they have all ended the page goes out again
 * with their final records. */
Test(spill, a_page_down_to_a_few_live_jobs_goes_out_and_keeps_them)
{
    size_t n = JOB_PAGE + 10, live = JOB_PAGE / 8 + 10; /* page 0: 128 live */
    spill_store *s = spill_create();
    job_table *t = table_of(n, live, spill_ops(), s);
    job_table_spill(t);
    cr_assert_eq(job_table_n_spilled(t), 0); /* not whole: it went out with its orphans */
    expect_records(t, n, live);
    for (size_t k = n - live; k < JOB_PAGE; k++) { /* the orphans run and end */
        dev_id u[3] = {(dev_id)k, (dev_id)k + 1, (dev_id)k + 2};
        if (k % 10 == 4) {
            job_fail_oom(t, (job_id)k, (sim_time)k + 1, u, (uint32_t)(1 + k % 3));
            continue;
        }
        job_start(t, (job_id)k, (sim_time)k + 2, u, (uint32_t)(1 + k % 3));
        const job *j = job_table_get(t, (job_id)k);
        cr_assert_eq(j->state, JOB_RUNNING);
        cr_assert_eq(j->units[0], k);
        job_finish(t, (job_id)k, (sim_time)(3 * k + 7));
    }
    job_table_spill(t);
    cr_assert_eq(job_table_n_spilled(t), 1); /* written again, whole */
    expect_records(t, JOB_PAGE, 0);
    job_table_destroy(t);
    spill_destroy(s);
}

/* A job of one unit keeps it in its record (job.unit1, no allocation): running when its page
 * goes out, it moves to a record of its own with its unit, reads it there, and ends with it in
 * the page written again; a job of three units keeps its own array through the same moves. */
Test(spill, a_running_job_keeps_its_unit_in_its_record_through_the_moves)
{
    size_t n = JOB_PAGE + 10, live = JOB_PAGE / 8 + 10;
    spill_store *s = spill_create();
    job_table *t = table_of(n, live, spill_ops(), s);
    job_id one = (job_id)(n - live);
    one += (3 - one % 3) % 3; /* 1 + k % 3 units: 1, then 3 two ids on */
    job_id three = one + 2;
    dev_id u[3] = {7, 8, 9};
    job_start(t, one, (sim_time)one + 2, u, 1);
    job_start(t, three, (sim_time)three + 2, u, 3);
    const job *j = job_table_get(t, one);
    cr_assert(j->units == &j->unit1 && j->unit1 == 7);
    job_table_spill(t); /* page 0 goes out: both move to records of their own */
    j = job_table_get(t, one);
    cr_assert(j->units == &j->unit1 && j->units[0] == 7 && j->n_units == 1);
    j = job_table_get(t, three);
    cr_assert(j->units != &j->unit1 && j->n_units == 3);
    cr_assert(j->units[0] == 7 && j->units[1] == 8 && j->units[2] == 9);
    for (size_t k = n - live; k < JOB_PAGE; k++) {
        if (k != one && k != three) {
            job_fail_oom(t, (job_id)k, (sim_time)k + 1, u, (uint32_t)(1 + k % 3));
        }
    }
    job_finish(t, one, (sim_time)one + 5);
    job_finish(t, three, (sim_time)three + 5);
    job_table_spill(t); /* written again, whole, read back below */
    cr_assert_eq(job_table_n_spilled(t), 1);
    j = job_table_get(t, one);
    cr_assert(j->state == JOB_DONE && j->n_units == 1 && j->units[0] == 7);
    j = job_table_get(t, three);
    cr_assert(j->state == JOB_DONE && j->n_units == 3 && j->units[2] == 9);
    job_table_destroy(t);
    spill_destroy(s);
}

Test(spill, without_a_store_or_with_a_failing_one_every_page_stays)
{
    size_t n = 2 * JOB_PAGE;
    for (int v = 0; v < 2; v++) {
        job_table *t = table_of(n, 0, v ? &failing : NULL, NULL);
        job_table_spill(t);
        cr_assert_eq(job_table_n_spilled(t), 0);
        expect_records(t, n, 0);
        job_table_destroy(t);
    }
}

/* 6000 one-GPU jobs on 4 GPUs, one a second, each 3.5 s long or more (a queue builds), with and
 * without stores for jobs and samples: every start, end and sample agrees, and the spilling world
 * freed pages as it ran. */
/* Units of resource r held at sample i of w. */
static uint32_t res_used(const world *w, size_t i, res_id r)
{
    size_t m;
    const uint32_t *ru;
    world_sample_span(w, i, &m, &ru);
    return ru[r];
}

Test(spill, a_world_that_spills_runs_every_job_alike)
{
    gpu_type g = test_gpu();
    cluster_gpu_cfg gpus[4];
    for (int i = 0; i < 4; i++) {
        gpus[i] = (cluster_gpu_cfg){.type = &g};
    }
    world *w[2] = {NULL, NULL};
    spill_store *s = spill_create(), *ss = spill_create();
    cr_assert_not_null(s);
    cr_assert_not_null(ss);
    fx_node fx[2];
    size_t n = 6000;
    for (int v = 0; v < 2; v++) {
        fx_node_init(&fx[v], "n0", gpus, 4, "fifo", SIM_TIME_MAX);
        fx[v].wc.verify_every = 97; /* the invariants read every job, spilled ones too */
        job_table *t = job_table_create();
        for (size_t k = 0; k < n; k++) {
            fx_add(t, (double)k, "nvidia.com/gpu", 1, 1, 3.5 + (double)(k % 7) * 0.25);
        }
        if (v == 1) {
            job_table_set_spill(t, spill_ops(), s);
        }
        w[v] = fx_world(&fx[v].wc, t);
        if (v == 1) {
            world_set_sample_spill(w[v], spill_ops(), ss);
        }
        world_run(w[v]);
    }
    cr_assert_eq(job_table_n_spilled(world_jobs(w[0])), 0);
    cr_assert_geq(job_table_n_spilled(world_jobs(w[1])), 2);
    for (size_t k = 0; k < n; k++) {
        cr_assert_float_eq(fx_start_s(w[0], (job_id)k), fx_start_s(w[1], (job_id)k), 0);
        cr_assert_float_eq(fx_end_s(w[0], (job_id)k), fx_end_s(w[1], (job_id)k), 0);
        const job *a = job_table_get(world_jobs(w[0]), (job_id)k);
        const job *b = job_table_get(world_jobs(w[1]), (job_id)k);
        cr_assert_eq(a->state, JOB_DONE);
        cr_assert_eq(b->state, JOB_DONE);
        cr_assert_eq(a->units[0], b->units[0]);
    }
    cr_assert_eq(world_get_totals(w[1]).n_done, n);
    /* a sample per distinct event time, more than two blocks of 4096: the same, read back */
    size_t ns = world_n_samples(w[0]);
    cr_assert_eq(world_n_samples(w[1]), ns);
    cr_assert_gt(ns, 2 * 4096);
    for (size_t i = 0; i < ns; i++) {
        const world_sample *a = world_sample_get(w[0], i), *b = world_sample_get(w[1], i);
        cr_assert_eq(a->t, b->t, "sample %zu", i);
        cr_assert_eq(a->queued, b->queued);
        cr_assert_eq(a->running, b->running);
        cr_assert_eq(a->units_used, b->units_used);
        cr_assert_eq(res_used(w[0], i, 0), res_used(w[1], i, 0));
    }
    /* the same samples a block at a time (world_sample_span), from the start and from inside a
     * block read back */
    const size_t from[] = {0, 4096 + 17};
    res_id n_res = cluster_n_resources(world_cluster(w[1]));
    cr_assert_geq(n_res, 1);
    for (size_t f = 0; f < 2; f++) {
        size_t i = from[f], m, spans = 0;
        while (i < ns) {
            const uint32_t *ru;
            const world_sample *sp = world_sample_span(w[1], i, &m, &ru);
            cr_assert_geq(m, 1);
            cr_assert_eq((i + m) % 4096 == 0 || i + m == ns, true, "a span ends with its block");
            for (size_t k = 0; k < m; k++) {
                const world_sample *a = world_sample_get(w[0], i + k);
                cr_assert_eq(sp[k].t, a->t, "sample %zu", i + k);
                cr_assert_eq(sp[k].queued, a->queued);
                cr_assert_eq(sp[k].units_used, a->units_used);
                for (res_id r = 0; r < n_res; r++) {
                    cr_assert_eq(ru[k * n_res + r], res_used(w[0], i + k, r));
                }
            }
            i += m;
            spans++;
        }
        cr_assert_geq(spans, 2);
    }
    world_destroy(w[0]);
    world_destroy(w[1]);
    spill_destroy(s);
    spill_destroy(ss);
}

/* A source that counts how many jobs it was asked for. */
typedef struct counting {
    synth_stream *s;
    size_t asked;
} counting;

static bool counted_next(void *ctx, job_spec *out)
{
    counting *c = ctx;
    c->asked++;
    return synth_stream_next(c->s, out);
}

/* Three classes (two fixed-interval, so ties at equal times occur) into one table generated up
 * front by the sorted generator (the oracle) and one fed by the stream: the same jobs in the same order, and the stream's table
 * generates a job only when a lookup reaches it. */
Test(spill, a_synthetic_source_gives_the_jobs_of_the_sorted_generator_when_asked)
{
    synth_class cls[3] = {
        {.name = "a", .req = {"nvidia.com/gpu", 1, 1}, .interarrival_s = {SYNTH_FIXED, 60, 0},
         .duration_s = {SYNTH_LOGNORMAL, 600, 0.5}},
        {.name = "b", .req = {"nvidia.com/gpu", 2, 1}, .interarrival_s = {SYNTH_FIXED, 90, 0},
         .duration_s = {SYNTH_EXPONENTIAL, 100, 0}, .count = 300},
        {.name = "c", .req = {"nvidia.com/gpu", 1, 4}, .interarrival_s = {SYNTH_EXPONENTIAL, 45, 0},
         .duration_s = {SYNTH_EXPONENTIAL, 1000, 0}, .start_s = 3600},
    };
    rng_root root = rng_root_make(11);
    sim_time horizon = sim_time_from_s(86400);
    job_table *up = job_table_create(), *lazy = job_table_create();
    size_t n = oracle_synth_generate(cls, 3, &root, horizon, up);
    size_t n_stream;
    counting c = {.s = synth_stream_create(cls, 3, &root, horizon, &n_stream)};
    cr_assert_eq(n_stream, n);
    cr_assert_gt(n, 2000);
    job_table_set_source(lazy, n, counted_next, &c);
    cr_assert_eq(job_table_count(lazy), n);
    cr_assert_eq(c.asked, 0);
    const job *j = job_table_get(lazy, 9);
    cr_assert_eq(c.asked, 10); /* ids 0..9, nothing beyond */
    cr_assert_eq(j->id, 9);
    size_t ties = 0;
    for (job_id i = 0; i < n; i++) {
        const job *x = job_table_get(up, i), *y = job_table_get(lazy, i);
        cr_assert_str_eq(x->spec.class_name, y->spec.class_name, "job %u", (unsigned)i);
        cr_assert_eq(x->spec.submit, y->spec.submit);
        cr_assert_float_eq(x->spec.work_s, y->spec.work_s, 0);
        cr_assert_eq(x->spec.req.per_worker, y->spec.req.per_worker);
        ties += i > 0 && job_table_get(up, i - 1)->spec.submit == x->spec.submit;
    }
    cr_assert_gt(ties, 0); /* a and b meet every 180 s: the class listed first goes first */
    cr_assert_eq(c.asked, n);
    job_spec none;
    cr_assert(!synth_stream_next(c.s, &none));
    job_table_destroy(up);
    job_table_destroy(lazy);
    synth_stream_destroy(c.s);
}

/* timeseries.csv's rows kept while run.json's means read the samples (out_grid) are the rows
 * the writer finds by reading the samples again: a world whose samples spill (blocks read back)
 * with a horizon past its last event, at intervals finer and coarser than its events, one that
 * does not divide the horizon and one past it. */
Test(spill, timeseries_rows_kept_by_the_means_pass_are_the_rows_read_again)
{
    gpu_type g = test_gpu();
    cluster_gpu_cfg gpus[4];
    for (int i = 0; i < 4; i++) {
        gpus[i] = (cluster_gpu_cfg){.type = &g};
    }
    spill_store *s = spill_create(), *ss = spill_create();
    cr_assert_not_null(s);
    cr_assert_not_null(ss);
    fx_node fx;
    fx_node_init(&fx, "n0", gpus, 4, "fifo", sim_time_from_s(9000));
    job_table *t = job_table_create();
    for (size_t k = 0; k < 6000; k++) {
        fx_add(t, (double)k, "nvidia.com/gpu", 1, 1, 3.5 + (double)(k % 7) * 0.25);
    }
    job_table_set_spill(t, spill_ops(), s);
    world *w = fx_world(&fx.wc, t);
    world_set_sample_spill(w, spill_ops(), ss);
    world_run(w);
    cr_assert_gt(world_n_samples(w), 2 * 4096);
    cr_assert_gt(world_get_totals(w).horizon, world_sample_get(w, world_n_samples(w) - 1)->t);
    out_stats st;
    out_stats_compute(w, &st, true);
    const double every_s[] = {0.25, 1, 3.7, 1000, 20000};
    for (size_t i = 0; i < sizeof every_s / sizeof every_s[0]; i++) {
        sim_time every = sim_time_from_s(every_s[i]);
        out_grid *grid = out_grid_create(w, every);
        out_run_meta meta = {.seed = 1, .policy = "fifo", .stats = &st, .grid = grid};
        char *doc[3] = {NULL, NULL, NULL};
        size_t n_doc[3] = {0, 0, 0};
        FILE *f = open_memstream(&doc[0], &n_doc[0]);
        out_run_json *rj = out_run_json_begin(f, w, &meta);
        cr_assert_eq(out_run_json_end(rj), 0);
        fclose(f);
        f = open_memstream(&doc[1], &n_doc[1]);
        cr_assert_eq(out_timeseries_csv(f, w, every, grid), 0);
        fclose(f);
        f = open_memstream(&doc[2], &n_doc[2]);
        cr_assert_eq(out_timeseries_csv(f, w, every, NULL), 0);
        fclose(f);
        cr_assert_gt(n_doc[2], 100); /* the header and two rows at least */
        cr_assert_eq(n_doc[1], n_doc[2], "every %g s", every_s[i]);
        cr_assert(memcmp(doc[1], doc[2], n_doc[2]) == 0, "every %g s", every_s[i]);
        out_grid_destroy(grid);
        for (int k = 0; k < 3; k++) {
            free(doc[k]);
        }
    }
    out_stats_fini(&st);
    world_destroy(w);
    spill_destroy(s);
    spill_destroy(ss);
}
