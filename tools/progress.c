/* tools/progress.c - the progress line of a long run (see progress.h). */
#include "tools/progress.h"

#include <inttypes.h>
#include <stdlib.h>
#include <unistd.h>

#include "sim/xalloc.h"
#include "tools/bench.h"

struct progress {
    FILE *f;
    bool enabled;   /* a terminal, or forced */
    bool shown;     /* a line is on the screen */
    double delay_s; /* wall time before the first line */
    double t0_s;    /* wall clock at create */
    double last_s;  /* wall clock of the last redraw */
};

progress *progress_create(FILE *f, bool force)
{
    progress *p = xcalloc(1, sizeof *p, "progress");
    p->f = f;
    p->enabled = force || isatty(fileno(f));
    p->delay_s = force ? 0 : PROGRESS_DELAY_S;
    p->t0_s = bench_now_s();
    p->last_s = -1e300;
    return p;
}

static void erase(progress *p)
{
    if (p->shown) {
        fputs("\r\033[K", p->f);
        fflush(p->f);
        p->shown = false;
    }
}

void progress_destroy(progress *p)
{
    if (!p) {
        return;
    }
    erase(p);
    free(p);
}

/* Simulated time t (ns) in the unit that suits `scale` (ns): s, min, h or d. */
static void put_sim(char *buf, size_t len, sim_time t, sim_time scale)
{
    double s = sim_time_to_s(t), sc = sim_time_to_s(scale);
    if (sc < 120) {
        snprintf(buf, len, "%.1f s", s);
    } else if (sc < 2 * 3600) {
        snprintf(buf, len, "%.1f min", s / 60);
    } else if (sc < 2 * 86400) {
        snprintf(buf, len, "%.1f h", s / 3600);
    } else {
        snprintf(buf, len, "%.1f d", s / 86400);
    }
}

/* A wall-clock duration: whole seconds up to 2 minutes, then minutes, then hours. */
static void put_wall(char *buf, size_t len, double s)
{
    if (s < 120) {
        snprintf(buf, len, "%.0f s", s);
    } else if (s < 7200) {
        snprintf(buf, len, "%.0f min", s / 60);
    } else {
        snprintf(buf, len, "%.1f h", s / 3600);
    }
}

/* A rate with a k or M suffix. */
static void put_rate(char *buf, size_t len, double r)
{
    if (r >= 1e6) {
        snprintf(buf, len, "%.1fM", r / 1e6);
    } else if (r >= 1e3) {
        snprintf(buf, len, "%.0fk", r / 1e3);
    } else {
        snprintf(buf, len, "%.0f", r);
    }
}

char *progress_format(char *buf, size_t len, const world_progress *wp, double elapsed_s)
{
    bool has_horizon = wp->until != SIM_TIME_MAX && wp->until > 0;
    char now[32], until[32], rate[32], eta[32] = "--";
    double frac;
    if (has_horizon) {
        put_sim(now, sizeof now, wp->now, wp->until);
        put_sim(until, sizeof until, wp->until, wp->until);
        frac = (double)wp->now / (double)wp->until;
    } else {
        put_sim(now, sizeof now, wp->now, wp->now);
        frac = wp->n_jobs ? (double)wp->n_ended / (double)wp->n_jobs : 0;
    }
    put_rate(rate, sizeof rate, elapsed_s > 0 ? (double)wp->n_events / elapsed_s : 0);
    if (frac > 0) {
        put_wall(eta, sizeof eta, elapsed_s * (1 - frac) / frac);
    }
    char head[96];
    if (has_horizon) {
        snprintf(head, sizeof head, "simulated %s of %s (%.0f%%)", now, until, 100 * frac);
    } else {
        snprintf(head, sizeof head, "simulated %s", now);
    }
    snprintf(buf, len, "%s, jobs %" PRIu32 " of %zu ended, %s events/s, ETA %s", head, wp->n_ended,
             wp->n_jobs, rate, eta);
    return buf;
}

void progress_observe(void *user, const world_progress *wp)
{
    progress *p = user;
    if (!p->enabled) {
        return;
    }
    double t = bench_now_s(), elapsed = t - p->t0_s;
    if (elapsed < p->delay_s || t - p->last_s < PROGRESS_REFRESH_S) {
        return;
    }
    char line[256];
    fprintf(p->f, "\r%s\033[K", progress_format(line, sizeof line, wp, elapsed));
    fflush(p->f);
    p->last_s = t;
    p->shown = true;
}

void progress_note(progress *p, const char *what)
{
    if (p->shown) {
        fprintf(p->f, "\r%s\033[K", what);
        fflush(p->f);
    }
}
