/*
 * Deadlines: the only place that reads one. A call's deadline is built once
 * by the operation that makes the call (rb_internal.h lists the kinds); the
 * resend loop asks these rules whether to try again, how long to back off
 * and how long to wait for a reply. Pure functions of `now`, so each rule
 * is unit-tested without a clock or a server; the clock itself is here too,
 * at the bottom of the layers, so that nodes, streams and TLS read it
 * without calling up into the router.
 */
#include "fmacros.h"

#include <limits.h>
#include <time.h>

#include "rb_internal.h"

/* The one clock: every deadline, in every layer, is on it. */
long long rb_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

rb_deadline rb_deadline__once(void)
{
    rb_deadline d = { .kind = RB_DEADLINE_ONCE, .until_ms = 0 };

    return d;
}

rb_deadline rb_deadline__until(long long until_ms)
{
    rb_deadline d = { .kind = RB_DEADLINE_UNTIL, .until_ms = until_ms };

    return d;
}

rb_deadline rb_deadline__within(long long now, long long ms)
{
    return rb_deadline__until(now + (ms > 0 ? ms : 0));
}

rb_deadline rb_deadline__exact(long long until_ms)
{
    rb_deadline d = { .kind = RB_DEADLINE_EXACT, .until_ms = until_ms };

    return d;
}

rb_deadline rb_deadline__sooner(rb_deadline d, long long until_ms)
{
    if (d.kind == RB_DEADLINE_ONCE || until_ms == 0)
        return d;
    if (d.until_ms == 0 || until_ms < d.until_ms)
        d.until_ms = until_ms;
    return d;
}

rb_deadline rb_deadline__reach(long long now, long long party_until,
                               long long retry_ms)
{
    if (retry_ms > 0)
        return rb_deadline__sooner(rb_deadline__within(now, retry_ms),
                                   party_until);
    if (party_until > 0)
        return rb_deadline__until(party_until);
    return rb_deadline__once();
}

long long rb_deadline__left(const rb_deadline *d, long long now)
{
    if (d->kind != RB_DEADLINE_UNTIL)
        return 0;
    if (d->until_ms == 0)
        return LLONG_MAX;
    return d->until_ms > now ? d->until_ms - now : 0;
}

int rb_deadline__over(const rb_deadline *d, long long now)
{
    return rb_deadline__left(d, now) == 0;
}

/* Capped at an eighth of the time left (but not below a floor), so that a
 * short window (a 3 s lease) still gets several attempts near its end
 * instead of one last try a second late. */
int rb_deadline__backoff_cap(const rb_deadline *d, long long now)
{
    long long span = rb_deadline__left(d, now);

    if (span / 8 >= RB_BACKOFF_MAX_MS)
        return RB_BACKOFF_MAX_MS;
    return span / 8 > RB_BACKOFF_FLOOR_MS ? (int)(span / 8)
                                          : RB_BACKOFF_FLOOR_MS;
}

/* The block time plus the command timeout, but not past the deadline (or
 * the end of the block time, if later) plus a grace: a server that stopped
 * answering then costs a party with --timeout little more than its timeout,
 * and a waiter cut off from its barrier no more than its lease. EXACT ends
 * at its deadline and nowhere else. */
long long rb_deadline__reply_by(const rb_deadline *d, long long now,
                                long long block_ms,
                                long long command_timeout_ms)
{
    long long natural = now + block_ms + command_timeout_ms;
    long long cap = now + block_ms;

    if (d->kind == RB_DEADLINE_EXACT)
        return d->until_ms;
    if (d->kind == RB_DEADLINE_UNTIL && d->until_ms == 0)
        return natural;
    if (d->kind == RB_DEADLINE_UNTIL && d->until_ms > cap)
        cap = d->until_ms;
    cap += RB_REPLY_GRACE_MS;
    return cap < natural ? cap : natural;
}

/* One connect attempt (dial and handshake) gets attempt_ms, but not past
 * an EXACT deadline, nor past an UNTIL deadline (though at least 10 ms,
 * so the last attempt of a window is a real one). */
long long rb_deadline__attempt_until(const rb_deadline *d, long long now,
                                     long long attempt_ms)
{
    long long until = now + attempt_ms;

    if (d->kind == RB_DEADLINE_EXACT && d->until_ms < until)
        until = d->until_ms;
    if (d->kind == RB_DEADLINE_UNTIL && d->until_ms != 0 &&
        d->until_ms < until)
        until = d->until_ms > now + 10 ? d->until_ms : now + 10;
    return until;
}
