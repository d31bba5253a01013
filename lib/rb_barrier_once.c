/*
 * Barriers: a --once round's run. The party whose arrival completed the
 * round runs a command while the others stay blocked, and the round's
 * outcome waits for it. Three rules keep that from ever passing a round
 * that did not pass:
 *
 *   - the run is claimed first (the claim script): a round that already
 *     has an outcome (another party's timeout or signal came between the
 *     arrival and now, or a reset) never starts the command;
 *   - while the command runs, this party's heartbeats keep its lease and
 *     watch the round: a break (a timeout, a lease, a reset, the state
 *     deleted) stops the command (once_ops->kill) and is this party's
 *     result, RB_EBROKEN with the round's reason;
 *   - only release, by the party that claimed the run, pushes "ok", and
 *     only when no outcome is there yet.
 *
 * The library never forks or waits for a process: once_ops does, in the
 * caller.
 */
#include "fmacros.h"

#include <stdio.h>
#include <string.h>

#include "rb_barrier.h"
#include "rb_script.h"

/* Take the run of the round. RB_OK: start the command; else the round's
 * outcome (or a failure) with err filled. */
static int claim(rb_waiter *w, rb_error *err)
{
    const char *keys[3] = { w->base, w->in_key, w->out_key };
    const char *args[5] = { w->gen, w->o->id, w->lease_text, w->linger,
                            w->ttl };
    rb_call call = rb_barrier__call_beat(w);
    redisReply *r = NULL;
    rb_round_reply rr;
    int rc;

    rc = rb_script__run(w->c, RB_SCRIPT_CLAIM, keys, args, 5, &call, &r,
                        err);
    if (rc != RB_OK)
        return rb_barrier__script_failed(w->o->name, &call, rc, err);
    if (rb_reply__round(r, &rr) != RB_OK)
        rc = rb_error__set(err, RB_EPROTO, "%s: bad claim reply",
                           w->o->name);
    else if (rr.kind == RB_ROUND_RUN)
        rc = RB_OK;
    else if (rr.kind == RB_ROUND_OUT) {
        rc = rb_barrier__outcome(w->o->name, w->gen, rr.text, err);
        if (rc == RB_OK)   /* only release pushes ok: never for a claim */
            rc = rb_error__set(err, RB_EPROTO, "%s: round %s passed before "
                               "its once-command ran", w->o->name, w->gen);
    } else if (rr.kind == RB_ROUND_LOST)
        rc = rb_error__set(err, RB_ELOST, "%s: barrier state lost (round %s "
                           "no longer holds this party)", w->o->name,
                           w->gen);
    else
        rc = rb_error__set(err, RB_EPROTO, "%s: bad claim reply",
                           w->o->name);
    freeReplyObject(r);
    return rc;
}

/* Pass the round after this party's --once command succeeded. */
static int release(rb_waiter *w, rb_error *err)
{
    const char *keys[3] = { w->base, w->in_key, w->out_key };
    const char *args[3] = { w->gen, w->o->id, w->linger };
    rb_call call = rb_barrier__call_grace(w);
    redisReply *r = NULL;
    rb_round_reply rr;
    int rc;

    rc = rb_script__run(w->c, RB_SCRIPT_RELEASE, keys, args, 3, &call, &r,
                        err);
    if (rc != RB_OK)
        return rb_barrier__script_failed(w->o->name, &call, rc, err);
    if (rb_reply__round(r, &rr) != RB_OK || rr.kind != RB_ROUND_OUT)
        rc = rb_error__set(err, RB_EPROTO, "%s: bad release reply",
                           w->o->name);
    else
        rc = rb_barrier__outcome(w->o->name, w->gen, rr.text, err);
    freeReplyObject(r);
    return rc;
}

/* The command could not start: the round breaks, and the start's own
 * message is this party's. */
static int start_failed(rb_waiter *w, rb_error *err)
{
    rb_error msg = *err;
    char what[160];

    if (w->res)
        w->res->once_status = 127;
    snprintf(what, sizeof(what), "once-command could not start on %s",
             w->o->id);
    rb_barrier__abandon(w, what, "plain", RB_EBROKEN, err);
    return rb_error__set(err, RB_EBROKEN, "%s: %s", w->o->name, msg.msg);
}

/* The round waits for this party until until_ms: tell the caller. */
static void held(const rb_waiter *w, long long until_ms)
{
    if (w->o->version >= 2 && w->o->once_held)
        w->o->once_held(w->o->once_payload, until_ms);
}

int rb_barrier__run_once(rb_waiter *w, const rb_arrive_reply *a,
                         rb_error *err)
{
    const rb_once_ops *ops = w->o->once;
    void *payload = w->o->once_payload;
    rb_once_info info;
    char what[160];
    long long next_beat, sent = rb_now_ms();
    int rc, status = 0, ended;

    if ((rc = claim(w, err)) == RB_ECANCELED)
        return rb_barrier__abandon(w, "interrupted", "arrivals",
                                   RB_ECANCELED, err);
    if (rc != RB_OK)
        return rc;
    held(w, sent + w->lease_ms);
    info.name = w->o->name;
    info.gen = a->gen;
    info.n = a->n;
    info.id = w->o->id;
    info.index = a->index;
    if (w->res)
        w->res->ran_once = 1;
    if (ops->start(&info, payload, err) != RB_OK)
        return start_failed(w, err);
    next_beat = rb_now_ms() + w->slice_ms;
    for (;;) {
        long long now = rb_now_ms(), step = next_beat - now;

        if (rb_deadline__over(&w->party, now)) {
            ops->kill(payload);
            return rb_barrier__timed_out(w, err);
        }
        if (w->party.until_ms && rb_deadline__left(&w->party, now) < step)
            step = rb_deadline__left(&w->party, now);
        ended = ops->wait(payload, (int)(step > 0 ? step : 0), &status);
        if (ended != 0)
            break;
        if (rb_conn__cancelled(w->c)) {
            ops->kill(payload);
            return rb_barrier__abandon(w, "interrupted", "arrivals",
                                       RB_ECANCELED, err);
        }
        if (rb_now_ms() >= next_beat) {
            sent = rb_now_ms();
            if (rb_barrier__heartbeat(w, &rc, err)) {
                /* Broken meanwhile (another party's lease or timeout, a
                 * reset, the state deleted): the command's work is for a
                 * round that did not pass. */
                ops->kill(payload);
                if (rc == RB_ECANCELED)
                    return rb_barrier__abandon(w, "interrupted", "arrivals",
                                               RB_ECANCELED, err);
                if (rc == RB_OK)   /* only release pushes ok */
                    rc = rb_error__set(err, RB_EPROTO, "%s: round %s passed "
                                       "while its once-command ran",
                                       w->o->name, w->gen);
                return rc;
            }
            held(w, sent + w->lease_ms);
            next_beat = rb_now_ms() + w->slice_ms;
        }
    }
    if (ended < 0)
        status = 127;
    if (w->res)
        w->res->once_status = status;
    if (status == 0)
        return release(w, err);
    snprintf(what, sizeof(what), "once-command failed on %s (exit %d)",
             w->o->id, status);
    return rb_barrier__abandon(w, what, "plain", RB_EBROKEN, err);
}
