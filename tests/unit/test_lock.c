/* The lock reply decoders against good and hostile replies, built from
 * RESP bytes by hiredis' own reader (no server): every reply shape the
 * lock scripts send, and wrong types, short and long arrays, out-of-range
 * numbers, NULs. A hostile reply gives RB_EPROTO, never a crash, a token
 * of 0 or a value read from the wrong place. */
#include "fmacros.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "resp.h"

#include "rb_lock.h"


static int decode(const char *resp, size_t len, rb_lock_reply *out)
{
    redisReply *r = parse_n(resp, len);
    int rc = rb_lock__decode(r, out);

    freeReplyObject(r);
    return rc;
}
#define dec(lit, out) decode(lit, sizeof(lit) - 1, out)

static void test_lock_decode_good(void **state)
{
    rb_lock_reply lr;

    (void)state;
    assert_int_equal(dec("*2\r\n$4\r\nheld\r\n:17\r\n", &lr), RB_OK);
    assert_int_equal(lr.kind, RB_LOCK_HELD);
    assert_int_equal(lr.token, 17);
    assert_int_equal(dec("*2\r\n$8\r\nreleased\r\n$2\r\n42\r\n", &lr), RB_OK);
    assert_int_equal(lr.kind, RB_LOCK_RELEASED);
    assert_int_equal(lr.token, 42);
    assert_int_equal(dec("*2\r\n$4\r\nwait\r\n:-1\r\n", &lr), RB_OK);
    assert_int_equal(lr.kind, RB_LOCK_WAIT);
    assert_int_equal(lr.next_ms, -1);
    assert_int_equal(dec("*2\r\n$4\r\nwait\r\n$4\r\n6500\r\n", &lr),
                     RB_OK);
    assert_int_equal(lr.next_ms, 6500);
    assert_int_equal(dec("*2\r\n$6\r\nbadmax\r\n:3\r\n", &lr), RB_OK);
    assert_int_equal(lr.kind, RB_LOCK_BADMAX);
    assert_int_equal(lr.max, 3);
    assert_int_equal(dec("*1\r\n$4\r\nbusy\r\n", &lr), RB_OK);
    assert_int_equal(dec("*2\r\n$4\r\nbusy\r\n:2500\r\n", &lr), RB_OK);
    assert_int_equal(lr.kind, RB_LOCK_BUSY);
    assert_int_equal(lr.next_ms, 2500);
    assert_int_equal(lr.kind, RB_LOCK_BUSY);
    assert_int_equal(dec("*1\r\n$4\r\nlost\r\n", &lr), RB_OK);
    assert_int_equal(lr.kind, RB_LOCK_LOST);
    assert_int_equal(dec("*1\r\n$4\r\ngone\r\n", &lr), RB_OK);
    assert_int_equal(lr.kind, RB_LOCK_GONE);
    /* a token built from the server's clock in microseconds */
    assert_int_equal(dec("*2\r\n$4\r\nheld\r\n:1796595437164065\r\n",
                         &lr), RB_OK);
    assert_true(lr.token == 1796595437164065LL);
    assert_int_equal(dec("*1\r\n$4\r\nleft\r\n", &lr), RB_OK);
    assert_int_equal(lr.kind, RB_LOCK_LEFT);
    assert_int_equal(dec("*1\r\n$4\r\nnone\r\n", &lr), RB_OK);
    assert_int_equal(lr.kind, RB_LOCK_NONE);
    assert_int_equal(dec("*3\r\n$6\r\nkeeper\r\n:12\r\n$7\r\nmissing\r\n",
                         &lr), RB_OK);
    assert_int_equal(lr.kind, RB_LOCK_KEEPER);
    assert_int_equal(lr.klass, 12);
    assert_true(lr.keeper_missing);
    assert_int_equal(dec("*3\r\n$6\r\nkeeper\r\n:40\r\n$5\r\nclass\r\n",
                         &lr), RB_OK);
    assert_int_equal(lr.klass, 40);
    assert_false(lr.keeper_missing);
}

static void test_lock_decode_hostile(void **state)
{
    static const char *const bad[] = {
        "+OK\r\n", ":1\r\n", "$-1\r\n", "*-1\r\n", "*0\r\n", "-ERR x\r\n",
        "$4\r\nheld\r\n",
        "*1\r\n$4\r\nheld\r\n",                     /* no token */
        "*2\r\n$4\r\nheld\r\n:0\r\n",               /* tokens start at 1 */
        "*2\r\n$4\r\nheld\r\n:-5\r\n",
        "*2\r\n$4\r\nheld\r\n$3\r\n1e3\r\n",
        "*2\r\n$4\r\nheld\r\n:99999999999999999\r\n", /* past 2^53 */
        "*3\r\n$4\r\nheld\r\n:1\r\n:1\r\n",         /* too long */
        "*2\r\n$4\r\nheld\r\n$-1\r\n",
        "*1\r\n$4\r\nwait\r\n",                     /* short */
        "*3\r\n$4\r\nwait\r\n:1\r\n:1\r\n",         /* long */
        "*2\r\n$4\r\nwait\r\n:-2\r\n",              /* below -1 */
        "*2\r\n$4\r\nwait\r\n$2\r\n1x\r\n",
        "*2\r\n$6\r\nbadmax\r\n$1\r\nx\r\n",
        "*2\r\n$4\r\nbusy\r\n:-1\r\n",
        "*3\r\n$4\r\nbusy\r\n:1\r\n:1\r\n",
        "*1\r\n$5\r\nheld?\r\n",
        "*1\r\n:1\r\n",
        "*1\r\n*1\r\n$4\r\nheld\r\n",
        "*2\r\n$6\r\nkeeper\r\n:12\r\n",                 /* short */
        "*3\r\n$6\r\nkeeper\r\n:9\r\n$5\r\nclass\r\n",  /* class < 10 */
        "*3\r\n$6\r\nkeeper\r\n:61\r\n$5\r\nclass\r\n",
        "*3\r\n$6\r\nkeeper\r\n:12\r\n$4\r\ngone\r\n",  /* unknown why */
        "*3\r\n$6\r\nkeeper\r\n:12\r\n:1\r\n",
    };
    rb_lock_reply lr;
    size_t i;

    (void)state;
    assert_int_equal(rb_lock__decode(NULL, &lr), RB_EPROTO);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        if (decode(bad[i], strlen(bad[i]), &lr) != RB_EPROTO)
            fail_msg("accepted hostile reply #%zu", i);
    }
    /* A NUL inside the word: "lo\0t" is not "lost". */
    assert_int_equal(dec("*1\r\n$4\r\nlo\0t\r\n", &lr), RB_EPROTO);
}

static int wake(const char *resp, size_t len, const char *nonce,
                long long *token)
{
    redisReply *r = parse_n(resp, len);
    int rc = rb_lock__decode_wake(r, nonce, token);

    freeReplyObject(r);
    return rc;
}
#define wk(lit, nonce, token) wake(lit, sizeof(lit) - 1, nonce, token)

static void test_lock_decode_wake(void **state)
{
    long long token = 0;

    (void)state;
    assert_int_equal(wk("$6\r\nabc 12\r\n", "abc", &token),
                     1);
    assert_int_equal(token, 12);
    assert_int_equal(wk("$5\r\nreset\r\n", "abc", &token), 2);
    /* A grant to an earlier acquire of the same id is stale, not ours. */
    assert_int_equal(wk("$6\r\nabd 12\r\n", "abc", &token),
                     0);
    assert_int_equal(wk("$3\r\nabc\r\n", "abc", &token),
                     RB_EPROTO);
    assert_int_equal(wk("$5\r\nabc 0\r\n", "abc", &token),
                     RB_EPROTO);
    assert_int_equal(wk("$6\r\nabc -1\r\n", "abc", &token),
                     RB_EPROTO);
    assert_int_equal(wk("$7\r\nabc 1 2\r\n", "abc", &token),
                     RB_EPROTO);
    assert_int_equal(wk("$7\r\nab c 12\r\n", "ab", &token),
                     RB_EPROTO);
    assert_int_equal(wk("*1\r\n$5\r\nreset\r\n", "abc", &token), RB_EPROTO);
    assert_int_equal(wk(":12\r\n", "abc", &token), RB_EPROTO);
    assert_int_equal(wk("$-1\r\n", "abc", &token), RB_EPROTO);
    assert_int_equal(wk("$8\r\nabc 1\0002x\r\n", "abc", &token), RB_EPROTO);
    assert_int_equal(rb_lock__decode_wake(NULL, "abc", &token), RB_EPROTO);
}

static void test_lock_decode_status(void **state)
{
    rb_lock_state st;
    redisReply *r;

    (void)state;
    /* max 2, now 10000, token 9; holder h1 (token 9, deadline 15000, since
     * 8000, exclusive); waiters w1 (deadline 9000: expired; shared), w2. */
    r = parse("*15\r\n:2\r\n:10000\r\n:9\r\n:1\r\n"
              "$2\r\nh1\r\n:9\r\n:15000\r\n:8000\r\n$1\r\nx\r\n"
              "$2\r\nw1\r\n:9000\r\n$1\r\ns\r\n"
              "$2\r\nw2\r\n:19000\r\n$1\r\nx\r\n");
    assert_non_null(r);
    assert_int_equal(rb_lock__decode_status(r, &st), RB_OK);
    freeReplyObject(r);
    assert_int_equal(st.max, 2);
    assert_int_equal(st.token, 9);
    assert_int_equal(st.holders_count, 1);
    assert_string_equal(st.holders[0].id, "h1");
    assert_int_equal(st.holders[0].token, 9);
    assert_int_equal(st.holders[0].lease_left_ms, 5000);
    assert_int_equal(st.holders[0].held_ms, 2000);
    assert_int_equal(st.holders[0].shared, 0);
    assert_int_equal(st.waiters_count, 2);
    assert_string_equal(st.waiters[0].id, "w1");
    assert_int_equal(st.waiters[0].lease_left_ms, -1000);
    assert_int_equal(st.waiters[0].shared, 1);
    assert_string_equal(st.waiters[1].id, "w2");
    assert_int_equal(st.waiters[1].shared, 0);
    rb_lock_state_clear(&st);
    assert_int_equal(st.holders_count, 0);
    assert_null(st.holders);

    r = parse("*4\r\n:0\r\n:10000\r\n:0\r\n:0\r\n");
    assert_int_equal(rb_lock__decode_status(r, &st), RB_OK);
    freeReplyObject(r);
    assert_int_equal(st.max, 0);
    assert_int_equal(st.holders_count + st.waiters_count, 0);
    rb_lock_state_clear(&st);
}

static void test_lock_decode_status_hostile(void **state)
{
    static const char *const bad[] = {
        "*3\r\n:0\r\n:1\r\n:0\r\n",
        "*4\r\n:0\r\n:1\r\n:0\r\n:1\r\n",           /* a holder missing */
        "*5\r\n:1\r\n:1\r\n:0\r\n:0\r\n$1\r\nw\r\n",  /* a waiter short */
        "*8\r\n:1\r\n:1\r\n:1\r\n:1\r\n:7\r\n:1\r\n:1\r\n:1\r\n", /* id */
        "*8\r\n:1\r\n:1\r\n:1\r\n:1\r\n$1\r\nh\r\n$1\r\nx\r\n:1\r\n:1\r\n",
        "*6\r\n:1\r\n:1\r\n:1\r\n:0\r\n$1\r\nw\r\n$-1\r\n",
        "*4\r\n:-1\r\n:1\r\n:0\r\n:0\r\n",
        "*4\r\n:100001\r\n:1\r\n:0\r\n:0\r\n",
        "*6\r\n:1\r\n:1\r\n:1\r\n:0\r\n$0\r\n\r\n:1\r\n",  /* empty id */
        /* a mode that is neither s nor x */
        "*7\r\n:1\r\n:1\r\n:1\r\n:0\r\n$1\r\nw\r\n:1\r\n$1\r\nr\r\n",
        "*9\r\n:1\r\n:1\r\n:1\r\n:1\r\n$1\r\nh\r\n:1\r\n:1\r\n:1\r\n:1\r\n",
        "+OK\r\n",
    };
    rb_lock_state st;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        redisReply *r = parse_n(bad[i], strlen(bad[i]));

        if (rb_lock__decode_status(r, &st) != RB_EPROTO)
            fail_msg("accepted hostile status #%zu", i);
        assert_null(st.holders);
        assert_null(st.waiters);
        freeReplyObject(r);
    }
}

/* Every key of a lock, the per-waiter wake lists included, hashes to one
 * slot, and none to the barrier's slot of the same name's family. */
static void test_lock_keys(void **state)
{
    char base[RB_KEY_MAX], wake[RB_KEY_MAX], token[RB_KEY_MAX];
    const char *keys[3] = { base, wake, token };
    rb_error err;

    (void)state;
    assert_int_equal(rb_key__lock(base, sizeof(base), NULL, "ckpt", &err),
                     RB_OK);
    assert_string_equal(base, "rb:l:{ckpt}");
    assert_int_equal(rb_key__lock_part(wake, sizeof(wake), base,
                                       "wake:host:12", &err), RB_OK);
    assert_string_equal(wake, "rb:l:{ckpt}:wake:host:12");
    assert_int_equal(rb_key__lock_part(token, sizeof(token), base, "token",
                                       &err), RB_OK);
    assert_true(rb_key__same_slot(keys, 3));
    assert_int_equal(rb_key__lock(base, sizeof(base), "app", "x", &err),
                     RB_OK);
    assert_string_equal(base, "app:l:{x}");
    assert_int_equal(rb_key__lock(base, 8, NULL, "ckpt", &err), RB_EINVAL);
}

/* Every name's keeper is in the name's slot, under the name's prefix, and
 * names of one slot share it. */
static void test_lock_keeper_key(void **state)
{
    char base[RB_KEY_MAX], keeper[RB_KEY_MAX], other[RB_KEY_MAX];
    const char *keys[2] = { base, keeper };
    const char *names[] = { "ckpt", "a", "x y", "db-lock", "123456" };
    rb_error err;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        assert_int_equal(rb_key__lock(base, sizeof(base), "app", names[i],
                                      &err), RB_OK);
        assert_int_equal(rb_key__keeper(keeper, sizeof(keeper), "app", base,
                                        &err), RB_OK);
        assert_true(strncmp(keeper, "app:k:{", 7) == 0);
        assert_true(rb_key__same_slot(keys, 2));
    }
    /* "{5}" and "{5}x" hash alike: one keeper */
    assert_int_equal(rb_key__keeper(keeper, sizeof(keeper), NULL, "rb:l:{5}",
                                    &err), RB_OK);
    assert_int_equal(rb_key__keeper(other, sizeof(other), NULL, "rb:b:{5}:x",
                                    &err), RB_OK);
    assert_string_equal(keeper, other);
    assert_string_equal(keeper, "rb:k:{5}");
}

/* The keeper's tag is the smallest decimal of the slot, the rule every
 * client (and tests/lib.sh) follows: for every slot, against the plain
 * search that formats and hashes each number in turn. */
static void test_lock_keeper_tag_is_smallest(void **state)
{
    static long first[16384];
    char key[32], want[32], got[RB_KEY_MAX], tag[16];
    rb_error err;
    long n, found = 0;
    unsigned s;

    (void)state;
    for (s = 0; s < 16384; s++)
        first[s] = -1;
    for (n = 0; found < 16384; n++) {
        int len = snprintf(tag, sizeof(tag), "%ld", n);

        s = rb_key__slot(tag, (size_t)len);
        if (first[s] < 0) {
            first[s] = n;
            found++;
        }
    }
    for (s = 0; s < 16384; s++) {
        snprintf(key, sizeof(key), "rb:l:{%ld}", first[s]);
        snprintf(want, sizeof(want), "rb:k:{%ld}", first[s]);
        assert_int_equal(rb_key__keeper(got, sizeof(got), NULL, key, &err),
                         RB_OK);
        assert_string_equal(got, want);
    }
}

/* Options of a version this library does not know are refused before
 * anything is sent (a program built against a newer header). */
static void test_lock_unknown_opts_version(void **state)
{
    rb_lock_opts o = RB_LOCK_OPTS_INIT;
    rb_lock *l = NULL;
    rb_error err;

    (void)state;
    assert_int_equal(o.version, RB_LOCK_OPTS_VERSION);
    o.name = "x";
    o.id = "a";
    o.version = RB_LOCK_OPTS_VERSION + 1;
    assert_int_equal(rb_lock_acquire(&l, NULL, &o, &err), RB_EINVAL);
    assert_null(l);
    assert_non_null(strstr(err.msg, "version"));
    o.version = 0;
    assert_int_equal(rb_lock_acquire(&l, NULL, &o, &err), RB_EINVAL);
    assert_int_equal(rb_lock_acquire(&l, NULL, NULL, &err), RB_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lock_decode_good),
        cmocka_unit_test(test_lock_decode_hostile),
        cmocka_unit_test(test_lock_decode_wake),
        cmocka_unit_test(test_lock_decode_status),
        cmocka_unit_test(test_lock_decode_status_hostile),
        cmocka_unit_test(test_lock_keys),
        cmocka_unit_test(test_lock_keeper_key),
        cmocka_unit_test(test_lock_keeper_tag_is_smallest),
        cmocka_unit_test(test_lock_unknown_opts_version),
    };

    return cmocka_run_group_tests_name("lock", tests, NULL, NULL);
}
