/* CLI option values: counts, seconds, whole numbers. */
#include "fmacros.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "cli.h"

static void test_opts_count(void **state)
{
    rb_error err;
    long n = 0;

    (void)state;
    assert_int_equal(cli_parse_count("4", "--n", &n, &err), RB_OK);
    assert_int_equal(n, 4);
    assert_int_equal(cli_parse_count("1", "--n", &n, &err), RB_OK);
    assert_int_equal(cli_parse_count("100000", "--n", &n, &err), RB_OK);
    assert_int_equal(n, 100000);
    assert_int_equal(cli_parse_count("0", "--n", &n, &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "--n must be 1..100000, not '0'"));
    assert_int_equal(cli_parse_count("-3", "--n", &n, &err), RB_EINVAL);
    assert_int_equal(cli_parse_count("100001", "--n", &n, &err), RB_EINVAL);
    assert_int_equal(cli_parse_count("99999999999999999999", "--n", &n, &err),
                     RB_EINVAL);
    assert_int_equal(cli_parse_count("abc", "--n", &n, &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "whole number"));
    assert_int_equal(cli_parse_count("4x", "--n", &n, &err), RB_EINVAL);
    assert_int_equal(cli_parse_count("2.5", "--n", &n, &err), RB_EINVAL);
    assert_int_equal(cli_parse_count("", "--n", &n, &err), RB_EINVAL);
    assert_int_equal(n, 100000); /* untouched by failures */
}

static void test_opts_seconds(void **state)
{
    rb_error err;
    double s = -1;

    (void)state;
    assert_int_equal(cli_parse_seconds("1", "--timeout", 1, &s, &err), RB_OK);
    assert_true(s == 1.0);
    assert_int_equal(cli_parse_seconds("0.25", "--timeout", 1, &s, &err),
                     RB_OK);
    assert_true(s == 0.25);
    assert_int_equal(cli_parse_seconds("0", "--timeout", 1, &s, &err), RB_OK);
    assert_int_equal(cli_parse_seconds("0", "--lease", 0, &s, &err),
                     RB_EINVAL);
    assert_non_null(strstr(err.msg, "--lease must be positive"));
    assert_int_equal(cli_parse_seconds("-1", "--timeout", 1, &s, &err),
                     RB_EINVAL);
    assert_non_null(strstr(err.msg, "--timeout must not be negative"));
    assert_int_equal(cli_parse_seconds("abc", "--timeout", 1, &s, &err),
                     RB_EINVAL);
    assert_int_equal(cli_parse_seconds("1s", "--timeout", 1, &s, &err),
                     RB_EINVAL);
    assert_int_equal(cli_parse_seconds("inf", "--timeout", 1, &s, &err),
                     RB_EINVAL);
    assert_int_equal(cli_parse_seconds("nan", "--timeout", 1, &s, &err),
                     RB_EINVAL);
    assert_int_equal(cli_parse_seconds("0x10", "--timeout", 1, &s, &err),
                     RB_EINVAL);
    assert_int_equal(cli_parse_seconds("1e9", "--timeout", 1, &s, &err),
                     RB_EINVAL);
    assert_int_equal(cli_parse_seconds("", "--timeout", 1, &s, &err),
                     RB_EINVAL);
}

static void test_opts_long(void **state)
{
    rb_error err;
    long v = 0;

    (void)state;
    assert_int_equal(cli_parse_long("3", "--worker", 0, 3, &v, &err), RB_OK);
    assert_int_equal(v, 3);
    assert_int_equal(cli_parse_long("4", "--worker", 0, 3, &v, &err),
                     RB_EINVAL);
    assert_non_null(strstr(err.msg, "--worker must be 0..3, not '4'"));
}

static void test_opts_default_id(void **state)
{
    char id[192];
    rb_error err;

    (void)state;
    cli_default_id(id, sizeof(id));
    assert_non_null(strchr(id, ':'));
    assert_int_equal(rb_check_id(id, "id", &err), RB_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_opts_count),
        cmocka_unit_test(test_opts_seconds),
        cmocka_unit_test(test_opts_long),
        cmocka_unit_test(test_opts_default_id),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
