/* report.html (tools/out_report.h): the page of the default scenario is self-contained (no
 * script, stylesheet, image or frame from anywhere; the only URLs are SVG's XML namespaces), and
 * headless Chromium loads it, finds every section with its plot, and logs no console message.
 * The console check is itself checked on a page with a script error. Chromium is Debian's
 * `chromium` (tools/install-deps.sh installs it): a missing browser fails the test. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiments/fileio.h"
#include "tests/unit/browser.h"
#include "tools/run.h"

static char dir[] = "/tmp/slicesim-report-XXXXXX";
static char *html;

static const char *const sections[] = {"summary", "utilisation", "queue", "fragmentation",
                                       "jct-cdf", "wait-cdf",    "gantt"};
#define N_SECTIONS (sizeof sections / sizeof sections[0])

static void setup(void)
{
    cr_assert_not_null(mkdtemp(dir));
    FILE *devnull = fopen("/dev/null", "w");
    run_opts o = {.scenario = "experiments/default.yaml",
                  .out_dir = dir,
                  .summary = devnull,
                  .errors = stderr};
    cr_assert_eq(run_scenario(&o), 0);
    fclose(devnull);
    char path[128];
    snprintf(path, sizeof path, "%s/report.html", dir);
    size_t len;
    cr_assert_eq(fileio_read_all(path, FILEIO_MAX_BYTES, &html, &len), 0);
}

static void teardown(void)
{
    free(html);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(report, .init = setup, .fini = teardown, .timeout = 180);

Test(report, is_one_self_contained_file)
{
    for (size_t i = 0; i < N_SECTIONS; i++) {
        char want[64];
        snprintf(want, sizeof want, "<section id=\"%s\">", sections[i]);
        cr_expect_not_null(strstr(html, want), "no %s", want);
    }
    static const char *const fetches[] = {"<script", "<link", "<img",   "<iframe",
                                          "<object", "url(",  "@import"};
    for (size_t i = 0; i < sizeof fetches / sizeof fetches[0]; i++) {
        cr_expect_null(strstr(html, fetches[i]), "the page contains '%s'", fetches[i]);
    }
    size_t n_url = 0;
    for (const char *p = html; (p = strstr(p, "http")); p++) {
        bool ns = !strncmp(p - 7, "xmlns=\"", 7) || !strncmp(p - 13, "xmlns:xlink=\"", 13);
        cr_expect(ns, "a URL that is not an XML namespace: %.60s", p);
        n_url++;
    }
    cr_expect_gt(n_url, 0, "inline SVG declares its namespace");
}

Test(report, chromium_console_check_catches_a_script_error)
{
    cr_assert_eq(system("command -v chromium >/dev/null"), 0,
                 "chromium is not installed (Debian package chromium)");
    char page[128];
    snprintf(page, sizeof page, "%s/bad.html", dir);
    FILE *f = fopen(page, "w");
    cr_assert_not_null(f);
    fputs("<!DOCTYPE html><html><body><p id=\"x\">x</p><script>undefinedFunction();</script>"
          "</body></html>\n",
          f);
    fclose(f);
    static char dom[1 << 16], msgs[4096];
    cr_expect_eq(test_chromium_console(page, dom, sizeof dom, msgs, sizeof msgs), 1, "%s", msgs);
    cr_expect_not_null(strstr(msgs, "undefinedFunction is not defined"), "%s", msgs);
    cr_expect_not_null(strstr(dom, "<p id=\"x\">"), "%s", dom);
}

Test(report, chromium_loads_it_finds_every_section_and_logs_nothing)
{
    cr_assert_eq(system("command -v chromium >/dev/null"), 0,
                 "chromium is not installed (Debian package chromium)");
    char page[128];
    snprintf(page, sizeof page, "%s/report.html", dir);
    static char dom[1 << 22], msgs[4096];
    cr_expect_eq(test_chromium_console(page, dom, sizeof dom, msgs, sizeof msgs), 0,
                 "console messages:\n%s", msgs);
    for (size_t i = 0; i < N_SECTIONS; i++) {
        char want[64];
        snprintf(want, sizeof want, "<section id=\"%s\">", sections[i]);
        const char *s = strstr(dom, want);
        cr_expect_not_null(s, "the DOM has no %s", want);
        const char *end = s ? strstr(s, "</section>") : NULL;
        const char *svg = s ? strstr(s, "<svg") : NULL;
        if (strcmp(sections[i], "summary") != 0) {
            cr_expect(svg && end && svg < end, "section %s has no plot", sections[i]);
        } else {
            const char *table = strstr(s, "<table>");
            cr_expect(table && table < end, "the summary has no table");
        }
    }
}
