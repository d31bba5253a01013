/* The deadline rules (lib/rb_deadline.c): when a call retries, how long it
 * backs off and how long it waits for a reply. Pure, so `now` is given. */
#include "fmacros.h"

#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "rb_internal.h"

#define NOW 1000000LL

static void test_once(void **state)
{
    rb_deadline d = rb_deadline__once();
    rb_call zero = { .block_ms = 0 };

    (void)state;
    assert_int_equal(d.kind, RB_DEADLINE_ONCE);
    /* The zero value of a call is one attempt, never "forever". */
    assert_int_equal(zero.deadline.kind, RB_DEADLINE_ONCE);
    assert_true(rb_deadline__over(&d, NOW));
    assert_int_equal(rb_deadline__left(&d, NOW), 0);
    /* A blocking slice: its block time and a grace, not the command
     * timeout on top. */
    assert_int_equal(rb_deadline__reply_by(&d, NOW, 1000, 5000),
                     NOW + 1000 + RB_REPLY_GRACE_MS);
    assert_int_equal(rb_deadline__reply_by(&d, NOW, 0, 300), NOW + 300);
}

static void test_until(void **state)
{
    rb_deadline d = rb_deadline__within(NOW, 3000);

    (void)state;
    assert_int_equal(d.kind, RB_DEADLINE_UNTIL);
    assert_int_equal(d.until_ms, NOW + 3000);
    assert_int_equal(rb_deadline__left(&d, NOW), 3000);
    assert_false(rb_deadline__over(&d, NOW + 2999));
    assert_true(rb_deadline__over(&d, NOW + 3000));
    assert_true(rb_deadline__over(&d, NOW + 9000));
    /* Reply: at most until the deadline plus a grace ... */
    assert_int_equal(rb_deadline__reply_by(&d, NOW, 0, 5000),
                     NOW + 3000 + RB_REPLY_GRACE_MS);
    /* ... but the command timeout when that is sooner ... */
    assert_int_equal(rb_deadline__reply_by(&d, NOW, 0, 1000), NOW + 1000);
    /* ... and a blocking command may block past the deadline. */
    assert_int_equal(rb_deadline__reply_by(&d, NOW, 4000, 5000),
                     NOW + 4000 + RB_REPLY_GRACE_MS);
    /* A deadline in the past still lets a sent command get its reply. */
    assert_int_equal(rb_deadline__reply_by(&d, NOW + 10000, 0, 5000),
                     NOW + 10000 + RB_REPLY_GRACE_MS);
}

static void test_no_limit(void **state)
{
    rb_deadline d = rb_deadline__until(0);

    (void)state;
    assert_int_equal(rb_deadline__left(&d, NOW), LLONG_MAX);
    assert_false(rb_deadline__over(&d, LLONG_MAX / 2));
    assert_int_equal(rb_deadline__reply_by(&d, NOW, 1000, 5000),
                     NOW + 6000);
    assert_int_equal(rb_deadline__backoff_cap(&d, NOW), RB_BACKOFF_MAX_MS);
}

static void test_exact(void **state)
{
    rb_deadline d = rb_deadline__exact(NOW + 300);

    (void)state;
    /* One attempt, ending at the deadline by the client's clock, whatever
     * the block time or the command timeout. */
    assert_true(rb_deadline__over(&d, NOW));
    assert_int_equal(rb_deadline__reply_by(&d, NOW, 500, 5000), NOW + 300);
    assert_int_equal(rb_deadline__reply_by(&d, NOW, 0, 10), NOW + 300);
}

static void test_sooner(void **state)
{
    rb_deadline none = rb_deadline__until(0);
    rb_deadline d;

    (void)state;
    /* A party without --timeout: the lease bounds its reconnects. */
    d = rb_deadline__sooner(none, NOW + 3000);
    assert_int_equal(d.kind, RB_DEADLINE_UNTIL);
    assert_int_equal(d.until_ms, NOW + 3000);
    /* With --timeout sooner than the lease, the timeout. */
    d = rb_deadline__sooner(rb_deadline__until(NOW + 1000), NOW + 3000);
    assert_int_equal(d.until_ms, NOW + 1000);
    d = rb_deadline__sooner(rb_deadline__until(NOW + 9000), NOW + 3000);
    assert_int_equal(d.until_ms, NOW + 3000);
    /* 0 is "no bound", not "at once". */
    d = rb_deadline__sooner(rb_deadline__until(NOW + 9000), 0);
    assert_int_equal(d.until_ms, NOW + 9000);
    /* ONCE stays one attempt. */
    d = rb_deadline__sooner(rb_deadline__once(), NOW + 3000);
    assert_int_equal(d.kind, RB_DEADLINE_ONCE);
    /* EXACT moves earlier, never later. */
    d = rb_deadline__sooner(rb_deadline__exact(NOW + 300), NOW + 200);
    assert_int_equal(d.kind, RB_DEADLINE_EXACT);
    assert_int_equal(d.until_ms, NOW + 200);
}

static void test_reach(void **state)
{
    rb_deadline d;

    (void)state;
    /* Nothing said: one attempt, so a wrong URL fails at once. */
    d = rb_deadline__reach(NOW, 0, 0);
    assert_int_equal(d.kind, RB_DEADLINE_ONCE);
    /* A party with --timeout keeps trying until it. */
    d = rb_deadline__reach(NOW, NOW + 600000, 0);
    assert_int_equal(d.kind, RB_DEADLINE_UNTIL);
    assert_int_equal(d.until_ms, NOW + 600000);
    /* --connect-timeout bounds it ... */
    d = rb_deadline__reach(NOW, NOW + 600000, 5000);
    assert_int_equal(d.until_ms, NOW + 5000);
    /* ... alone too ... */
    d = rb_deadline__reach(NOW, 0, 5000);
    assert_int_equal(d.kind, RB_DEADLINE_UNTIL);
    assert_int_equal(d.until_ms, NOW + 5000);
    /* ... but never past the party's own deadline. */
    d = rb_deadline__reach(NOW, NOW + 1000, 5000);
    assert_int_equal(d.until_ms, NOW + 1000);
}

static void test_backoff_cap(void **state)
{
    rb_deadline d;

    (void)state;
    d = rb_deadline__within(NOW, 60000);
    assert_int_equal(rb_deadline__backoff_cap(&d, NOW), RB_BACKOFF_MAX_MS);
    /* A 3 s lease: an eighth of it, so several tries near its end. */
    d = rb_deadline__within(NOW, 3000);
    assert_int_equal(rb_deadline__backoff_cap(&d, NOW), 375);
    /* Never below the floor. */
    d = rb_deadline__within(NOW, 200);
    assert_int_equal(rb_deadline__backoff_cap(&d, NOW), RB_BACKOFF_FLOOR_MS);
    d = rb_deadline__once();
    assert_int_equal(rb_deadline__backoff_cap(&d, NOW), RB_BACKOFF_FLOOR_MS);
}

static void test_attempt_until(void **state)
{
    rb_deadline d;

    (void)state;
    d = rb_deadline__once();
    assert_int_equal(rb_deadline__attempt_until(&d, NOW, 2000), NOW + 2000);
    d = rb_deadline__until(0);
    assert_int_equal(rb_deadline__attempt_until(&d, NOW, 2000), NOW + 2000);
    d = rb_deadline__within(NOW, 500);
    assert_int_equal(rb_deadline__attempt_until(&d, NOW, 2000), NOW + 500);
    /* The last attempt of a window is a real one. */
    assert_int_equal(rb_deadline__attempt_until(&d, NOW + 499, 2000),
                     NOW + 509);
    d = rb_deadline__exact(NOW + 300);
    assert_int_equal(rb_deadline__attempt_until(&d, NOW, 2000), NOW + 300);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_once),
        cmocka_unit_test(test_until),
        cmocka_unit_test(test_no_limit),
        cmocka_unit_test(test_exact),
        cmocka_unit_test(test_sooner),
        cmocka_unit_test(test_reach),
        cmocka_unit_test(test_backoff_cap),
        cmocka_unit_test(test_attempt_until),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
