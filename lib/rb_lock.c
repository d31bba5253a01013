/*
 * Locks and semaphores. A lock is a queue and up to max holders under one
 * {NAME} tag (lua/includes/lock.lua lists the keys). Acquiring is one
 * script (queue, expire the dead, grant free slots in ticket order), then
 * blocking slices on this waiter's own wake list (a rotating BLMOVE, as
 * the barrier's wait: the element stays until the next acquire removes
 * it or it expires), each followed by the same script, which renews the
 * waiter's lease. The grant pushes the acquire's nonce and the fencing
 * token onto the grantee's list, so a release wakes exactly the waiter it
 * admits and nobody polls. A pushed grant holds on the server only 2 s
 * (or the lease, if shorter) until the woken waiter confirms it with one
 * renewal, which makes it the full lease, before it is used (or, for an
 * early_grant caller, just after its work started within the 2 s): a
 * waiter killed in line holds a free slot up 2 s, not a whole lease. The next in
 * line is nudged (an element of no acquire's nonce: it looks again), so
 * its slice ends just after that short deadline. With a lease of 2 s or
 * less the pop alone is the grant, unless read with less than a third of
 * the lease left by its count. A slice ends at a third of the lease, or
 * just after the holders' earliest lease deadline, whichever is sooner: a
 * dead holder's slot is granted within about a tick of its lease.
 *
 * The holder keeps its own clock: its lease runs from the sending of the
 * last call that answered it holds (a renewal, or the acquire call that
 * was granted or found the grant: every 'held' reply renews the lease on
 * the server), or, for a grant popped from the wake list, of the acquire
 * call before that slice (the grant ran after it). The server's count
 * starts after that sending in every case, so a holder that cannot renew
 * knows it has lost the slot before any waiter can be granted it.
 */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_lock.h"
#include "rb_reply.h"
#include "rb_keeper.h"
#include "rb_script.h"

#define RB_LOCK_DEFAULT_LEASE_MS 10000
#define RB_LOCK_DEFAULT_TTL_S 86400
/* Leaving the queue after a timeout or a signal gets this long: the slot
 * granted meanwhile must be passed on, not held until its lease ends. */
#define RB_LOCK_LEAVE_MS 2000
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

struct rb_lock {
    rb_conn *c;
    char name[RB_NAME_MAX + 1];
    char id[RB_NAME_MAX + 1];
    char nonce[33];
    char base[RB_KEY_MAX];
    rb_keeper keeper;         /* of base's slot; lock-acquire's KEYS[2]
                                 and ARGV[8] */
    char wake[RB_KEY_MAX];
    char lease_text[24];
    char ttl_text[24];
    long long lease_ms;
    long long token;
    long long renewed_at;     /* rb_now_ms when the last good renewal (or
                                 the call that was granted) was sent */
    long long right_ms;       /* the hold runs this long from renewed_at:
                                 the lease, or a pushed grant's short hold
                                 until its confirmation (early_grant) */
    int shared;               /* a shared (read) request */
    int nonblock;             /* one attempt */
    int early_grant;          /* a pushed grant is used before it is
                                 confirmed (rb_lock_opts) */
    int held;
    int released;
};

/* Held from a call sent at `sent`, for the full lease. */
static void hold_from(rb_lock *l, long long sent)
{
    l->renewed_at = sent;
    l->right_ms = l->lease_ms;
}

/* A WRONGTYPE error names the lock and what repairs it. */
static int script_failed(const rb_lock *l, int rc, const rb_call *call,
                         rb_error *err)
{
    if (rc == RB_EREDIS && call->reply_err == RB_REPLY_WRONGTYPE)
        return rb_error__set(err, RB_EREDIS, "lock %s: a key of this lock "
                             "holds a value of the wrong type (not written "
                             "by rbarrier?); a reset of the lock removes "
                             "it", l->name);
    return rc;
}

static int bad_reply(const rb_lock *l, const char *what, rb_error *err)
{
    return rb_error__set(err, RB_EPROTO, "lock %s: bad %s reply", l->name,
                         what);
}

/* ---- the scripts ---- */

static int run_acquire(rb_lock *l, const char *max, int first,
                       rb_call *call, rb_lock_reply *out,
                       rb_error *err)
{
    const char *keys[2] = { l->base, l->keeper.key };
    const char *args[8] = { l->id, l->nonce, max, l->lease_text,
                            l->ttl_text, first ? "1" : "0",
                            l->shared ? "s" : "x", l->keeper.marked };
    redisReply *r = NULL;
    int rc;

    rc = rb_script__run(l->c, RB_SCRIPT_LOCK_ACQUIRE, keys, args, 8, call,
                        &r, err);
    if (rc != RB_OK)
        return script_failed(l, rc, call, err);
    rc = rb_lock__decode(r, out);
    freeReplyObject(r);
    if (rc != RB_OK || (out->kind != RB_LOCK_HELD &&
                        out->kind != RB_LOCK_WAIT &&
                        out->kind != RB_LOCK_BADMAX &&
                        out->kind != RB_LOCK_BUSY &&
                        out->kind != RB_LOCK_LOST &&
                        out->kind != RB_LOCK_GONE &&
                        !(out->kind == RB_LOCK_KEEPER && first)))
        return bad_reply(l, "lock-acquire", err);
    return RB_OK;
}

static int run_renew(rb_lock *l, rb_call *call, rb_lock_reply *out,
                     rb_error *err)
{
    const char *keys[2] = { l->base, l->keeper.key };
    const char *args[4] = { l->id, l->nonce, l->lease_text, l->ttl_text };
    redisReply *r = NULL;
    int rc;

    rc = rb_script__run(l->c, RB_SCRIPT_LOCK_RENEW, keys, args, 4, call, &r,
                        err);
    if (rc != RB_OK)
        return script_failed(l, rc, call, err);
    rc = rb_lock__decode(r, out);
    freeReplyObject(r);
    if (rc != RB_OK || (out->kind != RB_LOCK_HELD &&
                        out->kind != RB_LOCK_LOST &&
                        out->kind != RB_LOCK_GONE))
        return bad_reply(l, "lock-renew", err);
    return RB_OK;
}

static int run_release(rb_lock *l, rb_call *call, rb_lock_reply *out,
                       rb_error *err)
{
    const char *keys[2] = { l->base, l->keeper.key };
    const char *args[3] = { l->id, l->nonce, l->ttl_text };
    redisReply *r = NULL;
    int rc;

    rc = rb_script__run(l->c, RB_SCRIPT_LOCK_RELEASE, keys, args, 3, call,
                        &r, err);
    if (rc != RB_OK)
        return script_failed(l, rc, call, err);
    rc = rb_lock__decode(r, out);
    freeReplyObject(r);
    if (rc != RB_OK || (out->kind != RB_LOCK_RELEASED &&
                        out->kind != RB_LOCK_LEFT &&
                        out->kind != RB_LOCK_NONE))
        return bad_reply(l, "lock-release", err);
    return RB_OK;
}

/* Leave the queue on the way out (timeout, signal, a failed wait); a slot
 * granted meanwhile goes on to the next waiter. `code` (its message
 * already in the caller's err) is what the caller reports, whatever
 * leaving did. */
static int leave(rb_lock *l, int code)
{
    rb_call call = {
        .deadline = rb_deadline__within(rb_now_ms(), RB_LOCK_LEAVE_MS),
    };
    rb_lock_reply lr;
    rb_error lerr;

    run_release(l, &call, &lr, &lerr);
    return code;
}

/* ---- waiting ---- */

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

    rc = run_renew(l, &call, &lr, err);
    if (rc == RB_OK && lr.kind == RB_LOCK_HELD) {
        hold_from(l, sent);
        return RB_OK;
    }
    l->held = 0;
    if (rc == RB_OK)
        return leave(l, rb_error__set(err, RB_EBROKEN, "lock %s: granted, "
                                      "but its lease ran out before the "
                                      "grant was read", l->name));
    if (rc == RB_ECANCELED)
        return leave(l, rc);
    /* Not confirmed is not held: whatever the server still counts, this
     * process cannot know it before the lease may have run out. */
    {
        char why[sizeof(err->msg)];

        snprintf(why, sizeof(why), "%s", err->msg);
        return leave(l, rb_error__set(err, RB_EBROKEN, "lock %s: granted, "
                                      "read late, and not confirmed (%s)",
                                      l->name, why));
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
        *rc = bad_reply(l, "wake-up", err);
        return 1;
    }
    /* Granted. A reset deletes a holder's wake list, so a grant still
     * there when popped was not yet revoked (a later reset is found by
     * the renewals, as for any holder). The grant's lease ran from the
     * grant on the server, which came after the sending of the acquire
     * call that queued or renewed this waiter, so counting from that
     * sending is never later than the server. */
    l->token = token;
    hold_from(l, acquired_at);
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
            return leave(l, rb_error__set(err, RB_ETIMEOUT, "lock %s: timed "
                                          "out after %.3gs", l->name,
                                          (double)o->timeout_ms / 1000.0));
        rc = run_acquire(l, max, first, &call, &lr, err);
        if (rc == RB_EUNREACHABLE && rb_deadline__over(own, rb_now_ms()))
            continue;
        if (rc != RB_OK)
            return leave(l, rc);
        if ((rc = rb_keeper__answer(&l->keeper, l->c,
                                    lr.kind == RB_LOCK_KEEPER ? lr.klass : 0,
                                    lr.keeper_missing, &call, l->name,
                                    err)) != RB_OK)
            return rc;
        switch (lr.kind) {
        case RB_LOCK_HELD:
            l->token = lr.token;
            hold_from(l, sent);
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
            return leave(l, rb_error__set(err, RB_ETIMEOUT, "lock %s: not "
                                          "had (held by another, or others "
                                          "wait first)", l->name));
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
            return leave(l, rc);
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

long long rb_lock_token(const rb_lock *l)
{
    return l->token;
}

long long rb_lock_lease_left_ms(const rb_lock *l)
{
    if (!l->held)
        return 0;
    return l->renewed_at + l->right_ms - rb_now_ms();
}

long long rb_lock_renew_in_ms(const rb_lock *l)
{
    long long due = l->renewed_at + l->lease_ms / 3 - rb_now_ms();

    /* An unconfirmed grant is confirmed at once. */
    if (l->right_ms < l->lease_ms)
        return 0;

    return due > 0 ? due : 0;
}

int rb_lock_renew(rb_lock *l, rb_error *err)
{
    rb_error local;
    long long sent = rb_now_ms(), end = l->renewed_at + l->right_ms;
    rb_call call = { .cancellable = 1 };
    rb_lock_reply lr;
    int rc;

    if (err == NULL)
        err = &local;
    if (!l->held)
        return rb_error__set(err, RB_EBROKEN, "lock %s is not held",
                             l->name);
    if (sent >= end) {
        l->held = 0;
        return rb_error__set(err, RB_EBROKEN, "lock %s lost: its lease ran "
                             "out before it could be renewed", l->name);
    }
    /* Resend until the lease ends by this clock, the wait for the last
     * reply included: past that, a waiter may hold the slot. */
    if (end - RB_REPLY_GRACE_MS > sent)
        call.deadline = rb_deadline__until(end - RB_REPLY_GRACE_MS);
    else
        call.deadline = rb_deadline__exact(end);
    rc = run_renew(l, &call, &lr, err);
    if (rc == RB_ETIMEOUT || (rc == RB_EUNREACHABLE &&
                              rb_now_ms() + RB_REPLY_GRACE_MS >= end)) {
        l->held = 0;
        return rb_error__set(err, RB_EUNREACHABLE, "lock %s lost: Redis not "
                             "reached before the lease ran out (%s)",
                             l->name, rc == RB_ETIMEOUT ? "no reply"
                                                        : err->msg);
    }
    if (rc != RB_OK)
        return rc;
    if (lr.kind == RB_LOCK_GONE) {
        l->held = 0;
        return rb_error__set(err, RB_ELOST, "lock %s lost: its state is gone "
                             "from Redis (FLUSHALL, eviction, or a restart "
                             "without persistence)", l->name);
    }
    if (lr.kind != RB_LOCK_HELD) {
        l->held = 0;
        return rb_error__set(err, RB_EBROKEN, "lock %s lost: revoked by a "
                             "reset, or its lease ran out", l->name);
    }
    hold_from(l, sent);
    return RB_OK;
}

int rb_lock_release(rb_lock *l, rb_error *err)
{
    rb_error local;
    rb_call call = { .deadline = rb_conn__op_deadline(l->c) };
    rb_lock_reply lr;
    int rc;

    if (err == NULL)
        err = &local;
    if (l->released)
        return rb_error__set(err, RB_EBROKEN, "lock %s: released twice",
                             l->name);
    l->released = 1;
    l->held = 0;
    rc = run_release(l, &call, &lr, err);
    if (rc != RB_OK)
        return rc;
    if (lr.kind != RB_LOCK_RELEASED)
        return rb_error__set(err, RB_EBROKEN, "lock %s was no longer held "
                             "(revoked by a reset, or its lease ran out)",
                             l->name);
    return RB_OK;
}

void rb_lock_free(rb_lock *l)
{
    free(l);
}
