/* tools/plot.c - gnuplot SVG plots inlined into HTML reports (see plot.h). */
#include "tools/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments/fileio.h"
#include "sim/err.h"
#include "sim/xalloc.h"
#include "tools/cleanup.h"

#define PLOT_MAX_FILES 32

struct plot_dir {
    char *dir;
    int dir_handle;
    int n;
    char *path[PLOT_MAX_FILES];
    int handle[PLOT_MAX_FILES];
    FILE *f[PLOT_MAX_FILES];
};

static char *join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *s = xmalloc(n, "plot path");
    snprintf(s, n, "%s/%s", dir, name);
    return s;
}

plot_dir *plot_dir_open(void)
{
    const char *tmp = getenv("TMPDIR");
    char *tmpl = join(tmp && *tmp ? tmp : "/tmp", "slicesim-plot-XXXXXX");
    if (!mkdtemp(tmpl)) {
        fprintf(stderr, "slicesim: %s: cannot make a temporary directory: %s\n", tmpl,
                strerror(errno));
        free(tmpl);
        return NULL;
    }
    plot_dir *p = xcalloc(1, sizeof *p, "plot dir");
    p->dir = tmpl;
    p->dir_handle = cleanup_register(tmpl, true);
    return p;
}

/* Index of file `name` (registered on first use). */
static int file_index(plot_dir *p, const char *name)
{
    for (int i = 0; i < p->n; i++) {
        if (!strcmp(strrchr(p->path[i], '/') + 1, name)) {
            return i;
        }
    }
    SIM_ASSERT(p->n < PLOT_MAX_FILES);
    p->path[p->n] = join(p->dir, name);
    p->handle[p->n] = cleanup_register(p->path[p->n], false);
    return p->n++;
}

FILE *plot_file(plot_dir *p, const char *name)
{
    int i = file_index(p, name);
    if (p->f[i]) {
        fclose(p->f[i]);
    }
    p->f[i] = fopen(p->path[i], "w");
    if (!p->f[i]) {
        fprintf(stderr, "slicesim: %s: %s\n", p->path[i], strerror(errno));
    }
    return p->f[i];
}

static int close_files(plot_dir *p)
{
    int rc = 0;
    for (int i = 0; i < p->n; i++) {
        if (p->f[i]) {
            if (ferror(p->f[i]) || fclose(p->f[i]) != 0) {
                fprintf(stderr, "slicesim: %s: write failed\n", p->path[i]);
                rc = SIM_EIO;
            }
            p->f[i] = NULL;
        }
    }
    return rc;
}

int plot_run(plot_dir *p, const char *script)
{
    if (close_files(p) != 0) {
        return SIM_EIO;
    }
    int log = file_index(p, "gnuplot.log");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "slicesim: fork: %s\n", strerror(errno));
        return SIM_EIO;
    }
    if (pid == 0) {
        int fd = open(p->path[log], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || chdir(p->dir) != 0) {
            _exit(126);
        }
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        execlp("gnuplot", "gnuplot", script, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR) {
            fprintf(stderr, "slicesim: waitpid: %s\n", strerror(errno));
            return SIM_EIO;
        }
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
        return 0;
    }
    if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
        fprintf(stderr, "slicesim: cannot run gnuplot for the HTML report; install it (Debian "
                        "package gnuplot-nox) or leave report.html out of outputs.files\n");
        return SIM_EIO;
    }
    char *text = NULL;
    size_t len = 0;
    fprintf(stderr, "slicesim: gnuplot failed on %s:\n", script);
    if (fileio_read_all(p->path[log], 65536, &text, &len) == 0) {
        fwrite(text, 1, len, stderr);
        free(text);
    }
    return SIM_EIO;
}

int plot_inline_svg(plot_dir *p, const char *name, FILE *f)
{
    int i = file_index(p, name);
    char *text = NULL;
    size_t len = 0;
    if (fileio_read_all(p->path[i], FILEIO_MAX_BYTES, &text, &len) != 0) {
        fprintf(stderr, "slicesim: %s: %s\n", p->path[i], strerror(errno));
        return SIM_EIO;
    }
    const char *svg = strstr(text, "<svg");
    if (!svg) {
        fprintf(stderr, "slicesim: %s: gnuplot wrote no <svg> element\n", p->path[i]);
        free(text);
        return SIM_EIO;
    }
    fwrite(svg, 1, len - (size_t)(svg - text), f);
    free(text);
    return 0;
}

void plot_dir_close(plot_dir *p)
{
    if (!p) {
        return;
    }
    for (int i = 0; i < p->n; i++) {
        if (p->f[i]) {
            fclose(p->f[i]);
        }
        remove(p->path[i]);
        cleanup_forget(p->handle[i]);
        free(p->path[i]);
    }
    rmdir(p->dir);
    cleanup_forget(p->dir_handle);
    free(p->dir);
    free(p);
}

void plot_header(FILE *s, const char *svg_name, int width, int height)
{
    fprintf(s,
            "set terminal svg size %d,%d font 'sans,11' background '#ffffff'\n"
            "set output '%s'\n"
            "set termoption noenhanced\n"
            "set grid lc rgb '#dddddd'\n"
            "set border lc rgb '#555555'\n"
            "set key outside right top\n",
            width, height, svg_name);
}

void plot_string(FILE *s, const char *text)
{
    for (; *text; text++) {
        if (*text != '"' && *text != '\\' && *text != '\n') {
            fputc(*text, s);
        }
    }
}

void html_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

void html_begin(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>", f);
    html_text(f, title);
    fputs("</title>\n<style>\n"
          "body{font-family:sans-serif;margin:2em auto;max-width:1100px;color:#222}\n"
          "h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ccc}\n"
          "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;"
          "padding:.25em .6em;text-align:right}th{background:#f3f3f3}td.l,th.l{text-align:left}\n"
          "figure{margin:.5em 0}figcaption,p.note{color:#555;font-size:.9em}\n"
          "tr.pareto td{font-weight:bold}\n"
          "</style>\n</head>\n<body>\n<h1>",
          f);
    html_text(f, title);
    fputs("</h1>\n", f);
}

void html_end(FILE *f)
{
    fputs("<p class=\"note\">Made by slicesim; plots by gnuplot (inline SVG).</p>\n"
          "</body>\n</html>\n",
          f);
}
