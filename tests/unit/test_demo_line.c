/* The demo line: one format, printed by worker, checked by demo (and by
 * the tests through demo --check). */
#include "fmacros.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "demo.h"

static void test_line_roundtrip(void **state)
{
    char line[128];
    long w = -1, l = -1, g = -1;

    (void)state;
    cli_demo_line_format(line, sizeof(line), 3, 8, 12);
    assert_string_equal(line, "worker  3, local_param  8 global_param 12");
    assert_int_equal(cli_demo_line_parse(line, &w, &l, &g), 0);
    assert_true(w == 3 && l == 8 && g == 12);
    assert_int_equal(cli_demo_line_parse("worker 12, local_param 400 "
                                         "global_param 4000\n", &w, &l, &g),
                     0);
    assert_true(w == 12 && l == 400 && g == 4000);
    /* only the exact format */
    assert_int_equal(cli_demo_line_parse("worker 3, local_param 8 "
                                         "global_param 12", &w, &l, &g), -1);
    assert_int_equal(cli_demo_line_parse("worker  3, local_param  8 "
                                         "global_param 12 x", &w, &l, &g),
                     -1);
    assert_int_equal(cli_demo_line_parse("worker  3,local_param  8 "
                                         "global_param 12", &w, &l, &g), -1);
    assert_int_equal(cli_demo_line_parse("", &w, &l, &g), -1);
}

static const char *check(long n, long iters, const char *const *lines,
                         size_t count)
{
    static char result[256];
    cli_demo_check k;
    const char *p;
    size_t i;

    assert_int_equal(cli_demo_check_init(&k, n, iters), 0);
    for (i = 0; i < count; i++)
        cli_demo_check_line(&k, lines[i]);
    p = cli_demo_check_result(&k);
    strcpy(result, p ? p : "ok");
    cli_demo_check_free(&k);
    return result;
}

static void test_check(void **state)
{
    static const char *const good[] = {
        "# private redis-server (pid 1) on /tmp/x/redis.sock\n",
        "worker  1, local_param  0 global_param  1\n",
        "worker  0, local_param  0 global_param  2\n",
        "worker  0, local_param  2 global_param  3\n",
        "worker  1, local_param  2 global_param  4\n",
        "4 updates, global_param 4, no update lost\n",
    };
    static const char *const twice[] = {
        "worker  0, local_param  0 global_param  1",
        "worker  1, local_param  0 global_param  1",
    };
    static const char *const bad_local[] = {
        "worker  0, local_param  1 global_param  1",
        "worker  1, local_param  0 global_param  2",
    };
    static const char *const out_of_range[] = {
        "worker  0, local_param  0 global_param  3",
        "worker  1, local_param  0 global_param  2",
    };
    static const char *const bad_worker[] = {
        "worker  2, local_param  0 global_param  1",
    };

    (void)state;
    assert_string_equal(check(2, 2, good, 6), "ok");
    assert_string_equal(check(2, 2, good, 4), "3 worker lines, expected 4");
    assert_string_equal(check(2, 1, twice, 2), "global 1 printed twice");
    assert_string_equal(check(2, 1, bad_local, 2),
                        "worker 0 line 0: local 1, expected 0");
    assert_string_equal(check(2, 1, out_of_range, 2), "global 3 out of 1..2");
    assert_string_equal(check(2, 1, bad_worker, 1),
                        "malformed line: worker  2, local_param  0 "
                        "global_param  1");
    assert_string_equal(check(1, 1, good, 0), "0 worker lines, expected 1");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_line_roundtrip),
        cmocka_unit_test(test_check),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
