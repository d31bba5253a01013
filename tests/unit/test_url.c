/* URL parsing: every shape a user may type, without a server; and no error
 * message ever holding any part of a password. */
#include "fmacros.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "rbarrier.h"
#include "rb_internal.h"   /* the limits */

#define SECRET "S3cret"

/* The URL a test looks at: each parse_ok frees the one before, and the
 * teardown the last. */
static rb_url *cur;

static rb_url *parse_ok(const char *text)
{
    rb_error err = { 0, "" };

    rb_url_free(cur);
    cur = NULL;
    if (rb_url_parse(&cur, text, &err) != RB_OK)
        fail_msg("'%s': %s", text, err.msg);
    return cur;
}

static int free_cur(void **state)
{
    (void)state;
    rb_url_free(cur);
    cur = NULL;
    return 0;
}

static void parse_bad(const char *text, const char *needle)
{
    static char marker;
    rb_url *u = (rb_url *)&marker;   /* the parser must set it to NULL */
    rb_error err = { 0, "" };

    if (rb_url_parse(&u, text, &err) != RB_EINVAL)
        fail_msg("'%s' was accepted", text);
    assert_null(u);
    assert_int_equal(err.code, RB_EINVAL);
    if (strstr(err.msg, needle) == NULL)
        fail_msg("'%s': '%s' lacks '%s'", text, err.msg, needle);
    assert_null(strchr(err.msg, '\n'));
    /* No message quotes the URL or a piece of it. */
    if (strstr(err.msg, SECRET) || strstr(err.msg, "cret"))
        fail_msg("'%s': message '%s' leaks the secret", text, err.msg);
}

static void test_url_host_only(void **state)
{
    rb_url *u;

    (void)state;
    u = parse_ok("redis://example.org");
    assert_int_equal(rb_url_get_kind(u), RB_URL_TCP);
    assert_false(rb_url_is_tls(u));
    assert_int_equal(rb_url_nodes_count(u), 1);
    assert_string_equal(rb_url_get_host(u, 0), "example.org");
    assert_int_equal(rb_url_get_port(u, 0), 6379);
    assert_int_equal(rb_url_get_db(u), 0);
    assert_false(rb_url_has_password(u));
    assert_string_equal(rb_url_get_user(u), "");
}

static void test_url_full(void **state)
{
    rb_url *u;

    (void)state;
    u = parse_ok("redis://alice:s%40cret@10.0.0.5:6380/3");
    assert_string_equal(rb_url_get_user(u), "alice");
    assert_string_equal(rb_url_get_password(u), "s@cret");
    assert_true(rb_url_has_password(u));
    assert_string_equal(rb_url_get_host(u, 0), "10.0.0.5");
    assert_int_equal(rb_url_get_port(u, 0), 6380);
    assert_int_equal(rb_url_get_db(u), 3);
}

static void test_url_password_only(void **state)
{
    rb_url *u;

    (void)state;
    u = parse_ok("redis://:pw@h:1");
    assert_string_equal(rb_url_get_user(u), "");
    assert_string_equal(rb_url_get_password(u), "pw");
    assert_true(rb_url_has_password(u));
    /* A lone userinfo is the password, as in redis-cli. */
    u = parse_ok("redis://lonepw@h");
    assert_string_equal(rb_url_get_password(u), "lonepw");
    assert_string_equal(rb_url_get_user(u), "");
    assert_true(rb_url_has_password(u));
    u = parse_ok("redis://@h");
    assert_false(rb_url_has_password(u));
    u = parse_ok("redis://:@h");
    assert_false(rb_url_has_password(u));
}

static void test_url_user_without_password(void **state)
{
    rb_url *u;

    (void)state;
    /* user:@ names the user; the password comes from elsewhere (the CLI:
     * $REDISCLI_AUTH), never an empty one. */
    u = parse_ok("redis://bob:@h:7/1");
    assert_string_equal(rb_url_get_user(u), "bob");
    assert_false(rb_url_has_password(u));
    assert_null(rb_url_get_password(u));
    assert_int_equal(rb_url_get_port(u, 0), 7);
    assert_int_equal(rb_url_get_db(u), 1);
}

static void test_url_password_specials(void **state)
{
    rb_url *u;

    (void)state;
    /* The userinfo ends at the last '@': '/', '#', '@', ':' and '?' in a
     * password need no escaping. */
    u = parse_ok("redis://u:a/b@c#d?e:f@h:9/2");
    assert_string_equal(rb_url_get_user(u), "u");
    assert_string_equal(rb_url_get_password(u), "a/b@c#d?e:f");
    assert_string_equal(rb_url_get_host(u, 0), "h");
    assert_int_equal(rb_url_get_port(u, 0), 9);
    assert_int_equal(rb_url_get_db(u), 2);
    u = parse_ok("redis://%75ser:%2F%25%3a@h");
    assert_string_equal(rb_url_get_user(u), "user");
    assert_string_equal(rb_url_get_password(u), "/%:");
}

static void test_url_ipv6(void **state)
{
    rb_url *u;

    (void)state;
    u = parse_ok("redis://[::1]:7000/2");
    assert_string_equal(rb_url_get_host(u, 0), "::1");
    assert_int_equal(rb_url_get_port(u, 0), 7000);
    assert_int_equal(rb_url_get_db(u), 2);
    u = parse_ok("redis://[fe80::1%eth0]");
    assert_string_equal(rb_url_get_host(u, 0), "fe80::1%eth0");
    assert_int_equal(rb_url_get_port(u, 0), 6379);
    parse_bad("redis://[::1:7000", "unclosed");
    parse_bad("redis://::1:7000", "brackets");
    parse_bad("redis://[::1]x", "bad host");
    parse_bad("redis://[]:1", "empty host");
}

static void test_url_trailing_slash(void **state)
{
    rb_url *u;

    (void)state;
    u = parse_ok("redis://h:1/");
    assert_int_equal(rb_url_get_db(u), 0);
}

static void test_url_seeds(void **state)
{
    rb_url *u;

    (void)state;
    u = parse_ok("redis://a:7000,b,[::1]:7002/4");
    assert_int_equal(rb_url_get_kind(u), RB_URL_TCP);
    assert_int_equal(rb_url_nodes_count(u), 3);
    assert_string_equal(rb_url_get_host(u, 0), "a");
    assert_int_equal(rb_url_get_port(u, 0), 7000);
    assert_string_equal(rb_url_get_host(u, 1), "b");
    assert_int_equal(rb_url_get_port(u, 1), 6379);
    assert_string_equal(rb_url_get_host(u, 2), "::1");
    assert_int_equal(rb_url_get_port(u, 2), 7002);
    assert_int_equal(rb_url_get_db(u), 4);
    u = parse_ok("rediss://u:p@h1:1,h2:2");
    assert_true(rb_url_is_tls(u));
    assert_int_equal(rb_url_nodes_count(u), 2);
    assert_string_equal(rb_url_get_password(u), "p");
    parse_bad("redis://a:1,,b:2", "empty host");
    parse_bad("redis://a:1,", "empty host");
    parse_bad("redis://,a", "empty host");
}

static void test_url_seeds_limit(void **state)
{
    char text[512];
    size_t i, len;
    rb_url *u;

    (void)state;
    len = (size_t)snprintf(text, sizeof(text), "redis://h0");
    for (i = 1; i < RB_URL_NODES_MAX; i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len, ",h%zu", i);
    u = parse_ok(text);
    assert_int_equal(rb_url_nodes_count(u), RB_URL_NODES_MAX);
    snprintf(text + len, sizeof(text) - len, ",one-more");
    parse_bad(text, "more than");
}

static void test_url_tls(void **state)
{
    rb_url *u;

    (void)state;
    u = parse_ok("rediss://cache.example.com");
    assert_int_equal(rb_url_get_kind(u), RB_URL_TCP);
    assert_true(rb_url_is_tls(u));
    assert_int_equal(rb_url_get_port(u, 0), 6379);   /* as redis-cli */
    u = parse_ok("rediss://default:pw@[::1]:6380/1");
    assert_true(rb_url_is_tls(u));
    assert_string_equal(rb_url_get_user(u), "default");
    assert_int_equal(rb_url_get_port(u, 0), 6380);
}

static void test_url_sentinel(void **state)
{
    rb_url *u;

    (void)state;
    u = parse_ok("redis-sentinel://s1,s2:26380/2#mymaster");
    assert_int_equal(rb_url_get_kind(u), RB_URL_SENTINEL);
    assert_false(rb_url_is_tls(u));
    assert_int_equal(rb_url_nodes_count(u), 2);
    assert_int_equal(rb_url_get_port(u, 0), 26379);
    assert_int_equal(rb_url_get_port(u, 1), 26380);
    assert_int_equal(rb_url_get_db(u), 2);
    assert_string_equal(rb_url_get_master(u), "mymaster");
    u = parse_ok("rediss-sentinel://u:p#w@[::1]#m%20x");
    assert_true(rb_url_is_tls(u));
    assert_string_equal(rb_url_get_user(u), "u");
    assert_string_equal(rb_url_get_password(u), "p#w");
    assert_string_equal(rb_url_get_host(u, 0), "::1");
    assert_string_equal(rb_url_get_master(u), "m x");
    parse_bad("redis-sentinel://s1:26379", "master's name");
    parse_bad("redis-sentinel://s1:26379#", "master's name");
    parse_bad("redis://h#m", "redis-sentinel");
}

static void test_url_unix(void **state)
{
    rb_url *u;

    (void)state;
    u = parse_ok("unix:///run/redis/redis.sock");
    assert_int_equal(rb_url_get_kind(u), RB_URL_UNIX);
    assert_int_equal(rb_url_nodes_count(u), 0);
    assert_string_equal(rb_url_get_path(u), "/run/redis/redis.sock");
    assert_int_equal(rb_url_get_db(u), 0);
    u = parse_ok("unix:///tmp/r.sock?db=9");
    assert_string_equal(rb_url_get_path(u), "/tmp/r.sock");
    assert_int_equal(rb_url_get_db(u), 9);
}

static void test_url_bad(void **state)
{
    (void)state;
    parse_bad("", "empty");
    parse_bad("localhost:6379", "no scheme");
    parse_bad("http://h:1", "unsupported URL scheme");
    parse_bad("redis+tls://h:1", "unsupported URL scheme");
    parse_bad("redis://h:99999", "bad port");
    parse_bad("redis://h:0", "bad port");
    parse_bad("redis://h:-1", "bad port");
    parse_bad("redis://h:12ab", "bad port");
    parse_bad("redis://h: 1", "bad port");
    parse_bad("redis://h:", "bad port");
    parse_bad("redis://", "empty host");
    parse_bad("redis://h/x", "bad database");
    parse_bad("redis://h/-1", "bad database");
    parse_bad("redis://h/ 1", "bad database");
    parse_bad("redis://h?db=1", "no '?'");
    parse_bad("redis://h o", "bad character");
    parse_bad("redis://a%zz@h", "escape");
    parse_bad("redis://a%4@h", "escape");
    parse_bad("redis://a%00b@h", "%00");
    parse_bad("unix://relative.sock", "absolute path");
    parse_bad("unix:///tmp/r.sock?db=x", "bad database");
    parse_bad("unix:///tmp/r.sock?foo=1", "only ?db=N");
}

static void test_url_long_parts(void **state)
{
    char text[2200];
    rb_url *u;

    (void)state;
    memset(text, 'a', sizeof(text));
    memcpy(text, "unix:///", 8);
    text[8 + RB_URL_PATH_MAX] = '\0';
    parse_bad(text, "longer than");
    text[8 + RB_URL_PATH_MAX - 1] = '\0';
    u = parse_ok(text);

    memset(text, 'a', sizeof(text));
    memcpy(text, "redis://", 8);
    text[8 + RB_URL_HOST_MAX + 1] = '\0';
    parse_bad(text, "longer than");
    text[8 + RB_URL_HOST_MAX] = '\0';
    u = parse_ok(text);

    /* A password at its limit is kept whole; one byte more is refused,
     * never cut short. */
    memset(text, 'p', sizeof(text));
    memcpy(text, "redis://:", 9);
    strcpy(text + 9 + RB_URL_PASSWORD_MAX, "@h");
    u = parse_ok(text);
    assert_int_equal(strlen(rb_url_get_password(u)), RB_URL_PASSWORD_MAX);
    memset(text, 'p', sizeof(text));
    memcpy(text, "redis://:", 9);
    strcpy(text + 9 + RB_URL_PASSWORD_MAX + 1, "@h");
    parse_bad(text, "password is longer than");
}

/* Issue: a URL with its password in the wrong place was echoed whole. */
static void test_url_errors_hide_secrets(void **state)
{
    static const char *const bad[] = {
        "user:" SECRET "@host",               /* no scheme */
        SECRET,
        "redis://user:" SECRET,               /* no @host: port = secret */
        "redis://user:" SECRET "@",           /* no host */
        "redis://user:" SECRET "@h:x",
        "redis://user:" SECRET "@h/x",
        "redis://user:" SECRET "@h/1x",
        "redis://user:" SECRET "@h?x",
        "redis://user:" SECRET "@h#m",
        "redis://user:%zz" SECRET "@h",
        "redis://user:123/" SECRET,           /* no @: db = secret */
        "redis://user:" SECRET ",h",
        "redis://" SECRET "%@h",
        "redis-sentinel://user:" SECRET "@h",
        "http://user:" SECRET "@h",
        "redis//user:" SECRET "@h",
        "unix://user:" SECRET "@/tmp/s",
        "unix:///tmp/s?db=" SECRET,
        "unix:///tmp/s?" SECRET,
    };
    size_t i;
    rb_url *u;
    rb_error err;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        err.code = 0;
        err.msg[0] = '\0';
        if (rb_url_parse(&u, bad[i], &err) != RB_EINVAL)
            fail_msg("'%s' was accepted", bad[i]);
        if (strstr(err.msg, "cret") != NULL)
            fail_msg("'%s': message '%s' leaks the secret", bad[i], err.msg);
    }
}

static const char *or_null(const char *s) { return s ? s : "(null)"; }

/* Every getter of a and b agrees. */
static void assert_same_url(const rb_url *a, const rb_url *b)
{
    size_t i;

    assert_int_equal(rb_url_get_kind(a), rb_url_get_kind(b));
    assert_int_equal(rb_url_is_tls(a), rb_url_is_tls(b));
    assert_int_equal(rb_url_nodes_count(a), rb_url_nodes_count(b));
    for (i = 0; i < rb_url_nodes_count(a); i++) {
        assert_string_equal(rb_url_get_host(a, i), rb_url_get_host(b, i));
        assert_int_equal(rb_url_get_port(a, i), rb_url_get_port(b, i));
    }
    assert_string_equal(or_null(rb_url_get_path(a)),
                        or_null(rb_url_get_path(b)));
    assert_string_equal(or_null(rb_url_get_master(a)),
                        or_null(rb_url_get_master(b)));
    assert_int_equal(rb_url_get_db(a), rb_url_get_db(b));
    assert_string_equal(rb_url_get_user(a), rb_url_get_user(b));
    assert_int_equal(rb_url_has_password(a), rb_url_has_password(b));
    assert_string_equal(or_null(rb_url_get_password(a)),
                        or_null(rb_url_get_password(b)));
}

static void roundtrip(const char *text, const char *masked)
{
    rb_url *a = NULL, *b = NULL;
    rb_error err;
    char buf[2048];

    assert_int_equal(rb_url_parse(&a, text, &err), RB_OK);
    assert_int_equal(rb_url_format(buf, sizeof(buf), a, 0, &err), RB_OK);
    assert_string_equal(buf, masked);
    assert_int_equal(rb_url_format(buf, sizeof(buf), a, 1, &err), RB_OK);
    assert_int_equal(rb_url_parse(&b, buf, &err), RB_OK);
    assert_same_url(a, b);
    rb_url_free(a);
    rb_url_free(b);
}

static void test_url_format(void **state)
{
    rb_url *u;
    rb_error err;
    char small[12];

    (void)state;
    roundtrip("redis://h", "redis://h:6379");
    roundtrip("redis://u:p%2F@h:1/2", "redis://u:***@h:1/2");
    roundtrip("redis://" SECRET "@h", "redis://:***@h:6379");
    roundtrip("redis://bob:@h", "redis://bob:@h:6379");
    roundtrip("rediss://a,[::1]:2/3", "rediss://a:6379,[::1]:2/3");
    roundtrip("rediss-sentinel://:x@s#m%23x",
              "rediss-sentinel://:***@s:26379#m%23x");
    roundtrip("unix:///tmp/s?db=3", "unix:///tmp/s?db=3");
    u = parse_ok("redis://u:" SECRET "@h");
    assert_int_equal(rb_url_format(small, sizeof(small), u, 1, &err),
                     RB_EINVAL);
    assert_string_equal(small, "");
    assert_null(strstr(err.msg, "cret"));
}

/* What a part does not have reads as NULL or 0, never as another part. */
static void test_url_getters(void **state)
{
    rb_url *u;

    (void)state;
    u = parse_ok("redis://a:1,b:2");
    assert_null(rb_url_get_host(u, 2));
    assert_int_equal(rb_url_get_port(u, 2), 0);
    assert_null(rb_url_get_path(u));
    assert_null(rb_url_get_master(u));
    assert_null(rb_url_get_password(u));
    u = parse_ok("unix:///tmp/s");
    assert_null(rb_url_get_host(u, 0));
    assert_int_equal(rb_url_get_port(u, 0), 0);
    assert_null(rb_url_get_master(u));
    u = parse_ok("redis-sentinel://s#m");
    assert_null(rb_url_get_path(u));
    assert_string_equal(rb_url_get_master(u), "m");
    rb_url_free(NULL);
}

/* The setters the CLI uses for --user and $REDISCLI_AUTH: the same limits
 * as the parser, a refused value leaves the URL as it was. */
static void test_url_setters(void **state)
{
    char big[RB_URL_PASSWORD_MAX + 2];
    rb_url *u;
    rb_error err;
    char buf[2048];

    (void)state;
    u = parse_ok("redis://h");
    assert_int_equal(rb_url_set_user(u, "alice", &err), RB_OK);
    assert_string_equal(rb_url_get_user(u), "alice");
    assert_int_equal(rb_url_set_password(u, "p@ss", &err), RB_OK);
    assert_true(rb_url_has_password(u));
    assert_string_equal(rb_url_get_password(u), "p@ss");
    assert_int_equal(rb_url_format(buf, sizeof(buf), u, 1, &err), RB_OK);
    assert_string_equal(buf, "redis://alice:p%40ss@h:6379");
    assert_int_equal(rb_url_format(buf, sizeof(buf), u, 0, &err), RB_OK);
    assert_string_equal(buf, "redis://alice:***@h:6379");

    memset(big, 'x', sizeof(big));
    big[RB_URL_USER_MAX + 1] = '\0';
    assert_int_equal(rb_url_set_user(u, big, &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "longer than"));
    assert_string_equal(rb_url_get_user(u), "alice");
    big[RB_URL_USER_MAX] = '\0';
    assert_int_equal(rb_url_set_user(u, big, &err), RB_OK);
    assert_int_equal(strlen(rb_url_get_user(u)), RB_URL_USER_MAX);

    memset(big, 'y', sizeof(big));
    big[RB_URL_PASSWORD_MAX + 1] = '\0';
    assert_int_equal(rb_url_set_password(u, big, &err), RB_EINVAL);
    assert_null(strstr(err.msg, "yyy"));
    assert_string_equal(rb_url_get_password(u), "p@ss");
    big[RB_URL_PASSWORD_MAX] = '\0';
    assert_int_equal(rb_url_set_password(u, big, &err), RB_OK);
    assert_int_equal(strlen(rb_url_get_password(u)), RB_URL_PASSWORD_MAX);

    /* NULL or "": back to none, and to the default user. */
    assert_int_equal(rb_url_set_password(u, "", &err), RB_OK);
    assert_false(rb_url_has_password(u));
    assert_null(rb_url_get_password(u));
    assert_int_equal(rb_url_set_password(u, "x", &err), RB_OK);
    assert_int_equal(rb_url_set_password(u, NULL, &err), RB_OK);
    assert_false(rb_url_has_password(u));
    assert_int_equal(rb_url_set_user(u, NULL, &err), RB_OK);
    assert_string_equal(rb_url_get_user(u), "");
    assert_int_equal(rb_url_format(buf, sizeof(buf), u, 1, &err), RB_OK);
    assert_string_equal(buf, "redis://h:6379");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_url_host_only, free_cur),
        cmocka_unit_test_teardown(test_url_full, free_cur),
        cmocka_unit_test_teardown(test_url_password_only, free_cur),
        cmocka_unit_test_teardown(test_url_user_without_password, free_cur),
        cmocka_unit_test_teardown(test_url_password_specials, free_cur),
        cmocka_unit_test_teardown(test_url_ipv6, free_cur),
        cmocka_unit_test_teardown(test_url_trailing_slash, free_cur),
        cmocka_unit_test_teardown(test_url_seeds, free_cur),
        cmocka_unit_test_teardown(test_url_seeds_limit, free_cur),
        cmocka_unit_test_teardown(test_url_tls, free_cur),
        cmocka_unit_test_teardown(test_url_sentinel, free_cur),
        cmocka_unit_test_teardown(test_url_unix, free_cur),
        cmocka_unit_test_teardown(test_url_bad, free_cur),
        cmocka_unit_test_teardown(test_url_long_parts, free_cur),
        cmocka_unit_test_teardown(test_url_errors_hide_secrets, free_cur),
        cmocka_unit_test_teardown(test_url_format, free_cur),
        cmocka_unit_test_teardown(test_url_getters, free_cur),
        cmocka_unit_test_teardown(test_url_setters, free_cur),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
