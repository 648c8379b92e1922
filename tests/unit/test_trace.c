/* Unit tests for the trace readers: workloads/csvin.h, workloads/trace.h (every format, good and
 * bad rows), workloads/tracenodes.h, workloads/traceload.h (window, worker split, duration ->
 * work, FGD's arrival-only tuning) and model/physics/tracework.h (duration conversion by the physics).
 * Inputs are small CSV texts written here; expected values are worked out by hand in comments. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiments/catalog_load.h"
#include "experiments/cfg.h"
#include "experiments/embedded.h"
#include "experiments/fileio.h"
#include "experiments/obs.h"
#include "experiments/physics_load.h"
#include "experiments/scenario.h"
#include "model/physics/predict.h"
#include "model/physics/tracework.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "tests/unit/phys_fixture.h"
#include "tests/unit/sh.h"
#include "tools/run.h"
#include "workloads/csvin.h"
#include "workloads/trace.h"
#include "workloads/traceload.h"
#include "workloads/tracelive.h"
#include "workloads/tracenodes.h"
#include "sh.h"
#include "tests/unit/diagfx.h"

/* A reader over `text` for format f (need_times as given). */
typedef struct fx {
    FILE *f;
    diag *d;
    trace_src src;
    trace_reader *r;
} fx;

static int open_fx(fx *x, trace_format fmt, bool timed, const char *text)
{
    x->f = fmemopen((void *)text, strlen(text), "r");
    cr_assert_not_null(x->f);
    x->d = diag_create();
    x->src = (trace_src){.format = fmt, .file = "t.csv", .need_times = timed, .seed = 7};
    x->src.columns = trace_preset(fmt);
    return trace_open(&x->src, x->f, x->d, &x->r);
}

static void close_fx(fx *x)
{
    trace_close(x->r);
    fclose(x->f);
    diag_destroy(x->d);
}

static const char openb_hdr[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,"
                                "pod_phase,creation_time,deletion_time,scheduled_time\n";

/* ---- csvin ----------------------------------------------------------------------------------- */

Test(csvin, fields_quotes_spaces_and_cr)
{
    static const char text[] = "a, b ,c\r\n\"x,1\", \"say \"\"hi\"\"\" ,\n\n  \n3,,4\n";
    FILE *f = fmemopen((void *)text, sizeof text - 1, "r");
    diag *d = diag_create();
    csvin *r = NULL;
    cr_assert_eq(csvin_open(f, "q.csv", true, d, &r), 0);
    cr_assert_eq(csvin_n_columns(r), 3);
    cr_assert_eq(csvin_column(r, "b"), 1);
    cr_assert_eq(csvin_next(r), 1);
    cr_assert_str_eq(csvin_field(r, 0), "x,1");
    cr_assert_str_eq(csvin_field(r, 1), "say \"hi\"");
    cr_assert_str_eq(csvin_field(r, 2), "");
    cr_assert_eq(csvin_line(r), 2);
    cr_assert_eq(csvin_next(r), 1); /* lines 3 and 4 are blank */
    cr_assert_eq(csvin_line(r), 5);
    cr_assert_str_eq(csvin_field(r, 1), "");
    cr_assert_eq(csvin_next(r), 0);
    csvin_close(r);
    diag_destroy(d);
    fclose(f);
}

Test(csvin, number_errors_name_the_column_and_field)
{
    static const char text[] = "id,gpus\nj1,12abc\nj2,8.0\nj3,9\n";
    FILE *f = fmemopen((void *)text, sizeof text - 1, "r");
    diag *d = diag_create();
    csvin *r = NULL;
    uint64_t v = 0;
    cr_assert_eq(csvin_open(f, "n.csv", true, d, &r), 0);
    cr_assert_eq(csvin_next(r), 1);
    cr_assert_not(csvin_u64(r, 1, 0, 8, &v));
    cr_assert_str_eq(fx_diag_message(d, 0), "n.csv:2:4: error: gpus: not a whole number; expected an "
                                         "integer from 0 to 8, got '12abc'");
    cr_assert_eq(csvin_next(r), 1);
    cr_assert(csvin_u64(r, 1, 0, 8, &v)); /* "8.0" as pandas writes whole numbers */
    cr_assert_eq(v, 8);
    cr_assert_eq(csvin_next(r), 1);
    cr_assert_not(csvin_u64(r, 1, 0, 8, &v));
    cr_assert_str_eq(fx_diag_message(d, 1), "n.csv:4:4: error: gpus: out of range; expected an "
                                         "integer from 0 to 8, got '9'");
    csvin_close(r);
    diag_destroy(d);
    fclose(f);
}

/* Rows read again by their offset (csvin_read_at) are the rows read in order: the same fields,
 * hash and no line number (counted only for an error), whatever the order they are read in. */
Test(csvin, a_row_read_again_by_offset_is_the_row_read_in_order)
{
    static const char text[] = "a, b ,c\r\n\"x,1\", \"say \"\"hi\"\"\" ,\n\n  \n3,,4\nlast,row,x";
    FILE *f = fmemopen((void *)text, sizeof text - 1, "r");
    diag *d = diag_create();
    csvin *r = NULL;
    cr_assert_eq(csvin_open(f, "q.csv", true, d, &r), 0);
    cr_assert(csvin_seekable(r));
    uint64_t off[3];
    uint32_t hash[3];
    char fields[3][3][16];
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(csvin_next(r), 1);
        off[k] = csvin_row_offset(r);
        hash[k] = csvin_row_hash(r);
        for (size_t i = 0; i < 3; i++) {
            snprintf(fields[k][i], sizeof fields[k][i], "%s", csvin_field(r, i));
        }
    }
    cr_assert_eq(off[0], 9); /* after the header's 8 bytes and its '\n' (its CR is dropped) */
    cr_assert_eq(off[1], 35); /* the empty lines before it are skipped */
    for (int k = 2; k >= 0; k--) {
        cr_assert_eq(csvin_read_at(r, off[k], hash[k], UINT32_MAX), 1);
        cr_assert_eq(csvin_row_hash(r), hash[k]);
        cr_assert_eq(csvin_line(r), 0);
        for (size_t i = 0; i < 3; i++) {
            cr_assert_str_eq(csvin_field(r, i), fields[k][i]);
        }
    }
    cr_assert_str_eq(csvin_field(r, 1), "say \"hi\"");
    cr_assert_eq(diag_error_count(d), 0);
    csvin_close(r);
    diag_destroy(d);
    fclose(f);
}

/* A file changed since its rows were read: the row read again is another (its hash differs),
 * is bad, or is gone. Each is an input error at the row's line, counted from the file's start
 * (the reader keeps no line numbers), never a crash. */
Test(csvin, a_row_changed_since_it_was_read_is_an_error_at_its_line)
{
    char dir[256], path[512];
    cr_assert(test_tmpdir(dir, sizeof dir, "seek"));
    snprintf(path, sizeof path, "%s/t.csv", dir);
    cr_assert(test_write_text(path, "id,gpus\nj1,1\nj2,2\nj3,3\n"));
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    diag *d = diag_create();
    csvin *r = NULL;
    cr_assert_eq(csvin_open(f, "t.csv", true, d, &r), 0);
    uint64_t off[3];
    uint32_t hash[3];
    for (int k = 0; k < 3; k++) {
        cr_assert_eq(csvin_next(r), 1);
        off[k] = csvin_row_offset(r);
        hash[k] = csvin_row_hash(r);
    }
    cr_assert_eq(csvin_next(r), 0);
    /* the same length, other text in row 2 (line 3); row 3 (line 4) becomes a bad number */
    cr_assert(test_write_text(path, "id,gpus\nj1,1\nj2,7\nj3,x\n"));
    cr_assert_eq(csvin_read_at(r, off[0], hash[0], UINT32_MAX), 1);
    cr_assert_eq(csvin_read_at(r, off[1], hash[1], UINT32_MAX), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(d, 0),
                     "t.csv:3:1: error: the file changed during the run; expected the row read "
                     "when the run began at byte 13, got other text");
    uint64_t v = 0;
    cr_assert_eq(csvin_read_at(r, off[2], hash[2], 0), 1); /* no hash check: the parser's */
    cr_assert_not(csvin_u64(r, 1, 0, 8, &v));
    cr_assert_str_eq(fx_diag_message(d, 1), "t.csv:4:4: error: gpus: not a whole number; "
                                            "expected an integer from 0 to 8, got 'x'");
    csvin_close(r);
    fclose(f);
    /* cut short: a new reader (the blocks it read are kept: a change after them is not seen) */
    cr_assert(test_write_text(path, "id,gpus\nj1,1\nj2,2\nj3,3\n"));
    f = fopen(path, "r");
    cr_assert_eq(csvin_open(f, "t.csv", true, d, &r), 0);
    while (csvin_next(r) == 1) {
    }
    cr_assert(test_write_text(path, "id,gpus\nj1,1\n"));
    cr_assert_eq(csvin_read_at(r, off[2], hash[2], UINT32_MAX), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(d, 2),
                     "t.csv:3:1: error: the file changed during the run; expected the row read "
                     "when the run began at byte 18, got the end of the file");
    csvin_close(r);
    diag_destroy(d);
    fclose(f);
    cr_assert(test_rm_rf(dir));
}

/* Reading ends at a line longer than CSVIN_MAX_LINE: it was once consumed to its end, which
 * never comes in /dev/zero (a trace `file: /dev/zero` hung). The next call reads EOF. */
Test(csvin, reading_ends_at_a_too_long_line, .timeout = 10)
{
    FILE *f = fopen("/dev/zero", "r");
    cr_assert_not_null(f);
    diag *d = diag_create();
    csvin *r = NULL;
    cr_assert_eq(csvin_open(f, "z.csv", true, d, &r), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(d, 0), "z.csv:1:1: error: line too long; expected at most "
                                         "65535 bytes, got more");
    fclose(f);
    diag_clear(d);
    size_t n = CSVIN_MAX_LINE + 100;
    char *text = malloc(n + 32);
    cr_assert_not_null(text);
    int w = snprintf(text, n + 32, "a\n1\n");
    memset(text + w, 'x', n);
    snprintf(text + w + n, 32, "\n2\n");
    f = fmemopen(text, strlen(text), "r");
    cr_assert_eq(csvin_open(f, "l.csv", true, d, &r), 0);
    cr_assert_eq(csvin_next(r), 1);
    cr_assert_str_eq(csvin_field(r, 0), "1");
    cr_assert_eq(csvin_next(r), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(d, 0), "l.csv:3:1: error: line too long; expected at most "
                                         "65535 bytes, got more");
    cr_assert_eq(csvin_next(r), 0, "the rest of the file is not read");
    csvin_close(r);
    fclose(f);
    free(text);
    diag_destroy(d);
}

/* Only decimal numbers read: strtod alone would take "0x10" as 16; a value that overflows or
 * underflows a double is out of range, as in the scenario loader (experiments/cfg.c). */
Test(csvin, double_reads_decimal_only)
{
    static const char text[] = "t\n0x10\ninf\n1e400\n1e-400\n-0\n2.5e3\n";
    FILE *f = fmemopen((void *)text, sizeof text - 1, "r");
    diag *d = diag_create();
    csvin *r = NULL;
    double v = -1;
    cr_assert_eq(csvin_open(f, "n.csv", true, d, &r), 0);
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(csvin_next(r), 1);
        cr_assert_not(csvin_double(r, 0, 0, 1e9, &v));
    }
    cr_assert_str_eq(fx_diag_message(d, 0), "n.csv:2:1: error: t: not a number; expected a number "
                                         "from 0 to 1e+09, got '0x10'");
    cr_assert_str_eq(fx_diag_message(d, 1), "n.csv:3:1: error: t: not a number; expected a number "
                                         "from 0 to 1e+09, got 'inf'");
    cr_assert_str_eq(fx_diag_message(d, 2), "n.csv:4:1: error: t: out of range; expected a number "
                                         "from 0 to 1e+09, got '1e400'");
    cr_assert_str_eq(fx_diag_message(d, 3), "n.csv:5:1: error: t: out of range; expected a number "
                                         "from 0 to 1e+09, got '1e-400'");
    cr_assert_eq(csvin_next(r), 1);
    cr_assert(csvin_double(r, 0, 0, 1e9, &v)); /* -0 is zero */
    cr_assert_eq(v, 0.0);
    cr_assert_eq(csvin_next(r), 1);
    cr_assert(csvin_double(r, 0, 0, 1e9, &v));
    cr_assert_eq(v, 2500.0);
    cr_assert_eq(diag_error_count(d), 4);
    csvin_close(r);
    diag_destroy(d);
    fclose(f);
}

Test(csvin, epoch_of_known_dates)
{
    /* 1970-01-01 is day 0; 2000-01-01 is 10957 days later (30 years, 7 leap days: 72, 76, 80,
     * 84, 88, 92, 96): 10957 * 86400 = 946684800 s. */
    cr_assert_float_eq(csvin_epoch_s(1970, 1, 1, 0, 0, 0), 0.0, 1e-9);
    cr_assert_float_eq(csvin_epoch_s(2000, 1, 1, 0, 0, 0), 946684800.0, 1e-6);
    /* 2000-03-01 = 2000-01-01 + 31 + 29 days (2000 is a leap year) */
    cr_assert_float_eq(csvin_epoch_s(2000, 3, 1, 0, 0, 0), 946684800.0 + 60 * 86400.0, 1e-6);
    /* one second after 01:02:03 */
    cr_assert_float_eq(csvin_epoch_s(1970, 1, 2, 1, 2, 4), 86400.0 + 3724.0, 1e-9);
}

/* ---- readers: good and bad rows ----------------------------------------------------------------
 */

Test(trace, openb_rows)
{
    char text[1024];
    snprintf(text, sizeof text,
             "%sp0,12000,16384,1,460,V100M16|V100M32,LS,Running,100,350,100\n"
             "p1,4000,1024,0,0,,BE,Failed,200,200,\n"
             "p2,88000,65536,8,1000,,LS,Running,300,1000,310\n",
             openb_hdr);
    fx x;
    cr_assert_eq(open_fx(&x, TRACE_OPENB, true, text), 0);
    trace_record rec;
    cr_assert_eq(trace_next(x.r, &rec), 1);
    cr_assert_str_eq(rec.name, "p0");
    cr_assert_eq(rec.gpus, 1);
    cr_assert_eq(rec.gpu_milli, 460);
    cr_assert_eq(rec.cpu_milli, 12000);
    cr_assert_eq(rec.mem_bytes, 16384ull << 20);
    cr_assert_str_eq(rec.gpu_spec, "V100M16|V100M32");
    cr_assert_str_eq(rec.qos, "LS");
    cr_assert_float_eq(rec.submit_s, 100.0, 1e-12);
    cr_assert_float_eq(rec.duration_s, 250.0, 1e-12); /* 350 - 100 */
    cr_assert_eq(trace_next(x.r, &rec), 1);
    cr_assert_eq(rec.gpus, 0); /* a CPU-only pod: gpu_milli 0 allowed */
    cr_assert_eq(rec.gpu_milli, 1000);
    cr_assert_eq(trace_next(x.r, &rec), 1);
    cr_assert_eq(rec.gpus, 8);
    cr_assert_float_eq(rec.duration_s, 700.0, 1e-12);
    cr_assert_eq(trace_next(x.r, &rec), 0);
    cr_assert_eq(trace_rows(x.r), 3);
    close_fx(&x);
}

Test(trace, openb_bad_rows_give_exact_messages)
{
    char text[1024];
    snprintf(text, sizeof text,
             "%sp0,12000,16384,1,0,,LS,Running,100,350,100\n"
             "p1,12000,16384,1,460,,LS,Running,100,50,100\n"
             "p2,12000,16384,one,460,,LS,Running,100,350,100\n",
             openb_hdr);
    fx x;
    cr_assert_eq(open_fx(&x, TRACE_OPENB, true, text), 0);
    trace_record rec;
    cr_assert_eq(trace_next(x.r, &rec), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(x.d, 0), "t.csv:2:18: error: gpu_milli: out of range; expected "
                                           "an integer from 1 to 1000, got '0'");
    cr_assert_eq(trace_next(x.r, &rec), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(x.d, 1),
                     "t.csv:3:38: error: deletion_time: ends before it is submitted; expected a "
                     "time >= 100, got '50'");
    cr_assert_eq(trace_next(x.r, &rec), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(x.d, 2), "t.csv:4:16: error: num_gpu: not a whole number; "
                                           "expected an integer from 0 to 100000, got 'one'");
    close_fx(&x);
}

Test(trace, missing_column_is_reported_at_the_header)
{
    fx x;
    cr_assert_eq(open_fx(&x, TRACE_PHILLY, true, "timestamp,duration,gpus\n"), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(x.d, 0),
                     "t.csv:1:1: error: num_gpus: missing column in the header; expected a philly "
                     "trace with a column 'num_gpus', got [timestamp, duration, gpus]");
    close_fx(&x);
}

Test(trace, openb_multigpu_variant_reads_as_arrivals_only)
{
    /* the multigpu files have no time columns: fine for arrival-only, an error when timed */
    static const char text[] = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,10,2,1000\n";
    fx x;
    cr_assert_eq(open_fx(&x, TRACE_OPENB, false, text), 0);
    trace_record rec;
    cr_assert_eq(trace_next(x.r, &rec), 1);
    cr_assert_eq(rec.gpus, 2);
    cr_assert_float_eq(rec.submit_s, -1.0, 1e-12);
    cr_assert_float_eq(rec.duration_s, TRACE_OPEN_S, 1e-12);
    close_fx(&x);
    cr_assert_eq(open_fx(&x, TRACE_OPENB, true, text), SIM_EINPUT);
    close_fx(&x);
}

Test(trace, philly_rows)
{
    static const char text[] = "timestamp,duration,num_gpus,gpu_time,cluster\n"
                               "2017-10-09 07:01:55,66.0,1,66.0,11cb48\n"
                               "2017-10-09 25:00:00,1,1,1,x\n";
    fx x;
    cr_assert_eq(open_fx(&x, TRACE_PHILLY, true, text), 0);
    trace_record rec;
    cr_assert_eq(trace_next(x.r, &rec), 1);
    /* 2017-10-09 07:01:55 UTC = 1507532515 s (17448 days from 1970 * 86400 + 25315 s) */
    cr_assert_float_eq(rec.submit_s, 1507532515.0, 1e-3);
    cr_assert_float_eq(rec.duration_s, 66.0, 1e-12);
    cr_assert_str_eq(rec.queue, "11cb48");
    cr_assert_eq(trace_next(x.r, &rec), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(x.d, 0),
                     "t.csv:3:1: error: timestamp: no such date or time; expected a date and time "
                     "like 2017-10-09 07:01:55, got '2017-10-09 25:00:00'");
    close_fx(&x);
}

Test(trace, dlrm_missing_times)
{
    static const char text[] =
        "instance_sn,role,app_name,cpu_request,cpu_limit,gpu_request,gpu_limit,rdma_request,"
        "rdma_limit,memory_request,memory_limit,disk_request,disk_limit,max_instance_per_node,"
        "creation_time,scheduled_time,deletion_time\n"
        "i0,HN,app_0,12,12,1,1,25,25,120.0,120.0,640.0,800.0,8,,,\n"
        "i1,HN,app_1,6,6,1,1,25,25,60.0,60.0,640.0,800.0,8,100.0,101.0,400.0\n";
    fx x;
    cr_assert_eq(open_fx(&x, TRACE_DLRM, true, text), 0);
    trace_record rec;
    cr_assert_eq(trace_next(x.r, &rec), 1);
    cr_assert_float_eq(rec.submit_s, 0.0, 1e-12);            /* existed before the start */
    cr_assert_float_eq(rec.duration_s, TRACE_OPEN_S, 1e-12); /* never deleted */
    cr_assert_eq(rec.cpu_milli, 12000);                      /* 12 vCPU */
    cr_assert_eq(rec.mem_bytes, 120ull << 30);               /* 120 GiB */
    cr_assert_str_eq(rec.klass, "app_0");
    cr_assert_eq(trace_next(x.r, &rec), 1);
    cr_assert_float_eq(rec.duration_s, 300.0, 1e-12);
    close_fx(&x);
}

Test(trace, helios_bins_expand_into_jobs)
{
    static const char text[] = "time,submit_job_all,start_job_all,end_job_all,submit_gpu_job,"
                               "start_gpu_job,end_gpu_job,submit_gpu_num,start_gpu_num,"
                               "end_gpu_num\n"
                               "2020-04-01 00:00:00,6,6,4,3,3,2,8,3,2\n"
                               "2020-04-01 00:10:00,1,1,1,0,0,0,0,0,0\n"
                               "2020-04-01 00:20:00,1,1,1,1,0,0,4,0,0\n";
    fx x;
    x.src.duration_s = (synth_dist){SYNTH_FIXED, 600, 0};
    x.f = fmemopen((void *)text, sizeof text - 1, "r");
    x.d = diag_create();
    x.src = (trace_src){.format = TRACE_HELIOS,
                        .file = "h.csv",
                        .need_times = true,
                        .seed = 1,
                        .columns = trace_preset(TRACE_HELIOS),
                        .duration_s = {SYNTH_FIXED, 600, 0}};
    cr_assert_eq(trace_open(&x.src, x.f, x.d, &x.r), 0);
    /* 8 GPUs over 3 jobs: floor(8/3) = 2 each, the first 8 mod 3 = 2 jobs one more: 3, 3, 2 */
    uint32_t want[] = {3, 3, 2, 4};
    double bin0 = csvin_epoch_s(2020, 4, 1, 0, 0, 0);
    for (int i = 0; i < 4; i++) {
        trace_record rec;
        cr_assert_eq(trace_next(x.r, &rec), 1);
        cr_assert_eq(rec.gpus, want[i]);
        double lo = bin0 + (i < 3 ? 0 : 1200);
        cr_assert(rec.submit_s >= lo && rec.submit_s < lo + 600, "job %d at %g", i, rec.submit_s);
        cr_assert_float_eq(rec.duration_s, 600.0, 1e-12);
    }
    trace_record rec;
    cr_assert_eq(trace_next(x.r, &rec), 0);
    close_fx(&x);
}

Test(trace, csv_with_a_column_mapping)
{
    static const char text[] = "job,t,run_s,n,team,model\nA,10,5,2,vision,resnet\n";
    fx x;
    x.f = fmemopen((void *)text, sizeof text - 1, "r");
    x.d = diag_create();
    x.src = (trace_src){.format = TRACE_CSV, .file = "c.csv", .need_times = true};
    x.src.columns = (trace_columns){.name = "job",
                                    .submit = "t",
                                    .duration = "run_s",
                                    .gpus = "n",
                                    .queue = "team",
                                    .klass = "model",
                                    .cpu_unit_milli = 1000,
                                    .mem_unit_bytes = 1};
    cr_assert_eq(trace_open(&x.src, x.f, x.d, &x.r), 0);
    trace_record rec;
    cr_assert_eq(trace_next(x.r, &rec), 1);
    cr_assert_str_eq(rec.name, "A");
    cr_assert_eq(rec.gpus, 2);
    cr_assert_str_eq(rec.queue, "vision");
    cr_assert_str_eq(rec.klass, "resnet");
    cr_assert_float_eq(rec.submit_s, 10.0, 1e-12);
    cr_assert_float_eq(rec.duration_s, 5.0, 1e-12);
    close_fx(&x);
}

/* ---- node list --------------------------------------------------------------------------------
 */

Test(tracenodes, groups_by_shape_cpu_nodes_too)
{
    static const char text[] = "sn,cpu_milli,memory_mib,gpu,model\n"
                               "n0,32000,262144,0,\n"
                               "n1,96000,786432,8,G2\n"
                               "n2,96000,786432,8,G2\n"
                               "n3,64000,262144,2,T4\n"
                               "n4,96000,524288,8,G2\n";
    FILE *f = fmemopen((void *)text, sizeof text - 1, "r");
    arena *a = arena_create();
    diag *d = diag_create();
    tracenodes tn;
    cr_assert_eq(tracenodes_read(f, "n.csv", a, d, &tn), 0);
    cr_assert_eq(tn.n_cpu_nodes, 1);
    cr_assert_eq(tn.n_nodes, 5);
    cr_assert_eq(tn.n_gpus, 26); /* 8 + 8 + 2 + 8 */
    cr_assert_eq(tn.n_groups, 4);
    cr_assert_str_eq(tn.groups[0].model, ""); /* the CPU-only node */
    cr_assert_eq(tn.groups[0].gpus, 0);
    cr_assert_eq(tn.groups[0].cpu_milli, 32000);
    cr_assert_str_eq(tn.groups[1].model, "G2");
    cr_assert_eq(tn.groups[1].count, 2);
    cr_assert_eq(tn.groups[1].cpu_milli, 96000);
    cr_assert_eq(tn.groups[1].mem_bytes, 786432ull << 20);
    cr_assert_eq(tn.groups[2].gpus, 2);
    cr_assert_eq(tn.groups[3].mem_bytes, 524288ull << 20);
    cr_assert_eq(tn.groups[3].line, 6);
    fclose(f);
    diag_destroy(d);
    arena_destroy(a);
}

Test(tracenodes, bad_row)
{
    static const char text[] = "sn,cpu_milli,memory_mib,gpu,model\nn1,96000,786432,8,\n";
    FILE *f = fmemopen((void *)text, sizeof text - 1, "r");
    arena *a = arena_create();
    diag *d = diag_create();
    tracenodes tn;
    cr_assert_eq(tracenodes_read(f, "n.csv", a, d, &tn), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(d, 0), "n.csv:2:19: error: model: missing GPU model on a node "
                                         "with 8 GPUs; expected a model like T4, got ''");
    fclose(f);
    diag_destroy(d);
    arena_destroy(a);
}

/* ---- traced records -> jobs ---------------------------------------------------------------------
 */

Test(traceload, worker_split)
{
    uint32_t p, n;
    traceload_split(12, 8, &p, &n); /* 8 does not divide 12; 6 does: 2 workers of 6 */
    cr_assert(p == 6 && n == 2);
    traceload_split(24, 8, &p, &n);
    cr_assert(p == 8 && n == 3);
    traceload_split(7, 8, &p, &n);
    cr_assert(p == 7 && n == 1);
    traceload_split(13, 8, &p, &n); /* a prime above the node size: 13 workers of 1 */
    cr_assert(p == 1 && n == 13);
}

/* Every job of r's stream (traceload_open) added to t, as the run's source would give them. */
static int take_jobs(trace_reader *r, const traceload_opts *o, arena *a, diag *d, job_table *t,
                     traceload_stats *st)
{
    traceload_stream *s = NULL;
    int rc = traceload_open(r, o, a, d, st, &s);
    if (rc == 0) {
        cr_assert_eq(traceload_count(s), st->jobs);
        job_spec js;
        while (traceload_next(s, &js)) {
            job_table_add(t, &js);
        }
        cr_assert_eq(job_table_count(t), st->jobs);
    }
    traceload_destroy(s);
    return rc;
}

/* Load `text` (philly format) with opts o into a fresh table. */
static job_table *load(const char *text, traceload_opts *o, traceload_stats *st, arena *a)
{
    fx x;
    cr_assert_eq(open_fx(&x, TRACE_PHILLY, true, text), 0);
    job_table *t = job_table_create();
    cr_assert_eq(take_jobs(x.r, o, a, x.d, t, st), 0);
    close_fx(&x);
    return t;
}

Test(traceload, window_rules_and_duration_to_work)
{
    /* unsorted, as philly.csv is; the first submission (00:00:00) is the origin */
    static const char text[] = "timestamp,duration,num_gpus,gpu_time,cluster\n"
                               "2017-10-01 02:00:00,100,1,100,vcA\n"
                               "2017-10-01 00:00:00,50,1,50,vcB\n"
                               "2017-10-01 01:00:00,40,16,640,vcA\n"
                               "2017-10-01 03:00:00,10,1,10,vcA\n";
    traceload_rule rules[] = {
        {.queue = "vcA", .gpus_min = 2, .class_name = "big", .profile = "p", .work_factor = 0.25},
        {.queue = "vcA", .class_name = "small", .work_factor = 2.0},
    };
    traceload_opts o = {.start_s = 1800,
                        .length_s = 7200,
                        .resource = "nvidia.com/gpu",
                        .default_class = "philly",
                        .max_per_worker = 8,
                        .fallback_factor = 3.0,
                        .n_rules = 2,
                        .rules = rules};
    traceload_stats st;
    arena *a = arena_create();
    job_table *t = load(text, &o, &st, a);
    /* window [00:30, 02:30): the 00:00 and 03:00 jobs fall outside */
    cr_assert_eq(st.rows, 4);
    cr_assert_eq(st.outside, 2);
    cr_assert_eq(job_table_count(t), 2);
    const job *j0 = job_table_get(t, 0), *j1 = job_table_get(t, 1);
    /* 01:00 is 1800 s after the window's start; 16 GPUs -> 2 workers of 8; 40 s x 0.25 = 10 */
    cr_assert_eq(j0->spec.submit, sim_time_from_s(1800));
    cr_assert_str_eq(j0->spec.class_name, "big");
    cr_assert_str_eq(j0->spec.profile, "p");
    cr_assert(j0->spec.req.per_worker == 8 && j0->spec.req.n_workers == 2);
    cr_assert_float_eq(j0->spec.work_s, 10.0, 1e-12);
    cr_assert_str_eq(j0->spec.pod.queue, "vcA");
    /* 02:00 -> 5400 s; the second rule (no profile, GPU-bound): 100 s x 2.0 = 200 */
    cr_assert_eq(j1->spec.submit, sim_time_from_s(5400));
    cr_assert_str_eq(j1->spec.class_name, "small");
    cr_assert_null(j1->spec.profile);
    cr_assert_float_eq(j1->spec.work_s, 200.0, 1e-12);
    cr_assert_eq(st.fallback, 1); /* of the two jobs kept, the 02:00 one has no profile */
    cr_assert_float_eq(st.first_submit_s, csvin_epoch_s(2017, 10, 1, 0, 0, 0), 1e-3);
    job_table_destroy(t);
    arena_destroy(a);
}

Test(traceload, unmatched_jobs_take_the_fallback_factor)
{
    static const char text[] = "timestamp,duration,num_gpus,gpu_time,cluster\n"
                               "2017-10-01 00:00:00,50,4,200,vcB\n";
    traceload_opts o = {.resource = "nvidia.com/gpu",
                        .default_class = "philly",
                        .max_per_worker = 8,
                        .fallback_factor = 3.0};
    traceload_stats st;
    arena *a = arena_create();
    job_table *t = load(text, &o, &st, a);
    const job *j = job_table_get(t, 0);
    cr_assert_str_eq(j->spec.class_name, "philly");
    cr_assert_float_eq(j->spec.work_s, 150.0, 1e-12); /* 50 s x 3.0 */
    cr_assert(j->spec.req.per_worker == 4 && j->spec.req.n_workers == 1);
    job_table_destroy(t);
    arena_destroy(a);
}

/* n openb pods of `gpus` whole GPUs each, as an arrival-only load over capacity `cap_gpus`. */
static job_table *arrival_load(int n, int gpus, double inflate, uint64_t cap_gpus,
                               traceload_stats *st, arena *a)
{
    static char text[8192];
    int used = snprintf(text, sizeof text, "%s", openb_hdr);
    for (int i = 0; i < n; i++) {
        used += snprintf(text + used, sizeof text - (size_t)used,
                         "p%d,1000,1024,%d,1000,,LS,Running,%d,%d,%d\n", i, gpus, i, i + 5, i);
    }
    fx x;
    cr_assert_eq(open_fx(&x, TRACE_OPENB, false, text), 0);
    traceload_opts o = {.arrival_only = true,
                        .resource = "nvidia.com/gpu",
                        .max_per_worker = 8,
                        .fallback_factor = 1,
                        .shuffle = true,
                        .inflate = inflate,
                        .capacity_milli = cap_gpus * 1000,
                        .interval_s = 2.0,
                        .seed = 42};
    job_table *t = job_table_create();
    cr_assert_eq(take_jobs(x.r, &o, a, x.d, t, st), 0);
    close_fx(&x);
    return t;
}

Test(traceload, arrival_only_inflates_to_the_target_share)
{
    arena *a = arena_create();
    traceload_stats st;
    /* 4 one-GPU pods on 10 GPUs at 1.0: clones are added while total + 1000 <= 10000, so the
     * workload grows to exactly 10 pods (10000 milli-GPU): 6 clones */
    job_table *t = arrival_load(4, 1, 1.0, 10, &st, a);
    cr_assert_eq(job_table_count(t), 10);
    cr_assert_eq(st.inflated, 6);
    cr_assert_eq(st.milli_total, 10000);
    cr_assert_eq(st.open, 10);
    for (job_id k = 0; k < 10; k++) { /* one arrival every 2 s, never ending */
        cr_assert_eq(job_table_get(t, k)->spec.submit, sim_time_from_s(2.0 * k));
        cr_assert_float_eq(job_table_get(t, k)->spec.work_s, TRACELOAD_OPEN_WORK_S, 1);
    }
    job_table_destroy(t);
    /* 12 two-GPU pods (24000) on 10 GPUs at 1.3 (13000): removed until <= 13000: 6 pods stay */
    t = arrival_load(12, 2, 1.3, 10, &st, a);
    cr_assert_eq(job_table_count(t), 6);
    cr_assert_eq(st.removed, 6);
    cr_assert_eq(st.milli_total, 12000);
    job_table_destroy(t);
    arena_destroy(a);
}

Test(traceload, arrival_only_shuffle_is_seeded)
{
    arena *a = arena_create();
    traceload_stats st;
    job_table *t1 = arrival_load(30, 1, 0, 100, &st, a);
    job_table *t2 = arrival_load(30, 1, 0, 100, &st, a);
    cr_assert_eq(job_table_count(t1), 30);
    /* same seed, same order; the jobs are identical here, so compare the pod memory as set */
    for (job_id k = 0; k < 30; k++) {
        cr_assert_eq(job_table_get(t1, k)->spec.submit, job_table_get(t2, k)->spec.submit);
    }
    job_table_destroy(t1);
    job_table_destroy(t2);
    arena_destroy(a);
}

/* ---- duration -> work (model/physics/tracework.h) ------------------------------------------------------
 */

Test(tracework, gpu_bound_scales_with_sms_and_mig_efficiency)
{
    gpu_type g = fixture_gpu();
    phys_params m = fixture_params();
    m.mig_sm_eff = 0.9;
    partition_cfg to;
    partition_cfg_init(&to, &g);
    to.mig = &g.profiles[1]; /* 3g.20gb: 42 SMs */
    double f = 0;
    char why[128];
    /* GPU-bound: t = C / (s x mig_eff) (no power cap on the fixture GPU, no host or memory
     * time): traced on the whole 100-SM GPU, run on 42 SMs at 0.9: 100 / (42 x 0.9) */
    cr_assert_eq(tracework_factor(NULL, 1, &g, &to, &m, &f, why, sizeof why), 0);
    cr_assert_float_eq(f, 100.0 / 37.8, 1e-9);
    /* whole GPU to whole GPU of the same type: 1 */
    partition_cfg whole;
    partition_cfg_init(&whole, &g);
    cr_assert_eq(tracework_factor(NULL, 1, &g, &whole, &m, &f, why, sizeof why), 0);
    cr_assert_float_eq(f, 1.0, 1e-12);
    /* no traced type: durations are taken as they are */
    cr_assert_eq(tracework_factor(NULL, 1, NULL, &to, &m, &f, why, sizeof why), 0);
    cr_assert_float_eq(f, 1.0, 1e-12);
}

Test(tracework, a_profile_keeps_its_host_time)
{
    gpu_type g = fixture_gpu();
    phys_params m = fixture_params();
    m.mig_sm_eff = 0.9;
    /* H = 1 s, C = 100 SM-s per iteration: whole GPU 1 + 100/100 = 2 s; 3g.20gb
     * 1 + 100/(42 x 0.9) = 3.645502645 s; factor 1.8227513227 */
    wl_profile p = {.name = "h", .host_s_fixed = 1.0};
    p.compute_sm_s_fixed[WL_CLASS_FP32] = 100.0;
    partition_cfg to;
    partition_cfg_init(&to, &g);
    to.mig = &g.profiles[1];
    double f = 0;
    char why[128];
    cr_assert_eq(tracework_factor(&p, 1, &g, &to, &m, &f, why, sizeof why), 0);
    cr_assert_float_eq(f, (1.0 + 100.0 / 37.8) / 2.0, 1e-9);
    /* a footprint larger than the partition cannot carry: the physics says OOM */
    p.mem_footprint_bytes_fixed = 30.0 * 1073741824.0;
    cr_assert_eq(tracework_factor(&p, 1, &g, &to, &m, &f, why, sizeof why), -1);
    cr_assert(strstr(why, "oom on the requested partition") != NULL, "%s", why);
}

/* ---- a traced run, end to end (tests/traces/philly-small.yaml) ------------------------------- */

#define SMALL_SCENARIO "tests/traces/philly-small.yaml"

/* Run a traced scenario into a new temporary directory (returned, caller frees). */
static char *run_traced(const char *scenario, const char *const *sets, size_t n_sets)
{
    char tmpl[] = "/tmp/slicesim-trace-XXXXXX";
    char *dir = mkdtemp(tmpl);
    cr_assert_not_null(dir);
    FILE *devnull = fopen("/dev/null", "w");
    run_opts o = {.scenario = scenario,
                  .out_dir = dir,
                  .sets = sets,
                  .n_sets = n_sets,
                  .summary = devnull,
                  .errors = stderr,
                  .verify_every = 1};
    cr_assert_eq(run_scenario(&o), 0);
    fclose(devnull);
    return strdup(dir);
}

/* The small traced scenario (philly-small.yaml), as run_traced. */
static char *run_small(const char *const *sets, size_t n_sets)
{
    return run_traced(SMALL_SCENARIO, sets, n_sets);
}

static char *file_in(const char *dir, const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return path;
}

static void remove_run(const char *dir)
{
    remove(file_in(dir, "run.json"));
    remove(file_in(dir, "run_info.json"));
    remove(file_in(dir, "jobs.csv"));
    rmdir(dir);
}

/* The jobs.csv of dir: per job, its class and its start, end and JCT (s), read by column name. */
typedef struct small_job {
    char cls[32];
    double start, end, jct;
} small_job;

static size_t read_jobs(const char *dir, small_job *out, size_t max)
{
    FILE *f = fopen(file_in(dir, "jobs.csv"), "r");
    cr_assert_not_null(f);
    diag *d = diag_create();
    csvin *r = NULL;
    cr_assert_eq(csvin_open(f, "jobs.csv", true, d, &r), 0);
    int c_cls = csvin_column(r, "class"), c_start = csvin_column(r, "start_s");
    int c_end = csvin_column(r, "end_s"), c_jct = csvin_column(r, "jct_s");
    cr_assert(c_cls >= 0 && c_start >= 0 && c_end >= 0 && c_jct >= 0);
    size_t n = 0;
    while (n < max && csvin_next(r) == 1) {
        snprintf(out[n].cls, sizeof out[n].cls, "%s", csvin_field(r, (size_t)c_cls));
        cr_assert(csvin_double(r, (size_t)c_start, 0, 1e9, &out[n].start));
        cr_assert(csvin_double(r, (size_t)c_end, 0, 1e9, &out[n].end));
        cr_assert(csvin_double(r, (size_t)c_jct, 0, 1e9, &out[n].jct));
        n++;
    }
    csvin_close(r);
    diag_destroy(d);
    fclose(f);
    return n;
}

Test(trace_run, philly_jobs_keep_their_traced_durations_on_the_traced_gpu)
{
    /* Submissions 00:00:00 (1 GPU, 100 s), 00:00:10 (2 GPUs, 50 s), 00:00:20 (8 GPUs, 30 s),
     * listed out of order. Traced on the A100 they ask for whole: work = duration. FIFO on one
     * 8-GPU node: the first two start at once and end at 100 and 60; the 8-GPU job waits for
     * both, starts at 100 and ends at 130: JCTs 100, 50, 110. */
    char *dir = run_small(NULL, 0);
    small_job j[4];
    cr_assert_eq(read_jobs(dir, j, 4), 3);
    cr_assert_str_eq(j[0].cls, "a");
    cr_assert_str_eq(j[2].cls, "philly"); /* queue vcB matches no rule */
    double want_start[] = {0, 10, 100}, want_end[] = {100, 60, 130}, want_jct[] = {100, 50, 110};
    for (int i = 0; i < 3; i++) {
        cr_assert_float_eq(j[i].start, want_start[i], 1e-9, "job %d", i);
        cr_assert_float_eq(j[i].end, want_end[i], 1e-9, "job %d", i);
        cr_assert_float_eq(j[i].jct, want_jct[i], 1e-9, "job %d", i);
    }
    remove_run(dir);
    free(dir);
}

Test(trace_run, set_overrides_trace_fields_and_runs_repeat_bytewise)
{
    /* --set on a trace field: a 15 s window from the first submission keeps the first two */
    const char *sets[] = {"workload.trace.length=15s"};
    char *a = run_small(sets, 1), *b = run_small(sets, 1);
    small_job j[4];
    cr_assert_eq(read_jobs(a, j, 4), 2);
    size_t la = 0, lb = 0;
    char *ra = NULL, *rb = NULL;
    cr_assert_eq(fileio_read_all(file_in(a, "run.json"), FILEIO_MAX_BYTES, &ra, &la), 0);
    cr_assert_eq(fileio_read_all(file_in(b, "run.json"), FILEIO_MAX_BYTES, &rb, &lb), 0);
    cr_assert(la == lb && memcmp(ra, rb, la) == 0, "run.json differs between two runs");
    cJSON *root = cJSON_Parse(ra);
    cJSON *tr = cJSON_GetObjectItemCaseSensitive(root, "trace");
    cr_assert_not_null(tr);
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(tr, "outside_window")->valuedouble, 1.0);
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(tr, "gpu_bound_fallback")->valuedouble, 2.0);
    cJSON_Delete(root);
    free(ra);
    free(rb);
    remove_run(a);
    remove_run(b);
    free(a);
    free(b);
}

/* tests/traces/philly-miso.yaml: the same three Philly jobs (100, 50 and 30 s on a whole
 * A100-SXM4-40GB; 1, 2 and 8 GPUs) mapped to any MIG slice with the cern-finetune profile. Each
 * asks for one slice (per_worker 1, one worker, whatever its GPU count), its work is its traced
 * duration carried to the largest profile, D x t(7g.40gb) / t(whole A100) with t from
 * predict_unit_estimate at the profile's batch, and MISO runs it on a MIG instance. */
Test(trace_run, traced_jobs_mapped_to_any_slice_count_their_work_on_the_largest_profile)
{
    char *dir = run_traced("tests/traces/philly-miso.yaml", NULL, 0);
    arena *a = arena_create();
    diag *d = diag_create();
    phys_params m;
    gpu_catalog cat;
    cr_assert_eq(physics_load_default(d, &m), 0);
    cr_assert_eq(catalog_load_default(a, &cat, d), 0);
    const unsigned char *data;
    size_t len;
    cr_assert(embedded_get("workloads/library/cern-finetune.yaml", &data, &len));
    obs_profile *op = NULL;
    cr_assert_eq(obs_load_profile("cern-finetune.yaml", data, len, &m, a, d, &op), 0);
    const gpu_type *g = gpu_catalog_find(&cat, "A100-SXM4-40GB");
    partition_cfg pc;
    partition_cfg_init(&pc, g);
    speed_result whole, seven;
    predict_unit_estimate(&op->p, op->ref_batch, &pc, &m, &whole);
    for (int i = 0; i < g->n_profiles; i++) {
        pc.mig = strcmp(g->profiles[i].name, "7g.40gb") ? pc.mig : &g->profiles[i];
    }
    cr_assert_not_null(pc.mig);
    predict_unit_estimate(&op->p, op->ref_batch, &pc, &m, &seven);
    double factor = seven.unit_time_s / whole.unit_time_s;
    cr_assert(factor > 1 && factor < 1.2); /* 98 of 108 SMs with MIG on, less MIG's loss */
    FILE *f = fopen(file_in(dir, "jobs.csv"), "r");
    cr_assert_not_null(f);
    csvin *r = NULL;
    cr_assert_eq(csvin_open(f, "jobs.csv", true, d, &r), 0);
    int c_res = csvin_column(r, "resource"), c_per = csvin_column(r, "per_worker");
    int c_workers = csvin_column(r, "workers"), c_work = csvin_column(r, "work_s");
    int c_out = csvin_column(r, "outcome"), c_pl = csvin_column(r, "placement");
    double traced[] = {100, 50, 30};
    size_t n = 0;
    while (csvin_next(r) == 1) {
        cr_assert_lt(n, 3);
        cr_assert_str_eq(csvin_field(r, (size_t)c_res), "nvidia.com/mig-any");
        cr_assert_str_eq(csvin_field(r, (size_t)c_per), "1");
        cr_assert_str_eq(csvin_field(r, (size_t)c_workers), "1");
        cr_assert_str_eq(csvin_field(r, (size_t)c_out), "done");
        cr_assert_not_null(strstr(csvin_field(r, (size_t)c_pl), "g."), "not on a MIG instance");
        double w;
        cr_assert(csvin_double(r, (size_t)c_work, 0, 1e9, &w));
        cr_assert_float_eq(w, traced[n] * factor, 1e-9 * w, "job %zu", n);
        n++;
    }
    cr_assert_eq(n, 3);
    csvin_close(r);
    fclose(f);
    diag_destroy(d);
    arena_destroy(a);
    remove_run(dir);
    free(dir);
}

Test(traceload, cpu_only_pods_kept_or_skipped)
{
    char text[1024];
    snprintf(text, sizeof text,
             "%sp0,4000,1024,0,0,,BE,Failed,100,300,\np1,8000,2048,1,500,,LS,Running,150,200,150\n",
             openb_hdr);
    arena *a = arena_create();
    for (int keep = 0; keep < 2; keep++) {
        fx x;
        cr_assert_eq(open_fx(&x, TRACE_OPENB, true, text), 0);
        traceload_opts o = {.resource = "nvidia.com/gpu",
                            .default_class = "openb",
                            .max_per_worker = 8,
                            .fallback_factor = 1,
                            .keep_cpu_pods = keep};
        traceload_stats st;
        job_table *t = job_table_create();
        cr_assert_eq(take_jobs(x.r, &o, a, x.d, t, &st), 0);
        close_fx(&x);
        cr_assert_eq(job_table_count(t), keep ? 2 : 1);
        cr_assert_eq(st.cpu_only, keep ? 0 : 1);
        cr_assert_eq(st.cpu_jobs, keep ? 1 : 0);
        cr_assert_eq(st.fallback, 1); /* the GPU pod only */
        const job *g = job_table_get(t, keep ? 1 : 0);
        cr_assert_eq(g->spec.pod.gpu_milli, 500);
        cr_assert_float_eq(g->spec.work_s, 50.0, 1e-12); /* 200 - 150 */
        if (keep) {
            const job *c = job_table_get(t, 0); /* submitted first, at the window's start */
            cr_assert_eq(c->spec.req.per_worker, 0);
            cr_assert_eq(c->spec.req.n_workers, 1);
            cr_assert_eq(c->spec.pod.cpu_milli, 4000);
            cr_assert_eq(c->spec.pod.host_mem_bytes, 1024ull << 20);
            cr_assert_float_eq(c->spec.work_s, 200.0, 1e-12);  /* 300 - 100 */
            cr_assert_eq(g->spec.submit, sim_time_from_s(50)); /* 150 - 100 */
        }
        job_table_destroy(t);
    }
    arena_destroy(a);
}

/* Every shipped trace scenario loads and passes the checks `slicesim check` makes (the trace files'
 * headers and first rows included); they read ../shared/traces, so the test skips without it. */
Test(trace_run, shipped_trace_scenarios_check)
{
    if (access("../shared/traces/philly/philly.csv", R_OK) != 0) {
        cr_skip_test("../shared/traces is absent");
    }
    static const char *const files[] = {
        "experiments/traces/openb-fgd.yaml",   "experiments/traces/openb-timed.yaml",
        "experiments/traces/philly-a100.yaml", "experiments/traces/philly-mig.yaml",
        "experiments/traces/philly-ts4.yaml",  "experiments/traces/helios-venus.yaml",
        "experiments/traces/dlrm.yaml",        "experiments/traces/dlrm-service.yaml"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        arena *a = arena_create();
        diag *d = diag_create();
        scenario_spec *s = NULL;
        int rc = scenario_load_file(files[i], NULL, 0, 0, a, d, &s);
        cr_assert_eq(rc, 0, "%s: %s", files[i], diag_error_count(d) ? fx_diag_message(d, 0) : "");
        cr_assert(cfg_present(s->workload.trace.at) ||
                      (s->n_services > 0 && cfg_present(s->services[0].trace.at)),
                  "%s", files[i]);
        diag_destroy(d);
        arena_destroy(a);
    }
}

Test(trace, dlrm_helios_csv_bad_rows)
{
    /* dlrm: a deletion before the creation */
    static const char dlrm[] =
        "instance_sn,app_name,cpu_request,gpu_request,memory_request,creation_time,"
        "deletion_time\n"
        "i0,app_0,12,1,120.0,500.0,400.0\n";
    fx x;
    cr_assert_eq(open_fx(&x, TRACE_DLRM, true, dlrm), 0);
    trace_record rec;
    cr_assert_eq(trace_next(x.r, &rec), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(x.d, 0), "t.csv:2:27: error: deletion_time: ends before it is "
                                           "submitted; expected a time >= 500, got '400.0'");
    close_fx(&x);
    /* csv: "nan" (pandas' missing value) where a submission time is needed names what it read */
    static const char nan_submit[] = "t,run_s,n\nnan,5,1\n";
    x.f = fmemopen((void *)nan_submit, sizeof nan_submit - 1, "r");
    x.d = diag_create();
    x.src = (trace_src){.format = TRACE_CSV, .file = "c.csv", .need_times = true};
    x.src.columns = (trace_columns){.submit = "t", .duration = "run_s", .gpus = "n"};
    cr_assert_eq(trace_open(&x.src, x.f, x.d, &x.r), 0);
    cr_assert_eq(trace_next(x.r, &rec), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(x.d, 0), "c.csv:2:1: error: t: missing value; expected a "
                                           "submission time, got 'nan'");
    close_fx(&x);
    /* helios: more GPU jobs than GPUs in a bin */
    static const char helios[] = "time,submit_gpu_job,submit_gpu_num\n"
                                 "2020-04-01 00:00:00,3,2\n";
    x.f = fmemopen((void *)helios, sizeof helios - 1, "r");
    x.d = diag_create();
    x.src = (trace_src){.format = TRACE_HELIOS,
                        .file = "h.csv",
                        .need_times = true,
                        .columns = trace_preset(TRACE_HELIOS),
                        .duration_s = {SYNTH_FIXED, 60, 0}};
    cr_assert_eq(trace_open(&x.src, x.f, x.d, &x.r), 0);
    cr_assert_eq(trace_next(x.r, &rec), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(x.d, 0), "h.csv:2:23: error: submit_gpu_num: fewer GPUs than "
                                           "GPU jobs in the bin; expected at least 3, got '2'");
    close_fx(&x);
    /* csv: a mapped column missing from the header, then a bad duration */
    static const char csv[] = "t,run_s,n\n5,-1,1\n";
    x.f = fmemopen((void *)csv, sizeof csv - 1, "r");
    x.d = diag_create();
    x.src = (trace_src){.format = TRACE_CSV, .file = "c.csv", .need_times = true};
    x.src.columns = (trace_columns){.submit = "t", .duration = "run_s", .gpus = "gpus"};
    cr_assert_eq(trace_open(&x.src, x.f, x.d, &x.r), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(x.d, 0), "c.csv:1:1: error: gpus: missing column in the header; "
                                           "expected a csv trace with a column 'gpus', got [t, "
                                           "run_s, n]");
    close_fx(&x);
    x.f = fmemopen((void *)csv, sizeof csv - 1, "r");
    x.d = diag_create();
    x.src.columns.gpus = "n";
    cr_assert_eq(trace_open(&x.src, x.f, x.d, &x.r), 0);
    cr_assert_eq(trace_next(x.r, &rec), SIM_EINPUT);
    cr_assert_str_eq(fx_diag_message(x.d, 0), "c.csv:2:3: error: run_s: out of range; expected a "
                                           "number from 0 to 3e+09, got '-1'");
    close_fx(&x);
}

/* ---- live instances: a service's arrivals from the DLRM trace (tests/traces/dlrm-small.csv) */

/* The fixture's GPU instances of app_0: i0 [0, 10) (no creation: alive before the trace), i1
 * [4, 8), i4 from 12 (never deleted); i2 is a CPU-only (CN) instance, i3 belongs to app_1 [1, 3).
 * Levels by hand: app_0 1 from 0, 2 from 4, 1 from 8, 0 from 10, 1 from 12; every app adds i3:
 * 1 from 0, 2 from 1, 1 from 3, 2 from 4, 1 from 8, 0 from 10, 1 from 12. */
static void live_of(const char *app, tracelive *out, arena *a)
{
    FILE *f = fopen("tests/traces/dlrm-small.csv", "r");
    cr_assert_not_null(f);
    diag *d = diag_create();
    trace_src src = {.format = TRACE_DLRM, .file = "dlrm-small.csv", .need_times = true};
    src.columns = trace_preset(TRACE_DLRM);
    trace_reader *r = NULL;
    cr_assert_eq(trace_open(&src, f, d, &r), 0);
    cr_assert_eq(tracelive_read(r, app, a, out), 0);
    trace_close(r);
    diag_destroy(d);
    fclose(f);
}

Test(tracelive, dlrm_gpu_instances_of_an_app_as_steps)
{
    arena *a = arena_create();
    tracelive l;
    live_of("app_0", &l, a);
    const double t0[] = {0, 4, 8, 10, 12}, l0[] = {1, 2, 1, 0, 1};
    cr_assert_eq(l.n_steps, 5);
    cr_assert_eq(l.n_records, 3);
    cr_assert_eq(l.n_rows, 5);
    cr_assert_eq(l.max_level, 2);
    for (size_t i = 0; i < 5; i++) {
        cr_assert(l.t[i] == t0[i] && l.level[i] == l0[i], "step %zu: %g %g", i, l.t[i], l.level[i]);
    }
    live_of(NULL, &l, a);
    const double t1[] = {0, 1, 3, 4, 8, 10, 12}, l1[] = {1, 2, 1, 2, 1, 0, 1};
    cr_assert_eq(l.n_steps, 7);
    cr_assert_eq(l.n_records, 4);
    for (size_t i = 0; i < 7; i++) {
        cr_assert(l.t[i] == t1[i] && l.level[i] == l1[i], "step %zu: %g %g", i, l.t[i], l.level[i]);
    }
    arena_destroy(a);
}

/* tests/traces/dlrm-service.yaml: 1 request/s per live app_0 instance, evenly spaced, 14 s. The
 * cumulative rate L(t) = t on [0, 4], 4 + 2 (t - 4) on [4, 8], 12 + (t - 8) on [8, 10], 14 on
 * [10, 12], 14 + (t - 12) after: arrivals where L = 1, 2, ... before 14 s: 1 2 3 4, 4.5 ... 8
 * (8), 9 10, 13: 15 requests, each served alone on an idle replica (all meet the 100 ms SLO). */
Test(trace_run, service_requests_follow_the_dlrm_instances)
{
    char dir[64];
    cr_assert(test_tmpdir(dir, sizeof dir, "dlrmsvc"));
    FILE *devnull = fopen("/dev/null", "w");
    run_opts o = {.scenario = "tests/traces/dlrm-service.yaml", .out_dir = dir,
                  .summary = devnull, .errors = stderr, .verify_every = 1};
    cr_assert_eq(run_scenario(&o), 0);
    fclose(devnull);
    char *text = NULL;
    size_t len = 0;
    cr_assert_eq(fileio_read_all(file_in(dir, "run.json"), FILEIO_MAX_BYTES, &text, &len), 0);
    cJSON *root = cJSON_Parse(text);
    cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "metrics");
    cJSON *sv = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(m, "services"), 0);
    cr_assert_not_null(sv);
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(sv, "requests")->valuedouble, 15.0);
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(sv, "done")->valuedouble, 15.0);
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(sv, "slo_attainment")->valuedouble, 1.0);
    cJSON_Delete(root);
    free(text);
    cr_assert(test_rm_rf(dir));
}

Test(traceload, a_pod_whose_gpu_spec_no_node_has_is_never_placeable_not_blocking)
{
    /* before: the V100M16 pod headed the FIFO queue of an A100 cluster and all 4 pods stayed
     * queued to the horizon ("0 done, 4 queued"); now it is counted as never placeable and the
     * other 3 (no gpu_spec, A100-SXM4-40GB, V100M16|A100-SXM4-40GB) run */
    char dir[64], cmd[512], out[4096];
    cr_assert(test_tmpdir(dir, sizeof dir, "gpuspec"));
    snprintf(cmd, sizeof cmd, "./slicesim run tests/traces/openb-gpu-spec.yaml -o %s/o 2>&1", dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "trace: 4 rows -> 3 jobs (0 CPU-only, 0 CPU-only skipped, 0 "
                                   "outside the window, 1 never placeable"),
                       "%s", out);
    cr_expect_not_null(strstr(out, "jobs: 3: 3 done, 0 failed (OOM), 0 running, 0 queued"), "%s",
                       out);
    char path[128], *text = NULL;
    size_t len = 0;
    snprintf(path, sizeof path, "%s/o/run.json", dir);
    cr_assert_eq(fileio_read_all(path, FILEIO_MAX_BYTES, &text, &len), 0);
    cJSON *run = cJSON_ParseWithLength(text, len);
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(run, "trace");
    cr_expect_eq(cJSON_GetObjectItemCaseSensitive(tr, "unplaceable_dropped")->valuedouble, 1);
    cr_expect_eq(cJSON_GetObjectItemCaseSensitive(tr, "jobs")->valuedouble, 3);
    cJSON_Delete(run);
    free(text);
    cr_assert(test_rm_rf(dir));
}

/* ---- rows read again as the run reaches them (workloads/traceload.h) ------------------------- */

/* Strings of two jobs: both absent or equal text (each stream interns its own). */
static bool same_str(const char *a, const char *b)
{
    return a == b || (a && b && !strcmp(a, b));
}

/* The jobs of `text` (openb, timed) from one stream: read through a file it can read again (a
 * memory stream) or a pipe (held in memory). */
static size_t stream_jobs(const char *text, bool pipe_it, job_spec *out, size_t max, arena *a,
                          traceload_stats *st)
{
    FILE *f;
    if (pipe_it) {
        int fd[2];
        cr_assert_eq(pipe(fd), 0);
        cr_assert_eq(write(fd[1], text, strlen(text)), (ssize_t)strlen(text));
        close(fd[1]);
        f = fdopen(fd[0], "r");
    } else {
        f = fmemopen((void *)text, strlen(text), "r");
    }
    cr_assert_not_null(f);
    diag *d = diag_create();
    trace_src src = {.format = TRACE_OPENB, .file = "p.csv", .need_times = true};
    src.columns = trace_preset(TRACE_OPENB);
    trace_reader *r = NULL;
    cr_assert_eq(trace_open(&src, f, d, &r), 0);
    cr_assert_eq(trace_seekable(r), !pipe_it);
    traceload_rule rule = {.gpus_min = 2, .class_name = "multi", .profile = "p", .work_factor = 2};
    traceload_opts o = {.start_s = 5,
                        .resource = "nvidia.com/gpu",
                        .default_class = "openb",
                        .max_per_worker = 8,
                        .keep_cpu_pods = true,
                        .fallback_factor = 1.5,
                        .n_rules = 1,
                        .rules = &rule};
    traceload_stream *s = NULL;
    cr_assert_eq(traceload_open(r, &o, a, d, st, &s), 0);
    size_t n = 0;
    while (n < max && traceload_next(s, &out[n])) {
        n++;
    }
    cr_assert_eq(n, traceload_count(s));
    cr_assert_eq(traceload_status(s), 0);
    cr_assert_eq(diag_error_count(d), 0);
    traceload_destroy(s);
    trace_close(r);
    fclose(f);
    diag_destroy(d);
    return n;
}

/* A job whose row is read again by offset when the run reaches it is the job the checking pass
 * made of it: the same fields as when every job is held from the pass on (a pipe). */
Test(traceload, a_job_read_again_is_the_job_of_the_checking_pass)
{
    char text[4096];
    int used = snprintf(text, sizeof text, "%s", openb_hdr);
    static const char *const spec[] = {"", "V100M16", "A100-SXM4-40GB|V100M16"};
    for (int i = 0; i < 24; i++) { /* unsorted times, ties, CPU-only pods, open-ended pods */
        int t = (i * 7) % 11;
        used += snprintf(text + used, sizeof text - (size_t)used,
                         "p%d,%d,%d,%d,%d,%s,%s,Running,%d,%s,%d\n", i, 1000 * (i % 5),
                         512 * i, i % 4, i % 4 ? 250 * (1 + i % 4) : 0, spec[i % 3],
                         i % 2 ? "LS" : "BE", t, i % 6 ? "300" : "", t);
    }
    arena *a = arena_create();
    job_spec again[32], held[32];
    traceload_stats sa, sh;
    size_t n = stream_jobs(text, false, again, 32, a, &sa);
    cr_assert_eq(stream_jobs(text, true, held, 32, a, &sh), n);
    cr_assert_eq(sa.jobs, sh.jobs);
    cr_assert(sa.open == sh.open && sa.fallback == sh.fallback && sa.cpu_jobs == sh.cpu_jobs &&
              sa.outside == sh.outside && sa.outside > 0 && sa.open > 0 && sa.cpu_jobs > 0);
    for (size_t i = 0; i < n; i++) {
        const job_spec *x = &again[i], *y = &held[i];
        cr_assert(i == 0 || x->submit >= again[i - 1].submit);
        cr_assert_eq(x->submit, y->submit, "job %zu", i);
        cr_assert_eq(x->work_s, y->work_s, "job %zu", i);
        cr_assert(x->req.per_worker == y->req.per_worker && x->req.n_workers == y->req.n_workers);
        cr_assert(x->mem_bytes == y->mem_bytes && x->pod.gpu_milli == y->pod.gpu_milli &&
                  x->pod.cpu_milli == y->pod.cpu_milli &&
                  x->pod.host_mem_bytes == y->pod.host_mem_bytes && x->pod.clone == y->pod.clone);
        cr_assert(same_str(x->class_name, y->class_name) && same_str(x->profile, y->profile) &&
                  same_str(x->req.resource, y->req.resource) &&
                  same_str(x->pod.gpu_spec, y->pod.gpu_spec) && same_str(x->pod.qos, y->pod.qos),
                  "job %zu", i);
    }
    arena_destroy(a);
}

/* The trace rewritten between the checking pass and the run (on_spec runs after the builder):
 * the run stops at the first changed row it reaches, reports it at its line and writes nothing. */
static void change_trace(void *ctx, const scenario_spec *s)
{
    (void)s;
    cr_assert(test_write_text(ctx, "timestamp,duration,num_gpus,gpu_time,cluster\n"
                                   "2017-10-01 00:00:20,30,8,240,vcB\n"
                                   "2017-10-01 00:00:00,100,1,100,vcA\n"
                                   "2017-10-01 00:00:10,55,2,100,vcA\n"));
}

Test(trace_run, a_trace_changed_during_the_run_is_an_input_error_at_its_row)
{
    char dir[256], yaml[512], csv[512], err[512], text[4096];
    cr_assert(test_tmpdir(dir, sizeof dir, "changed"));
    snprintf(yaml, sizeof yaml, "%s/s.yaml", dir);
    snprintf(csv, sizeof csv, "%s/philly-small.csv", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    cr_assert(test_read_text(SMALL_SCENARIO, text, sizeof text));
    cr_assert(test_write_text(yaml, text));
    cr_assert(test_read_text("tests/traces/philly-small.csv", text, sizeof text));
    cr_assert(test_write_text(csv, text));
    FILE *errors = fopen(err, "w");
    char out[600];
    snprintf(out, sizeof out, "%s/o", dir);
    run_opts o = {.scenario = yaml, .out_dir = out, .errors = errors,
                  .on_spec = change_trace, .on_spec_ctx = csv};
    cr_assert_eq(run_scenario(&o), SIM_EINPUT);
    fclose(errors);
    cr_assert(test_read_text(err, text, sizeof text));
    /* the row of 00:00:10 (line 4), the second job, was 50 s */
    cr_expect_not_null(strstr(text, "philly-small.csv:4:1: error: the file changed during the "
                                    "run; expected the row read when the run began at byte 112, "
                                    "got other text"),
                       "%s", text);
    cr_expect_neq(access(out, F_OK), 0, "%s: a run abandoned writes nothing", out);
    cr_assert(test_rm_rf(dir));
}
