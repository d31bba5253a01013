/* The history view (cli/history.c, cli/history_jobs.c): rounds, parties,
 * lock holds and job attempts rebuilt from events made up here, as the
 * scripts would append them. */
#include "fmacros.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "history.h"

static char *dup0(const char *s)
{
    return s ? strdup(s) : NULL;
}

/* Append one event to h (kind, event, id, g, n at ms; passed/outcome). */
static rb_event *add(rb_history *h, long long ms, char kind,
                     const char *event, const char *id, long long g,
                     long long n, const char *outcome)
{
    rb_event *e;

    h->events = realloc(h->events, (h->events_count + 1) * sizeof(*e));
    assert_non_null(h->events);
    e = &h->events[h->events_count++];
    memset(e, 0, sizeof(*e));
    e->ms = ms;
    e->kind = kind;
    e->event = dup0(event);
    e->id = dup0(id);
    e->g = g;
    e->n = n;
    e->outcome = dup0(outcome);
    e->passed = outcome && strcmp(outcome, "ok") == 0;
    return e;
}

/* rounds of 3 (w0, w1, w10): w10 arrives last, 100 ms late, each time. */
static void three_rounds(rb_history *h, long long from_gen, int rounds)
{
    int r;

    for (r = 0; r < rounds; r++) {
        long long t = 1000 * r, g = from_gen + r;

        add(h, t, 'b', "arrive", "w1", g, 3, NULL);
        add(h, t + 10, 'b', "arrive", "w0", g, 3, NULL);
        add(h, t + 100, 'b', "arrive", "w10", g, 3, "ok");
    }
}

static void test_history_straggler(void **state)
{
    hist_view v;
    size_t i;

    (void)state;
    memset(&v, 0, sizeof(v));
    three_rounds(&v.h, 5, 4);
    assert_int_equal(hist_build(&v, 0), 0);
    assert_int_equal(v.nrounds, 4);
    assert_int_equal(v.nparties, 3);
    /* Id order as a person reads it: w10 after w1. */
    assert_string_equal(v.parties[0].id, "w0");
    assert_string_equal(v.parties[1].id, "w1");
    assert_string_equal(v.parties[2].id, "w10");
    for (i = 0; i < 3; i++)
        assert_int_equal(v.parties[i].rounds, 4);
    assert_int_equal(v.parties[2].last, 4);
    assert_int_equal(v.parties[0].last + v.parties[1].last, 0);
    assert_int_equal(hist_pct(v.parties[2].late, v.parties[2].nlate, 50),
                     100);
    assert_int_equal(hist_pct(v.parties[0].late, v.parties[0].nlate, 95), 10);
    /* w1 waited the whole round, w10 not at all. */
    assert_int_equal(hist_pct(v.parties[1].wait, v.parties[1].nwait, 100),
                     100);
    assert_int_equal(hist_pct(v.parties[2].wait, v.parties[2].nwait, 100), 0);
    assert_int_equal(v.rounds[0].g, 5);
    assert_int_equal(v.rounds[3].end - v.rounds[3].start, 100);
    hist_free(&v);
}

/* A passed round whose first arrivals fell out of the capped history is
 * left out; --last keeps the last rounds; a repeated arrival counts once;
 * a broken round keeps its reason. */
static void test_history_partial_last_dup_break(void **state)
{
    hist_view v;
    rb_event *b;

    (void)state;
    memset(&v, 0, sizeof(v));
    add(&v.h, 0, 'b', "arrive", "w10", 1, 3, "ok");   /* cut by the cap */
    three_rounds(&v.h, 2, 3);
    add(&v.h, 5000, 'b', "arrive", "w0", 5, 3, NULL);
    add(&v.h, 5001, 'b', "arrive", "w0", 5, 3, NULL);  /* a resend */
    b = add(&v.h, 5600, 'b', "break", NULL, 5, 0, NULL);
    b->cause = strdup("timeout");
    b->reason = strdup("w0 timed out after 0.6s (1/3 arrived: w0)");
    add(&v.h, 6000, 'b', "arrive", "w0", 6, 3, NULL);  /* still open */
    add(&v.h, 6000, 'b', "arrive", "x", 9, 1, "ok");
    v.h.events[v.h.events_count - 1].in = strdup("1:0:inner");
    assert_int_equal(hist_build(&v, 0), 0);
    assert_int_equal(v.nrounds, 4);
    assert_int_equal(v.rounds[0].g, 2);
    assert_false(v.rounds[3].passed);
    assert_int_equal(v.rounds[3].na, 1);
    assert_string_equal(v.rounds[3].cause, "timeout");
    assert_int_equal(v.rounds[3].end - v.rounds[3].start, 600);
    assert_int_equal(v.parties[0].rounds, 4);    /* w0 */
    assert_int_equal(v.parties[0].last, 0);      /* broken: nobody's last */
    hist_free(&v);

    memset(&v, 0, sizeof(v));
    three_rounds(&v.h, 1, 5);
    assert_int_equal(hist_build(&v, 2), 0);
    assert_int_equal(v.nrounds, 2);
    assert_int_equal(v.rounds[0].g, 4);
    assert_int_equal(v.parties[2].last, 2);
    hist_free(&v);
}

/* A --once round passes at its release (a pass event), not at the last
 * arrival. */
static void test_history_once_round(void **state)
{
    hist_view v;

    (void)state;
    memset(&v, 0, sizeof(v));
    add(&v.h, 0, 'b', "arrive", "a", 1, 2, NULL);
    add(&v.h, 5, 'b', "arrive", "b", 1, 2, NULL);
    add(&v.h, 900, 'b', "pass", "b", 1, 0, NULL);
    assert_int_equal(hist_build(&v, 0), 0);
    assert_int_equal(v.nrounds, 1);
    assert_true(v.rounds[0].passed);
    assert_int_equal(v.rounds[0].end, 900);
    assert_int_equal(v.parties[1].last, 1);
    hist_free(&v);
}

static void test_history_lock_and_job(void **state)
{
    hist_view v;
    rb_event *e;

    (void)state;
    memset(&v, 0, sizeof(v));
    add(&v.h, 0, 'l', "grant", "h1", 1, 0, NULL);
    add(&v.h, 10, 'l', "queue", "h2", 0, 0, NULL);
    add(&v.h, 50, 'l', "release", "h1", 1, 0, NULL);
    add(&v.h, 50, 'l', "grant", "h2", 2, 0, NULL);
    add(&v.h, 80, 'l', "expire", "h2", 0, 0, NULL);
    add(&v.h, 90, 'l', "grant", "h1", 3, 0, NULL);
    add(&v.h, 95, 'l', "reset", NULL, 0, 0, NULL);
    add(&v.h, 100, 'j', "enter", "a", 0, 0, NULL)->epoch = 7;
    add(&v.h, 110, 'j', "enter", "b", 0, 0, "go")->epoch = 7;
    e = add(&v.h, 300, 'j', "break", NULL, 0, 0, NULL);
    e->epoch = 7;
    e->restart = 1;
    e->cause = strdup("command");
    e->reason = strdup("a's command exited 1");
    add(&v.h, 310, 'j', "enter", "a", 1, 0, NULL)->epoch = 7;
    add(&v.h, 320, 'j', "enter", "b", 1, 0, "go")->epoch = 7;
    add(&v.h, 400, 'j', "leave", "a", 1, 0, NULL)->epoch = 7;
    add(&v.h, 420, 'j', "leave", "b", 1, 0, "done")->epoch = 7;
    assert_int_equal(hist_build(&v, 0), 0);
    assert_int_equal(v.nrounds, 0);
    assert_int_equal(v.nholds, 3);
    assert_int_equal(v.holds[0].ended - v.holds[0].granted, 50);
    assert_int_equal(v.holds[0].wait_ms, 0);
    assert_int_equal(v.holds[1].wait_ms, 40);
    assert_string_equal(v.holds[1].how, "expire");
    assert_string_equal(v.holds[2].how, "reset");
    assert_int_equal(v.nattempts, 2);
    assert_true(v.attempts[0].restarted);
    assert_string_equal(v.attempts[0].cause, "command");
    assert_int_equal(v.attempts[0].end - v.attempts[0].start, 200);
    assert_true(v.attempts[1].done);
    assert_int_equal(v.attempts[1].end, 420);
    hist_free(&v);
}

static void test_history_percentiles(void **state)
{
    long long xs[] = { 9, 1, 8, 2, 7, 3, 6, 4, 5, 10 };

    (void)state;
    assert_int_equal(hist_pct(xs, 10, 50), 5);
    assert_int_equal(hist_pct(xs, 10, 95), 10);
    assert_int_equal(hist_pct(xs, 10, 100), 10);
    assert_int_equal(hist_pct(xs, 1, 50), 1);
    assert_int_equal(hist_pct(xs, 0, 50), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_history_straggler),
        cmocka_unit_test(test_history_partial_last_dup_break),
        cmocka_unit_test(test_history_once_round),
        cmocka_unit_test(test_history_lock_and_job),
        cmocka_unit_test(test_history_percentiles),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
