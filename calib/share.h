/* calib/share.h - start groups of worker processes (fork/exec of calib/bin/worker) and collect
 * their JSON lines; used by timeslice and mps. The parent never initialises CUDA, so that its
 * own context cannot take part in the time-slicing it measures.
 *
 * A group: every worker warms up and prints READY; the parent then closes the "go" pipe, which
 * every worker is blocked reading, so all of them start within microseconds of one another.
 */
#ifndef SIMPROJ_CALIB_SHARE_H
#define SIMPROJ_CALIB_SHARE_H

#include "common.h"

#include <errno.h>
#include <limits.h>
#include <sys/wait.h>
#include <unistd.h>

#define SHARE_MAX_WORKERS 16

typedef struct wspec {
    const char *kind; /* "compute" | "memory" */
    long work;        /* iterations or passes per kernel */
    long count;       /* kernels */
    double gap_ms;    /* host sleep after each kernel; 0 = back to back */
    int grid_sms;     /* size the grid for this many SMs; 0 = the SMs the worker sees */
} wspec;

/* Path of the worker binary: beside argv0 unless given. */
static inline void worker_path(const char *argv0, const char *given, char *out, size_t len)
{
    if (given) {
        snprintf(out, len, "%s", given);
        return;
    }
    const char *slash = strrchr(argv0, '/');
    if (!slash) {
        snprintf(out, len, "./worker");
    } else {
        snprintf(out, len, "%.*s/worker", (int)(slash - argv0), argv0);
    }
}

/* Read one '\n'-terminated line (without it) from fd; returns its length or -1 at EOF/error. */
static inline int read_line(int fd, char *buf, int cap)
{
    int n = 0;
    while (n < cap - 1) {
        char c;
        ssize_t r = read(fd, &c, 1);
        if (r == 0 || (r < 0 && errno != EINTR)) {
            return n > 0 ? n : -1;
        }
        if (r < 0) {
            continue;
        }
        if (c == '\n') {
            break;
        }
        buf[n++] = c;
    }
    buf[n] = 0;
    return n;
}

/* Calibrate: run `worker --kind K --calibrate L` alone; returns the JSON line (static buffer
 * copied by the caller) and sets *work; NULL on failure. */
static inline const char *calibrate(const char *worker, const char *kind, double len_ms, long *work)
{
    static char line[1024];
    char cmd[PATH_MAX + 128];
    snprintf(cmd, sizeof cmd, "'%s' --kind %s --calibrate %g", worker, kind, len_ms);
    FILE *p = popen(cmd, "r");
    if (!p) {
        return NULL;
    }
    int ok = fgets(line, sizeof line, p) != NULL;
    int st = pclose(p);
    if (!ok || st != 0) {
        return NULL;
    }
    line[strcspn(line, "\n")] = 0;
    double v = json_number_after(line, "\"work\":", -1.0);
    if (!(v >= 1.0)) {
        return NULL;
    }
    *work = (long)v;
    return line;
}

/* Fork n children, start them together and collect one line from each: child(i, go_fd, ctx)
 * runs in child i with its stdout on a pipe to the parent; it prints "READY", waits until go_fd
 * reaches end of file (the parent closes it once every child is ready, so all start within
 * microseconds of one another), then prints one JSON line and returns (the child then exits 0).
 * lines[i] (cap bytes each) gets child i's JSON line, or "null". *wall_s gets the time from
 * the start to the last line. Returns 1 when every child succeeded, 0 if not, -1 when n is out
 * of range or no pipe could be made. */
typedef void share_child_fn(int i, int go_fd, void *ctx);
static inline int share_fork_group(int n, share_child_fn *child, void *ctx, char **lines,
                                   int cap, double *wall_s)
{
    int go[2];
    int fds[SHARE_MAX_WORKERS];
    pid_t pids[SHARE_MAX_WORKERS];
    int ok = 1;
    if (n < 1 || n > SHARE_MAX_WORKERS || pipe(go) != 0) {
        return -1;
    }
    fflush(NULL);
    for (int i = 0; i < n; i++) {
        int rp[2];
        if (pipe(rp) != 0) {
            perror("pipe");
            exit(1);
        }
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            exit(1);
        }
        if (pid == 0) {
            close(go[1]);
            close(rp[0]);
            dup2(rp[1], 1);
            close(rp[1]);
            child(i, go[0], ctx);
            fflush(stdout);
            _exit(0);
        }
        close(rp[1]);
        fds[i] = rp[0];
        pids[i] = pid;
    }
    close(go[0]);
    for (int i = 0; i < n; i++) {
        if (read_line(fds[i], lines[i], cap) < 0 || strcmp(lines[i], "READY")) {
            ok = 0;
        }
    }
    double t0 = now_s();
    close(go[1]); /* start them all */
    for (int i = 0; i < n; i++) {
        if (read_line(fds[i], lines[i], cap) < 0 || lines[i][0] != '{') {
            snprintf(lines[i], (size_t)cap, "null");
            ok = 0;
        }
        char rest[256];
        while (read_line(fds[i], rest, sizeof rest) >= 0) {
        }
        close(fds[i]);
    }
    *wall_s = now_s() - t0;
    for (int i = 0; i < n; i++) {
        int st = 0;
        while (waitpid(pids[i], &st, 0) < 0 && errno == EINTR) {
        }
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            ok = 0;
        }
    }
    return ok;
}

typedef struct share_exec {
    const char *worker;
    const wspec *sp;
} share_exec;

/* Child of run_group: exec the worker with its spec (it prints READY and its line itself). */
static inline void share_exec_worker(int i, int go_fd, void *ctx)
{
    const share_exec *x = (const share_exec *)ctx;
    const wspec *sp = &x->sp[i];
    char a_work[32], a_count[32], a_gap[32], a_fd[16], a_gs[16];
    snprintf(a_work, sizeof a_work, "%ld", sp->work);
    snprintf(a_count, sizeof a_count, "%ld", sp->count);
    snprintf(a_gap, sizeof a_gap, "%.6f", sp->gap_ms);
    snprintf(a_fd, sizeof a_fd, "%d", go_fd);
    snprintf(a_gs, sizeof a_gs, "%d", sp->grid_sms);
    char *args[] = {(char *)x->worker, (char *)"--kind", (char *)sp->kind, (char *)"--work",
                    a_work, (char *)"--count", a_count, (char *)"--gap-ms", a_gap,
                    (char *)"--go-fd", a_fd, (char *)"--grid-sms", a_gs, NULL};
    execv(x->worker, args);
    perror(x->worker);
    _exit(127);
}

/* share_fork_group, then write "procs", "ok", the parent's wall time as wall_key (none when
 * NULL) and key: [the children's lines] into the object open in w. lines[i] holds cap bytes.
 * Returns 0 when every child succeeded, else -1. */
static inline int share_fork_json(int n, share_child_fn *child, void *ctx, char **lines, int cap,
                                  jw *w, const char *wall_key, const char *key)
{
    double wall = 0;
    int ok = share_fork_group(n, child, ctx, lines, cap, &wall);
    if (ok < 0) {
        return -1;
    }
    jw_int(w, "procs", n);
    jw_bool(w, "ok", ok);
    if (wall_key) {
        jw_num(w, wall_key, wall);
    }
    jw_arr(w, key);
    for (int i = 0; i < n; i++) {
        jw_raw(w, NULL, lines[i]);
    }
    jw_end_arr(w);
    return ok ? 0 : -1;
}

/* Run one group of n workers; writes "procs", "ok", "parent_wall_s" and "workers":[...] into
 * the object open in w. Returns 0 when every worker succeeded. */
static inline int run_group(const char *worker, int n, const wspec *sp, jw *w)
{
    char buf[SHARE_MAX_WORKERS][1024];
    char *lines[SHARE_MAX_WORKERS];
    for (int i = 0; i < SHARE_MAX_WORKERS; i++) {
        lines[i] = buf[i];
    }
    share_exec x = {worker, sp};
    return share_fork_json(n, share_exec_worker, &x, lines, (int)sizeof buf[0], w,
                           "parent_wall_s", "workers");
}

#endif
