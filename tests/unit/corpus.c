/* tests/unit/corpus.c - bad-input corpora through the CLI (see corpus.h). */
#include "tests/unit/corpus.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/sh.h"

size_t test_bad_corpus(const char *dir, const char *subcmd, int check, const char *tmp)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    struct dirent *e;
    size_t n = 0;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0) {
            continue;
        }
        char path[512], line[1024], cmd[1200], out[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "r");
        cr_assert_not_null(f);
        cr_assert_not_null(fgets(line, sizeof line, f));
        fclose(f);
        cr_assert_eq(strncmp(line, "# expect: ", 10), 0, "%s: no '# expect:' line", path);
        if (check) {
            snprintf(cmd, sizeof cmd, "./slicesim check %s 2>&1", path);
            cr_expect_eq(test_sh(cmd, out, sizeof out), 2, "%s", path);
            cr_expect_str_eq(out, line + 10, "%s", path);
        }
        snprintf(cmd, sizeof cmd, "./slicesim %s %s -o %s/out 2>&1", subcmd, path, tmp);
        cr_expect_eq(test_sh(cmd, out, sizeof out), 2, "%s", path);
        cr_expect_str_eq(out, line + 10, "%s", path);
        snprintf(cmd, sizeof cmd, "%s/out", tmp);
        cr_expect_neq(access(cmd, F_OK), 0, "%s: %s wrote %s", path, subcmd, cmd);
        n++;
    }
    closedir(d);
    return n;
}
