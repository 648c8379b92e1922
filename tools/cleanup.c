/* tools/cleanup.c - remove registered paths on SIGINT/SIGTERM (see cleanup.h). */
#include "tools/cleanup.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

typedef struct cleanup_slot {
    char path[CLEANUP_PATH_MAX];
    bool is_dir;
    unsigned long seq;          /* registration order: directories are removed newest first */
    volatile sig_atomic_t used; /* set after path is written, cleared before it is reused */
} cleanup_slot;

static cleanup_slot slots[CLEANUP_MAX_PATHS];
static volatile sig_atomic_t installed;
static unsigned long next_seq;
/* worker processes to stop before exiting (0: free slot); changed with the signals blocked */
static volatile pid_t children[CLEANUP_MAX_CHILDREN];

/* write(2) a NUL-terminated string; errors are ignored (nothing can be done in a handler). */
static void say(const char *s)
{
    size_t n = strlen(s); /* strlen is async-signal-safe since POSIX.1-2016 */
    while (n > 0) {
        ssize_t k = write(STDERR_FILENO, s, n);
        if (k <= 0) {
            return;
        }
        s += k;
        n -= (size_t)k;
    }
}

/* Decimal text of v (v < 10^9) into buf[16]. */
static const char *decimal(int v, char *buf)
{
    char *p = buf + 15;
    *p = '\0';
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v > 0 && p > buf);
    return p;
}

/* Pass the signal on to every registered worker, then reap them: no worker outlives the process
 * or writes after it said it stopped. Returns how many were stopped. */
static int stop_children(int sig)
{
    int n = 0;
    for (int i = 0; i < CLEANUP_MAX_CHILDREN; i++) {
        if (children[i] > 0) {
            kill(children[i], sig);
        }
    }
    for (int i = 0; i < CLEANUP_MAX_CHILDREN; i++) {
        if (children[i] > 0) {
            while (waitpid(children[i], NULL, 0) < 0 && errno == EINTR) {
            }
            children[i] = 0;
            n++;
        }
    }
    return n;
}

static void on_signal(int sig)
{
    int n_children = stop_children(sig);
    if (n_children > 0) {
        char b[16];
        say(sig == SIGINT ? "slicesim: interrupted (SIGINT): stopped " : "slicesim: terminated "
                                                                         "(SIGTERM): stopped ");
        say(decimal(n_children, b));
        say(n_children == 1 ? " worker process\n" : " worker processes\n");
    }
    int n_files = 0, n_dirs = 0;
    for (int i = 0; i < CLEANUP_MAX_PATHS; i++) { /* files first */
        if (slots[i].used && !slots[i].is_dir) {
            n_files += unlink(slots[i].path) == 0;
            slots[i].used = 0;
        }
    }
    for (;;) { /* then directories, the newest (innermost) first */
        int newest = -1;
        for (int i = 0; i < CLEANUP_MAX_PATHS; i++) {
            if (slots[i].used && (newest < 0 || slots[i].seq > slots[newest].seq)) {
                newest = i;
            }
        }
        if (newest < 0) {
            break;
        }
        n_dirs += rmdir(slots[newest].path) == 0;
        slots[newest].used = 0;
    }
    char b1[16], b2[16];
    say(sig == SIGINT ? "slicesim: interrupted (SIGINT): removed "
                      : "slicesim: terminated (SIGTERM): removed ");
    say(decimal(n_files, b1));
    say(n_files == 1 ? " staged file and " : " staged files and ");
    say(decimal(n_dirs, b2));
    say(n_dirs == 1 ? " directory it had made\n" : " directories it had made\n");
    _exit(128 + sig);
}

int cleanup_install(void)
{
    if (installed) {
        return 0;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGINT);
    sigaddset(&sa.sa_mask, SIGTERM);
    if (sigaction(SIGINT, &sa, NULL) != 0 || sigaction(SIGTERM, &sa, NULL) != 0) {
        return -1;
    }
    installed = 1;
    return 0;
}

/* Block the two signals while the table changes, so the handler never sees a slot half-set. */
static void block(sigset_t *old)
{
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    sigprocmask(SIG_BLOCK, &s, old);
}

int cleanup_register(const char *path, bool is_dir)
{
    size_t n = strlen(path);
    if (n >= CLEANUP_PATH_MAX) {
        return -1;
    }
    sigset_t old;
    block(&old);
    int h = -1;
    for (int i = 0; i < CLEANUP_MAX_PATHS && h < 0; i++) {
        if (!slots[i].used) {
            memcpy(slots[i].path, path, n + 1);
            slots[i].is_dir = is_dir;
            slots[i].seq = next_seq++;
            slots[i].used = 1;
            h = i;
        }
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return h;
}

void cleanup_forget(int handle)
{
    if (handle < 0 || handle >= CLEANUP_MAX_PATHS) {
        return;
    }
    sigset_t old;
    block(&old);
    slots[handle].used = 0;
    sigprocmask(SIG_SETMASK, &old, NULL);
}

int cleanup__count_for_test(void)
{
    int n = 0;
    for (int i = 0; i < CLEANUP_MAX_PATHS; i++) {
        n += slots[i].used != 0;
    }
    return n;
}

pid_t cleanup_fork(void)
{
    sigset_t old;
    block(&old);
    int slot = -1;
    for (int i = 0; i < CLEANUP_MAX_CHILDREN && slot < 0; i++) {
        slot = children[i] == 0 ? i : -1;
    }
    if (slot < 0) {
        sigprocmask(SIG_SETMASK, &old, NULL);
        errno = EAGAIN;
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) { /* the parent's paths and workers are not the worker's to remove or stop */
        for (int i = 0; i < CLEANUP_MAX_PATHS; i++) {
            slots[i].used = 0;
        }
        for (int i = 0; i < CLEANUP_MAX_CHILDREN; i++) {
            children[i] = 0;
        }
#ifdef __linux__
        /* a parent killed outright (SIGKILL, which no handler sees) still stops its workers */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent) {
            _exit(128 + SIGTERM);
        }
#else
        (void)parent;
#endif
    } else if (pid > 0) {
        children[slot] = pid;
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    return pid;
}

void cleanup_child_done(pid_t pid)
{
    sigset_t old;
    block(&old);
    for (int i = 0; i < CLEANUP_MAX_CHILDREN; i++) {
        if (children[i] == pid) {
            children[i] = 0;
        }
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
}
