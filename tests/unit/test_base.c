/* Unit tests for the shared basics: diag, arena, err, cli number parsing, embedded data. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiments/embedded.h"
#include "experiments/fileio.h"
#include "sim/arena.h"
#include "sim/diag.h"
#include "sim/err.h"
#include "tools/cli.h"
#include "tests/unit/diagfx.h"

Test(diag, message_shape_is_exact)
{
    diag *d = diag_create();
    src_loc at = {"configs/a.yaml", 14, 17};
    diag_error(d, at, "nodes[2].gpu.memory", "unknown unit 'GB/s'; expected a size like 80GiB, got '%s'",
               "80GB/s");
    cr_assert_eq(diag_error_count(d), 1);
    cr_assert_str_eq(fx_diag_message(d, 0),
                     "configs/a.yaml:14:17: error: nodes[2].gpu.memory: unknown unit 'GB/s'; "
                     "expected a size like 80GiB, got '80GB/s'");
    diag_destroy(d);
}

Test(diag, caps_stored_messages_but_counts_all)
{
    diag *d = diag_create();
    for (int i = 0; i < DIAG_MAX_ERRORS + 5; i++) {
        diag_error(d, (src_loc){"f.yaml", i + 1, 1}, "x", "bad %d", i);
    }
    cr_assert_eq(diag_error_count(d), DIAG_MAX_ERRORS + 5);
    cr_assert_null(fx_diag_message(d, DIAG_MAX_ERRORS));
    cr_assert_str_eq(fx_diag_message(d, 0), "f.yaml:1:1: error: x: bad 0");
    diag_destroy(d);
}

Test(diag, offsets_become_line_and_character_column)
{
    const char text[] = "ab\n\xc3\xa9x\n";  /* second line: e-acute (2 bytes), then x */
    src_loc at = diag_loc_from_offset("t.json", text, sizeof text - 1, 5);
    cr_assert_eq(at.line, 2);
    cr_assert_eq(at.col, 2, "the two bytes of one character count once");
    cr_assert_str_eq(at.file, "t.json");
    at = diag_loc_from_offset("t.json", text, sizeof text - 1, 0);
    cr_assert_eq(at.line, 1);
    cr_assert_eq(at.col, 1);
    at = diag_loc_from_offset("t.json", text, sizeof text - 1, 999); /* past the end: clamps */
    cr_assert_eq(at.line, 3);
    cr_assert_eq(at.col, 1);
}

Test(fileio, reads_whole_file_nul_terminated_and_reports_missing)
{
    char path[] = "/tmp/slicesim-fileio-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    const char body[] = "a\0b\n";
    cr_assert_eq(write(fd, body, sizeof body - 1), (ssize_t)(sizeof body - 1));
    close(fd);
    char *buf = NULL;
    size_t len = 0;
    cr_assert_eq(fileio_read_all(path, FILEIO_MAX_BYTES, &buf, &len), 0);
    cr_assert_eq(len, sizeof body - 1);
    cr_assert_eq(memcmp(buf, body, len), 0);
    cr_assert_eq(buf[len], '\0');
    free(buf);
    cr_assert_eq(fileio_read_all(path, sizeof body - 2, &buf, &len), SIM_EIO, "one byte too many");
    cr_assert_eq(errno, EFBIG);
    cr_assert_null(buf);
    unlink(path);
    cr_assert_eq(fileio_read_all(path, FILEIO_MAX_BYTES, &buf, &len), SIM_ENOENT);
    cr_assert_null(buf);
    cr_assert_eq(fileio_read_all("/dev/zero", 1 << 17, &buf, &len), SIM_EIO);
    cr_assert_eq(errno, EFBIG);
}

static void put_text(FILE *f, const void *arg)
{
    fputs(arg, f);
}

Test(fileio, atomic_write_replaces_whole_file_or_nothing)
{
    char dir[] = "/tmp/slicesim-fileio-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[128], bad[160];
    snprintf(path, sizeof path, "%s/out.yaml", dir);
    cr_assert_eq(fileio_write_atomic(path, put_text, "old\n"), 0);
    cr_assert_eq(fileio_write_atomic(path, put_text, "new content\n"), 0);
    char *buf = NULL;
    size_t len = 0;
    cr_assert_eq(fileio_read_all(path, FILEIO_MAX_BYTES, &buf, &len), 0);
    cr_assert_str_eq(buf, "new content\n");
    free(buf);
    snprintf(bad, sizeof bad, "%s/absent/out.yaml", dir);
    cr_assert_eq(fileio_write_atomic(bad, put_text, "x"), SIM_EIO);
    cr_assert_eq(errno, ENOENT);
    cr_assert_eq(unlink(path), 0);
    cr_assert_eq(rmdir(dir), 0, "no temporary file is left behind");
}

Test(arena, strings_are_copied_and_aligned)
{
    arena *a = arena_create();
    char src[] = "hello";
    char *c = arena_strdup(a, src);
    src[0] = 'j';
    cr_assert_str_eq(c, "hello");
    for (int i = 0; i < 1000; i++) {
        void *p = arena_alloc(a, (size_t)i * 7 + 1);
        cr_assert_eq((uintptr_t)p % 16, 0);
    }
    void *big = arena_alloc(a, 1u << 20);
    cr_assert_not_null(big);
    arena_destroy(a);
}

Test(err, names_and_messages)
{
    cr_assert_str_eq(sim_strerror(SIM_ENOENT), "no such file or directory");
}

Test(cli, integers_must_be_whole_and_in_range)
{
    uint64_t v = 0;
    cr_assert(cli_parse_u64("42", 0, 100, &v));
    cr_assert_eq(v, 42);
    cr_assert_not(cli_parse_u64("12abc", 0, 100, &v));
    cr_assert_not(cli_parse_u64("-1", 0, 100, &v));
    cr_assert_not(cli_parse_u64("101", 0, 100, &v));
    cr_assert_not(cli_parse_u64("", 0, 100, &v));
    double x = 0;
    cr_assert(cli_parse_double("1.5e3", &x));
    cr_assert_float_eq(x, 1500.0, 1e-12);
    cr_assert_not(cli_parse_double("nan", &x));
    cr_assert_not(cli_parse_double("1.5x", &x));
}

Test(embedded, catalog_is_compiled_in)
{
    const unsigned char *data = NULL;
    size_t len = 0;
    cr_assert(embedded_get("model/hw/gpus.yaml", &data, &len));
    cr_assert_gt(len, 0);
    cr_assert_eq(data[len], '\0');
    cr_assert_not(embedded_get("no/such.yaml", &data, &len));
    cr_assert_str_eq(embedded_path(0), "model/hw/gpus.yaml");
}
