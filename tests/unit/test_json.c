/* The --json writer: RFC 8259 whatever the input holds, one line, one
 * write; and the escaping of echoed text. */
#include "fmacros.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "json.h"

/* Write j through a pipe and return what came out (static buffer). */
static const char *written(cli_json *j)
{
    static char out[8192];
    int fds[2];
    ssize_t n;

    assert_int_equal(pipe(fds), 0);
    assert_int_equal(cli_json_write(j, fds[1]), 0);
    close(fds[1]);
    n = read(fds[0], out, sizeof(out) - 1);
    close(fds[0]);
    assert_true(n > 0);
    out[n] = '\0';
    return out;
}

static const char *one_str(const char *s, size_t len)
{
    cli_json j;

    cli_json_open(&j);
    cli_json_key(&j, "s");
    cli_json_strn(&j, s, len);
    return written(&j);
}

static void test_json_object(void **state)
{
    cli_json j;

    (void)state;
    cli_json_open(&j);
    cli_json_kstr(&j, "name", "ckpt");
    cli_json_kint(&j, "gen", 12);
    cli_json_kint(&j, "min", -9223372036854775807LL - 1);
    cli_json_kbool(&j, "ok", 1);
    cli_json_key(&j, "members");
    cli_json_begin_arr(&j);
    cli_json_begin_obj(&j);
    cli_json_kstr(&j, "id", "w0");
    cli_json_end_obj(&j);
    cli_json_begin_obj(&j);
    cli_json_kstr(&j, "id", "w1");
    cli_json_end_obj(&j);
    cli_json_end_arr(&j);
    cli_json_key(&j, "empty");
    cli_json_begin_arr(&j);
    cli_json_end_arr(&j);
    cli_json_kstr(&j, "reason", NULL);
    assert_string_equal(written(&j),
        "{\"name\":\"ckpt\",\"gen\":12,\"min\":-9223372036854775808,"
        "\"ok\":true,\"members\":[{\"id\":\"w0\"},{\"id\":\"w1\"}],"
        "\"empty\":[],\"reason\":null}\n");
}

static void test_json_unclosed(void **state)
{
    cli_json j;

    (void)state;
    cli_json_open(&j);
    cli_json_key(&j, "a");
    cli_json_begin_arr(&j);
    cli_json_begin_obj(&j);
    cli_json_kint(&j, "x", 1);
    assert_string_equal(written(&j), "{\"a\":[{\"x\":1}]}\n");
}

static void test_json_escapes(void **state)
{
    (void)state;
    assert_string_equal(one_str("a\"b\\c", 5), "{\"s\":\"a\\\"b\\\\c\"}\n");
    assert_string_equal(one_str("a\nb\tc", 5), "{\"s\":\"a\\nb\\tc\"}\n");
    assert_string_equal(one_str("\x01\x1b[2J\x7f", 6),
                        "{\"s\":\"\\u0001\\u001b[2J\\u007f\"}\n");
    assert_string_equal(one_str("a\0b", 3), "{\"s\":\"a\\u0000b\"}\n");
    /* valid UTF-8 passes through */
    assert_string_equal(one_str("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", 9),
                        "{\"s\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}\n");
    /* invalid UTF-8 becomes U+FFFD, byte by byte */
    assert_string_equal(one_str("a\xff" "b", 3), "{\"s\":\"a\\ufffdb\"}\n");
    assert_string_equal(one_str("\xc3", 1), "{\"s\":\"\\ufffd\"}\n");
    assert_string_equal(one_str("\xc0\xaf", 2),          /* overlong '/' */
                        "{\"s\":\"\\ufffd\\ufffd\"}\n");
    assert_string_equal(one_str("\xe0\x80\xaf", 3),      /* overlong */
                        "{\"s\":\"\\ufffd\\ufffd\\ufffd\"}\n");
    assert_string_equal(one_str("\xed\xa0\x80", 3),      /* surrogate */
                        "{\"s\":\"\\ufffd\\ufffd\\ufffd\"}\n");
    assert_string_equal(one_str("\xf4\x90\x80\x80", 4),  /* > U+10FFFF */
                        "{\"s\":\"\\ufffd\\ufffd\\ufffd\\ufffd\"}\n");
    assert_string_equal(one_str("\xe2\x82", 2),          /* truncated */
                        "{\"s\":\"\\ufffd\\ufffd\"}\n");
}

static void test_json_numbers(void **state)
{
    static const char *const good[] = {
        "0", "-0", "7", "-12", "3.25", "1e5", "1E+5", "2.5e-3",
        "9223372036854775807", "99999999999999999999999",
    };
    static const char *const bad[] = {
        "007", "00", "-", "+3", "1.", ".5", "1e", "1e+", "--1", "0x10",
        "inf", "nan", "1 ", " 1", "", "1,5", "-.5", "1.5.2",
    };
    size_t i;
    cli_json j;
    char expect[64];

    (void)state;
    for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        assert_true(cli_json_is_number(good[i]));
        cli_json_open(&j);
        cli_json_knum(&j, "value", good[i]);
        snprintf(expect, sizeof(expect), "{\"value\":%s}\n", good[i]);
        assert_string_equal(written(&j), expect);
    }
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        assert_false(cli_json_is_number(bad[i]));
        cli_json_open(&j);
        cli_json_knum(&j, "value", bad[i]);
        snprintf(expect, sizeof(expect), "{\"value\":\"%s\"}\n", bad[i]);
        assert_string_equal(written(&j), expect);
    }
    assert_false(cli_json_is_number(NULL));
}

static void test_json_long(void **state)
{
    char big[4000];
    cli_json j;
    const char *out;

    (void)state;
    memset(big, 'v', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    cli_json_open(&j);
    cli_json_kstr(&j, "value", big);
    out = written(&j);
    assert_int_equal(strlen(out), sizeof(big) - 1 + strlen("{\"value\":\"\"}\n"));
}

static void test_escape(void **state)
{
    char buf[64];

    (void)state;
    assert_int_equal(cli_escape(buf, sizeof(buf), "plain"), 5);
    assert_string_equal(buf, "plain");
    cli_escape(buf, sizeof(buf), "a\nb\tc\rd");
    assert_string_equal(buf, "a\\nb\\tc\\rd");
    cli_escape(buf, sizeof(buf), "\x1b[31mred\x7f");
    assert_string_equal(buf, "\\x1b[31mred\\x7f");
    cli_escape(buf, sizeof(buf), "caf\xc3\xa9 \xff");
    assert_string_equal(buf, "caf\xc3\xa9 \\xff");
    cli_escape(buf, sizeof(buf), "c1:\xc2\x9b");
    assert_string_equal(buf, "c1:\\u009b");
    /* truncation: the length needed, a terminated prefix */
    assert_int_equal(cli_escape(buf, 4, "a\nbc"), 5);
    assert_string_equal(buf, "a\\n");
    assert_int_equal(cli_escape(NULL, 0, "\x01"), 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_object),
        cmocka_unit_test(test_json_unclosed),
        cmocka_unit_test(test_json_escapes),
        cmocka_unit_test(test_json_numbers),
        cmocka_unit_test(test_json_long),
        cmocka_unit_test(test_escape),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
