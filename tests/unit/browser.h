/* tests/unit/browser.h - load an HTML page in headless Chromium (Debian `chromium`) from a test:
 * a fresh profile, no sandbox (CI runs as root), no GPU, no background traffic, every host name
 * unresolvable; the DOM Chromium built and the console messages it logged come back.
 * Ownership: the caller's buffers. No units. */
#ifndef SIMPROJ_TESTS_UNIT_BROWSER_H
#define SIMPROJ_TESTS_UNIT_BROWSER_H

#include <stddef.h>

/* Load `page` (an absolute path); the DOM goes to dom (n bytes), the console messages to msgs
 * (msgs_n bytes, one a line); returns how many console messages there were, -1 when Chromium did
 * not run. */
int test_chromium_console(const char *page, char *dom, size_t n, char *msgs, size_t msgs_n);

#endif
