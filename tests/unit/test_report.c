/* report.html (tools/out_report.h): the page of the default scenario is self-contained (no
 * script, stylesheet, image or frame from anywhere; the only URLs are SVG's XML namespaces), and
 * headless Chromium loads it, finds every section with its plot, and logs no console message.
 * The console check is itself checked on a page with a script error. The page of a run that
 * re-partitions its GPU (tests/reports/metrics-repart.yaml) draws the GPU as one lane of the
 * devices it had, and loads in Chromium as cleanly. Chromium is Debian's `chromium`
 * (tools/install-deps.sh installs it): a missing browser fails the test. */
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

/* Run the scenario (with the --set overrides sets[0 .. n_sets)) into dir; read its report. */
static void load(const char *scenario, const char *const *sets, size_t n_sets)
{
    cr_assert_not_null(mkdtemp(dir));
    FILE *devnull = fopen("/dev/null", "w");
    run_opts o = {.scenario = scenario,
                  .out_dir = dir,
                  .sets = sets,
                  .n_sets = n_sets,
                  .summary = devnull,
                  .errors = stderr};
    cr_assert_eq(run_scenario(&o), 0);
    fclose(devnull);
    char path[128];
    snprintf(path, sizeof path, "%s/report.html", dir);
    size_t len;
    cr_assert_eq(fileio_read_all(path, FILEIO_MAX_BYTES, &html, &len), 0);
}

static void setup(void)
{
    load("experiments/default.yaml", NULL, 0);
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

/* Headless Chromium loads dir/report.html, logs no console message, and finds every section with
 * its plot (fragmentation: or the note that there is no GPU without MIG to measure). */
static void chromium_check(void)
{
    cr_assert_eq(system("command -v chromium >/dev/null"), 0,
                 "chromium is not installed (Debian package chromium)");
    char page[128];
    snprintf(page, sizeof page, "%s/report.html", dir);
    /* on the heap: a static one lies in every test process's .bss, which LeakSanitizer
     * reads through at each exit (the ASan tests' time) */
    char *dom = malloc(1 << 22);
    cr_assert_not_null(dom);
    static char msgs[4096];
    cr_expect_eq(test_chromium_console(page, dom, 1 << 22, msgs, sizeof msgs), 0,
                 "console messages:\n%s", msgs);
    for (size_t i = 0; i < N_SECTIONS; i++) {
        char want[64];
        snprintf(want, sizeof want, "<section id=\"%s\">", sections[i]);
        const char *s = strstr(dom, want);
        cr_expect_not_null(s, "the DOM has no %s", want);
        const char *end = s ? strstr(s, "</section>") : NULL;
        const char *svg = s ? strstr(s, "<svg") : NULL;
        const char *none = s ? strstr(s, "no GPU without MIG") : NULL;
        if (!strcmp(sections[i], "fragmentation") && none && end && none < end) {
            cr_expect(!svg || svg > end, "a fragmentation plot and the note that it has none");
        } else if (strcmp(sections[i], "summary") != 0) {
            cr_expect(svg && end && svg < end, "section %s has no plot", sections[i]);
        } else {
            const char *table = strstr(s, "<table>");
            cr_expect(table && table < end, "the summary has no table");
        }
    }
    free(dom);
}

Test(report, chromium_loads_it_finds_every_section_and_logs_nothing)
{
    chromium_check();
}

/* ---- a re-partitioned GPU (tests/reports/metrics-repart.yaml, hand-solved in its comments and
 * in tests/unit/test_metrics.c): one A100, 7 x 1g.5gb over [0, 360 s), 4g.20gb@0 + 3g.20gb@4
 * over [360 s, 1890 s), time-sliced 4 ways over [1890 s, 3600 s). Each of these devices exists
 * for at least 1/16 of the hour, so each is named on its band; the candidates that never existed
 * (the whole GPU with MIG off, 2g.10gb, 3g.20gb@0, 7g.40gb) are not drawn; the GPU is one lane
 * labelled once, and the legend has the bands and the layout-change marks. */
static void setup_repart(void)
{
    static const char *const sets[] = {"outputs.files[2]=report.html"};
    load("tests/reports/metrics-repart.yaml", sets, 1);
}

TestSuite(report_repart, .init = setup_repart, .fini = teardown, .timeout = 180);

/* Does the Gantt section's SVG have a text element that reads exactly `text`? */
static bool gantt_text(const char *text)
{
    const char *s = strstr(html, "<section id=\"gantt\">");
    cr_assert_not_null(s);
    const char *end = strstr(s, "</svg>");
    char want[64];
    snprintf(want, sizeof want, ">%s</", text);
    const char *at = strstr(s, want);
    return at && at < end;
}

Test(report_repart, the_gantt_lane_names_the_devices_the_gpu_had)
{
    static const char *const had[] = {"1g.5gb@0",     "1g.5gb@1",       "1g.5gb@2", "1g.5gb@3",
                                      "1g.5gb@4",     "1g.5gb@5",       "1g.5gb@6", "4g.20gb@0",
                                      "3g.20gb@4",    "time-sliced x4", "mig-0/0",  "device exists",
                                      "layout change"};
    for (size_t i = 0; i < sizeof had / sizeof had[0]; i++) {
        cr_expect(gantt_text(had[i]), "the Gantt chart has no text '%s'", had[i]);
    }
    static const char *const never[] = {"whole GPU", "2g.10gb@0", "3g.20gb@0", "7g.40gb@0",
                                        "mig-0/0/1g.5gb"};
    for (size_t i = 0; i < sizeof never / sizeof never[0]; i++) {
        cr_expect_not(gantt_text(never[i]), "the Gantt chart has '%s'", never[i]);
    }
}

Test(report_repart, chromium_loads_it_finds_every_section_and_logs_nothing)
{
    chromium_check();
}

/* ---- activity, not allocation (tests/reports/metrics-prom.yaml): one H100 runs one job of a
 * profile fitted on NVML utilisation 0.3739 for the whole hour. The activity plot draws the
 * GPU utilisation metrics.om reports (37 %) beside the units held (100 %), and the page loads
 * in Chromium as cleanly. */
static void setup_prom(void)
{
    static const char *const sets[] = {"outputs.files[1]=report.html"};
    load("tests/reports/metrics-prom.yaml", sets, 1);
}

TestSuite(report_activity, .init = setup_prom, .fini = teardown, .timeout = 180);

Test(report_activity, the_activity_plot_shows_utilisation_beside_allocation)
{
    const char *s = strstr(html, "<section id=\"utilisation\">");
    cr_assert_not_null(s);
    const char *end = strstr(s, "</section>");
    static const char *const legend[] = {"GPU utilisation (activity)", "SMs active (activity)",
                                         "units held (allocation)"};
    for (size_t i = 0; i < sizeof legend / sizeof legend[0]; i++) {
        const char *at = strstr(s, legend[i]);
        cr_expect(at && at < end, "the activity plot has no '%s'", legend[i]);
    }
    chromium_check();
}
