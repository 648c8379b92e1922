/* tools/cmd_import_workload.c - `slicesim import workload MANIFEST... --cluster SCENARIO.yaml
 * -o OUT.yaml`: the job classes of Kubernetes manifests (batch/v1 Job, v1 Pod, kubeflow.org/v1
 * PyTorchJob; experiments/k8s_manifest.h reads them) as the workload of a scenario.
 *
 * OUT.yaml is SCENARIO.yaml (e.g. what `import cluster` wrote) with one class per manifest
 * added to its `workload.jobs` (or in place of them with --replace): the request, workers (a
 * PyTorchJob's Master and Worker replicas as one gang), CPU and memory, priority (ranked from 0 by
 * the PriorityClass values among the manifests), and the arrivals, count and run time its
 * slicesim.io/ annotations give, else --rate or --interval, --count and --duration. The text is
 * loaded as a scenario before it is written (a resource no node group advertises is refused there);
 * on any error nothing is written. Exit 0, 2 on bad input or usage, 1 when a file cannot be read or
 * written. */
#include "tools/cli.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "experiments/fileio.h"
#include "experiments/k8s_manifest.h"
#include "experiments/scenario.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "sim/xalloc.h"

#define CMD "import workload"
#define MAX_FILES 1024

typedef struct wopts {
    const char *cluster, *out, *rate, *interval, *count, *duration;
    bool replace; /* --replace: drop the scenario's own job classes */
    const char *files[MAX_FILES];
    size_t n_files;
} wopts;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* A directory argument: its *.yaml and *.yml files, sorted (arena copies). */
static int add_path(wopts *o, const char *p, arena *a)
{
    struct stat st;
    if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) {
        if (o->n_files == MAX_FILES) {
            return cli_usage_error(CMD, "expected at most %d manifest files", MAX_FILES);
        }
        o->files[o->n_files++] = p;
        return CLI_EXIT_OK;
    }
    DIR *dp = opendir(p);
    struct dirent *de;
    size_t first = o->n_files;
    while (dp && (de = readdir(dp))) {
        size_t n = strlen(de->d_name);
        bool yaml = (n > 5 && !strcmp(de->d_name + n - 5, ".yaml")) ||
                    (n > 4 && !strcmp(de->d_name + n - 4, ".yml"));
        if (yaml && o->n_files < MAX_FILES) {
            char *full = arena_alloc(a, strlen(p) + n + 2);
            sprintf(full, "%s/%s", p, de->d_name);
            o->files[o->n_files++] = full;
        }
    }
    if (dp) {
        closedir(dp);
    }
    qsort(o->files + first, o->n_files - first, sizeof *o->files, cmp_str);
    return CLI_EXIT_OK;
}

/* SCENARIO.yaml's text with the classes (`items`, the lines of `workload.jobs` items at their
 * indentation) added: at the end of its `workload:` block when that block has a `  jobs:` line
 * (what `import cluster` writes), else (or with replace) in place of the block under a new
 * `workload:\n  jobs:`. Returns false when a workload block exists whose jobs cannot be found
 * (a flow-style or differently indented list) and replace is off. */
static bool merge(FILE *f, const char *buf, size_t len, const char *items, bool replace)
{
    /* find the workload block and whether it has a jobs line */
    bool in = false, has_block = false, has_jobs = false;
    for (size_t off = 0; off < len;) {
        size_t n = strcspn(buf + off, "\n");
        n = off + n > len ? len - off : n;
        const char *line = buf + off;
        if (n > 0 && line[0] != ' ' && line[0] != '#' && line[0] != '-') {
            in = n >= 9 && !strncmp(line, "workload:", 9);
            has_block |= in;
        } else if (in && n == 7 && !strncmp(line, "  jobs:", 7)) {
            has_jobs = true;
        }
        off += n + 1;
    }
    if (has_block && !has_jobs && !replace) {
        return false;
    }
    bool append = has_block && has_jobs && !replace;
    in = false;
    for (size_t off = 0; off < len;) {
        size_t n = strcspn(buf + off, "\n");
        n = off + n > len ? len - off : n;
        const char *line = buf + off;
        if (n > 0 && line[0] != ' ' && line[0] != '#' && line[0] != '-') {
            if (in && append) {
                fputs(items, f); /* the block ends here */
            }
            in = n >= 9 && !strncmp(line, "workload:", 9);
        }
        if (!in || append) {
            fwrite(line, 1, n, f);
            fputc('\n', f);
        }
        off += n + 1;
    }
    if (in && append) {
        fputs(items, f);
    }
    if (!append) {
        fprintf(f, "\nworkload:\n  jobs:\n%s", items);
    }
    return true;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static int rank_of(const k8s_workload *w, int32_t p)
{
    int32_t *v = xcalloc(w->n ? w->n : 1, sizeof *v, "priorities");
    for (size_t i = 0; i < w->n; i++) {
        v[i] = w->classes[i].priority;
    }
    qsort(v, w->n, sizeof *v, cmp_i32);
    int rank = 0;
    for (size_t i = 0; i < w->n && v[i] < p; i++) {
        rank += i == 0 || v[i] != v[i - 1];
    }
    free(v);
    return rank;
}

/* The class's name, unique among the first i (a second "train" becomes "train-2"). */
static void class_name(const k8s_workload *w, size_t i, char *out, size_t n)
{
    size_t same = 1;
    for (size_t j = 0; j < i; j++) {
        same += !strcmp(w->classes[j].name, w->classes[i].name);
    }
    if (same > 1) {
        snprintf(out, n, "%.100s-%zu", w->classes[i].name, same);
    } else {
        snprintf(out, n, "%.100s", w->classes[i].name);
    }
}

/* What a class lacks that neither an annotation nor an option gives: a printed usage error. */
static int check_defaults(const wopts *o, const k8s_workload *w)
{
    for (size_t i = 0; i < w->n; i++) {
        const k8s_job_class *k = &w->classes[i];
        if (!k->rate && !k->interval && !o->rate && !o->interval) {
            return cli_usage_error(CMD,
                                   "%s %s (%s): when do its jobs arrive? expected its "
                                   "annotation slicesim.io/rate or slicesim.io/interval, "
                                   "or --rate / --interval, got none",
                                   k->kind, k->name, k->file);
        }
        if (!k->duration && !o->duration) {
            return cli_usage_error(CMD,
                                   "%s %s (%s): how long does a job run? expected its "
                                   "annotation slicesim.io/duration, or --duration, got "
                                   "none",
                                   k->kind, k->name, k->file);
        }
    }
    return CLI_EXIT_OK;
}

/* The classes as `workload.jobs` items (4-space indentation). */
static void write_items(FILE *f, const wopts *o, const k8s_workload *w)
{
    fprintf(f,
            "    # Added by `slicesim import workload` from %zu manifest file%s: one class per "
            "Job, Pod or\n    # PyTorchJob (its Master and Worker replicas: the workers of "
            "one gang); %zu object%s\n    # asking for no GPU left out.\n",
            o->n_files, o->n_files == 1 ? "" : "s", w->n_skipped, w->n_skipped == 1 ? "" : "s");
    for (size_t i = 0; i < w->n; i++) {
        const k8s_job_class *k = &w->classes[i];
        char name[128];
        class_name(w, i, name, sizeof name);
        fprintf(f, "    - name: %s\n      # %s %s (%s)", name, k->kind, k->name, k->file);
        if (k->nproc) {
            fprintf(f, "; nprocPerNode %s", k->nproc);
        }
        if (k->priority_class) {
            fprintf(f, "; priority class %s (%" PRId32 ")", k->priority_class, k->priority);
        }
        fputc('\n', f);
        const char *rate = k->rate ? k->rate : k->interval ? NULL : o->rate;
        const char *interval = k->rate ? NULL : k->interval ? k->interval : o->interval;
        if (rate) {
            fprintf(f, "      rate: %s\n", rate);
        } else {
            fprintf(f, "      arrival: fixed\n      interval: %s\n", interval);
        }
        const char *count = k->count ? k->count : o->count;
        if (count) {
            fprintf(f, "      count: %s\n", count);
        } else {
            fprintf(f, "      count: %" PRIu64 "\n", k->jobs);
        }
        fprintf(f, "      duration: %s\n", k->duration ? k->duration : o->duration);
        fprintf(f, "      request: {%s: %u}\n", k->resource, k->per_worker);
        if (k->workers > 1) {
            fprintf(f, "      workers: %u\n", k->workers);
        }
        if (k->profile) {
            fprintf(f, "      profile: %s\n", k->profile);
        }
        fprintf(f, "      priority: %d\n", rank_of(w, k->priority));
        if (k->cpu_milli) {
            fprintf(f, "      cpu_milli: %" PRIu64 "\n", k->cpu_milli);
        }
        if (k->mem_bytes) {
            fprintf(f, "      host_memory: %" PRIu64 "B\n", k->mem_bytes);
        }
        import_put_place(f, &k->place);
    }
}

typedef struct text {
    const char *buf;
    size_t len;
} text;

static void write_text(FILE *f, const void *arg)
{
    const text *t = arg;
    fwrite(t->buf, 1, t->len, f);
}

static int parse(int argc, char **argv, wopts *o, arena *a)
{
    static const char *const names[] = {"-o",         "--cluster", "--rate",
                                        "--interval", "--count",   "--duration"};
    const char **const dst[] = {&o->out,      &o->cluster, &o->rate,
                                &o->interval, &o->count,   &o->duration};
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--replace")) {
            o->replace = true;
            continue;
        }
        int r = cli_option_value(CMD, argc, argv, &i, names, dst, 6);
        if (r < 0) {
            return CLI_EXIT_INPUT;
        }
        if (r == 0) {
            if (argv[i][0] == '-') {
                return cli_usage_error(CMD,
                                       "unexpected option '%s'; expected: import workload "
                                       "MANIFEST... --cluster SCENARIO.yaml -o OUT.yaml",
                                       argv[i]);
            }
            int st = add_path(o, argv[i], a);
            if (st != CLI_EXIT_OK) {
                return st;
            }
        }
    }
    if (!o->n_files || !o->cluster || !o->out) {
        return cli_usage_error(CMD, "expected: import workload MANIFEST... --cluster "
                                    "SCENARIO.yaml -o OUT.yaml");
    }
    if (o->rate && o->interval) {
        return cli_usage_error(CMD, "--rate and --interval: expected one of them, got both");
    }
    return CLI_EXIT_OK;
}

int cmd_import_workload(int argc, char **argv)
{
    arena *a = arena_create();
    diag *d = diag_create();
    wopts *o = xcalloc(1, sizeof *o, "options");
    int st = parse(argc, argv, o, a);
    k8s_workload w;
    if (st == CLI_EXIT_OK) {
        int rc = k8s_manifests_load(o->files, o->n_files, a, d, &w);
        if (rc == SIM_ENOENT || rc == SIM_EIO) {
            diag_print(d, stderr);
            st = CLI_EXIT_ENV;
        } else if (rc) {
            st = cli_load_status(CMD, o->files[0], rc, d);
        } else {
            st = check_defaults(o, &w);
        }
    }
    char *cbuf = NULL, *buf = NULL;
    size_t clen = 0, len = 0;
    if (st == CLI_EXIT_OK && fileio_read_all(o->cluster, FILEIO_MAX_BYTES, &cbuf, &clen) != 0) {
        fprintf(stderr, "slicesim %s: error: cannot read '%s': %s\n", CMD, o->cluster,
                strerror(errno));
        st = CLI_EXIT_ENV;
    }
    if (st == CLI_EXIT_OK) {
        char *items = NULL;
        size_t n_items = 0;
        FILE *fi = open_memstream(&items, &n_items);
        write_items(fi, o, &w);
        fclose(fi);
        FILE *f = open_memstream(&buf, &len);
        bool ok = merge(f, cbuf, clen, items, o->replace);
        fclose(f);
        free(items);
        if (!ok) {
            st = cli_usage_error(CMD,
                                 "'%s' has a workload: block without a '  jobs:' line in "
                                 "block style; expected one to add the classes to, or "
                                 "--replace",
                                 o->cluster);
        }
    }
    if (st == CLI_EXIT_OK) {
        char *dir = arena_strdup(a, o->out);
        char *slash = strrchr(dir, '/');
        if (slash) {
            *slash = 0;
        }
        scenario_spec *spec;
        if (scenario_load_buffer(o->out, slash ? dir : ".", buf, len, NULL, 0, 0, a, d, &spec)) {
            fprintf(stderr,
                    "slicesim %s: error: the scenario written from '%s' and the "
                    "manifests does not load:\n",
                    CMD, o->cluster);
            diag_print(d, stderr);
            st = CLI_EXIT_INPUT;
        } else if (fileio_write_atomic(o->out, write_text, &(text){buf, len}) != 0) {
            fprintf(stderr, "slicesim %s: error: cannot write '%s': %s\n", CMD, o->out,
                    strerror(errno));
            st = CLI_EXIT_ENV;
        } else {
            printf("%s: %zu job class(es) from %zu file(s); %zu object(s) asking for no GPU "
                   "left out\n",
                   o->out, w.n, o->n_files, w.n_skipped);
        }
    }
    free(cbuf);
    free(buf);
    free(o);
    diag_destroy(d);
    arena_destroy(a);
    return st;
}
