/* tests/unit/sh.c - see sh.h. */
#include "tests/unit/sh.h"

#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int test_sh(const char *cmd, char *out, size_t n)
{
    FILE *p = popen(cmd, "r");
    if (!p) {
        return -1;
    }
    size_t got = fread(out, 1, n - 1, p);
    out[got] = '\0';
    char sink[4096];
    while (fread(sink, 1, sizeof sink, p) > 0) {
    }
    int st = pclose(p);
    if (st < 0) {
        return -1;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1;
}

int test_read_text(const char *path, char *out, size_t n)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        return 0;
    }
    size_t got = fread(out, 1, n - 1, f);
    out[got] = '\0';
    fclose(f);
    return 1;
}

int test_tmpdir(char *buf, size_t n, const char *tag)
{
    snprintf(buf, n, "/tmp/slicesim-%s-XXXXXX", tag);
    return mkdtemp(buf) != NULL;
}

int test_rm_rf(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) == 0;
}

int test_write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        return 0;
    }
    int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

int test_death(void (*fn)(void *arg), void *arg, char *out, size_t n)
{
    int fd[2];
    if (pipe(fd) != 0) {
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        return -1;
    }
    if (pid == 0) {
        dup2(fd[1], STDERR_FILENO);
        close(fd[0]);
        close(fd[1]);
        fn(arg);
        _exit(0);
    }
    close(fd[1]);
    size_t got = 0;
    ssize_t r;
    while ((r = read(fd[0], out + got, n - 1 - got)) > 0 && got + (size_t)r < n - 1) {
        got += (size_t)r;
    }
    if (r > 0) {
        got += (size_t)r;
    }
    out[got] = '\0';
    char sink[512];
    while (read(fd[0], sink, sizeof sink) > 0) {
    }
    close(fd[0]);
    int st;
    if (waitpid(pid, &st, 0) != pid) {
        return -1;
    }
    fprintf(stderr, "expected abort (death test): %.*s\n", (int)strcspn(out, "\n"), out);
    return WIFSIGNALED(st) ? WTERMSIG(st) : 0;
}
