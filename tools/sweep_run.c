/* tools/sweep_run.c - run a sweep's points locally or over MPI, and summarise them (see
 * sweep_run.h). */
#include "tools/sweep_run.h"

#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "experiments/fileio.h"
#include "experiments/scenario.h"
#include "experiments/sweep.h"
#include "sim/arena.h"
#include "sim/err.h"
#include "sim/stats.h"
#include "sim/xalloc.h"
#include "tools/cleanup.h"
#include "experiments/estimate.h"
#include "tools/out.h"
#include "tools/run.h"
#include "tools/runstats.h"
#include "tools/sha256.h"
#include "tools/sweep_report.h"

#define POINT_FILE "point.json"
#define POINT_INFO_FILE "point_info.json"
#define INPUTS_FILE "inputs.json"
#define INPUTS_SCHEMA 1

typedef struct sweep_ctx {
    const sweep_run_opts *o;
    const sweep_spec *sw;
    uint64_t seed; /* the scenario's seed (after --set) */
    const char *dir;
    int w_combo, w_rep; /* digits of the point directory names */
} sweep_ctx;

static int digits(size_t n)
{
    int k = 1;
    while (n >= 10) {
        n /= 10;
        k++;
    }
    return k;
}

/* DIR/points/cC-rR[/name] into a malloc'd string. */
static char *point_path(const sweep_ctx *x, size_t p, const char *name)
{
    size_t n = strlen(x->dir) + 64 + (name ? strlen(name) : 0);
    char *s = xmalloc(n, "point path");
    uint32_t r = x->sw->replications;
    snprintf(s, n, "%s/points/c%0*zu-r%0*u%s%s", x->dir, x->w_combo, p / r, x->w_rep,
             (unsigned)(p % r), name ? "/" : "", name ? name : "");
    return s;
}

static bool point_done(const sweep_ctx *x, size_t p)
{
    char *f = point_path(x, p, POINT_FILE);
    bool done = access(f, F_OK) == 0;
    free(f);
    return done;
}

static cJSON *figures_json(const runstats *rs)
{
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < RS_COUNT; i++) {
        cJSON_AddItemToObject(o, runstats_name(i),
                              rs->has[i] ? out_json_number(rs->v[i]) : cJSON_CreateNull());
    }
    return o;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Run point p into its directory, then write its point.json. 0 or a SIM_E* status. */
static int run_point(const sweep_ctx *x, size_t p)
{
    const sweep_spec *sw = x->sw;
    size_t combo = p / sw->replications;
    uint32_t rep = (uint32_t)(p % sw->replications);
    sweep_combo ce = {sw, combo};
    scenario_edit edit = {sweep_combo_edit, &ce};
    runstats rs;
    char *dir = point_path(x, p, NULL);
    run_opts ro = {.scenario = x->o->scenario,
                   .out_dir = dir,
                   .has_seed = true,
                   .seed = sweep_seed(x->seed, rep),
                   .sets = x->o->sets,
                   .n_sets = x->o->n_sets,
                   .command_line = x->o->command_line,
                   .errors = stderr,
                   .edit = &edit,
                   .result = &rs,
                   .force = true, /* a point left unfinished is run again over its files */
                   .dir_locked = true}; /* the sweep holds its directory's lock */
    double t0 = now_s();
    int rc = run_scenario(&ro);
    double wall_s = now_s() - t0;
    if (rc == 0) {
        cJSON *pj = cJSON_CreateObject();
        cJSON_AddItemToObject(pj, "point", out_json_number((double)p));
        cJSON_AddItemToObject(pj, "combination", out_json_number((double)combo));
        cJSON_AddItemToObject(pj, "replication", out_json_number(rep));
        char seed[32];
        snprintf(seed, sizeof seed, "%llu", (unsigned long long)ro.seed);
        cJSON_AddItemToObject(pj, "seed", cJSON_CreateRaw(seed));
        cJSON *axes = cJSON_AddArrayToObject(pj, "axes");
        size_t idx[SWEEP_MAX_AXES];
        sweep_combo_values(sw, combo, idx);
        for (size_t i = 0; i < sw->n_axes; i++) {
            cJSON *a = cJSON_CreateObject();
            cJSON_AddStringToObject(a, "path", sw->axes[i].path);
            cJSON_AddStringToObject(a, "value", sw->axes[i].labels[idx[i]]);
            cJSON_AddItemToArray(axes, a);
        }
        cJSON_AddItemToObject(pj, "figures", figures_json(&rs));
        /* how this point ran (not a result: it differs from run to run, as run_info.json) */
        cJSON *info = cJSON_CreateObject();
        cJSON_AddItemToObject(info, "wall_s", cJSON_CreateNumber(wall_s));
        cJSON_AddItemToObject(info, "rank", cJSON_CreateNumber(x->o->mpi->rank));
        cJSON_AddItemToObject(info, "ranks", cJSON_CreateNumber(x->o->mpi->size));
        cJSON_AddItemToObject(info, "workers", cJSON_CreateNumber(x->o->jobs));
        out_stage *st = out_stage_begin(dir);
        FILE *fi = st ? out_stage_open(st, POINT_INFO_FILE) : NULL;
        FILE *f = fi ? out_stage_open(st, POINT_FILE) : NULL;
        rc = f ? out_write_json(fi, info) : SIM_EIO;
        rc = rc == 0 ? out_write_json(f, pj) : rc;
        rc = rc == 0 ? out_stage_commit(st) : (out_stage_abort(st), rc);
        cJSON_Delete(info);
        cJSON_Delete(pj);
    }
    free(dir);
    return rc;
}

static void put_duration(FILE *f, double s)
{
    long t = (long)(s + 0.5);
    if (t >= 3600) {
        fprintf(f, "%ldh%02ldm", t / 3600, t / 60 % 60);
    } else {
        fprintf(f, "%ldm%02lds", t / 60, t % 60);
    }
}

/* One progress line on stderr: bar, points done of total, elapsed, ETA. */
static void progress(size_t done, size_t total, double t0)
{
    enum { WIDTH = 30 };
    double el = now_s() - t0;
    size_t fill = total ? done * WIDTH / total : WIDTH;
    fputs("\rsweep [", stderr);
    for (size_t i = 0; i < WIDTH; i++) {
        fputc(i < fill ? '#' : '.', stderr);
    }
    fprintf(stderr, "] %zu/%zu points, elapsed ", done, total);
    put_duration(stderr, el);
    if (done > 0 && done < total) {
        fputs(", ETA ", stderr);
        put_duration(stderr, el / (double)done * (double)(total - done));
    }
    fputs("   ", stderr);
    if (done == total) {
        fputc('\n', stderr);
    }
    fflush(stderr);
}

/* Write all of buf to a worker's socket; false when the other end is gone (no SIGPIPE). */
static bool put_all(int fd, const void *buf, size_t len)
{
    const char *p = buf;
    while (len > 0) {
        ssize_t w = send(fd, p, len, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return false;
        }
        p += w;
        len -= (size_t)w;
    }
    return true;
}

/* Read exactly len bytes; false at end of file (the other end closed or died) or on error. */
static bool get_all(int fd, void *buf, size_t len)
{
    char *p = buf;
    while (len > 0) {
        ssize_t r = read(fd, p, len);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return false;
        }
        p += r;
        len -= (size_t)r;
    }
    return true;
}

/* A worker process: reads positions in pts[] from its socket, runs each point and answers the
 * point's status, until the parent closes its end. Never returns. */
static void worker_main(const sweep_ctx *x, const size_t *pts, int fd)
{
    uint64_t k;
    while (get_all(fd, &k, sizeof k)) {
        int32_t st = run_point(x, pts[k]);
        fflush(NULL);
        if (!put_all(fd, &st, sizeof st)) {
            break;
        }
    }
    fflush(NULL);
    _exit(0);
}

/* One worker as the parent sees it. */
typedef struct worker {
    pid_t pid;
    int fd;    /* the parent's end of the worker's socket; -1 once closed */
    bool busy; /* a point handed out whose status has not come back */
} worker;

/* Run the points pts[0..n) (positions in the sweep's point list) with up to o->jobs at once.
 * Returns 0 or the first failure.
 * With more than one job the workers are forked once, before any point runs, and fed point
 * positions over a socket each (a free worker takes the next point): a process per point
 * re-faulted the parent's pages copy-on-write at every fork, which made -j 2 cost ~39 % more
 * CPU than -j 1 for the same points; a worker that lives through its points faults them once. */
static int run_points(const sweep_ctx *x, const size_t *pts, size_t n)
{
    bool bar = x->o->progress && x->o->mpi->rank == 0;
    double t0 = now_s();
    if (bar) {
        progress(0, n, t0);
    }
    int rc = 0;
    if (x->o->jobs <= 1 || n <= 1) {
        for (size_t i = 0; i < n && rc == 0; i++) {
            rc = run_point(x, pts[i]);
            if (bar) {
                progress(i + 1, n, t0);
            }
        }
        return rc;
    }
    unsigned n_w = x->o->jobs < n ? x->o->jobs : (unsigned)n, started = 0;
    worker *w = xcalloc(n_w, sizeof *w, "sweep workers");
    struct pollfd *pf = xcalloc(n_w, sizeof *pf, "sweep workers");
    unsigned *of = xcalloc(n_w, sizeof *of, "sweep workers");
    fflush(NULL); /* children must not inherit buffered output */
    for (; started < n_w; started++) {
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
            fprintf(stderr, "slicesim sweep: socketpair: %s\n", strerror(errno));
            rc = SIM_EIO;
            break;
        }
        pid_t c = cleanup_fork(); /* SIGINT/SIGTERM to this process stop it too */
        if (c < 0) {
            fprintf(stderr, "slicesim sweep: fork: %s\n", strerror(errno));
            close(sv[0]);
            close(sv[1]);
            rc = SIM_EIO;
            break;
        }
        if (c == 0) {
            close(sv[0]);
            for (unsigned k = 0; k < started; k++) { /* the other workers' sockets */
                close(w[k].fd);
            }
            worker_main(x, pts, sv[1]);
        }
        close(sv[1]);
        w[started] = (worker){c, sv[0], false};
    }
    size_t next = 0, done = 0;
    for (;;) {
        unsigned n_busy = 0;
        for (unsigned k = 0; k < started; k++) {
            if (w[k].fd >= 0 && !w[k].busy) {
                uint64_t i = next;
                if (rc == 0 && next < n && put_all(w[k].fd, &i, sizeof i)) {
                    w[k].busy = true;
                    next++;
                } else { /* nothing more for it (or it is gone): it exits on end of file */
                    rc = rc == 0 && next < n ? SIM_EIO : rc;
                    close(w[k].fd);
                    w[k].fd = -1;
                }
            }
            if (w[k].busy) {
                pf[n_busy] = (struct pollfd){.fd = w[k].fd, .events = POLLIN};
                of[n_busy++] = k;
            }
        }
        if (n_busy == 0) {
            break;
        }
        if (poll(pf, n_busy, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            fprintf(stderr, "slicesim sweep: poll: %s\n", strerror(errno));
            rc = rc ? rc : SIM_EIO;
            break;
        }
        for (unsigned b = 0; b < n_busy; b++) {
            if (!pf[b].revents) {
                continue;
            }
            worker *wk = &w[of[b]];
            int32_t st;
            if (!get_all(wk->fd, &st, sizeof st)) { /* the worker died with its point */
                close(wk->fd);
                wk->fd = -1;
                st = SIM_EIO;
            }
            wk->busy = false;
            done++;
            if (st != 0) {
                rc = rc ? rc : SIM_EIO;
            }
            if (bar) {
                progress(done, n, t0);
            }
        }
    }
    for (unsigned k = 0; k < started; k++) {
        if (w[k].fd >= 0) {
            close(w[k].fd);
        }
        int status;
        while (waitpid(w[k].pid, &status, 0) < 0) {
            if (errno != EINTR) {
                fprintf(stderr, "slicesim sweep: waitpid: %s\n", strerror(errno));
                status = 1;
                break;
            }
        }
        cleanup_child_done(w[k].pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            rc = rc ? rc : SIM_EIO;
        }
    }
    free(of);
    free(pf);
    free(w);
    return rc;
}

/* ---- summary -------------------------------------------------------------------------------- */

typedef struct fig_acc {
    double *x[RS_COUNT]; /* replications' values of each figure (those present) */
    size_t n[RS_COUNT];
} fig_acc;

/* Read every point.json of combination c into acc. 0 or SIM_EIO / SIM_EINPUT (message printed). */
static int read_combo(const sweep_ctx *x, size_t c, fig_acc *acc)
{
    uint32_t reps = x->sw->replications;
    for (int i = 0; i < RS_COUNT; i++) {
        acc->x[i] = xcalloc(reps, sizeof(double), "sweep summary");
        acc->n[i] = 0;
    }
    for (uint32_t r = 0; r < reps; r++) {
        char *f = point_path(x, c * reps + r, POINT_FILE);
        char *buf = NULL;
        size_t len;
        if (fileio_read_all(f, FILEIO_MAX_BYTES, &buf, &len) != 0) {
            fprintf(stderr, "slicesim sweep: %s: %s\n", f, strerror(errno));
            free(f);
            return SIM_EIO;
        }
        cJSON *pj = cJSON_ParseWithLength(buf, len);
        const cJSON *figs = cJSON_GetObjectItemCaseSensitive(pj, "figures");
        if (!cJSON_IsObject(figs)) {
            fprintf(stderr,
                    "slicesim sweep: %s: not a point file; delete it to run the point "
                    "again\n",
                    f);
            cJSON_Delete(pj);
            free(buf);
            free(f);
            return SIM_EINPUT;
        }
        for (int i = 0; i < RS_COUNT; i++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(figs, runstats_name(i));
            if (cJSON_IsNumber(v)) {
                acc->x[i][acc->n[i]++] = v->valuedouble;
            }
        }
        cJSON_Delete(pj);
        free(buf);
        free(f);
    }
    return 0;
}

static void acc_free(fig_acc *acc)
{
    for (int i = 0; i < RS_COUNT; i++) {
        free(acc->x[i]);
        acc->x[i] = NULL;
    }
}

/* Mean and 95 % half-width of n values (half-width < 0 when n < 2). */
static void mean_ci(const double *v, size_t n, double *mean, double *half)
{
    if (n >= 2) {
        stats_batch_means(v, n, n, 0.95, mean, half);
    } else {
        *mean = n ? v[0] : 0;
        *half = -1;
    }
}

static int write_summary(const sweep_ctx *x)
{
    const sweep_spec *sw = x->sw;
    out_stage *st = out_stage_begin(x->dir);
    FILE *csv = st ? out_stage_open(st, "summary.csv") : NULL;
    FILE *js = csv ? out_stage_open(st, "summary.json") : NULL;
    if (!js) {
        out_stage_abort(st);
        return SIM_EIO;
    }
    fputs("combination", csv);
    for (size_t a = 0; a < sw->n_axes; a++) {
        fputc(',', csv);
        out_csv_field(csv, sw->axes[a].path);
    }
    fputs(",replications", csv);
    for (int i = 0; i < RS_COUNT; i++) {
        fprintf(csv, ",%s_mean,%s_ci95", runstats_name(i), runstats_name(i));
    }
    fputc('\n', csv);
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "scenario", x->o->scenario);
    char seed[32];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)x->seed);
    cJSON_AddItemToObject(root, "seed", cJSON_CreateRaw(seed));
    cJSON_AddItemToObject(root, "replications", out_json_number(sw->replications));
    cJSON_AddStringToObject(root, "confidence", "95% Student t over replications");
    cJSON *axes = cJSON_AddArrayToObject(root, "axes");
    for (size_t a = 0; a < sw->n_axes; a++) {
        cJSON *ax = cJSON_CreateObject();
        cJSON_AddStringToObject(ax, "path", sw->axes[a].path);
        cJSON *vals = cJSON_AddArrayToObject(ax, "values");
        for (size_t v = 0; v < sw->axes[a].n_values; v++) {
            cJSON_AddItemToArray(vals, cJSON_CreateString(sw->axes[a].labels[v]));
        }
        cJSON_AddItemToArray(axes, ax);
    }
    cJSON *combos = cJSON_AddArrayToObject(root, "combinations");
    int rc = 0;
    for (size_t c = 0; c < sw->n_combos && rc == 0; c++) {
        fig_acc acc;
        rc = read_combo(x, c, &acc);
        if (rc != 0) {
            acc_free(&acc);
            break;
        }
        size_t idx[SWEEP_MAX_AXES];
        sweep_combo_values(sw, c, idx);
        cJSON *cj = cJSON_CreateObject();
        cJSON_AddItemToObject(cj, "combination", out_json_number((double)c));
        cJSON *vals = cJSON_AddArrayToObject(cj, "values");
        fprintf(csv, "%zu", c);
        for (size_t a = 0; a < sw->n_axes; a++) {
            fputc(',', csv);
            out_csv_field(csv, sw->axes[a].labels[idx[a]]);
            cJSON_AddItemToArray(vals, cJSON_CreateString(sw->axes[a].labels[idx[a]]));
        }
        fprintf(csv, ",%u", sw->replications);
        cJSON *figs = cJSON_AddObjectToObject(cj, "figures");
        for (int i = 0; i < RS_COUNT; i++) {
            cJSON *fo = cJSON_AddObjectToObject(figs, runstats_name(i));
            cJSON_AddItemToObject(fo, "n", out_json_number((double)acc.n[i]));
            if (acc.n[i] == 0) {
                fputs(",,", csv);
                cJSON_AddNullToObject(fo, "mean");
                cJSON_AddNullToObject(fo, "ci95");
                continue;
            }
            double m, h;
            mean_ci(acc.x[i], acc.n[i], &m, &h);
            fprintf(csv, ",%.10g,", m);
            cJSON_AddItemToObject(fo, "mean", out_json_number(m));
            if (h >= 0) {
                fprintf(csv, "%.10g", h);
                cJSON_AddItemToObject(fo, "ci95", out_json_number(h));
            } else {
                cJSON_AddNullToObject(fo, "ci95");
            }
        }
        fputc('\n', csv);
        cJSON_AddItemToArray(combos, cj);
        acc_free(&acc);
    }
    rc = rc ? rc : out_write_json(js, root);
    FILE *html = rc ? NULL : out_stage_open(st, "report.html");
    if (rc == 0) { /* the page reads the numbers as summary.json gives them (raw items parsed) */
        char *text = cJSON_PrintUnformatted(root);
        cJSON *parsed = text ? cJSON_Parse(text) : NULL;
        rc = html && parsed ? sweep_report_html(html, parsed) : SIM_EIO;
        cJSON_Delete(parsed);
        free(text);
    }
    cJSON_Delete(root);
    if (rc != 0) {
        out_stage_abort(st);
        return rc;
    }
    return out_stage_commit(st);
}

/* ---- what the points were computed from: DIR/inputs.json -------------------------------------
 *
 * A point is skipped when its point.json exists, which is right only when the point would be
 * computed from the same inputs now. inputs.json records them: the scenario file's bytes, the
 * --set values, the seed, the replications and axes, every combination's resolved scenario (the
 * tree run.json's "config" holds: defaults filled in, units converted) and the content of every
 * file a combination refers to (mig-parted and device-plugin configs, traces, calibrations), each
 * as a SHA-256, and one digest over all of them. A directory whose record differs is refused
 * (naming what changed) unless --force, which runs every point again. */

typedef struct inputs_rec {
    sha256_ctx resolved; /* every combination's resolved scenario, in combination order */
    cJSON *files;        /* path -> SHA-256 of its content, first reference first */
    int rc;              /* SIM_EIO when a referenced file could not be read (message printed) */
} inputs_rec;

/* SHA-256 of the file at path into hex; 0 or SIM_EIO (message printed). */
static int file_sha256(const char *path, char *hex)
{
    char *buf = NULL;
    size_t len = 0;
    if (fileio_read_all(path, FILEIO_MAX_BYTES, &buf, &len) != 0) {
        fprintf(stderr, "slicesim sweep: %s: %s\n", path, strerror(errno));
        return SIM_EIO;
    }
    sha256_ctx c;
    sha256_init(&c);
    sha256_update(&c, buf, len);
    sha256_final_hex(&c, hex);
    free(buf);
    return 0;
}

/* run_opts.on_spec: one combination's resolved scenario and the files it refers to. */
static void inputs_add_spec(void *ctx, const scenario_spec *s)
{
    inputs_rec *rec = ctx;
    cJSON *cfg = out_config_json(s);
    char *text = cJSON_PrintUnformatted(cfg);
    sha256_update_str(&rec->resolved, text ? text : "");
    free(text);
    cJSON_Delete(cfg);
    for (size_t i = 0; i < s->n_refs; i++) {
        char hex[SHA256_HEX_LEN + 1];
        if (cJSON_GetObjectItemCaseSensitive(rec->files, s->refs[i].path)) {
            continue;
        }
        if (file_sha256(s->refs[i].path, hex) != 0) {
            rec->rc = SIM_EIO;
            continue;
        }
        cJSON_AddStringToObject(rec->files, s->refs[i].path, hex);
    }
}

/* inputs.json's tree for this sweep (caller owns); NULL (message printed) when the scenario file
 * cannot be read. */
static cJSON *inputs_json(const sweep_ctx *x, inputs_rec *rec)
{
    char hex[SHA256_HEX_LEN + 1];
    if (file_sha256(x->o->scenario, hex) != 0) {
        return NULL;
    }
    cJSON *root = cJSON_CreateObject();
    cJSON_AddItemToObject(root, "schema", out_json_number(INPUTS_SCHEMA));
    cJSON *sc = cJSON_AddObjectToObject(root, "scenario");
    cJSON_AddStringToObject(sc, "file", x->o->scenario);
    cJSON_AddStringToObject(sc, "sha256", hex);
    cJSON *sets = cJSON_AddArrayToObject(root, "set");
    for (size_t i = 0; i < x->o->n_sets; i++) {
        cJSON_AddItemToArray(sets, cJSON_CreateString(x->o->sets[i]));
    }
    cJSON_AddItemToObject(root, "seed", out_json_u64(x->seed));
    cJSON_AddItemToObject(root, "replications", out_json_number(x->sw->replications));
    cJSON *axes = cJSON_AddArrayToObject(root, "axes");
    for (size_t a = 0; a < x->sw->n_axes; a++) {
        cJSON *ax = cJSON_CreateObject();
        cJSON_AddStringToObject(ax, "path", x->sw->axes[a].path);
        cJSON *vals = cJSON_AddArrayToObject(ax, "values");
        for (size_t v = 0; v < x->sw->axes[a].n_values; v++) {
            cJSON_AddItemToArray(vals, cJSON_CreateString(x->sw->axes[a].labels[v]));
        }
        cJSON_AddItemToArray(axes, ax);
    }
    sha256_final_hex(&rec->resolved, hex);
    cJSON_AddStringToObject(root, "resolved_sha256", hex);
    cJSON_AddItemToObject(root, "files", rec->files);
    rec->files = NULL;
    /* the digest of everything above except the scenario's display name */
    cJSON *body = cJSON_Duplicate(root, true);
    cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(body, "scenario"),
                                            "file");
    char *text = cJSON_PrintUnformatted(body);
    sha256_ctx c;
    sha256_init(&c);
    sha256_update_str(&c, text ? text : "");
    sha256_final_hex(&c, hex);
    free(text);
    cJSON_Delete(body);
    cJSON_AddStringToObject(root, "digest", hex);
    /* as read back from the file (raw number items become numbers), to compare like with like */
    text = cJSON_PrintUnformatted(root);
    cJSON_Delete(root);
    root = text ? cJSON_Parse(text) : NULL;
    free(text);
    return root;
}

/* Append ", what" (or "what" first) to buf. */
static void add_diff(char *buf, size_t n, const char *what)
{
    size_t used = strlen(buf);
    snprintf(buf + used, n - used, "%s%s", used ? ", " : "", what);
}

/* What differs between the recorded inputs `old` and `now`, as "the seed, input file 'x'" into
 * buf. */
static void describe_diff(const cJSON *old, const cJSON *now, char *buf, size_t n)
{
    static const struct {
        const char *key, *what;
    } parts[] = {
        {"set", "the --set values"},
        {"seed", "the seed"},
        {"replications", "the replications"},
        {"axes", "the sweep's axes"},
    };
    buf[0] = '\0';
    const cJSON *sc_old = cJSON_GetObjectItemCaseSensitive(old, "scenario");
    const cJSON *sc_now = cJSON_GetObjectItemCaseSensitive(now, "scenario");
    if (!cJSON_Compare(cJSON_GetObjectItemCaseSensitive(sc_old, "sha256"),
                       cJSON_GetObjectItemCaseSensitive(sc_now, "sha256"), true)) {
        add_diff(buf, n, "the scenario file's content");
    }
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (!cJSON_Compare(cJSON_GetObjectItemCaseSensitive(old, parts[i].key),
                           cJSON_GetObjectItemCaseSensitive(now, parts[i].key), true)) {
            add_diff(buf, n, parts[i].what);
        }
    }
    const cJSON *fo = cJSON_GetObjectItemCaseSensitive(old, "files");
    const cJSON *fn = cJSON_GetObjectItemCaseSensitive(now, "files");
    const cJSON *f;
    cJSON_ArrayForEach(f, fn)
    {
        if (!cJSON_Compare(f, cJSON_GetObjectItemCaseSensitive(fo, f->string), true)) {
            char what[600];
            snprintf(what, sizeof what, "input file '%.500s'", f->string);
            add_diff(buf, n, what);
        }
    }
    cJSON_ArrayForEach(f, fo)
    {
        if (!cJSON_GetObjectItemCaseSensitive(fn, f->string)) {
            char what[600];
            snprintf(what, sizeof what, "input file '%.500s' (no longer used)", f->string);
            add_diff(buf, n, what);
        }
    }
    if (!buf[0]) { /* only the resolved scenario: e.g. a default of this build changed */
        add_diff(buf, n, "the resolved scenario");
    }
}

/* Files of an earlier sweep or plan in DIR that --force removes before running again (a
 * summary or an answer left from other inputs must not survive a failed rerun). */
static const char *const result_files[] = {
    "summary.csv", "summary.json",    "report.html",      "plan.csv",
    "plan.json",   "plan.html",       "mig-parted.yaml",  "device-plugin-config.yaml",
};

/* --force: every point's point.json (what marks it done) and the earlier results go. */
static int forget_points(const sweep_ctx *x)
{
    char path[4096];
    for (size_t i = 0; i < sizeof result_files / sizeof result_files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", x->dir, result_files[i]);
        if (remove(path) != 0 && errno != ENOENT) {
            fprintf(stderr, "slicesim sweep: %s: cannot remove: %s\n", path, strerror(errno));
            return SIM_EIO;
        }
    }
    snprintf(path, sizeof path, "%s/points", x->dir);
    DIR *d = opendir(path);
    if (!d) {
        return 0;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d))) {
        if (e->d_name[0] != 'c') {
            continue;
        }
        snprintf(path, sizeof path, "%s/points/%s/%s", x->dir, e->d_name, POINT_FILE);
        if (remove(path) != 0 && errno != ENOENT && errno != ENOTDIR) {
            fprintf(stderr, "slicesim sweep: %s: cannot remove: %s\n", path, strerror(errno));
            rc = SIM_EIO;
        }
    }
    closedir(d);
    return rc;
}

/* Compare DIR/inputs.json with these inputs: 0 when they match or the directory holds no sweep
 * yet (inputs.json is written then), SIM_EINPUT (message printed) when they differ and not
 * --force; with --force the points are forgotten and the record rewritten. */
static int check_inputs(const sweep_ctx *x, inputs_rec *rec)
{
    const char *cmd = x->o->sw ? "plan" : "sweep";
    cJSON *now = rec->rc == 0 ? inputs_json(x, rec) : NULL;
    if (!now) {
        return SIM_EIO;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", x->dir, INPUTS_FILE);
    char *buf = NULL;
    size_t len = 0;
    cJSON *old = NULL;
    if (fileio_read_all(path, FILEIO_MAX_BYTES, &buf, &len) == 0) {
        old = cJSON_ParseWithLength(buf, len);
        free(buf);
    }
    char points[4096], summary[4096];
    snprintf(points, sizeof points, "%s/points", x->dir);
    snprintf(summary, sizeof summary, "%s/summary.json", x->dir);
    bool has_sweep = access(points, F_OK) == 0 || access(summary, F_OK) == 0;
    const cJSON *d_old = cJSON_GetObjectItemCaseSensitive(old, "digest");
    const cJSON *d_now = cJSON_GetObjectItemCaseSensitive(now, "digest");
    bool same = old && cJSON_Compare(d_old, d_now, true);
    int rc = 0;
    if (!same && (old || has_sweep) && !x->o->force) {
        char diff[2048];
        if (old) {
            describe_diff(old, now, diff, sizeof diff);
            fprintf(stderr,
                    "slicesim %s: error: output directory '%s' holds points computed from other "
                    "inputs (%s: %s differ%s); expected the same scenario, seed, --set values "
                    "and input files to resume, or --force to run every point again\n",
                    cmd, x->dir, path, diff, strchr(diff, ',') ? "" : "s");
        } else {
            fprintf(stderr,
                    "slicesim %s: error: output directory '%s' holds a sweep's points but no "
                    "record of their inputs (%s missing or unreadable); expected a directory "
                    "this version of slicesim made, or --force to run every point again\n",
                    cmd, x->dir, path);
        }
        rc = SIM_EINPUT;
    } else if (!same) {
        rc = x->o->force && (old || has_sweep) ? forget_points(x) : 0;
        out_stage *st = rc == 0 ? out_stage_begin(x->dir) : NULL;
        FILE *f = st ? out_stage_open(st, INPUTS_FILE) : NULL;
        rc = rc ? rc : f ? out_write_json(f, now) : SIM_EIO;
        rc = rc == 0 ? out_stage_commit(st) : (out_stage_abort(st), rc);
    }
    cJSON_Delete(old);
    cJSON_Delete(now);
    return rc;
}

/* ---- entry points -----------------------------------------------------------------------------
 */

/* CPU of one point beyond its run (the worker's fork, the scenario's load, its files, the
 * summary's row): 50 points of sweep-shared.yaml at horizon 1s take 0.41-0.43 CPU-s with -j 1
 * (release build, this 2-core VM at load ~6; sys is half of it). */
#define SWEEP_CPU_S_PER_POINT 8.4e-3

/* The combinations `check` loads (each one a load of the scenario, ~2-5 ms): all of them up to
 * SWEEP_CHECK_ALL; beyond, a cover in which every value of every axis appears at least once (the
 * first combination, then each axis's other values with the other axes at their first value, then
 * the last combination), thinned to SWEEP_CHECK_ALL evenly spaced entries when still larger. A
 * 10^6-point sweep of six axes of ten values then loads 56 scenarios, not 10^6 (about 80 minutes).
 * `sweep` itself checks every combination before its first point runs. Returns NULL (all
 * n_combos, *n unchanged) or a new array of *n combination indices; *cover tells which. */
static size_t *check_combos(const sweep_spec *sw, size_t *n, sweep_cover *cover)
{
    if (sw->n_combos <= SWEEP_CHECK_ALL) {
        *cover = SWEEP_COVER_ALL;
        return NULL;
    }
    size_t len = 2;
    for (size_t i = 0; i < sw->n_axes; i++) {
        len += sw->axes[i].n_values - 1;
    }
    size_t *all = xcalloc(len, sizeof *all, "sweep check cover");
    size_t used = 0, stride = 1;
    all[used++] = 0;
    for (size_t i = sw->n_axes; i-- > 0;) { /* the last axis varies fastest */
        for (size_t v = 1; v < sw->axes[i].n_values; v++) {
            all[used++] = v * stride;
        }
        stride *= sw->axes[i].n_values;
    }
    all[used++] = sw->n_combos - 1;
    *cover = SWEEP_COVER_VALUES;
    if (used > SWEEP_CHECK_ALL) {
        for (size_t k = 0; k < SWEEP_CHECK_ALL; k++) {
            all[k] = all[k * (used - 1) / (SWEEP_CHECK_ALL - 1)];
        }
        used = SWEEP_CHECK_ALL;
        *cover = SWEEP_COVER_SPACED;
    }
    *n = used;
    return all;
}

/* Load the base scenario (its sweep: section with the --set overrides applied, as every
 * point's); validate every combination of `given` (a plan's candidates), else of the sweep
 * section (any_section: else of the plan section too, for `check`). 0 or a SIM_E* status
 * (errors printed to err). */
static int load_and_check(const char *scenario, const sweep_spec *given, bool any_section,
                          const char *const *sets, size_t n_sets, arena *a, FILE *err,
                          const sweep_spec **sw_out, scenario_spec **base, inputs_rec *rec,
                          sweep_check_info *ci)
{
    diag *d = diag_create();
    int rc = scenario_load_file(scenario, sets, n_sets, 0, a, d, base);
    if (rc == SIM_ENOENT || rc == SIM_EIO) {
        fprintf(err, "slicesim: %s: %s\n", scenario, strerror(errno));
        diag_destroy(d);
        return rc;
    }
    const sweep_spec *use = given;
    if (rc == 0 && !use) {
        use = (*base)->sweep;
        use = !use && any_section && (*base)->plan ? &(*base)->plan->sw : use;
    }
    if (rc != 0) {
        diag_print(d, err);
        diag_destroy(d);
        return SIM_EINPUT;
    }
    diag_destroy(d);
    *sw_out = use;
    size_t n_check = use ? use->n_combos : 0;
    size_t *which = NULL; /* the combinations checked, when not all */
    if (ci && use) {
        which = check_combos(use, &n_check, &ci->cover);
    }
    for (size_t k = 0; k < n_check && rc == 0; k++) {
        sweep_combo ce = {use, which ? which[k] : k};
        scenario_edit edit = {sweep_combo_edit, &ce};
        run_estimate e;
        run_opts ro = {.scenario = scenario,
                       .sets = sets,
                       .n_sets = n_sets,
                       .errors = err,
                       .edit = &edit,
                       .check_only = true,
                       .estimate = ci ? &e : NULL,
                       .on_spec = rec ? inputs_add_spec : NULL,
                       .on_spec_ctx = rec};
        rc = run_scenario(&ro);
        if (rc == 0 && ci) {
            ci->checked++;
            ci->cpu_s += e.cpu_s;
            ci->events += e.events;
            ci->output_bytes += e.output_bytes;
            ci->memory_bytes = e.memory_bytes > ci->memory_bytes ? e.memory_bytes : ci->memory_bytes;
        }
    }
    free(which);
    if (rc == 0 && ci && use && ci->checked > 0) {
        /* the checked combinations' mean stands for every combination; every replication costs
         * what its combination does (only the seed differs) */
        double per = (double)use->n_points / (double)ci->checked;
        ci->n_points = use->n_points;
        ci->n_combos = use->n_combos;
        ci->cpu_s = ci->cpu_s * per + (double)use->n_points * SWEEP_CPU_S_PER_POINT;
        ci->events *= per;
        ci->output_bytes *= per;
    }
    return rc;
}

int sweep_check(const char *scenario, const char *const *sets, size_t n_sets, FILE *err,
                sweep_check_info *ci)
{
    *ci = (sweep_check_info){0};
    arena *a = arena_create();
    const sweep_spec *sw = NULL;
    scenario_spec *base = NULL;
    int rc = load_and_check(scenario, NULL, true, sets, n_sets, a, err, &sw, &base, NULL, ci);
    if (rc != 0) {
        *ci = (sweep_check_info){0};
    }
    arena_destroy(a);
    return rc;
}

void sweep_check_print(FILE *f, const char *scenario, const sweep_check_info *ci)
{
    if (ci->n_points == 0) {
        return;
    }
    char reps[48];
    snprintf(reps, sizeof reps, "%zu replication%s", ci->n_points / ci->n_combos,
             ci->n_points == ci->n_combos ? "" : "s");
    if (ci->cover == SWEEP_COVER_ALL) {
        fprintf(f, "%s: sweep of %zu points (%zu combinations x %s): every combination checked\n",
                scenario, ci->n_points, ci->n_combos, reps);
    } else {
        fprintf(f,
                "%s: sweep of %zu points (%zu combinations x %s): %zu combinations checked, %s "
                "(`sweep` checks all %zu before its first point runs)\n",
                scenario, ci->n_points, ci->n_combos, reps, ci->checked,
                ci->cover == SWEEP_COVER_VALUES ? "covering every axis value"
                                                : "evenly spaced over every axis value",
                ci->n_combos);
    }
    fprintf(f,
            "estimate: the sweep in all: about %.3g events, %.2g s of CPU, %.3g MB of output; "
            "one point at most %.3g MB of memory (each worker of -j N)\n",
            ci->events, ci->cpu_s, ci->output_bytes / 1e6, ci->memory_bytes / 1e6);
}

int sweep_run(const sweep_run_opts *o)
{
    const sweep_mpi *mpi = o->mpi;
    FILE *devnull = NULL;
    FILE *err = stderr;
    if (mpi->rank != 0) { /* every rank validates; rank 0 alone reports */
        devnull = fopen("/dev/null", "w");
        err = devnull ? devnull : stderr;
    }
    arena *a = arena_create();
    const sweep_spec *sw = NULL;
    scenario_spec *base = NULL;
    inputs_rec rec = {.files = cJSON_CreateObject()};
    sha256_init(&rec.resolved);
    int rc =
        load_and_check(o->scenario, o->sw, false, o->sets, o->n_sets, a, err, &sw, &base, &rec,
                       NULL);
    if (rc == 0 && !sw) {
        fprintf(err,
                "%s:1:1: error: sweep: missing; expected a sweep: section with axes or "
                "replications, got none\n",
                o->scenario);
        rc = SIM_EINPUT;
    }
    if (devnull) {
        fclose(devnull);
    }
    if (rc != 0) {
        cJSON_Delete(rec.files);
        arena_destroy(a);
        return rc;
    }
    sweep_ctx x = {.o = o,
                   .sw = sw,
                   .seed = base->seed,
                   .dir = o->out_dir ? o->out_dir : base->outputs.dir,
                   .w_combo = digits(sw->n_combos - 1),
                   .w_rep = digits(sw->replications - 1)};
    /* rank 0 locks the directory and checks (or, with --force, resets) what its points were
     * computed from; every rank waits for that before listing the points still to run */
    out_lock *lock = NULL;
    if (mpi->rank == 0) {
        rc = o->dir_locked ? 0 : out_lock_take(x.dir, o->sw ? "plan" : "sweep", &lock);
        rc = rc ? rc : check_inputs(&x, &rec);
    }
    cJSON_Delete(rec.files);
    int first = sweep_mpi_max(mpi, rc == 0 ? 0 : rc == SIM_EINPUT ? 2 : 1);
    if (first != 0) {
        out_lock_release(lock, false);
        arena_destroy(a);
        return rc ? rc : first == 2 ? SIM_EINPUT : SIM_EIO;
    }
    size_t *missing = xcalloc(sw->n_points, sizeof *missing, "sweep points");
    size_t n_missing = 0;
    for (size_t p = 0; p < sw->n_points; p++) {
        if (!point_done(&x, p)) {
            missing[n_missing++] = p;
        }
    }
    /* Every rank has listed the missing points before any rank writes one. */
    sweep_mpi_barrier(mpi);
    size_t n_mine = 0;
    for (size_t k = 0; k < n_missing; k++) {
        if ((int)(k % (size_t)mpi->size) == mpi->rank) {
            missing[n_mine++] = missing[k];
        }
    }
    rc = run_points(&x, missing, n_mine);
    free(missing);
    int worst = sweep_mpi_max(mpi, rc == 0 ? 0 : rc == SIM_EINPUT ? 2 : 1);
    if (worst == 0 && mpi->rank == 0) {
        rc = write_summary(&x);
        if (rc == 0 && o->out) {
            fprintf(o->out,
                    "sweep: %zu points (%zu combinations x %u replications): %zu run now, %zu "
                    "were done; %d rank%s x %u worker%s\n",
                    sw->n_points, sw->n_combos, sw->replications, n_missing, sw->n_points - n_missing,
                    mpi->size, mpi->size == 1 ? "" : "s", o->jobs, o->jobs == 1 ? "" : "s");
            fprintf(o->out, "summary: %s/summary.csv, %s/summary.json; runs in %s/points/\n", x.dir,
                    x.dir, x.dir);
        }
    } else if (worst != 0 && rc == 0) {
        rc = worst == 2 ? SIM_EINPUT : SIM_EIO; /* another rank failed */
    }
    out_lock_release(lock, false);
    arena_destroy(a);
    return rc;
}
