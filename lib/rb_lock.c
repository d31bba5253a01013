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
 * waiter killed in line holds a free slot up 2 s, not a whole lease. The
 * next in line is nudged (an element of no acquire's nonce: it looks
 * again), so its slice ends just after that short deadline. With a lease
 * of 2 s or less the pop alone is the grant, unless read with less than a
 * third of the lease left by its count. A slice ends at a third of the
 * lease, or just after the holders' earliest lease deadline, whichever is
 * sooner: a dead holder's slot is granted within about a tick of its
 * lease.
 *
 * The holder keeps its own clock: its lease runs from the sending of the
 * last call that answered it holds (a renewal, or the acquire call that
 * was granted or found the grant: every 'held' reply renews the lease on
 * the server), or, for a grant popped from the wake list, of the acquire
 * call before that slice (the grant ran after it). The server's count
 * starts after that sending in every case, so a holder that cannot renew
 * knows it has lost the slot before any waiter can be granted it.
 *
 * This file holds the scripts' calls and what a holder does (renew,
 * release); rb_lock_acquire.c makes a request and waits for its grant.
 */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_lock.h"
#include "rb_reply.h"
#include "rb_keeper.h"
#include "rb_script.h"

/* Held from a call sent at `sent`, for the full lease. */
void rb_lock__hold_from(rb_lock *l, long long sent)
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

int rb_lock__bad_reply(const rb_lock *l, const char *what, rb_error *err)
{
    return rb_error__set(err, RB_EPROTO, "lock %s: bad %s reply", l->name,
                         what);
}

/* ---- the scripts ---- */

int rb_lock__run_acquire(rb_lock *l, const char *max, int first,
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
        return rb_lock__bad_reply(l, "lock-acquire", err);
    return RB_OK;
}

int rb_lock__run_renew(rb_lock *l, rb_call *call, rb_lock_reply *out,
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
        return rb_lock__bad_reply(l, "lock-renew", err);
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
        return rb_lock__bad_reply(l, "lock-release", err);
    return RB_OK;
}

/* Leave the queue on the way out (timeout, signal, a failed wait); a slot
 * granted meanwhile goes on to the next waiter. `code` (its message
 * already in the caller's err) is what the caller reports, whatever
 * leaving did. */
int rb_lock__leave(rb_lock *l, int code)
{
    rb_call call = {
        .deadline = rb_deadline__within(rb_now_ms(), RB_LOCK_LEAVE_MS),
    };
    rb_lock_reply lr;
    rb_error lerr;

    run_release(l, &call, &lr, &lerr);
    return code;
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
    rc = rb_lock__run_renew(l, &call, &lr, err);
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
    rb_lock__hold_from(l, sent);
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
