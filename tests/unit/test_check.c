/* Name, id and number checks: bad input must be refused before any I/O. */
#include "fmacros.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "rbarrier.h"
#include "rb_support.h"

static void name_bad(const char *name, const char *needle)
{
    rb_error err = { 0, "" };

    assert_int_equal(rb_check_name(name, "name", &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, needle));
}

static void test_check_name_ok(void **state)
{
    char max[RB_NAME_MAX + 1];
    rb_error err;

    (void)state;
    assert_int_equal(rb_check_name("ckpt", "name", &err), RB_OK);
    assert_int_equal(rb_check_name("job:42/step-3.a_b,c", "name", &err),
                     RB_OK);
    assert_int_equal(rb_check_name("\xc3\xa9t\xc3\xa9", "name", &err), RB_OK);
    memset(max, 'x', RB_NAME_MAX);
    max[RB_NAME_MAX] = '\0';
    assert_int_equal(rb_check_name(max, "name", &err), RB_OK);
}

static void test_check_name_bad(void **state)
{
    char long_name[RB_NAME_MAX + 2];

    (void)state;
    name_bad(NULL, "must not be empty");
    name_bad("", "must not be empty");
    name_bad("a{b", "'{'");
    name_bad("a}b", "'}'");
    name_bad("a b", "whitespace");
    name_bad("a\tb", "whitespace");
    name_bad("a\nb", "0x0a");
    name_bad("a\x01", "control");
    name_bad("a\x7f", "control");
    memset(long_name, 'x', RB_NAME_MAX + 1);
    long_name[RB_NAME_MAX + 1] = '\0';
    name_bad(long_name, "201 bytes long; the limit is 200");
}

static void test_check_id(void **state)
{
    rb_error err;

    (void)state;
    assert_int_equal(rb_check_id("host-1:4242", "id", &err), RB_OK);
    assert_int_equal(rb_check_id("w0,w1", "id", &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "','"));
    assert_int_equal(rb_check_id("", "id", &err), RB_EINVAL);
}

static void test_check_number(void **state)
{
    rb_error err;
    int is_float = -1;

    (void)state;
    assert_int_equal(rb_check_number(&is_float, "1", "by", &err), RB_OK);
    assert_int_equal(is_float, 0);
    assert_int_equal(rb_check_number(&is_float, "-42", "by", &err), RB_OK);
    assert_int_equal(is_float, 0);
    assert_int_equal(rb_check_number(&is_float, "0.5", "by", &err), RB_OK);
    assert_int_equal(is_float, 1);
    assert_int_equal(rb_check_number(&is_float, "-2.25", "by", &err), RB_OK);
    assert_int_equal(is_float, 1);
    assert_int_equal(rb_check_number(NULL, "abc", "by", &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "'abc' is not a decimal number"));
    assert_int_equal(rb_check_number(NULL, "", "by", &err), RB_EINVAL);
    assert_int_equal(rb_check_number(NULL, "-", "by", &err), RB_EINVAL);
    assert_int_equal(rb_check_number(NULL, ".", "by", &err), RB_EINVAL);
    assert_int_equal(rb_check_number(NULL, ".5", "by", &err), RB_EINVAL);
    assert_int_equal(rb_check_number(NULL, "5.", "by", &err), RB_EINVAL);
    assert_int_equal(rb_check_number(NULL, "1.2.3", "by", &err), RB_EINVAL);
    assert_int_equal(rb_check_number(NULL, "+1", "by", &err), RB_EINVAL);
    assert_int_equal(rb_check_number(NULL, "1e5", "by", &err), RB_EINVAL);
    assert_int_equal(rb_check_number(NULL, "nan", "by", &err), RB_EINVAL);
    assert_int_equal(rb_check_number(NULL,
                         "12345678901234567890123456789012345678901", "by",
                         &err), RB_EINVAL);
    /* one spelling per number */
    assert_int_equal(rb_check_number(NULL, "007", "by", &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "canonical"));
    assert_int_equal(rb_check_number(NULL, "-0", "by", &err), RB_EINVAL);
    assert_int_equal(rb_check_number(NULL, "00.5", "by", &err), RB_EINVAL);
    assert_int_equal(rb_check_number(NULL, "0", "by", &err), RB_OK);
    assert_int_equal(rb_check_number(NULL, "-0.5", "by", &err), RB_OK);
    assert_int_equal(rb_check_number(NULL, "10.05", "by", &err), RB_OK);
    /* integers are exact 64-bit values */
    assert_int_equal(rb_check_number(&is_float, "9223372036854775807", "by",
                                     &err), RB_OK);
    assert_int_equal(rb_check_number(NULL, "-9223372036854775808", "by",
                                     &err), RB_OK);
    assert_int_equal(rb_check_number(NULL, "9223372036854775808", "by", &err),
                                     RB_EINVAL);
    assert_non_null(strstr(err.msg, "64-bit"));
    assert_int_equal(rb_check_number(NULL, "-9223372036854775809", "by",
                                     &err), RB_EINVAL);
    assert_int_equal(rb_check_number(NULL, "100000000000000000000", "by",
                                     &err), RB_EINVAL);
    /* a fraction may be long: INCRBYFLOAT's domain */
    assert_int_equal(rb_check_number(&is_float, "100000000000000000000.5",
                                     "by", &err), RB_OK);
    assert_int_equal(is_float, 1);
}

static void test_check_random_hex(void **state)
{
    char a[9], b[9];

    (void)state;
    rb_random_hex(a, 4);
    rb_random_hex(b, 4);
    assert_int_equal(strlen(a), 8);
    assert_int_equal(strspn(a, "0123456789abcdef"), 8);
    assert_string_not_equal(a, b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_name_ok),
        cmocka_unit_test(test_check_name_bad),
        cmocka_unit_test(test_check_id),
        cmocka_unit_test(test_check_number),
        cmocka_unit_test(test_check_random_hex),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
