/* URL parsing: every shape a user may type, without a server. */
#include "fmacros.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>

#include "rbarrier.h"

static void parse_ok(const char *text, rb_url *u)
{
    rb_error err = { 0, "" };

    assert_int_equal(rb_url_parse(u, text, &err), RB_OK);
}

static void parse_bad(const char *text, const char *needle)
{
    rb_url u;
    rb_error err = { 0, "" };

    assert_int_equal(rb_url_parse(&u, text, &err), RB_EINVAL);
    assert_int_equal(err.code, RB_EINVAL);
    assert_non_null(strstr(err.msg, needle));
    assert_null(strchr(err.msg, '\n'));
}

static void test_url_host_only(void **state)
{
    rb_url u;

    (void)state;
    parse_ok("redis://example.org", &u);
    assert_false(u.is_unix);
    assert_string_equal(u.host, "example.org");
    assert_int_equal(u.port, 6379);
    assert_int_equal(u.db, 0);
    assert_false(u.has_password);
}

static void test_url_full(void **state)
{
    rb_url u;

    (void)state;
    parse_ok("redis://alice:s%40cret@10.0.0.5:6380/3", &u);
    assert_string_equal(u.user, "alice");
    assert_string_equal(u.password, "s@cret");
    assert_true(u.has_password);
    assert_string_equal(u.host, "10.0.0.5");
    assert_int_equal(u.port, 6380);
    assert_int_equal(u.db, 3);
}

static void test_url_password_only(void **state)
{
    rb_url u;

    (void)state;
    parse_ok("redis://:pw@h:1", &u);
    assert_string_equal(u.user, "");
    assert_string_equal(u.password, "pw");
    parse_ok("redis://lonepw@h", &u);
    assert_string_equal(u.password, "lonepw");
    assert_string_equal(u.user, "");
}

static void test_url_ipv6(void **state)
{
    rb_url u;

    (void)state;
    parse_ok("redis://[::1]:7000/2", &u);
    assert_string_equal(u.host, "::1");
    assert_int_equal(u.port, 7000);
    assert_int_equal(u.db, 2);
    parse_bad("redis://[::1:7000", "unclosed");
}

static void test_url_trailing_slash(void **state)
{
    rb_url u;

    (void)state;
    parse_ok("redis://h:1/", &u);
    assert_int_equal(u.db, 0);
}

static void test_url_unix(void **state)
{
    rb_url u;

    (void)state;
    parse_ok("unix:///run/redis/redis.sock", &u);
    assert_true(u.is_unix);
    assert_string_equal(u.path, "/run/redis/redis.sock");
    assert_int_equal(u.db, 0);
    parse_ok("unix:///tmp/r.sock?db=9", &u);
    assert_string_equal(u.path, "/tmp/r.sock");
    assert_int_equal(u.db, 9);
}

static void test_url_bad(void **state)
{
    (void)state;
    parse_bad("", "empty");
    parse_bad("localhost:6379", "no scheme");
    parse_bad("http://h:1", "unsupported URL scheme 'http'");
    parse_bad("rediss://h:1", "unsupported URL scheme");
    parse_bad("redis://h:99999", "bad port '99999'");
    parse_bad("redis://h:0", "bad port");
    parse_bad("redis://h:-1", "bad port");
    parse_bad("redis://h:12ab", "bad port");
    parse_bad("redis://h:", "bad port");
    parse_bad("redis://", "no host");
    parse_bad("redis://h/x", "bad database");
    parse_bad("redis://h/-1", "bad database");
    parse_bad("redis://a%zz@h", "escape");
    parse_bad("redis://a%4@h", "escape");
    parse_bad("unix://relative.sock", "absolute path");
    parse_bad("unix:///tmp/r.sock?db=x", "bad database");
    parse_bad("unix:///tmp/r.sock?foo=1", "only ?db=N");
}

static void test_url_long_path(void **state)
{
    char text[300];

    (void)state;
    memset(text, 'a', sizeof(text));
    memcpy(text, "unix:///", 8);
    text[sizeof(text) - 1] = '\0';
    parse_bad(text, "longer than");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_host_only),
        cmocka_unit_test(test_url_full),
        cmocka_unit_test(test_url_password_only),
        cmocka_unit_test(test_url_ipv6),
        cmocka_unit_test(test_url_trailing_slash),
        cmocka_unit_test(test_url_unix),
        cmocka_unit_test(test_url_bad),
        cmocka_unit_test(test_url_long_path),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
