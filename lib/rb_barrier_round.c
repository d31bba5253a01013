/*
 * Barriers: the calls a party makes on the round it is in, shared by the
 * wait loop (rb_barrier.c) and a --once run (rb_barrier_once.c): how long
 * each may try, the heartbeat that renews the lease and watches the round,
 * and leaving a round early (a timeout, a signal, a failed command).
 */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_barrier.h"
#include "rb_script.h"

/* Abandoning gets this long, uncancellable: the break must reach the
 * others. */
#define RB_ABANDON_GRACE_MS 2000

/* A party cut off from Redis for longer than its lease is presumed dead by
 * the others, so its calls stop trying then. With --replicas a call may
 * have run on the master and only wait for a replica to acknowledge it:
 * after a Sentinel failover the new master has none until the old one
 * rejoins (about 11 s). Giving up at a shorter lease would fail a party
 * whose arrival completed the round that the others pass; resending is
 * harmless (the nonce), and a party that was in fact cut off learns from
 * the round's outcome that its lease ran out. */
long long rb_barrier__resend_until(const rb_waiter *w)
{
    long long window = rb_conn__ack_window_ms(w->c);

    return rb_now_ms() + (window > w->lease_ms ? window : w->lease_ms);
}

rb_call rb_barrier__call_beat(const rb_waiter *w)
{
    rb_call call = {
        .deadline = rb_deadline__sooner(w->party, rb_barrier__resend_until(w)),
        .cancellable = 1,
    };

    return call;
}


/* After the client cut the last slice at the deadline it has not heard
 * from the server for a while: a server that hung must not hold a party
 * that timed out much longer than its --timeout. */
#define RB_CUT_GRACE_MS 1000

rb_call rb_barrier__call_grace(const rb_waiter *w)
{
    rb_call call = {
        .deadline = rb_deadline__within(rb_now_ms(),
                                        w->cut ? RB_CUT_GRACE_MS
                                               : RB_ABANDON_GRACE_MS),
    };

    return call;
}

int rb_barrier__bad_reply(const rb_waiter *w, const char *script,
                          rb_error *err)
{
    return rb_error__set(err, RB_EPROTO, "%s: bad %s reply", w->o->name,
                         script);
}

/* ---- leaving early ---- */

int rb_barrier__abandon(rb_waiter *w, const char *what, const char *form,
                        int code, rb_error *err)
{
    const char *keys[3] = { w->base, w->in_key, w->out_key };
    const char *args[5] = { w->gen, w->o->id, what, w->linger, form };
    rb_call call = rb_barrier__call_grace(w);
    redisReply *r = NULL;
    rb_round_reply rr;
    rb_error aerr = { RB_EPROTO, "unexpected reply" };
    const char *reason;
    size_t idlen = strlen(w->o->id);
    int rc;

    rc = rb_script__run(w->c, RB_SCRIPT_ABANDON, keys, args, 5, &call, &r,
                        &aerr);
    if (rc == RB_EUNREACHABLE && code == RB_ETIMEOUT) {
        /* Redis went away or hung: that, not the timeout, is the news
         * (nobody could be told, and nobody else can pass either). */
        return rb_error__set(err, RB_EUNREACHABLE, "%s", aerr.msg);
    }
    if (rc != RB_OK || rb_reply__round(r, &rr) != RB_OK ||
        (rr.kind != RB_ROUND_OUT && rr.kind != RB_ROUND_LOST &&
         rr.kind != RB_ROUND_BROKEN)) {
        freeReplyObject(r);
        return rb_error__set(err, code, "%s: %s (and could not tell the "
                             "others: %s)", w->o->name, what, aerr.msg);
    }
    if (rr.kind == RB_ROUND_OUT) {
        rc = rb_barrier__outcome(w->o->name, w->gen, rr.text, err);
        freeReplyObject(r);
        return rc;
    }
    if (rr.kind == RB_ROUND_LOST) {
        freeReplyObject(r);
        return rb_error__set(err, RB_ELOST, "%s: %s, and round %s no longer "
                             "holds this party (barrier state lost)",
                             w->o->name, what, w->gen);
    }
    /* "broken <id> timed out after 1s (1/2 arrived: ...)": say it from
     * this party's side, without its own id. */
    rb_reply__outcome(rr.text, &reason);
    if (strncmp(reason, w->o->id, idlen) == 0 && reason[idlen] == ' ')
        reason += idlen + 1;
    if (rr.previous && rb_reply__outcome(rr.previous, NULL) == 0)
        rb_error__set(err, code, "%s: %s; alone in round %s, which began "
                      "when round %lld broke: %s", w->o->name, reason,
                      w->gen, w->gen_n - 1, rr.previous + 7);
    else
        rb_error__set(err, code, "%s: %s", w->o->name, reason);
    freeReplyObject(r);
    return code;
}

int rb_barrier__timed_out(rb_waiter *w, rb_error *err)
{
    char what[96];

    snprintf(what, sizeof(what), "timed out after %gs",
             (double)w->o->timeout_ms / 1000.0);
    return rb_barrier__abandon(w, what, "arrivals", RB_ETIMEOUT, err);
}

void rb_barrier__report_progress(rb_waiter *w, const rb_round_reply *rr,
                                 int force)
{
    const char *ids[64];
    rb_progress p;
    long long now = rb_now_ms();
    size_t i;

    if (!w->o->progress || (!force && now < w->progress_at))
        return;
    w->progress_at = now + (w->o->progress_ms > 0 ? w->o->progress_ms : 0);
    memset(&p, 0, sizeof(p));
    p.gen = w->gen_n;
    p.count = rr ? rr->count : w->count;
    p.n = rr && rr->n > 0 ? rr->n : w->n;
    p.waited_ms = now - w->started;
    if (rr && rr->members_count <= sizeof(ids) / sizeof(ids[0])) {
        for (i = 0; i < rr->members_count; i++)
            ids[i] = rr->members[i]->str;
        p.members = rr->members_count ? ids : NULL;
        p.members_count = rr->members_count;
    }
    w->o->progress(&p, w->o->payload);
}

/* One heartbeat. Returns 1 when the round ended (rc in *rc), 0 to go on. */
int rb_barrier__heartbeat(rb_waiter *w, int *rc, rb_error *err)
{
    const char *keys[4] = { w->base, w->in_key, w->out_key, w->nonce_key };
    const char *args[6] = { w->gen, w->o->id, w->lease_text, w->linger,
                            w->ttl, "1" };
    rb_call call = rb_barrier__call_beat(w);
    redisReply *r = NULL;
    rb_round_reply rr;

    /* The members are listed only for progress that names the missing. */
    *rc = rb_script__run(w->c, RB_SCRIPT_HEARTBEAT, keys, args,
                         w->o->expect && w->o->progress ? 6 : 5, &call, &r,
                         err);
    if (*rc != RB_OK) {
        *rc = rb_barrier__script_failed(w->o->name, &call, *rc, err);
        return 1;
    }
    if (rb_reply__round(r, &rr) != RB_OK ||
        (rr.kind != RB_ROUND_WAIT && rr.kind != RB_ROUND_OUT &&
         rr.kind != RB_ROUND_LOST)) {
        *rc = rb_barrier__bad_reply(w, "heartbeat", err);
    } else if (rr.kind == RB_ROUND_WAIT) {
        rb_barrier__report_progress(w, &rr, 0);
        freeReplyObject(r);
        return 0;
    } else if (rr.kind == RB_ROUND_OUT) {
        *rc = rb_barrier__outcome(w->o->name, w->gen, rr.text, err);
    } else {
        *rc = rb_error__set(err, RB_ELOST,
                            "%s: barrier state lost (round %s and its "
                            "members are gone: was Redis restarted without "
                            "persistence?)", w->o->name, w->gen);
    }
    freeReplyObject(r);
    return 1;
}
