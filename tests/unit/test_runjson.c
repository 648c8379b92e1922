/* run.json's jobs as one piece of text per job (tools/out_json.c) against the same members written
 * one by one through jsonw (the writer run.json used before, kept here as the oracle): names that
 * need escaping (a node and a class with quotes, backslashes and a tab), a class without a name,
 * jobs on two and three GPUs, a memory request, a job running and one still queued at the end
 * (null times), one never submitted. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cluster/world.h"
#include "sim/diag.h"
#include "tests/unit/fixtures.h"
#include "tools/jsonw.h"
#include "tools/out.h"

/* run.json of w written job by job in id order, as a run does without jobs.csv. */
static int write_run_json(FILE *f, const world *w, const out_run_meta *meta)
{
    out_run_json *r = out_run_json_begin(f, w, meta);
    for (job_id k = 0; k < job_table_count(world_jobs(w)); k++) {
        out_run_json_job(r, job_table_get(world_jobs(w), k), NULL);
    }
    return out_run_json_end(r);
}

static void put_num(jsonw *jw, const char *k, double v)
{
    jsonw_key(jw, k);
    jsonw_number(jw, v);
}

static void put_time(jsonw *jw, const char *k, sim_time t)
{
    jsonw_key(jw, k);
    if (t < 0) {
        jsonw_null(jw);
    } else {
        jsonw_number(jw, sim_time_to_s(t));
    }
}

static void oracle_job(jsonw *jw, const cluster *c, const job *j)
{
    jsonw_object_begin(jw);
    put_num(jw, "id", j->id);
    jsonw_key(jw, "class");
    jsonw_string(jw, j->spec.class_name);
    jsonw_key(jw, "request");
    jsonw_object_begin(jw);
    jsonw_key(jw, "resource");
    jsonw_string(jw, j->spec.req.resource);
    put_num(jw, "per_worker", j->spec.req.per_worker);
    put_num(jw, "workers", j->spec.req.n_workers);
    jsonw_key(jw, "mem_bytes");
    if (j->spec.mem_bytes) {
        jsonw_number(jw, (double)j->spec.mem_bytes);
    } else {
        jsonw_null(jw);
    }
    jsonw_object_end(jw);
    put_num(jw, "work_s", j->spec.work_s);
    put_time(jw, "submit_s", j->spec.submit);
    put_time(jw, "start_s", j->start);
    put_time(jw, "end_s", j->end);
    put_time(jw, "wait_s", job_wait_ns(j));
    put_time(jw, "jct_s", j->state == JOB_DONE ? job_jct_ns(j) : -1);
    jsonw_key(jw, "placement");
    jsonw_array_begin(jw);
    for (uint32_t k = 0; k < j->n_units; k++) {
        const cluster_device *cd = cluster_device_get(c, j->units[k]);
        jsonw_object_begin(jw);
        jsonw_key(jw, "node");
        jsonw_string(jw, cluster_node_name(c, cd->node));
        put_num(jw, "gpu", cluster_gpu_get(c, cd->gpu)->index);
        jsonw_key(jw, "instance");
        jsonw_null(jw);
        jsonw_key(jw, "profile");
        jsonw_null(jw);
        jsonw_key(jw, "start");
        jsonw_null(jw);
        jsonw_object_end(jw);
    }
    jsonw_array_end(jw);
    jsonw_key(jw, "outcome");
    jsonw_string(jw, job_state_name(j->state));
    put_num(jw, "preempted", j->n_preempted);
    jsonw_object_end(jw);
}

/* The fixture's world after its run (caller destroys w and d). */
static world *fixture_world(diag **d)
{
    static gpu_type g;
    g = test_gpu();
    static cluster_gpu_cfg gpus[3];
    for (int i = 0; i < 3; i++) {
        gpus[i] = (cluster_gpu_cfg){.type = &g};
    }
    static cluster_node_cfg node;
    node = (cluster_node_cfg){.name = "n\"0\\\t", .n_gpus = 3, .gpus = gpus};
    static cluster_cfg cc;
    cc = (cluster_cfg){.n_nodes = 1, .nodes = &node};
    world_cfg wc = {.cluster = &cc, .policy = pol_find("fifo"), .until = sim_time_from_s(150)};
    job_table *t = job_table_create();
    job_spec specs[] = {
        {.class_name = "c", .req = {"nvidia.com/gpu", 2, 1}, .work_s = 100.25},
        {.class_name = NULL, .req = {"nvidia.com/gpu", 3, 1}, .work_s = 50, .submit = 1},
        {.class_name = "odd \"class\"\\",
         .req = {"nvidia.com/gpu", 1, 1},
         .work_s = 1.0 / 3,
         .mem_bytes = 123456789,
         .submit = sim_time_from_s(0.5)},
        {.class_name = "c",
         .req = {"nvidia.com/gpu", 1, 1},
         .work_s = 7,
         .submit = sim_time_from_s(1000)},
    };
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        job_table_add(t, &specs[i]);
    }
    *d = diag_create();
    world *w = NULL;
    cr_assert_eq(world_create(&wc, t, *d, (src_loc){"x", 1, 1}, &w), 0);
    world_run(w);
    cr_assert_eq(job_table_get(t, 2)->state, JOB_QUEUED, "the third job never starts");
    cr_assert_eq(job_table_get(t, 1)->state, JOB_RUNNING, "the second runs at the end");
    return w;
}

Test(runjson, jobs_as_jsonw_writes_them)
{
    diag *d;
    world *w = fixture_world(&d);
    const job_table *t = world_jobs(w);
    out_stats st;
    out_stats_compute(w, &st, true);
    out_run_meta meta = {.seed = 1, .policy = "fifo", .stats = &st};
    char *doc = NULL, *want = NULL;
    size_t n_doc = 0, n_want = 0;
    FILE *f = open_memstream(&doc, &n_doc);
    cr_assert_eq(write_run_json(f, w, &meta), 0);
    fclose(f);
    f = open_memstream(&want, &n_want);
    jsonw *jw = malloc(sizeof *jw);
    jsonw_init(jw, f);
    jsonw_object_begin(jw);
    jsonw_key(jw, "jobs");
    jsonw_array_begin(jw);
    for (job_id k = 0; k < job_table_count(t); k++) {
        oracle_job(jw, world_cluster(w), job_table_get(t, k));
    }
    jsonw_array_end(jw);
    jsonw_object_end(jw);
    cr_assert_eq(jsonw_finish(jw), 0);
    free(jw);
    fclose(f);
    /* the oracle's "jobs" member, "\t\"jobs\":\t[" to its "]", is in run.json as it is */
    char *from = strstr(want, "\t\"jobs\":");
    char *to = strrchr(want, ']');
    cr_assert(from && to);
    to[1] = '\0';
    cr_assert(strstr(doc, from), "run.json's jobs differ from jsonw's:\n%s\n--- run.json:\n%s",
              from, doc);
    cr_assert(strstr(from, "\"n\\\"0\\\\\\t\"") && strstr(from, "\"odd \\\"class\\\"\\\\\""),
              "the escaped names are there");
    out_stats_fini(&st);
    free(doc);
    free(want);
    world_destroy(w);
    diag_destroy(d);
}

/* The writers' one pass (out_jobs_pass: the statistics, run.json's and jobs.csv's jobs side by
 * side, work_s formatted once for both) writes what each writer writes alone, and gives the
 * statistics out_stats_compute gives. */
Test(runjson, one_pass_writes_what_each_writer_writes_alone)
{
    diag *d;
    world *w = fixture_world(&d);
    out_stats alone, fused;
    out_stats_compute(w, &alone, true);
    out_run_meta meta = {.seed = 1, .policy = "fifo", .stats = &alone};
    char *doc[4] = {NULL, NULL, NULL, NULL};
    size_t n_doc[4] = {0, 0, 0, 0};
    FILE *f = open_memstream(&doc[0], &n_doc[0]);
    cr_assert_eq(write_run_json(f, w, &meta), 0);
    fclose(f);
    f = open_memstream(&doc[1], &n_doc[1]);
    cr_assert_eq(out_jobs_csv(f, w), 0);
    fclose(f);
    out_run_meta meta_fused = {.seed = 1, .policy = "fifo", .stats = &fused};
    FILE *fj = open_memstream(&doc[2], &n_doc[2]), *fc = open_memstream(&doc[3], &n_doc[3]);
    out_run_json *rj = out_run_json_begin(fj, w, &meta_fused);
    out_jobs_csv_w *cw = out_jobs_csv_begin(fc, w);
    out_stats_acc *sa = out_stats_begin(w, &fused, true);
    out_jobs_pass(w, sa, rj, cw);
    out_stats_end(sa); /* before run.json's end, which writes the metrics */
    cr_assert_eq(out_jobs_csv_end(cw), 0);
    cr_assert_eq(out_run_json_end(rj), 0);
    fclose(fj);
    fclose(fc);
    cr_assert_gt(n_doc[0], 1000);
    cr_assert_eq(n_doc[2], n_doc[0]);
    cr_assert(memcmp(doc[2], doc[0], n_doc[0]) == 0, "run.json:\n%s\n--- alone:\n%s", doc[2],
              doc[0]);
    cr_assert_gt(n_doc[1], 100);
    cr_assert_eq(n_doc[3], n_doc[1]);
    cr_assert(memcmp(doc[3], doc[1], n_doc[1]) == 0, "jobs.csv:\n%s\n--- alone:\n%s", doc[3],
              doc[1]);
    cr_assert(strstr(doc[1], ",100.25,") && strstr(doc[1], ",0.33333333333333331,"),
              "work_s shared where it is not whole");
    cr_assert_eq(fused.n_classes, alone.n_classes);
    cr_assert_eq(fused.n_curve, alone.n_curve);
    cr_assert_gt(fused.n_curve, 0);
    cr_assert(memcmp(fused.curve, alone.curve, alone.n_curve * sizeof *alone.curve) == 0);
    cr_assert_eq(fused.typical.n, alone.typical.n);
    cr_assert(memcmp(&fused.jct, &alone.jct, sizeof alone.jct) == 0);
    cr_assert(memcmp(&fused.wait_queued, &alone.wait_queued, sizeof alone.wait_queued) == 0);
    out_stats_fini(&alone);
    out_stats_fini(&fused);
    for (int i = 0; i < 4; i++) {
        free(doc[i]);
    }
    world_destroy(w);
    diag_destroy(d);
}

/* Seconds with nine decimals, or nothing when t < 0: jobs.csv's times by printf. */
static void oracle_time(FILE *f, sim_time t)
{
    if (t >= 0) {
        fprintf(f, "%lld.%09lld", (long long)(t / 1000000000), (long long)(t % 1000000000));
    }
}

/* jobs.csv by fprintf and out_csv_field, field by field (docs/outputs.md), the oracle of the
 * writer's kept units and names. */
static void oracle_csv(FILE *f, const world *w)
{
    const cluster *c = world_cluster(w);
    sim_time horizon = world_get_totals(w).horizon;
    fputs("id,class,resource,per_worker,workers,mem_bytes,work_s,submit_s,start_s,end_s,wait_s,"
          "jct_s,outcome,placement,wait_censored,slowdown\n",
          f);
    for (job_id k = 0; k < job_table_count(world_jobs(w)); k++) {
        const job *j = job_table_get(world_jobs(w), k);
        fprintf(f, "%u,", (unsigned)j->id);
        out_csv_field(f, j->spec.class_name ? j->spec.class_name : "");
        fputc(',', f);
        out_csv_field(f, j->spec.req.resource);
        fprintf(f, ",%u,%u,%llu,%.17g,", (unsigned)j->spec.req.per_worker,
                (unsigned)j->spec.req.n_workers, (unsigned long long)j->spec.mem_bytes,
                j->spec.work_s);
        bool censored = j->start < 0 && j->state == JOB_QUEUED;
        const sim_time times[5] = {j->spec.submit, j->start, j->end,
                                   censored ? horizon - j->spec.submit : job_wait_ns(j),
                                   j->state == JOB_DONE ? job_jct_ns(j) : -1};
        for (int i = 0; i < 5; i++) {
            oracle_time(f, times[i]);
            fputc(',', f);
        }
        fprintf(f, "%s,", job_state_name(j->state));
        for (uint32_t u = 0; u < j->n_units; u++) {
            const cluster_device *cd = cluster_device_get(c, j->units[u]);
            char unit[256];
            snprintf(unit, sizeof unit, "%s/%u", cluster_node_name(c, cd->node),
                     (unsigned)cluster_gpu_get(c, cd->gpu)->index);
            fprintf(f, "%s", u ? " " : "");
            out_csv_field(f, unit);
        }
        fprintf(f, ",%d,", censored);
        if (j->state == JOB_DONE) {
            fprintf(f, "%.17g", sim_time_to_s(job_jct_ns(j)) / j->spec.work_s);
        }
        fputc('\n', f);
    }
}

/* jobs.csv's writer (a device's unit and a name kept as text, copied for every job) against
 * fprintf field by field: a node name and a class that need quoting, a class without a name,
 * jobs on one, two and three GPUs, running and queued jobs (empty and censored times). */
Test(runjson, jobs_csv_as_printf_writes_it)
{
    diag *d;
    world *w = fixture_world(&d);
    char *doc = NULL, *want = NULL;
    size_t n_doc = 0, n_want = 0;
    FILE *f = open_memstream(&doc, &n_doc);
    cr_assert_eq(out_jobs_csv(f, w), 0);
    fclose(f);
    f = open_memstream(&want, &n_want);
    oracle_csv(f, w);
    fclose(f);
    cr_assert_str_eq(doc, want);
    cr_assert(strstr(doc, "\"n\"\"0\\\t/0\"") && strstr(doc, ",\"odd \"\"class\"\"\\\","),
              "the quoted names are there:\n%s", doc);
    free(doc);
    free(want);
    world_destroy(w);
    diag_destroy(d);
}
