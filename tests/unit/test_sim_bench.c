/* Tests for `slicesim bench` (tools/cmd_bench.c): strict argument parsing with exit status 2
 * and exact messages, and the one-line key=value output. Timings are never asserted. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <string.h>

#include "tools/bench.h"
#include "tools/cli.h"

static int run(int argc, const char **argv)
{
    return cmd_bench(argc, (char **)argv);
}

Test(bench_cli, rejects_bad_values_precisely, .init = cr_redirect_stderr)
{
    const char *a[] = {"bench", "engine", "--pending", "12abc"};
    cr_assert_eq(run(4, a), CLI_EXIT_INPUT);
    fflush(stderr);
    cr_assert_stderr_eq_str("slicesim bench: error: --pending: expected an integer in "
                            "[1, 100000000], got '12abc'\n");
}

Test(bench_cli, rejects_unknown_kind_and_option, .init = cr_redirect_stderr)
{
    const char *a[] = {"bench", "calendar"};
    cr_assert_eq(run(2, a), CLI_EXIT_INPUT);
    const char *b[] = {"bench", "heap", "--pending", "5", "--fast"};
    cr_assert_eq(run(5, b), CLI_EXIT_INPUT);
    const char *c[] = {"bench", "heap", "--events"};
    cr_assert_eq(run(3, c), CLI_EXIT_INPUT);
    fflush(stderr);
    cr_assert_stderr_eq_str(
        "slicesim bench: error: unknown benchmark 'calendar'; expected one of: engine, heap, "
        "fluid, run\n"
        "slicesim bench: error: unknown option '--fast'; expected --pending, --events or --seed\n"
        "slicesim bench: error: --events: missing value; expected an integer in "
        "[1, 1000000000000]\n");
}

Test(bench_cli, prints_one_key_value_line, .init = cr_redirect_stdout)
{
    const char *a[] = {"bench", "engine", "--pending", "100", "--events", "5000"};
    cr_assert_eq(run(6, a), CLI_EXIT_OK);
    fflush(stdout);
    FILE *f = cr_get_redirected_stdout();
    char line[256] = {0};
    cr_assert_not_null(fgets(line, sizeof line, f));
    cr_assert(strncmp(line, "bench=engine pending=100 events=5000 seconds=", 45) == 0, "%s", line);
    cr_assert_not_null(strstr(line, " cpu_s="));
    cr_assert_not_null(strstr(line, " events_per_cpu_s="));
    cr_assert_not_null(strstr(line, " events_per_s="));
}

/* The three kernels run the requested number of steps, and the engine and the bare heap
 * replay the same random increments, so their final clocks agree to the nanosecond rounding
 * of the engine's integer time. */
Test(bench_kernels, engine_and_heap_simulate_the_same_hold_model)
{
    bench_result e = bench_hold_engine(50, 20000, 7);
    bench_result h = bench_hold_heap(50, 20000, 7);
    cr_assert_eq(e.events, 20000);
    cr_assert_eq(h.events, 20000);
    cr_assert_float_eq(e.checksum, h.checksum, 20000 * 1e-9, "engine %.9f heap %.9f", e.checksum,
                       h.checksum);
    bench_result f = bench_fluid(40, 500, 7);
    cr_assert_eq(f.events, 500);
    cr_assert_gt(f.checksum, 0);
}

/* Same seed, same run: the final clocks of two identical runs are equal to the last bit, and
 * another seed gives another run. */
Test(bench_kernels, runs_are_deterministic)
{
    bench_result a = bench_fluid(300, 3000, 11), b = bench_fluid(300, 3000, 11);
    cr_assert_eq(a.checksum, b.checksum);
    bench_result c = bench_hold_engine(100, 5000, 11), d = bench_hold_engine(100, 5000, 11);
    cr_assert_eq(c.checksum, d.checksum);
    bench_result e = bench_hold_engine(100, 5000, 12);
    cr_assert_neq(c.checksum, e.checksum);
}
