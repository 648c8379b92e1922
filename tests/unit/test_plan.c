/* `slicesim plan` (experiments/plan.h, tools/plan_run.h): the hand-solved plan of
 * tests/reports/plan-hand.yaml (its header derives every figure), the configs it writes read
 * back by slicesim's own loaders, plan.html in headless Chromium, and the bad-input corpus
 * tests/bad_input/plan/. */
#include <cjson/cJSON.h>
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiments/fileio.h"
#include "tests/unit/browser.h"
#include "tests/unit/corpus.h"
#include "tests/unit/sh.h"

#define HAND "tests/reports/plan-hand.yaml"

static char dir[] = "/tmp/slicesim-plan-XXXXXX";
static cJSON *plan;

static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
    char cmd[512], out[8192];
    snprintf(cmd, sizeof cmd, "./slicesim plan %s -o %s/p 2>&1", HAND, dir);
    cr_assert_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    char path[256];
    snprintf(path, sizeof path, "%s/p/plan.json", dir);
    char *buf;
    size_t len;
    cr_assert_eq(fileio_read_all(path, FILEIO_MAX_BYTES, &buf, &len), 0);
    plan = cJSON_ParseWithLength(buf, len);
    free(buf);
    cr_assert_not_null(plan);
}

static void teardown(void)
{
    cJSON_Delete(plan);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(plan, .init = setup, .fini = teardown, .timeout = 180);

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    cr_assert_not_null(v, "no %s", k);
    return v;
}

Test(plan, hand_solved_answer_costs_and_frontier)
{
    const cJSON *search = get(plan, "search");
    cr_expect_eq(get(search, "candidates")->valueint, 3);
    cr_expect_eq(get(search, "runs")->valueint, 6);
    const cJSON *cands = get(plan, "candidates");
    /* cost = 1 x GPUs x 3 h + 1 x (0.228 GPUs + 0.357210) kWh; p95 waits 2565, 300, 0 s (the
     * scenario's header) */
    const double energy[3] = {0.585210, 0.813210, 1.041210};
    const double cost[3] = {3.585210, 6.813210, 10.041210}, p95[3] = {2565, 300, 0};
    for (int i = 0; i < 3; i++) {
        const cJSON *c = cJSON_GetArrayItem(cands, i);
        cr_expect_float_eq(get(c, "cost")->valuedouble, cost[i], 1e-9, "candidate %d", i);
        cr_expect_float_eq(get(c, "energy_kwh")->valuedouble, energy[i], 1e-9, "candidate %d", i);
        const cJSON *s = get(get(c, "slo"), "wait_p95_s");
        cr_expect_float_eq(get(s, "mean")->valuedouble, p95[i], 1e-9, "candidate %d", i);
        cr_expect_float_eq(get(s, "ci95")->valuedouble, 0, 1e-12);
        /* each is cheaper or lower than the others: all three on the frontier */
        cr_expect(cJSON_IsTrue(get(s, "pareto")), "candidate %d", i);
        cr_expect_eq(cJSON_IsTrue(get(c, "meets")), i >= 1, "candidate %d", i);
    }
    const cJSON *chosen = get(plan, "chosen");
    cr_expect_eq(get(chosen, "candidate")->valueint, 1, "the cheapest that meets p95 <= 300 s");
    cr_expect_float_eq(get(chosen, "gpus")->valuedouble, 2, 1e-12);
}

Test(plan, configs_are_read_back_by_the_loaders)
{
    char cmd[512], out[4096];
    snprintf(cmd, sizeof cmd,
             "./slicesim layouts A100-SXM4-40GB --mig-config %s/p/mig-parted.yaml --name "
             "all-disabled 2>&1",
             dir);
    cr_expect_eq(test_sh(cmd, out, sizeof out), 0, "%s", out);
    cr_expect_not_null(strstr(out, "errors=0"), "%s", out);
    snprintf(cmd, sizeof cmd, "%s/p/device-plugin-config.yaml", dir);
    char *buf;
    size_t len;
    cr_assert_eq(fileio_read_all(cmd, FILEIO_MAX_BYTES, &buf, &len), 0);
    cr_expect_not_null(strstr(buf, "kind: ConfigMap\n"), "%s", buf);
    cr_expect_not_null(
        strstr(buf, "  n: |-\n    version: v1\n    flags:\n      migStrategy: none\n"),
        "one key per node group (group n, whole GPUs): %s", buf);
    free(buf);
}

Test(plan, page_loads_in_chromium_with_a_frontier_and_no_console_message)
{
    cr_assert_eq(system("command -v chromium >/dev/null"), 0,
                 "chromium is not installed (Debian package chromium)");
    char page[256];
    snprintf(page, sizeof page, "%s/p/plan.html", dir);
    /* on the heap: a static one lies in every test process's .bss, which LeakSanitizer
     * reads through at each exit (the ASan tests' time) */
    char *dom = malloc(1 << 20);
    cr_assert_not_null(dom);
    static char msgs[4096];
    cr_expect_eq(test_chromium_console(page, dom, 1 << 20, msgs, sizeof msgs), 0, "%s", msgs);
    const char *s = strstr(dom, "<section id=\"frontier-0\">");
    cr_expect(s && strstr(s, "<svg"), "no frontier plot");
    cr_expect_not_null(strstr(dom, "<section id=\"summary\">"));
    free(dom);
}

Test(plan, bad_input_corpus_gives_exact_messages_and_writes_nothing)
{
    cr_expect_geq(test_bad_corpus("tests/bad_input/plan", "plan", 1, dir), 5);
}
