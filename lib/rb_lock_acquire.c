/*
 * A lock request and the wait for its grant (rb_lock.c's overview says
 * how a grant is made and counted): the acquire call, then blocking
 * slices on this waiter's wake list, each followed by the acquire call
 * again; a grant popped is taken as it stands or confirmed first; an id
 * in use by another process is waited out up to its lease.
 */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_lock.h"

#define RB_LOCK_DEFAULT_LEASE_MS 10000
#define RB_LOCK_DEFAULT_TTL_S 86400
/* A grant pushed to a waiter holds on the server only this long (or the
 * lease, if shorter) until the grantee confirms it with a renewal
 * (lua/includes/lock.lua's LOCK_CONFIRM_MS): a waiter killed in line
 * holds a free lock up only that long. */
#define RB_LOCK_CONFIRM_MS 2000
/* A slice that waits for a holder's deadline ends this much after it, so
 * the script that follows finds it passed. */
#define RB_LOCK_AFTER_DEADLINE_MS 20
/* Redis' blocking timeouts tick at 100 ms: the last slice before the
 * waiter's --timeout asks for more and is cut by the client. */
#define RB_LOCK_LAST_SLICE_EXTRA_MS 250

/* A grant read late, or pushed with a short deadline to confirm it by:
 * one renewal says whether the server still honours it (and renews it
 * from its sending), or whether it is lost. Anything short
 * of a 'held' reply gives the slot back: released, not left to expire,
 * as the server may still count the lease and the next waiter should not
 * wait it out. */
static int confirm_grant(rb_lock *l, rb_error *err)
{
    long long sent = rb_now_ms();
    rb_call call = {
        .deadline = rb_deadline__within(sent, RB_LOCK_LEAVE_MS),
        .cancellable = 1,
    };
    rb_lock_reply lr;
    int rc;

    rc = rb_lock__run_renew(l, &call, &lr, err);
    if (rc == RB_OK && lr.kind == RB_LOCK_HELD) {
        rb_lock__hold_from(l, sent);
        return RB_OK;
    }
    l->held = 0;
    if (rc == RB_OK)
        return rb_lock__leave(l, rb_error__set(err, RB_EBROKEN, "lock %s: "
                                               "granted, but its lease ran "
                                               "out before the grant was "
                                               "read", l->name));
    if (rc == RB_ECANCELED)
        return rb_lock__leave(l, rc);
    /* Not confirmed is not held: whatever the server still counts, this
     * process cannot know it before the lease may have run out. */
    {
        char why[sizeof(err->msg)];

        snprintf(why, sizeof(why), "%s", err->msg);
        return rb_lock__leave(l, rb_error__set(err, RB_EBROKEN, "lock %s: "
                                               "granted, read late, and not "
                                               "confirmed (%s)", l->name,
                                               why));
    }
}

/* One blocking slice on the wake list, after the acquire call sent at
 * `acquired_at`. Returns 1 with *rc when the wait ended (granted: RB_OK
 * and l->token; or an error), 0 to go on. */
static int block_slice(rb_lock *l, long long slice_ms, const rb_deadline *own,
                       int last, long long acquired_at, int *rc,
                       rb_error *err)
{
    rb_call call = {
        .deadline = last ? rb_deadline__exact(own->until_ms)
                         : rb_deadline__once(),
        .block_ms = (int)(slice_ms + (last ? RB_LOCK_LAST_SLICE_EXTRA_MS : 0)),
        .cancellable = 1,
    };
    redisReply *r = NULL;
    long long token = 0;
    int got;

    *rc = rb_conn__block_rotate(l->c, l->wake, &call, &r, NULL, err);
    if (*rc == RB_EUNREACHABLE)
        return 0;     /* the acquire script that follows reconnects */
    if (*rc != RB_OK)
        return 1;
    if (r->type == REDIS_REPLY_NIL) {
        freeReplyObject(r);
        return 0;
    }
    got = rb_lock__decode_wake(r, l->nonce, &token);
    freeReplyObject(r);
    if (got == 0) {
        /* A grant to an earlier acquire of this id, left behind (the
         * rotating move keeps it at the head), or a nudge (a grant was
         * pushed to the waiter ahead: the acquire call that follows ends
         * the next slice by its short deadline): drop it, or every slice
         * would return at once. A grant to this acquire pushed meanwhile
         * is not lost: the acquire script answers 'held'. */
        const char *del[2] = { "DEL", l->wake };
        size_t dlens[2] = { 3, strlen(l->wake) };
        rb_call dcall = { .deadline = rb_deadline__once() };

        if (rb_conn__call(l->c, 2, del, dlens, &dcall, &r, err) == RB_OK)
            freeReplyObject(r);
        return 0;
    }
    if (got == 2) {
        *rc = rb_error__set(err, RB_EBROKEN, "lock %s: reset while waiting",
                            l->name);
        return 1;
    }
    if (got != 1) {
        *rc = rb_lock__bad_reply(l, "wake-up", err);
        return 1;
    }
    /* Granted. A reset deletes a holder's wake list, so a grant still
     * there when popped was not yet revoked (a later reset is found by
     * the renewals, as for any holder). The grant's lease ran from the
     * grant on the server, which came after the sending of the acquire
     * call that queued or renewed this waiter, so counting from that
     * sending is never later than the server. */
    l->token = token;
    rb_lock__hold_from(l, acquired_at);
    l->held = 1;
    /* A grant pushed to a waiter holds only RB_LOCK_CONFIRM_MS until the
     * grantee confirms it (so a waiter killed in line does not hold the
     * slot a whole lease): one renewal makes it the full lease. With a
     * lease no longer than that the element alone is the grant, unless it
     * was read late by this clock, which may have started up to a slice
     * before the grant: the server may still count much of the lease when
     * this count is over or nearly, and a command started on a few ms of
     * it would be stopped by its first renewal. Either way the server's
     * answer decides. An early_grant caller takes a longer lease's short
     * hold as it stands, counted the same way, and confirms it with its
     * first renewal, its work already started: only while at least half
     * of the hold is left, so that its work has time to start and the
     * confirmation time to come back. */
    if (l->lease_ms <= RB_LOCK_CONFIRM_MS) {
        if (rb_now_ms() >= acquired_at + l->lease_ms - l->lease_ms / 3)
            *rc = confirm_grant(l, err);
        else
            *rc = RB_OK;
    } else if (l->early_grant &&
               rb_now_ms() < acquired_at + RB_LOCK_CONFIRM_MS / 2) {
        l->right_ms = RB_LOCK_CONFIRM_MS;
        *rc = RB_OK;
    } else {
        *rc = confirm_grant(l, err);
    }
    return 1;
}

/* The id holds or waits in another process, whose lease has lr->next_ms
 * left (the call was sent at `sent`). Alive, it renews within that time;
 * dead, its entry expires and this acquire takes its place. So wait, a
 * second at a time, at most until that deadline: a later deadline seen
 * meanwhile means it renewed, and the id is refused. *until: the first
 * deadline seen, by this clock, counted from the reply (a bound above);
 * a later one is counted from the sending (a bound below), so a slow
 * reply is never taken for a renewal; 5 ms for the two clocks' whole
 * milliseconds (a renewal moves it by a third of a lease, 10 ms at
 * least). RB_OK: try again now. */
static int busy_id(rb_lock *l, const rb_lock_reply *lr, long long sent,
                   long long *until, rb_error *err)
{
    long long now = rb_now_ms(), pause;

    if (lr->next_ms < 0 || l->nonblock ||
        (*until != 0 && sent + lr->next_ms > *until + 5))
        return rb_error__set(err, RB_EINVAL, "lock %s: id '%s' is in use by "
                             "another live process (it %s); each needs an id "
                             "of its own (nothing written)", l->name, l->id,
                             *until ? "renewed its lease" : "holds or waits");
    if (*until == 0)
        *until = now + lr->next_ms;
    pause = *until + RB_LOCK_AFTER_DEADLINE_MS - now;
    if (pause > 1000)
        pause = 1000;
    if (rb_conn__pause(l->c, (int)(pause > 10 ? pause : 10)))
        return rb_error__set(err, RB_ECANCELED, "lock %s: interrupted",
                             l->name);
    return RB_OK;
}

static int wait_for_grant(rb_lock *l, const rb_lock_opts *o,
                          const rb_deadline *own, rb_error *err)
{
    long long started = rb_now_ms();
    char max[24];
    long long dup_until = 0;
    int first = 1, rc;

    snprintf(max, sizeof(max), "%ld", o->max > 0 ? o->max : 1);
    for (;;) {
        long long now = rb_now_ms(), sent = now, slice;
        rb_call call = {
            /* A waiter cut off for longer than its lease has lost its
             * place anyway; no point resending past that. */
            .deadline = rb_deadline__sooner(
                rb_deadline__within(now, l->lease_ms), own->until_ms),
            .cancellable = 1,
        };
        rb_lock_reply lr;
        int last = 0;

        if (rb_deadline__over(own, now))
            return rb_lock__leave(l, rb_error__set(
                err, RB_ETIMEOUT, "lock %s: timed out after %.3gs", l->name,
                (double)o->timeout_ms / 1000.0));
        rc = rb_lock__run_acquire(l, max, first, &call, &lr, err);
        if (rc == RB_EUNREACHABLE && rb_deadline__over(own, rb_now_ms()))
            continue;
        if (rc != RB_OK)
            return rb_lock__leave(l, rc);
        if ((rc = rb_keeper__answer(&l->keeper, l->c,
                                    lr.kind == RB_LOCK_KEEPER ? lr.klass : 0,
                                    lr.keeper_missing, &call, l->name,
                                    err)) != RB_OK)
            return rc;
        switch (lr.kind) {
        case RB_LOCK_HELD:
            l->token = lr.token;
            rb_lock__hold_from(l, sent);
            l->held = 1;
            return RB_OK;
        case RB_LOCK_BADMAX:
            if (l->shared)
                return rb_error__set(err, RB_EINVAL, "lock %s is in use as "
                                     "a semaphore of max %ld; a shared (-s) "
                                     "request needs a mutex or read-write "
                                     "lock (nothing written)", l->name,
                                     lr.max);
            if (lr.max == 1)
                return rb_error__set(err, RB_EINVAL, "lock %s is in use as "
                                     "a mutex or read-write lock (max 1); "
                                     "this holder said max %s (nothing "
                                     "written)", l->name, max);
            return rb_error__set(err, RB_EINVAL, "lock %s is in use with "
                                 "max %ld; this holder said max %s "
                                 "(nothing written)", l->name, lr.max, max);
        case RB_LOCK_BUSY:
            if ((rc = busy_id(l, &lr, sent, &dup_until, err)) != RB_OK)
                return rc;
            continue;
        case RB_LOCK_KEEPER:
            continue;   /* the markers are loaded: the first call again */
        case RB_LOCK_LOST:
            return rb_error__set(err, RB_EBROKEN, "lock %s: this waiter's "
                                 "place is gone (its lease ran out, or the "
                                 "lock was reset)", l->name);
        case RB_LOCK_GONE:
            return rb_error__set(err, RB_ELOST, "lock %s: state lost while "
                                 "waiting (FLUSHALL, eviction, or a restart "
                                 "without persistence)", l->name);
        default:
            break;
        }
        if (l->nonblock)
            return rb_lock__leave(l, rb_error__set(
                err, RB_ETIMEOUT, "lock %s: not had (held by another, or "
                "others wait first)", l->name));
        first = 0;
        if (o->version >= 2 && o->progress)
            o->progress(rb_now_ms() - started, o->payload);
        slice = l->lease_ms / 3;
        if (lr.next_ms >= 0 && lr.next_ms + RB_LOCK_AFTER_DEADLINE_MS < slice)
            slice = lr.next_ms + RB_LOCK_AFTER_DEADLINE_MS;
        now = rb_now_ms();
        if (own->until_ms != 0 && rb_deadline__left(own, now) <= slice) {
            slice = rb_deadline__left(own, now);
            last = 1;
        }
        if (slice < 10)
            slice = 10;   /* 0 would block forever */
        if (block_slice(l, slice, own, last, sent, &rc, err)) {
            if (rc == RB_ETIMEOUT)
                continue;   /* the deadline check above says it */
            if (rc == RB_OK || rc == RB_EBROKEN)
                return rc;
            return rb_lock__leave(l, rc);
        }
    }
}

int rb_lock_acquire(rb_lock **out, rb_conn *c, const rb_lock_opts *o,
                    rb_error *err)
{
    rb_error local;
    rb_lock *l;
    rb_deadline own, reach;
    char part[RB_NAME_MAX + 8];
    long long started = rb_now_ms();
    int rc;

    if (err == NULL)
        err = &local;
    *out = NULL;
    if ((rc = rb_lock__check_opts(o, err)) != RB_OK)
        return rc;
    if ((l = calloc(1, sizeof(*l))) == NULL)
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    l->c = c;
    snprintf(l->name, sizeof(l->name), "%s", o->name);
    snprintf(l->id, sizeof(l->id), "%s", o->id);
    if (o->version >= 2) {
        l->shared = o->shared != 0;
        l->nonblock = o->nonblock != 0;
    }
    if (o->version >= 3)
        l->early_grant = o->early_grant != 0;
    rb_random_hex(l->nonce, 16);
    l->lease_ms = o->lease_ms > 0 ? o->lease_ms : RB_LOCK_DEFAULT_LEASE_MS;
    snprintf(l->lease_text, sizeof(l->lease_text), "%lld", l->lease_ms);
    snprintf(l->ttl_text, sizeof(l->ttl_text), "%lld",
             o->ttl_ms > 0 ? (o->ttl_ms + 999) / 1000
                           : (long long)RB_LOCK_DEFAULT_TTL_S);
    snprintf(part, sizeof(part), "wake:%s", o->id);
    if ((rc = rb_key__lock(l->base, sizeof(l->base), o->prefix, o->name,
                           err)) != RB_OK ||
        (rc = rb_keeper__init(&l->keeper, o->prefix, l->base, err)) !=
            RB_OK ||
        (rc = rb_key__lock_part(l->wake, sizeof(l->wake), l->base, part,
                                err)) != RB_OK) {
        free(l);
        return rc;
    }
    own = rb_deadline__until(o->timeout_ms > 0 ? started + o->timeout_ms : 0);

    /* Connecting may be cut by a signal: nothing is queued yet. */
    reach = rb_conn__reach(c, own.until_ms);
    rc = rb_conn__connect(c, &reach, err);
    if (rc == RB_OK)
        rc = wait_for_grant(l, o, &own, err);
    if (rc != RB_OK) {
        free(l);
        return rc;
    }
    *out = l;
    return RB_OK;
}
