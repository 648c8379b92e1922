/* Engine sanity against queueing theory (STYLE.md §7): M/M/1 and M/D/1 queues simulated with
 * the engine (clock, event queue, RNG streams, statistics together), fixed seeds.
 *
 * Theory (single FIFO server, arrival rate lambda, service time S, rho = lambda E[S] < 1):
 *   Pollaczek-Khinchine mean wait in queue  Wq = lambda E[S^2] / (2 (1 - rho))
 *   mean number in system                   L  = rho + lambda Wq          (Little: L = lambda W)
 *   M/M/1 (S ~ Exp, E[S^2] = 2 E[S]^2):  Wq = rho E[S] / (1 - rho),  L = rho / (1 - rho)
 *   M/D/1 (S = d,   E[S^2] = d^2):        Wq = rho d / (2 (1 - rho))
 * Confidence bound: the first 10 % of the run is discarded as warm-up; the rest is cut into
 * 20 consecutive batches (of customers for Wq, of equal time windows for L), and the theory
 * must lie inside the batch-means 99 % confidence interval of the estimate (Student t, 19
 * degrees of freedom). Batches of ~18 000 customers are long against the correlation time of
 * these queues at rho = 0.5 (a few tens of customers), so the batch means are close to
 * independent, which the interval assumes. With a random seed the check fails with
 * probability about 1 %; the seeds are fixed, so the result is reproducible.
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "sim/engine.h"
#include "sim/rng.h"
#include "sim/stats.h"
#include "sim/verify.h"

enum { N_CUSTOMERS = 400000, N_BATCHES = 20 };

typedef struct queue_sim {
    rng_stream *arrivals, *service;
    double lambda, mean_service;
    bool deterministic;
    /* FIFO of waiting customers' arrival times (ring buffer) */
    sim_time *fifo;
    size_t head, len, cap;
    bool busy;
    size_t n_arrived, n_served;
    double *waits; /* wait in queue per customer, in service order, s */
    stats_timeavg in_system;
    size_t n_in_system;
    sim_time warmup_end, window_ns;
    double area_mark;
    double *window_means;
    size_t n_windows;
} queue_sim;

static void depart(sim_ctx *ctx, const sim_event *ev);

static double service_time(queue_sim *q)
{
    return q->deterministic ? q->mean_service : rng_exponential(q->service, q->mean_service);
}

static void start_service(sim_ctx *ctx, queue_sim *q, sim_time arrived)
{
    q->waits[q->n_served++] = sim_time_to_s(sim_now(ctx) - arrived);
    q->busy = true;
    sim_schedule_in(ctx, sim_time_from_s(service_time(q)), 0, depart, q, (sim_payload){{0, 0}});
}

static void set_in_system(sim_ctx *ctx, queue_sim *q, size_t n)
{
    q->n_in_system = n;
    stats_timeavg_set_all(&q->in_system, 1, sim_now(ctx), &(double){(double)n});
}

static void arrive(sim_ctx *ctx, const sim_event *ev)
{
    queue_sim *q = ev->user;
    set_in_system(ctx, q, q->n_in_system + 1);
    if (!q->busy) {
        start_service(ctx, q, sim_now(ctx));
    } else {
        cr_assert_lt(q->len, q->cap, "queue buffer too small");
        q->fifo[(q->head + q->len++) % q->cap] = sim_now(ctx);
    }
    if (++q->n_arrived < N_CUSTOMERS) {
        sim_schedule_in(ctx, sim_time_from_s(rng_exponential(q->arrivals, 1 / q->lambda)), 0,
                        arrive, q, (sim_payload){{0, 0}});
    }
}

static void depart(sim_ctx *ctx, const sim_event *ev)
{
    queue_sim *q = ev->user;
    set_in_system(ctx, q, q->n_in_system - 1);
    q->busy = false;
    if (q->len) {
        sim_time arrived = q->fifo[q->head];
        q->head = (q->head + 1) % q->cap;
        q->len--;
        start_service(ctx, q, arrived);
    }
}

/* Closes one time window of the number-in-system average. Runs after same-time arrivals and
 * departures (lowest priority), so each window sees its whole interval. */
static void window(sim_ctx *ctx, const sim_event *ev)
{
    queue_sim *q = ev->user;
    stats_timeavg_set_all(&q->in_system, 1, sim_now(ctx), &(double){(double)q->n_in_system});
    double area = q->in_system.area;
    if (sim_now(ctx) > q->warmup_end) {
        q->window_means[q->n_windows++] = (area - q->area_mark) / sim_time_to_s(q->window_ns);
    }
    q->area_mark = area;
    if (q->n_windows < N_BATCHES) {
        sim_schedule_in(ctx, q->window_ns, SIM_PRIO_MIN, window, q, (sim_payload){{0, 0}});
    }
}

typedef struct queue_result {
    double wq, wq_hw, l, l_hw;
    uint64_t n_events;
} queue_result;

static queue_result simulate(uint64_t seed, double lambda, double mean_service, bool deterministic)
{
    rng_root root = rng_root_make(seed);
    queue_sim q = {
        .arrivals = rng_stream_open(&root, "arrivals", 0),
        .service = rng_stream_open(&root, "service", 0),
        .lambda = lambda,
        .mean_service = mean_service,
        .deterministic = deterministic,
        .cap = 4096,
        .in_system = stats_timeavg_make(0, 0),
    };
    q.fifo = calloc(q.cap, sizeof *q.fifo);
    q.waits = calloc(N_CUSTOMERS, sizeof *q.waits);
    q.window_means = calloc(N_BATCHES, sizeof *q.window_means);
    /* Expected horizon N / lambda; windows cover 90 % of it after a 10 % warm-up, ending well
     * before the last arrival (so the queue is never draining inside a window). */
    double horizon_s = 0.95 * N_CUSTOMERS / lambda;
    q.warmup_end = sim_time_from_s(0.1 * horizon_s);
    q.window_ns = sim_time_from_s(0.9 * horizon_s / N_BATCHES);

    sim_ctx *ctx = sim_create();
    sim_set_verify_every(ctx, 997);
    sim_schedule_at(ctx, sim_time_from_s(rng_exponential(q.arrivals, 1 / lambda)), 0, arrive, &q,
                    (sim_payload){{0, 0}});
    sim_schedule_at(ctx, q.warmup_end, SIM_PRIO_MIN, window, &q, (sim_payload){{0, 0}});
    cr_assert_eq(sim_run(ctx, SIM_TIME_MAX), SIM_RUN_EMPTY);
    cr_assert_eq(q.n_served, N_CUSTOMERS);
    cr_assert_eq(q.n_windows, N_BATCHES);
    cr_assert_eq(q.n_in_system, 0);
    cr_assert_eq(sim_verify(ctx, NULL, 0), 0);

    queue_result r;
    size_t skip = N_CUSTOMERS / 10;
    stats_batch_means(q.waits + skip, N_CUSTOMERS - skip, N_BATCHES, 0.99, &r.wq, &r.wq_hw);
    stats_batch_means(q.window_means, N_BATCHES, N_BATCHES, 0.99, &r.l, &r.l_hw);
    r.n_events = sim_get_counters(ctx)->n_executed;
    sim_destroy(ctx);
    rng_stream_close(q.arrivals);
    rng_stream_close(q.service);
    free(q.fifo);
    free(q.waits);
    free(q.window_means);
    return r;
}

static void check(const char *what, double est, double hw, double theory)
{
    cr_log_info("%s: simulated %.5f +- %.5f (99%%), theory %.5f", what, est, hw, theory);
    cr_assert(hw > 0 && hw < 0.1 * theory, "%s: interval half-width %g too wide to test", what, hw);
    cr_assert(est - hw <= theory && theory <= est + hw,
              "%s: theory %.5f outside the 99%% interval %.5f +- %.5f", what, theory, est, hw);
}

Test(queueing, mm1_matches_theory, .timeout = 120)
{
    double lambda = 0.5, es = 1.0, rho = lambda * es;
    queue_result r = simulate(20261122, lambda, es, false);
    double wq = rho * es / (1 - rho);
    check("M/M/1 Wq", r.wq, r.wq_hw, wq);
    check("M/M/1 L", r.l, r.l_hw, rho / (1 - rho));
    cr_assert_eq(r.n_events, 2 * N_CUSTOMERS + N_BATCHES + 1);
}

Test(queueing, md1_matches_pollaczek_khinchine, .timeout = 120)
{
    double lambda = 0.5, d = 1.0, rho = lambda * d;
    queue_result r = simulate(777, lambda, d, true);
    double wq = lambda * d * d / (2 * (1 - rho));
    check("M/D/1 Wq", r.wq, r.wq_hw, wq);
    check("M/D/1 L", r.l, r.l_hw, rho + lambda * wq);
}
