/* Golden tests: each tests/golden/CASE/scenario.yaml is run and the "metrics" of its run.json
 * are compared with tests/golden/CASE/expected/summary.json, number by number, within the
 * tolerance the file states per metric ("tolerance": {"jct_s": {"rel": 1e-9}, ...}; a metric
 * without one must match exactly). Counts are integers and always match exactly. Every top-level
 * metric the run writes must be in the expected file, so a new section is reviewed once.
 * `make golden-update` (SLICESIM_GOLDEN_UPDATE=1) rewrites the expected files from the current
 * build, keeping their tolerances; review the diff before committing it.
 */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiments/fileio.h"
#include "tools/jsonw.h"
#include "tools/out.h"
#include "tools/run.h"

#define GOLDEN_DIR "tests/golden"

static char *read_text(const char *path)
{
    char *buf = NULL;
    size_t len;
    return fileio_read_all(path, FILEIO_MAX_BYTES, &buf, &len) == 0 ? buf : NULL;
}

/* Compare two metric trees; `tol` is the tolerance object of this metric (may be NULL). */
static void compare(const cJSON *want, const cJSON *got, const char *path, const cJSON *tol)
{
    cr_assert_not_null(got, "%s: missing from the run", path);
    if (cJSON_IsObject(want)) {
        cr_assert_eq(cJSON_GetArraySize(want), cJSON_GetArraySize(got), "%s: other keys", path);
        const cJSON *w;
        cJSON_ArrayForEach(w, want)
        {
            char sub[256];
            snprintf(sub, sizeof sub, "%s.%s", path, w->string);
            compare(w, cJSON_GetObjectItemCaseSensitive(got, w->string), sub, tol);
        }
        return;
    }
    if (cJSON_IsNumber(want)) {
        cr_assert(cJSON_IsNumber(got), "%s: not a number", path);
        double rel = 0, abs_tol = 0;
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(tol, "rel");
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(tol, "abs");
        rel = cJSON_IsNumber(r) ? r->valuedouble : 0;
        abs_tol = cJSON_IsNumber(a) ? a->valuedouble : 0;
        double x = want->valuedouble, y = got->valuedouble;
        cr_expect(fabs(x - y) <= abs_tol + rel * fabs(x), "%s: expected %.17g, got %.17g", path, x,
                  y);
        return;
    }
    cr_expect(cJSON_Compare(want, got, true), "%s differs", path);
}

/* Every number of the tree as a raw item in run.json's own number format (jsonw_format_number),
 * so the expected file holds the run's values exactly: cJSON_Print's "%1.15g when it reads back
 * within epsilon" would round the last digit away and the exact comparison would then fail. */
static void exact_numbers(cJSON *t)
{
    cJSON *c;
    cJSON_ArrayForEach(c, t)
    {
        if (cJSON_IsNumber(c)) {
            char buf[JSONW_NUM_LEN];
            cJSON *raw = cJSON_CreateRaw(jsonw_format_number(buf, c->valuedouble));
            cr_assert_not_null(raw);
            if (c->string) { /* a member keeps its key */
                raw->string = strdup(c->string);
                cr_assert_not_null(raw->string);
            }
            cr_assert(cJSON_ReplaceItemViaPointer(t, c, raw));
            c = raw;
        } else {
            exact_numbers(c);
        }
    }
}

static void run_case(const char *name)
{
    char scen[256], exp_path[256], out[] = "/tmp/slicesim-golden-XXXXXX";
    snprintf(scen, sizeof scen, GOLDEN_DIR "/%s/scenario.yaml", name);
    snprintf(exp_path, sizeof exp_path, GOLDEN_DIR "/%s/expected/summary.json", name);
    cr_assert_not_null(mkdtemp(out));
    FILE *devnull = fopen("/dev/null", "w");
    run_opts o = {
        .scenario = scen, .out_dir = out, .summary = devnull, .errors = stderr, .verify_every = 1};
    cr_assert_eq(run_scenario(&o), 0, "%s did not run", scen);
    fclose(devnull);
    char run_path[300];
    snprintf(run_path, sizeof run_path, "%s/run.json", out);
    char *run_text = read_text(run_path);
    cJSON *run = cJSON_Parse(run_text);
    cr_assert_not_null(run);
    cJSON *metrics = cJSON_GetObjectItemCaseSensitive(run, "metrics");
    char *exp_text = read_text(exp_path);
    cJSON *expected = exp_text ? cJSON_Parse(exp_text) : NULL;
    const char *update = getenv("SLICESIM_GOLDEN_UPDATE");
    if (update && !strcmp(update, "1")) {
        cJSON *tol = expected ? cJSON_DetachItemFromObject(expected, "tolerance") : NULL;
        cJSON *doc = cJSON_CreateObject();
        cJSON_AddItemToObject(doc, "tolerance", tol ? tol : cJSON_CreateObject());
        cJSON *m = cJSON_Duplicate(metrics, true);
        exact_numbers(m);
        cJSON_AddItemToObject(doc, "metrics", m);
        FILE *f = fopen(exp_path, "w");
        cr_assert_not_null(f, "cannot write %s", exp_path);
        cr_assert_eq(out_write_json(f, doc), 0);
        fclose(f);
        cJSON_Delete(doc);
    } else {
        cr_assert_not_null(expected, "%s missing or not JSON (make golden-update)", exp_path);
        const cJSON *tol = cJSON_GetObjectItemCaseSensitive(expected, "tolerance");
        const cJSON *want = cJSON_GetObjectItemCaseSensitive(expected, "metrics");
        cr_assert_not_null(want);
        const cJSON *w;
        cJSON_ArrayForEach(w, want)
        {
            char path[128];
            snprintf(path, sizeof path, "%s: metrics.%s", name, w->string);
            compare(w, cJSON_GetObjectItemCaseSensitive(metrics, w->string), path,
                    cJSON_GetObjectItemCaseSensitive(tol, w->string));
        }
        /* A metric the run writes that the expected file lacks would otherwise never be
         * checked (a section added after the file was last updated). */
        const cJSON *g;
        cJSON_ArrayForEach(g, metrics)
        {
            cr_expect_not_null(cJSON_GetObjectItemCaseSensitive(want, g->string),
                               "%s: the run writes metrics.%s, which %s lacks (review it, then "
                               "make golden-update)",
                               name, g->string, exp_path);
        }
    }
    cJSON_Delete(expected);
    cJSON_Delete(run);
    free(exp_text);
    free(run_text);
    const char *names[] = {"run.json",       "run_info.json", "jobs.csv",
                           "timeseries.csv", "metrics.om",    "report.html"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char p[300];
        snprintf(p, sizeof p, "%s/%s", out, names[i]);
        remove(p);
    }
    rmdir(out);
}

Test(golden, every_case_matches_its_expected_metrics)
{
    DIR *d = opendir(GOLDEN_DIR);
    cr_assert_not_null(d, "no " GOLDEN_DIR);
    char *names[64];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 64) {
        if (e->d_name[0] != '.') {
            names[n++] = strdup(e->d_name);
        }
    }
    closedir(d);
    cr_assert_gt(n, 0);
    for (size_t i = 0; i < n; i++) { /* sorted: readdir order is not defined */
        for (size_t k = i + 1; k < n; k++) {
            if (strcmp(names[k], names[i]) < 0) {
                char *t = names[i];
                names[i] = names[k];
                names[k] = t;
            }
        }
    }
    for (size_t i = 0; i < n; i++) {
        run_case(names[i]);
        free(names[i]);
    }
}
