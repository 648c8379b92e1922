/* tests/unit/browser.c - load a page in headless Chromium from a test (see browser.h). */
#include "tests/unit/browser.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/fileio.h"
#include "tests/unit/sh.h"

/* Load `page` in headless Chromium with a fresh profile; the DOM it built goes to dom (n bytes),
 * the console messages it logged to msgs (msgs_n bytes), and their number is returned (-1:
 * Chromium did not run). */
int test_chromium_console(const char *page, char *dom, size_t n, char *msgs, size_t msgs_n)
{
    char profile[] = "/tmp/slicesim-chromium-XXXXXX";
    cr_assert_not_null(mkdtemp(profile));
    char log[160], cmd[1024];
    snprintf(log, sizeof log, "%s.log", profile);
    /* no sandbox (CI runs as root), no GPU, no background traffic; every host name fails to
     * resolve, so a page that tried the network could not get anything */
    snprintf(cmd, sizeof cmd,
             "timeout 120 chromium --headless --no-sandbox --disable-gpu "
             "--disable-background-networking --disable-extensions --no-first-run "
             "--host-resolver-rules='MAP * ~NOTFOUND' --user-data-dir=%s --enable-logging=stderr "
             "--v=0 --dump-dom 'file://%s' 2>%s",
             profile, page, log);
    int rc = test_sh(cmd, dom, n);
    char text[65536];
    size_t len = 0;
    char *buf = NULL;
    int n_console = -1;
    if (rc == 0 && fileio_read_all(log, sizeof text, &buf, &len) == 0) {
        n_console = 0;
        size_t used = 0;
        msgs[0] = '\0';
        for (const char *p = buf; (p = strstr(p, ":CONSOLE")); p++) {
            const char *eol = strchr(p, '\n');
            int k = snprintf(msgs + used, msgs_n - used, "%.*s\n", eol ? (int)(eol - p) : 200, p);
            used += k > 0 && (size_t)k < msgs_n - used ? (size_t)k : 0;
            n_console++;
        }
        free(buf);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s %s", profile, log);
    cr_assert_eq(system(cmd), 0);
    return n_console;
}
