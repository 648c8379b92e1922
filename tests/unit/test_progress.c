/* Tests of the progress line (tools/progress.h): its text for hand-worked states, silence on a
 * stream that is not a terminal, and the erase at the end. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/progress.h"

#define DAY_NS (86400LL * SIM_NS_PER_S)

Test(progress, half_the_horizon_in_ten_seconds_leaves_ten)
{
    /* 15 of 30 days simulated in 10 s of wall time: half done, so 10 s to go; 1,000,000 events
     * in 10 s is 100k events/s */
    world_progress wp = {.now = 15 * DAY_NS,
                         .until = 30 * DAY_NS,
                         .n_events = 1000000,
                         .n_jobs = 1000,
                         .n_ended = 400};
    char buf[256];
    cr_assert_str_eq(progress_format(buf, sizeof buf, &wp, 10.0),
                     "simulated 15.0 d of 30.0 d (50%), jobs 400 of 1000 ended, 100k events/s, "
                     "ETA 10 s");
}

Test(progress, without_a_horizon_the_eta_follows_the_jobs)
{
    /* a quarter of the jobs ended after 30 s: three quarters left take 3 x 30 = 90 s; 2 h of
     * simulated time is shown in hours (it is at least 2 h); 4,500,000 events / 30 s = 150k/s */
    world_progress wp = {.now = 2 * 3600 * SIM_NS_PER_S,
                         .until = SIM_TIME_MAX,
                         .n_events = 4500000,
                         .n_jobs = 1000,
                         .n_ended = 250};
    char buf[256];
    cr_assert_str_eq(progress_format(buf, sizeof buf, &wp, 30.0),
                     "simulated 2.0 h, jobs 250 of 1000 ended, 150k events/s, ETA 90 s");
}

Test(progress, nothing_done_yet_has_no_eta_and_long_etas_are_in_minutes)
{
    world_progress wp = {.now = 0, .until = 3600 * SIM_NS_PER_S, .n_events = 500, .n_jobs = 10};
    char buf[256];
    /* 1 h horizon: minutes; 500 events in 1 s: 500 events/s; nothing simulated: no ETA */
    cr_assert_str_eq(progress_format(buf, sizeof buf, &wp, 1.0),
                     "simulated 0.0 min of 60.0 min (0%), jobs 0 of 10 ended, 500 events/s, "
                     "ETA --");
    /* 6 of 60 minutes after 60 s: 10 % done, 9 x 60 = 540 s = 9 min to go; 3,000,000 events in
     * 60 s: 50k/s */
    wp.now = 360 * SIM_NS_PER_S;
    wp.n_events = 3000000;
    cr_assert_str_eq(progress_format(buf, sizeof buf, &wp, 60.0),
                     "simulated 6.0 min of 60.0 min (10%), jobs 0 of 10 ended, 50k events/s, "
                     "ETA 9 min");
}

/* Everything written to the temporary file f so far; caller frees. */
static char *written(FILE *f)
{
    long n = ftell(f);
    cr_assert_geq(n, 0);
    char *s = calloc((size_t)n + 1, 1);
    rewind(f);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    return s;
}

Test(progress, a_stream_that_is_not_a_terminal_gets_nothing)
{
    FILE *f = tmpfile();
    cr_assert_not_null(f);
    progress *p = progress_create(f, false);
    world_progress wp = {.now = 1, .until = 10, .n_events = 1, .n_jobs = 1};
    progress_observe(p, &wp);
    progress_note(p, "writing outputs");
    progress_destroy(p);
    cr_assert_eq(ftell(f), 0L);
    fclose(f);
}

Test(progress, a_forced_line_is_drawn_in_place_and_erased)
{
    FILE *f = tmpfile();
    cr_assert_not_null(f);
    progress *p = progress_create(f, true);
    world_progress wp = {.now = 5 * SIM_NS_PER_S,
                         .until = 10 * SIM_NS_PER_S,
                         .n_events = 0,
                         .n_jobs = 4,
                         .n_ended = 2};
    progress_observe(p, &wp);
    progress_note(p, "writing outputs");
    progress_destroy(p);
    char *s = written(f);
    /* carriage return, the line, clear to the end of the line; the note likewise; the erase */
    const char *head = "\rsimulated 5.0 s of 10.0 s (50%), jobs 2 of 4 ended, ";
    cr_assert_eq(strncmp(s, head, strlen(head)), 0, "got '%s'", s);
    const char *tail = "\033[K\rwriting outputs\033[K\r\033[K";
    cr_assert_str_eq(s + strlen(s) - strlen(tail), tail);
    free(s);
    fclose(f);
}
