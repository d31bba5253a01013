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

static void test_opts_blanks(void **state)
{
    rb_error err;
    long v = 7;
    double s = 7;

    (void)state;
    assert_int_equal(cli_parse_long(" 3", "--n", 0, 9, &v, &err), RB_EINVAL);
    assert_int_equal(cli_parse_long("3 ", "--n", 0, 9, &v, &err), RB_EINVAL);
    assert_int_equal(cli_parse_long("\t3", "--n", 0, 9, &v, &err), RB_EINVAL);
    assert_int_equal(cli_parse_long("+3", "--n", 0, 9, &v, &err), RB_EINVAL);
    assert_int_equal(cli_parse_count(" 4", "--n", &v, &err), RB_EINVAL);
    assert_int_equal(v, 7);
    assert_int_equal(cli_parse_seconds(" 1", "--t", 1, &s, &err), RB_EINVAL);
    assert_int_equal(cli_parse_seconds("1 ", "--t", 1, &s, &err), RB_EINVAL);
    assert_true(s == 7);
}

/* ms for text, or -1 when refused. */
static long long dur(const char *text, long long lo, long long hi)
{
    rb_error err;
    long long ms = -1;

    if (cli_parse_duration(text, "--timeout", lo, hi, &ms, &err) != RB_OK) {
        assert_int_equal(err.code, RB_EINVAL);
        assert_non_null(strstr(err.msg, "--timeout"));
        assert_null(strchr(err.msg, '\n'));
        return -1;
    }
    return ms;
}

static void test_opts_duration(void **state)
{
    const long long max = CLI_TIMEOUT_MAX_MS;
    rb_error err;
    long long ms = 5;

    (void)state;
    /* timeout(1)'s forms */
    assert_int_equal(dur("90", 0, max), 90000);
    assert_int_equal(dur("1.5", 0, max), 1500);
    assert_int_equal(dur("30s", 0, max), 30000);
    assert_int_equal(dur("5m", 0, max), 300000);
    assert_int_equal(dur("1m", 0, max), dur("60", 0, max));
    assert_int_equal(dur("2h", 0, max), 7200000);
    assert_int_equal(dur("1d", 0, max), 86400000);
    assert_int_equal(dur("0", 0, max), 0);
    assert_int_equal(dur("0s", 0, max), 0);
    assert_int_equal(dur("0.3", 0, max), 300);   /* exact, no double */
    assert_int_equal(dur(".5", 0, max), 500);
    assert_int_equal(dur("1.25m", 0, max), 75000);
    assert_int_equal(dur("0.0001", 0, max), 1);  /* rounds up, never to 0 */
    assert_int_equal(dur("0.1234567890123", 0, max), 124);
    assert_int_equal(dur("007", 0, max), 7000);
    /* bad forms */
    assert_int_equal(dur("5x", 0, max), -1);
    assert_int_equal(dur("1.5.2", 0, max), -1);
    assert_int_equal(dur("-1s", 0, max), -1);
    assert_int_equal(dur("-1", 0, max), -1);
    assert_int_equal(dur("+1", 0, max), -1);
    assert_int_equal(dur(" 1", 0, max), -1);
    assert_int_equal(dur("1 ", 0, max), -1);
    assert_int_equal(dur("1 s", 0, max), -1);
    assert_int_equal(dur("s", 0, max), -1);
    assert_int_equal(dur(".", 0, max), -1);
    assert_int_equal(dur("", 0, max), -1);
    assert_int_equal(dur("1e3", 0, max), -1);
    assert_int_equal(dur("0x10", 0, max), -1);
    assert_int_equal(dur("inf", 0, max), -1);
    assert_int_equal(dur("nan", 0, max), -1);
    assert_int_equal(dur("1ss", 0, max), -1);
    assert_int_equal(dur("1S", 0, max), -1);
    assert_int_equal(dur("1ms", 0, max), -1);
    /* bounds, at and past each maximum, and far past: no overflow */
    assert_int_equal(dur("365d", 0, max), max);
    assert_int_equal(dur("366d", 0, max), -1);
    assert_int_equal(dur("31536000", 0, max), max);
    assert_int_equal(dur("31536000.001", 0, max), -1);
    assert_int_equal(dur("99999999999999999999999999d", 0, max), -1);
    assert_int_equal(dur("9223372036854775807", 0, max), -1);
    assert_int_equal(dur("9223372036854775808s", 0, max), -1);
    assert_int_equal(dur("1d", CLI_LEASE_MIN_MS, CLI_LEASE_MAX_MS),
                     CLI_LEASE_MAX_MS);
    assert_int_equal(dur("86400.001", CLI_LEASE_MIN_MS, CLI_LEASE_MAX_MS), -1);
    assert_int_equal(dur("7000000", CLI_LEASE_MIN_MS, CLI_LEASE_MAX_MS), -1);
    assert_int_equal(dur("0.1", CLI_LEASE_MIN_MS, CLI_LEASE_MAX_MS), 100);
    assert_int_equal(dur("0.099", CLI_LEASE_MIN_MS, CLI_LEASE_MAX_MS), -1);
    assert_int_equal(dur("0", CLI_LEASE_MIN_MS, CLI_LEASE_MAX_MS), -1);
    assert_int_equal(dur("365d", CLI_TTL_MIN_MS, CLI_TTL_MAX_MS),
                     CLI_TTL_MAX_MS);
    assert_int_equal(dur("0.5", CLI_TTL_MIN_MS, CLI_TTL_MAX_MS), -1);
    /* messages name the option, the bounds and the text */
    assert_int_equal(cli_parse_duration("2d", "--lease", CLI_LEASE_MIN_MS,
                                        CLI_LEASE_MAX_MS, &ms, &err),
                     RB_EINVAL);
    assert_string_equal(err.msg, "--lease must be 0.100s..1d, not '2d'");
    assert_int_equal(cli_parse_duration("5x", "--ttl", 0, 10, &ms, &err),
                     RB_EINVAL);
    assert_string_equal(err.msg, "--ttl must be a duration like 90, 1.5, "
                        "30s, 5m, 2h or 1d, not '5x'");
    assert_int_equal(ms, 5); /* untouched by failures */
}

static void test_opts_format_ms(void **state)
{
    char buf[32];

    (void)state;
    cli_format_ms(buf, sizeof(buf), 0);
    assert_string_equal(buf, "0");
    cli_format_ms(buf, sizeof(buf), 86400000);
    assert_string_equal(buf, "1d");
    cli_format_ms(buf, sizeof(buf), 90000);
    assert_string_equal(buf, "90s");
    cli_format_ms(buf, sizeof(buf), 300);
    assert_string_equal(buf, "0.300s");
    cli_format_ms(buf, sizeof(buf), CLI_TIMEOUT_MAX_MS);
    assert_string_equal(buf, "365d");
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
        cmocka_unit_test(test_opts_blanks),
        cmocka_unit_test(test_opts_duration),
        cmocka_unit_test(test_opts_format_ms),
        cmocka_unit_test(test_opts_default_id),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
