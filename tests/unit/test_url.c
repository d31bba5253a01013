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

#define SECRET "S3cret"

static void parse_ok(const char *text, rb_url *u)
{
    rb_error err = { 0, "" };

    if (rb_url_parse(u, text, &err) != RB_OK)
        fail_msg("'%s': %s", text, err.msg);
}

static void parse_bad(const char *text, const char *needle)
{
    rb_url u;
    rb_error err = { 0, "" };

    if (rb_url_parse(&u, text, &err) != RB_EINVAL)
        fail_msg("'%s' was accepted", text);
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
    rb_url u;

    (void)state;
    parse_ok("redis://example.org", &u);
    assert_int_equal(u.kind, RB_URL_TCP);
    assert_false(u.tls);
    assert_int_equal(u.nodes_count, 1);
    assert_string_equal(u.nodes[0].host, "example.org");
    assert_int_equal(u.nodes[0].port, 6379);
    assert_int_equal(u.db, 0);
    assert_false(u.has_password);
    assert_string_equal(u.user, "");
}

static void test_url_full(void **state)
{
    rb_url u;

    (void)state;
    parse_ok("redis://alice:s%40cret@10.0.0.5:6380/3", &u);
    assert_string_equal(u.user, "alice");
    assert_string_equal(u.password, "s@cret");
    assert_true(u.has_password);
    assert_string_equal(u.nodes[0].host, "10.0.0.5");
    assert_int_equal(u.nodes[0].port, 6380);
    assert_int_equal(u.db, 3);
}

static void test_url_password_only(void **state)
{
    rb_url u;

    (void)state;
    parse_ok("redis://:pw@h:1", &u);
    assert_string_equal(u.user, "");
    assert_string_equal(u.password, "pw");
    assert_true(u.has_password);
    /* A lone userinfo is the password, as in redis-cli. */
    parse_ok("redis://lonepw@h", &u);
    assert_string_equal(u.password, "lonepw");
    assert_string_equal(u.user, "");
    assert_true(u.has_password);
    parse_ok("redis://@h", &u);
    assert_false(u.has_password);
    parse_ok("redis://:@h", &u);
    assert_false(u.has_password);
}

static void test_url_user_without_password(void **state)
{
    rb_url u;

    (void)state;
    /* user:@ names the user; the password comes from elsewhere (the CLI:
     * $REDISCLI_AUTH), never an empty one. */
    parse_ok("redis://bob:@h:7/1", &u);
    assert_string_equal(u.user, "bob");
    assert_false(u.has_password);
    assert_string_equal(u.password, "");
    assert_int_equal(u.nodes[0].port, 7);
    assert_int_equal(u.db, 1);
}

static void test_url_password_specials(void **state)
{
    rb_url u;

    (void)state;
    /* The userinfo ends at the last '@': '/', '#', '@', ':' and '?' in a
     * password need no escaping. */
    parse_ok("redis://u:a/b@c#d?e:f@h:9/2", &u);
    assert_string_equal(u.user, "u");
    assert_string_equal(u.password, "a/b@c#d?e:f");
    assert_string_equal(u.nodes[0].host, "h");
    assert_int_equal(u.nodes[0].port, 9);
    assert_int_equal(u.db, 2);
    parse_ok("redis://%75ser:%2F%25%3a@h", &u);
    assert_string_equal(u.user, "user");
    assert_string_equal(u.password, "/%:");
}

static void test_url_ipv6(void **state)
{
    rb_url u;

    (void)state;
    parse_ok("redis://[::1]:7000/2", &u);
    assert_string_equal(u.nodes[0].host, "::1");
    assert_int_equal(u.nodes[0].port, 7000);
    assert_int_equal(u.db, 2);
    parse_ok("redis://[fe80::1%eth0]", &u);
    assert_string_equal(u.nodes[0].host, "fe80::1%eth0");
    assert_int_equal(u.nodes[0].port, 6379);
    parse_bad("redis://[::1:7000", "unclosed");
    parse_bad("redis://::1:7000", "brackets");
    parse_bad("redis://[::1]x", "bad host");
    parse_bad("redis://[]:1", "empty host");
}

static void test_url_trailing_slash(void **state)
{
    rb_url u;

    (void)state;
    parse_ok("redis://h:1/", &u);
    assert_int_equal(u.db, 0);
}

static void test_url_seeds(void **state)
{
    rb_url u;

    (void)state;
    parse_ok("redis://a:7000,b,[::1]:7002/4", &u);
    assert_int_equal(u.kind, RB_URL_TCP);
    assert_int_equal(u.nodes_count, 3);
    assert_string_equal(u.nodes[0].host, "a");
    assert_int_equal(u.nodes[0].port, 7000);
    assert_string_equal(u.nodes[1].host, "b");
    assert_int_equal(u.nodes[1].port, 6379);
    assert_string_equal(u.nodes[2].host, "::1");
    assert_int_equal(u.nodes[2].port, 7002);
    assert_int_equal(u.db, 4);
    parse_ok("rediss://u:p@h1:1,h2:2", &u);
    assert_true(u.tls);
    assert_int_equal(u.nodes_count, 2);
    assert_string_equal(u.password, "p");
    parse_bad("redis://a:1,,b:2", "empty host");
    parse_bad("redis://a:1,", "empty host");
    parse_bad("redis://,a", "empty host");
}

static void test_url_seeds_limit(void **state)
{
    char text[512];
    size_t i, len;
    rb_url u;

    (void)state;
    len = (size_t)snprintf(text, sizeof(text), "redis://h0");
    for (i = 1; i < RB_URL_NODES_MAX; i++)
        len += (size_t)snprintf(text + len, sizeof(text) - len, ",h%zu", i);
    parse_ok(text, &u);
    assert_int_equal(u.nodes_count, RB_URL_NODES_MAX);
    snprintf(text + len, sizeof(text) - len, ",one-more");
    parse_bad(text, "more than");
}

static void test_url_tls(void **state)
{
    rb_url u;

    (void)state;
    parse_ok("rediss://cache.example.com", &u);
    assert_int_equal(u.kind, RB_URL_TCP);
    assert_true(u.tls);
    assert_int_equal(u.nodes[0].port, 6379);   /* as redis-cli */
    parse_ok("rediss://default:pw@[::1]:6380/1", &u);
    assert_true(u.tls);
    assert_string_equal(u.user, "default");
    assert_int_equal(u.nodes[0].port, 6380);
}

static void test_url_sentinel(void **state)
{
    rb_url u;

    (void)state;
    parse_ok("redis-sentinel://s1,s2:26380/2#mymaster", &u);
    assert_int_equal(u.kind, RB_URL_SENTINEL);
    assert_false(u.tls);
    assert_int_equal(u.nodes_count, 2);
    assert_int_equal(u.nodes[0].port, 26379);
    assert_int_equal(u.nodes[1].port, 26380);
    assert_int_equal(u.db, 2);
    assert_string_equal(u.master, "mymaster");
    parse_ok("rediss-sentinel://u:p#w@[::1]#m%20x", &u);
    assert_true(u.tls);
    assert_string_equal(u.user, "u");
    assert_string_equal(u.password, "p#w");
    assert_string_equal(u.nodes[0].host, "::1");
    assert_string_equal(u.master, "m x");
    parse_bad("redis-sentinel://s1:26379", "master's name");
    parse_bad("redis-sentinel://s1:26379#", "master's name");
    parse_bad("redis://h#m", "redis-sentinel");
}

static void test_url_unix(void **state)
{
    rb_url u;

    (void)state;
    parse_ok("unix:///run/redis/redis.sock", &u);
    assert_int_equal(u.kind, RB_URL_UNIX);
    assert_int_equal(u.nodes_count, 0);
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
    rb_url u;

    (void)state;
    memset(text, 'a', sizeof(text));
    memcpy(text, "unix:///", 8);
    text[8 + RB_URL_PATH_MAX] = '\0';
    parse_bad(text, "longer than");
    text[8 + RB_URL_PATH_MAX - 1] = '\0';
    parse_ok(text, &u);

    memset(text, 'a', sizeof(text));
    memcpy(text, "redis://", 8);
    text[8 + RB_URL_HOST_MAX + 1] = '\0';
    parse_bad(text, "longer than");
    text[8 + RB_URL_HOST_MAX] = '\0';
    parse_ok(text, &u);

    /* A password at its limit is kept whole; one byte more is refused,
     * never cut short. */
    memset(text, 'p', sizeof(text));
    memcpy(text, "redis://:", 9);
    strcpy(text + 9 + RB_URL_PASSWORD_MAX, "@h");
    parse_ok(text, &u);
    assert_int_equal(strlen(u.password), RB_URL_PASSWORD_MAX);
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
    rb_url u;
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

static void roundtrip(const char *text, const char *masked)
{
    rb_url a, b;
    rb_error err;
    char buf[2048];

    parse_ok(text, &a);
    assert_int_equal(rb_url_format(buf, sizeof(buf), &a, 0, &err), RB_OK);
    assert_string_equal(buf, masked);
    assert_int_equal(rb_url_format(buf, sizeof(buf), &a, 1, &err), RB_OK);
    parse_ok(buf, &b);
    assert_memory_equal(&a, &b, sizeof(a));
}

static void test_url_format(void **state)
{
    rb_url u;
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
    parse_ok("redis://u:" SECRET "@h", &u);
    assert_int_equal(rb_url_format(small, sizeof(small), &u, 1, &err),
                     RB_EINVAL);
    assert_string_equal(small, "");
    assert_null(strstr(err.msg, "cret"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_url_host_only),
        cmocka_unit_test(test_url_full),
        cmocka_unit_test(test_url_password_only),
        cmocka_unit_test(test_url_user_without_password),
        cmocka_unit_test(test_url_password_specials),
        cmocka_unit_test(test_url_ipv6),
        cmocka_unit_test(test_url_trailing_slash),
        cmocka_unit_test(test_url_seeds),
        cmocka_unit_test(test_url_seeds_limit),
        cmocka_unit_test(test_url_tls),
        cmocka_unit_test(test_url_sentinel),
        cmocka_unit_test(test_url_unix),
        cmocka_unit_test(test_url_bad),
        cmocka_unit_test(test_url_long_parts),
        cmocka_unit_test(test_url_errors_hide_secrets),
        cmocka_unit_test(test_url_format),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
