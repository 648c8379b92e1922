/* Tests of `slicesim bench run` (tools/bench_run.c): it runs the scenario as `run` does and prints
 * its counts, time and memory beside the targets; bad usage exits 2. No timing is asserted
 * (speed is measured by `make bench`, not by tests). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/sh.h"

/* Five one-GPU jobs arriving every minute (fixed interval), 10 minutes each, on one node: exactly
 * five jobs whatever the seed. */
static const char scenario[] = "name: bench-five\n"
                               "seed: 1\n"
                               "horizon: 1h\n"
                               "cluster:\n"
                               "  nodes:\n"
                               "    - {name: n, gpu: A100-SXM4-40GB, gpus_per_node: 2}\n"
                               "workload:\n"
                               "  jobs:\n"
                               "    - {name: five, arrival: fixed, interval: 1m, count: 5,\n"
                               "       duration: 10m, request: {nvidia.com/gpu: 1}}\n"
                               "policy: {scheduler: fifo}\n";

Test(bench_run, runs_the_scenario_and_prints_the_verdict)
{
    char dir[64], path[128], cmd[512], out[1024];
    cr_assert(test_tmpdir(dir, sizeof dir, "benchrun"));
    snprintf(path, sizeof path, "%s/five.yaml", dir);
    cr_assert(test_write_text(path, scenario));

    /* generous targets: within; the line names the scenario and its five jobs */
    snprintf(cmd, sizeof cmd,
             "./slicesim bench run %s -o %s/out --target-s 1000 --target-mb 100000 2>&1", path,
             dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    char head[256];
    snprintf(head, sizeof head, "bench=run scenario=%s jobs=5 events=", path);
    cr_assert_eq(strncmp(out, head, strlen(head)), 0, "got '%s'", out);
    cr_assert_not_null(strstr(out, " max_rss_mb="), "%s", out);
    /* five jobs fill no page of JOB_PAGE: nothing moves out of memory */
    cr_assert_not_null(strstr(out, " pages_spilled=0 "), "%s", out);
    /* the writers' part of the CPU time: a share between 0 and 1 */
    const char *share = strstr(out, " out_share=");
    cr_assert_not_null(strstr(out, " out_cpu_s="), "%s", out);
    cr_assert_not_null(share, "%s", out);
    double sh = strtod(share + strlen(" out_share="), NULL);
    cr_assert(sh >= 0 && sh <= 1, "%s", out);
    cr_assert_not_null(strstr(out, " target_s=1000 target_mb=100000 verdict=within\n"), "%s", out);
    /* it wrote what `run` writes (and replaces it the next time, as --force) */
    snprintf(path, sizeof path, "%s/out/run.json", dir);
    char text[64];
    cr_assert(test_read_text(path, text, sizeof text));

    /* a process holds more than 1 KiB: over the memory target */
    snprintf(cmd, sizeof cmd, "./slicesim bench run %s/five.yaml -o %s/out --target-mb 0.001 2>&1",
             dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_not_null(strstr(out, " target_s=0 target_mb=0.001 verdict=over\n"), "%s", out);

    /* no target: untargeted */
    snprintf(cmd, sizeof cmd, "./slicesim bench run %s/five.yaml -o %s/out 2>&1", dir, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_assert_not_null(strstr(out, " verdict=untargeted\n"), "%s", out);
    cr_assert(test_rm_rf(dir));
}

Test(bench_run, bad_usage_exits_2_with_the_reason)
{
    char out[1024];
    cr_assert_eq(test_sh("./slicesim bench run experiments/default.yaml 2>&1", out, sizeof out), 2);
    cr_assert_str_eq(out, "slicesim bench: error: missing -o DIR; usage: slicesim bench run FILE "
                          "-o DIR [--set PATH=VALUE]... [--target-s S] [--target-mb M]\n");
    cr_assert_eq(test_sh("./slicesim bench run experiments/default.yaml -o /tmp/x --target-s 0 "
                         "2>&1",
                         out, sizeof out),
                 2);
    cr_assert_str_eq(out, "slicesim bench: error: --target-s: expected a positive number, got "
                          "'0'\n");
    cr_assert_eq(test_sh("./slicesim bench run 2>&1", out, sizeof out), 2);
    cr_assert_str_eq(out, "slicesim bench: error: missing FILE; usage: slicesim bench run FILE "
                          "-o DIR [--set PATH=VALUE]... [--target-s S] [--target-mb M]\n");
}
