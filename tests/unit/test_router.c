/* The resend loop's rules as data: for each failure of an attempt, which
 * node comes next, whether the slot map is refreshed or the sentinels are
 * asked again, whether the call is resent, and whether ASKING goes first.
 * Pure: no server, no clock. */
#include "fmacros.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "rb_router.h"

static rb_decision reply(rb_reply_err kind, rb_route_mode mode)
{
    rb_attempt a = { .failure = RB_FAILED_REPLY, .reply = kind,
                     .mode = mode };

    return rb_router__decide(&a);
}

static rb_decision failed(rb_failure f, rb_route_mode mode)
{
    rb_attempt a = { .failure = f, .mode = mode };

    return rb_router__decide(&a);
}

static void test_moved(void **state)
{
    rb_decision d = reply(RB_REPLY_MOVED, RB_ROUTE_CLUSTER);

    (void)state;
    /* Sent to the slot's new owner now, not resent after a backoff. */
    assert_int_equal(d.next, RB_NEXT_REDIRECT);
    assert_true(d.remember_slot);
    assert_true(d.refresh_map);
    assert_false(d.asking);
    assert_false(d.drop);
    assert_false(d.to_cluster);
    /* A plain URL of a cluster node: routes by slots from now on. */
    d = reply(RB_REPLY_MOVED, RB_ROUTE_ONE);
    assert_int_equal(d.next, RB_NEXT_REDIRECT);
    assert_true(d.to_cluster);
}

static void test_ask(void **state)
{
    rb_decision d = reply(RB_REPLY_ASK, RB_ROUTE_CLUSTER);

    (void)state;
    /* This once, ASKING and the call at the importing node; the map stays. */
    assert_int_equal(d.next, RB_NEXT_REDIRECT);
    assert_true(d.asking);
    assert_false(d.remember_slot);
    assert_false(d.refresh_map);
    assert_false(d.drop);
}

static void test_redirects_end(void **state)
{
    rb_attempt a = { .failure = RB_FAILED_REPLY, .reply = RB_REPLY_MOVED,
                     .mode = RB_ROUTE_CLUSTER,
                     .redirects = RB_REDIRECTS_MAX };
    rb_decision d;

    (void)state;
    /* A slot that bounces between two nodes is a migration half done:
     * neither an error nor a tight loop, but a resend after a pause, with
     * a fresh map, under the call's deadline. */
    d = rb_router__decide(&a);
    assert_int_equal(d.next, RB_NEXT_ROUTE);
    assert_true(d.refresh_map);
    assert_false(d.drop);
    a.reply = RB_REPLY_ASK;
    assert_int_equal(rb_router__decide(&a).next, RB_NEXT_ROUTE);
    a.redirects = RB_REDIRECTS_MAX - 1;
    assert_int_equal(rb_router__decide(&a).next, RB_NEXT_REDIRECT);
}

static void test_not_now(void **state)
{
    static const rb_reply_err kinds[] = {
        RB_REPLY_LOADING, RB_REPLY_BUSY, RB_REPLY_TRYAGAIN,
        RB_REPLY_MASTERDOWN,
    };
    size_t i;

    (void)state;
    /* The same node, later: it is the right one, just not ready. */
    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        rb_decision d = reply(kinds[i], RB_ROUTE_CLUSTER);

        assert_int_equal(d.next, RB_NEXT_SAME);
        assert_false(d.drop);
        assert_false(d.refresh_map);
        assert_false(d.ask_sentinels);
        assert_false(d.asking);
    }
}

static void test_readonly(void **state)
{
    rb_decision d;

    (void)state;
    /* A master demoted by a failover: find the new one, then resend. */
    d = reply(RB_REPLY_READONLY, RB_ROUTE_SENTINEL);
    assert_int_equal(d.next, RB_NEXT_ROUTE);
    assert_true(d.drop);
    assert_true(d.ask_sentinels);
    assert_false(d.refresh_map);
    d = reply(RB_REPLY_READONLY, RB_ROUTE_CLUSTER);
    assert_int_equal(d.next, RB_NEXT_ROUTE);
    assert_true(d.refresh_map);
    assert_false(d.ask_sentinels);
    d = reply(RB_REPLY_UNBLOCKED, RB_ROUTE_ONE);
    assert_int_equal(d.next, RB_NEXT_ROUTE);
    assert_true(d.drop);
}

static void test_clusterdown(void **state)
{
    rb_decision d = reply(RB_REPLY_CLUSTERDOWN, RB_ROUTE_CLUSTER);

    (void)state;
    /* The map is being rebuilt: resend later with a fresh one. */
    assert_int_equal(d.next, RB_NEXT_ROUTE);
    assert_true(d.refresh_map);
}

static void test_dropped_and_refused(void **state)
{
    static const rb_failure fails[] = { RB_FAILED_DROPPED,
                                        RB_FAILED_CONNECT, RB_FAILED_ACKS };
    size_t i;

    (void)state;
    /* One rule for a connection that broke, one that could not be made
     * and a write short of replicas: ask for the route again and resend
     * as the deadline allows. */
    for (i = 0; i < sizeof(fails) / sizeof(fails[0]); i++) {
        rb_decision d = failed(fails[i], RB_ROUTE_CLUSTER);

        assert_int_equal(d.next, RB_NEXT_ROUTE);
        assert_true(d.drop);
        assert_true(d.refresh_map);
        assert_false(d.asking);
        d = failed(fails[i], RB_ROUTE_SENTINEL);
        assert_true(d.ask_sentinels);
        assert_false(d.refresh_map);
        d = failed(fails[i], RB_ROUTE_ONE);
        assert_int_equal(d.next, RB_NEXT_ROUTE);
        assert_false(d.refresh_map);
        assert_false(d.ask_sentinels);
    }
}

static void test_final(void **state)
{
    static const rb_reply_err kinds[] = {
        RB_REPLY_OTHER, RB_REPLY_NOSCRIPT, RB_REPLY_WRONGTYPE,
        RB_REPLY_NOPERM, RB_REPLY_NOPERM_KEYS, RB_REPLY_UNKNOWN_COMMAND,
        RB_REPLY_DAMAGED,
    };
    size_t i;

    (void)state;
    /* Resending cannot change these: the caller decides what they mean. */
    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        rb_decision d = reply(kinds[i], RB_ROUTE_CLUSTER);

        assert_int_equal(d.next, RB_NEXT_STOP);
        assert_false(d.drop);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_moved),
        cmocka_unit_test(test_ask),
        cmocka_unit_test(test_redirects_end),
        cmocka_unit_test(test_not_now),
        cmocka_unit_test(test_readonly),
        cmocka_unit_test(test_clusterdown),
        cmocka_unit_test(test_dropped_and_refused),
        cmocka_unit_test(test_final),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
