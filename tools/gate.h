/* tools/gate.h - what-if gates: `--fail-on EXPR` on run, diff (and the figures they read).
 *
 *   EXPR   := [SCOPE '/'] ['delta.'] FIGURE OP NUMBER [UNIT]
 *   SCOPE  := 'class=' NAME | 'pool=' NAME          (default: every job; validate: 'table=')
 *   FIGURE := a name of tools/runfig.h (wait_p95, jct_mean, slowdown_mean, oom, alloc,
 *             slo_attainment, ...)
 *   OP     := '<' | '<=' | '>' | '>='
 *   UNIT   := s | m | h | d for a time (none: seconds); '%' for a fraction (99% = 0.99)
 * A gate fails when the relation holds: `wait_p95>900s` fails when the p95 wait exceeds 900 s.
 * `delta.` compares the change from the baseline (diff only). A figure that is not a number
 * (a scope without done jobs has no JCT) fails the gate: nothing says it holds.
 * Ownership: a gate_expr keeps a pointer to the text it was parsed from (borrowed). */
#ifndef SIMPROJ_TOOLS_GATE_H
#define SIMPROJ_TOOLS_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "sim/diag.h"

#define GATE_EXIT_VIOLATED 3
#define GATE_MAX 32
#define GATE_MAX_REPS 1000

struct runfig_set;

/* The figures a command gates: their names, which are times (seconds), the scopes a gate may
 * name (NULL when fewer), whether `delta.` may be used, and the expression's form for messages. */
typedef struct gate_figures {
    const char *const *names;
    int n;
    const bool *is_time;
    const char *scopes[2]; /* e.g. "class", "pool"; "table" */
    const char *expect;
} gate_figures;

/* The figures of a run (tools/runfig.h), scopes class and pool: run and diff. */
extern const gate_figures gate_run_figures;

typedef struct gate_expr {
    const char *text; /* as given, borrowed */
    const gate_figures *fs; /* the set it was parsed against (static) */
    char kind[8];     /* "all", "class", "pool" */
    char scope[128];  /* class or pool name; "" for all */
    bool delta;
    int fig;      /* runfig figure index */
    int op;       /* 0 <, 1 <=, 2 >, 3 >= */
    double value; /* in seconds or as a fraction */
} gate_expr;

/* Parse text into *out against the run figures; false with the reason in why (what was
 * expected, what was got). */
bool gate_parse(const char *text, gate_expr *out, char *why, size_t why_len);
/* The same against the figure set fs. */
bool gate_parse_in(const gate_figures *fs, const char *text, gate_expr *out, char *why,
                   size_t why_len);
/* Does value violate g (the relation holds, or value is not a number)? */
bool gate_violated(const gate_expr *g, double value);

/* The options every gated command shares, at argv[*i]: `--fail-on EXPR` (appended to g, *n_g
 * of at most GATE_MAX) and `--slo-wait D` (*slo_wait_s, seconds). Returns 1 when argv[*i] was
 * one (*i advanced past its value), 0 when it was not, -1 after a printed usage error of command
 * cmd. allow_delta: whether `delta.` figures are allowed (diff only). */
int gate_option(const char *cmd, int argc, char **argv, int *i, gate_expr *g, size_t *n_g,
                double *slo_wait_s, bool allow_delta);
/* `--fail-on EXPR` alone, against figure set fs (no --slo-wait, no delta): as gate_option. */
int gate_option_in(const gate_figures *fs, const char *cmd, int argc, char **argv, int *i,
                   gate_expr *g, size_t *n_g);
/* After the options: a slo_attainment gate needs --slo-wait. Returns 0 or a printed usage error's
 * exit status. */
int gate_options_done(const char *cmd, const gate_expr *g, size_t n_g, double slo_wait_s);
/* Print one line per gate ("gate EXPR: passed|FAILED (FIGURE = VALUE)") to out. Returns
 * GATE_EXIT_VIOLATED when one failed, else 0. value(i) of gate i is values[i]. */
int gate_report(const gate_expr *g, size_t n_g, const double *values, FILE *out);
/* The gates on the run in directory dir (its run.json and jobs.csv, tools/runfig.h): prints the
 * report and returns 0, GATE_EXIT_VIOLATED, or the exit status of a printed error (a scope the
 * run lacks, files it did not write). */
int gate_check_run(const char *cmd, const char *dir, const gate_expr *g, size_t n_g,
                   double slo_wait_s);

/* The runs named by arg: a run's output directory, or a sweep's (DIR, or DIR:C for combination C
 * of one with several), whose points cC-rR are read in replication order into reps (at most
 * GATE_MAX_REPS; caller frees each with runfig_free). Returns the exit status of command cmd:
 * CLI_EXIT_OK, or a printed usage or load error. */
int gate_load_runs(const char *cmd, const char *arg, double slo_wait_s, diag *d,
                   struct runfig_set *reps, size_t *n_reps);
/* The gates on the mean over the runs named by arg (as gate_load_runs reads them): prints the
 * report; returns 0, GATE_EXIT_VIOLATED, or the exit status of a printed error. */
int gate_check_runs(const char *cmd, const char *arg, const gate_expr *g, size_t n_g,
                    double slo_wait_s);

#endif
