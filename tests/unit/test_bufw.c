/* tests/unit/test_bufw.c - the writers' output buffer: pieces of every size, across flushes,
 * reach the FILE in order and whole. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/bufw.h"

Test(bufw, pieces_of_every_size_arrive_in_order)
{
    char *got = NULL;
    size_t got_len = 0;
    FILE *f = open_memstream(&got, &got_len);
    cr_assert_not_null(f);
    bufw *w = malloc(sizeof *w);
    cr_assert_not_null(w);
    bufw_init(w, f);
    size_t want_cap = 1 << 20, want_len = 0;
    char *want = malloc(want_cap);
    static char big[BUFW_LEN + 1000];
    for (size_t i = 0; i < sizeof big; i++) {
        big[i] = (char)('a' + i % 26);
    }
    /* sizes below, at and above half the buffer (the long path), characters and numbers */
    const size_t sizes[] = {1, 7, 100, BUFW_LEN / 2, BUFW_LEN / 2 + 1, BUFW_LEN, sizeof big};
    for (int round = 0; round < 3; round++) {
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
            bufw_put(w, big, sizes[k]);
            memcpy(want + want_len, big, sizes[k]);
            want_len += sizes[k];
            bufw_c(w, ',');
            want[want_len++] = ',';
            bufw_u64(w, 1234567890123ULL + k);
            want_len += (size_t)sprintf(want + want_len, "%llu", 1234567890123ULL + k);
            bufw_fixed9(w, 5);
            want_len += (size_t)sprintf(want + want_len, "0.000000005");
            bufw_g17(w, 0.1);
            want_len += (size_t)sprintf(want + want_len, "%.17g", 0.1);
        }
    }
    cr_assert_lt(want_len, want_cap);
    cr_assert_eq(bufw_flush(w), 0);
    fclose(f);
    cr_assert_eq(got_len, want_len);
    cr_assert(memcmp(got, want, want_len) == 0);
    free(got);
    free(want);
    free(w);
}
