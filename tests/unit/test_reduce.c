/* --reduce arithmetic: int64 extremes, overflow, decimals, bad values. */
#include "fmacros.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "reduce.h"

/* Writable strings, as the library hands them over. */
#define S(text) ((char[]){ text })
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

static int reduce(cli_reduce_kind kind, char *const *v, size_t n, char *out,
                  rb_error *err)
{
    return cli_reduce_values(kind, v, n, out, 64, err);
}

static void test_reduce_parse(void **state)
{
    cli_reduce_kind k = CLI_REDUCE_NONE;
    rb_error err;

    (void)state;
    assert_int_equal(cli_reduce_parse("max", &k, &err), RB_OK);
    assert_int_equal(k, CLI_REDUCE_MAX);
    assert_int_equal(cli_reduce_parse("all", &k, &err), RB_OK);
    assert_int_equal(k, CLI_REDUCE_ALL);
    assert_int_equal(cli_reduce_parse("MAX", &k, &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "max, min, sum or all"));
    assert_int_equal(cli_reduce_parse("", &k, &err), RB_EINVAL);
}

static void test_reduce_integers(void **state)
{
    char *v[] = { S("3"), S("-7"), S("12"), S("0") };
    char out[64];
    rb_error err;

    (void)state;
    assert_int_equal(reduce(CLI_REDUCE_MAX, v, COUNT(v), out, &err), RB_OK);
    assert_string_equal(out, "12");
    assert_int_equal(reduce(CLI_REDUCE_MIN, v, COUNT(v), out, &err), RB_OK);
    assert_string_equal(out, "-7");
    assert_int_equal(reduce(CLI_REDUCE_SUM, v, COUNT(v), out, &err), RB_OK);
    assert_string_equal(out, "8");
}

static void test_reduce_int64_extremes(void **state)
{
    char *ends[] = { S("9223372036854775807"), S("-9223372036854775808") };
    char *top[] = { S("9223372036854775806"), S("9223372036854775807") };
    char *cancel[] = { S("9223372036854775807"), S("-9223372036854775807") };
    char out[64];
    rb_error err;

    (void)state;
    /* Exact at the ends: no trip through double, which would round. */
    assert_int_equal(reduce(CLI_REDUCE_MAX, top, 2, out, &err), RB_OK);
    assert_string_equal(out, "9223372036854775807");
    assert_int_equal(reduce(CLI_REDUCE_MIN, top, 2, out, &err), RB_OK);
    assert_string_equal(out, "9223372036854775806");
    assert_int_equal(reduce(CLI_REDUCE_MAX, ends, 2, out, &err), RB_OK);
    assert_string_equal(out, "9223372036854775807");
    assert_int_equal(reduce(CLI_REDUCE_MIN, ends, 2, out, &err), RB_OK);
    assert_string_equal(out, "-9223372036854775808");
    assert_int_equal(reduce(CLI_REDUCE_SUM, ends, 2, out, &err), RB_OK);
    assert_string_equal(out, "-1");
    assert_int_equal(reduce(CLI_REDUCE_SUM, cancel, 2, out, &err), RB_OK);
    assert_string_equal(out, "0");
}

static void test_reduce_overflow(void **state)
{
    char *up[] = { S("9223372036854775807"), S("1") };
    char *down[] = { S("-9223372036854775808"), S("-1") };
    char *big[] = { S("9223372036854775808") };
    char out[64] = "untouched";
    rb_error err;

    (void)state;
    assert_int_equal(reduce(CLI_REDUCE_SUM, up, 2, out, &err), RB_EPROTO);
    assert_non_null(strstr(err.msg, "64-bit"));
    assert_int_equal(reduce(CLI_REDUCE_SUM, down, 2, out, &err), RB_EPROTO);
    /* Only a sum can overflow: max and min of the extremes are fine. */
    assert_int_equal(reduce(CLI_REDUCE_MAX, up, 2, out, &err), RB_OK);
    assert_string_equal(out, "9223372036854775807");
    assert_int_equal(reduce(CLI_REDUCE_MIN, down, 2, out, &err), RB_OK);
    assert_string_equal(out, "-9223372036854775808");
    /* Past int64: not a number the parties can agree on exactly. */
    assert_int_equal(reduce(CLI_REDUCE_MAX, big, 1, out, &err), RB_EPROTO);
}

static void test_reduce_decimals(void **state)
{
    char *v[] = { S("1.5"), S("-2"), S("0.25") };
    char *tenths[] = { S("0.1"), S("0.2") };
    char *same[] = { S("2.50"), S("2.5") };
    char out[64];
    rb_error err;

    (void)state;
    assert_int_equal(reduce(CLI_REDUCE_MAX, v, COUNT(v), out, &err), RB_OK);
    assert_string_equal(out, "1.5");
    assert_int_equal(reduce(CLI_REDUCE_MIN, v, COUNT(v), out, &err), RB_OK);
    assert_string_equal(out, "-2");
    assert_int_equal(reduce(CLI_REDUCE_SUM, v, COUNT(v), out, &err), RB_OK);
    assert_string_equal(out, "-0.25");
    /* 15 significant digits: 0.1 + 0.2 prints as 0.3, not 0.30000000000000004. */
    assert_int_equal(reduce(CLI_REDUCE_SUM, tenths, 2, out, &err), RB_OK);
    assert_string_equal(out, "0.3");
    /* Equal values: the earliest arrival's text wins, the same for every
     * party (all see one arrival order). */
    assert_int_equal(reduce(CLI_REDUCE_MAX, same, 2, out, &err), RB_OK);
    assert_string_equal(out, "2.50");
}

static void test_reduce_bad_values(void **state)
{
    char *word[] = { S("4"), S("four") };
    char *none[] = { NULL };
    char out[64];
    rb_error err;

    (void)state;
    assert_int_equal(reduce(CLI_REDUCE_SUM, word, 2, out, &err), RB_EPROTO);
    assert_non_null(strstr(err.msg, "'four' is not a number"));
    assert_int_equal(reduce(CLI_REDUCE_SUM, none, 0, out, &err), RB_EPROTO);
    assert_int_equal(reduce(CLI_REDUCE_ALL, word, 2, out, &err), RB_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reduce_parse),
        cmocka_unit_test(test_reduce_integers),
        cmocka_unit_test(test_reduce_int64_extremes),
        cmocka_unit_test(test_reduce_overflow),
        cmocka_unit_test(test_reduce_decimals),
        cmocka_unit_test(test_reduce_bad_values),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
