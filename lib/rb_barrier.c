/*
 * Barriers. A round is a generation: parties arrive by one script, block on
 * the round's out list with a rotating BLMOVE (the outcome stays, so every
 * waiter and every late retry reads the same one), and between blocking
 * slices renew their lease by one heartbeat script. Nobody polls: a round's
 * completing arrival wakes every waiter at once, and an idle party costs
 * two commands per slice (lease/3) whatever n is.
 *
 * rb_barrier_wait reads as its steps: arrive (the one step that must reach
 * a known end), then either wait for the outcome or, for the party whose
 * arrival completed a --once round, run the command and release the
 * others. Replies are decoded by the pure functions of rb_reply.c.
 */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_reply.h"
#include "rb_script.h"

#define RB_LINGER_MAX_S 300   /* ended rounds stay readable this long */
/* Abandoning gets this long, uncancellable: the break must reach the
 * others. */
#define RB_ABANDON_GRACE_MS 2000

typedef struct waiter {
    rb_conn *c;
    const rb_wait_opts *o;
    rb_wait_result *res;
    char base[RB_KEY_MAX];
    char nonce_key[RB_KEY_MAX];
    char in_key[RB_KEY_MAX];
    char out_key[RB_KEY_MAX];
    char gen[24];
    char lease_text[24];
    char linger[24];
    char ttl[24];
    long long gen_n;
    long n;
    long count;               /* parties in the round at arrival */
    long long lease_ms;
    long long slice_ms;
    rb_deadline party;        /* this party's --timeout (until 0: none) */
    long long started;
    long long progress_at;    /* when progress is next due */
    int cut;                  /* the last slice was cut at the deadline */
} waiter;

/* ---- how long each call may try (the one place this file says it) ---- */

/* A party cut off from Redis for longer than its lease is presumed dead by
 * the others, so its calls stop trying then. With --replicas a call may
 * have run on the master and only wait for a replica to acknowledge it:
 * after a Sentinel failover the new master has none until the old one
 * rejoins (about 11 s). Giving up at a shorter lease would fail a party
 * whose arrival completed the round that the others pass; resending is
 * harmless (the nonce), and a party that was in fact cut off learns from
 * the round's outcome that its lease ran out. */
static long long resend_until(const waiter *w)
{
    long long window = rb_conn__ack_window_ms(w->c);

    return rb_now_ms() + (window > w->lease_ms ? window : w->lease_ms);
}

static rb_call call_arrive(const waiter *w)
{
    /* Not cancellable: once sent, the arrival must be known, so that an
     * interrupted party can break the round it is in. */
    rb_call call = {
        .deadline = rb_deadline__sooner(w->party, resend_until(w)),
        .fault = RB_FAULT_ARRIVE_REPLY,
    };

    return call;
}

static rb_call call_beat(const waiter *w)
{
    rb_call call = {
        .deadline = rb_deadline__sooner(w->party, resend_until(w)),
        .cancellable = 1,
    };

    return call;
}

/* One blocking slice: one attempt (see block_slice). */
static rb_call call_block(long long slice_ms)
{
    rb_call call = {
        .deadline = rb_deadline__once(),
        .block_ms = (int)slice_ms,
        .cancellable = 1,
    };

    return call;
}

/* The last slice before this party's --timeout: Redis' blocking timeouts
 * tick at 100 ms (a 0.3 s BLMOVE returns after about 0.4 s), so the slice
 * asks the server for a little more than the time left and the client
 * cuts the call at the deadline itself. */
#define RB_LAST_SLICE_EXTRA_MS 250

static rb_call call_last_block(const waiter *w, long long slice_ms)
{
    rb_call call = {
        .deadline = rb_deadline__exact(w->party.until_ms),
        .block_ms = (int)(slice_ms + RB_LAST_SLICE_EXTRA_MS),
        .cancellable = 1,
    };

    return call;
}

/* After the client cut the last slice at the deadline it has not heard
 * from the server for a while: a server that hung must not hold a party
 * that timed out much longer than its --timeout. */
#define RB_CUT_GRACE_MS 1000

static rb_call call_grace(const waiter *w)
{
    rb_call call = {
        .deadline = rb_deadline__within(rb_now_ms(),
                                        w->cut ? RB_CUT_GRACE_MS
                                               : RB_ABANDON_GRACE_MS),
    };

    return call;
}

static rb_call call_admin(const rb_conn *c)
{
    rb_call call = {
        .deadline = rb_conn__op_deadline(c),
        .cancellable = 1,
    };

    return call;
}

/* ---- outcomes and messages ---- */

static int outcome(const waiter *w, const char *text, rb_error *err)
{
    const char *reason = NULL;
    int v = rb_reply__outcome(text, &reason);

    if (v == 1)
        return RB_OK;
    if (v == 0)
        return rb_error__set(err, RB_EBROKEN, "%s: round %s broken: %s",
                             w->o->name, w->gen, reason);
    return rb_error__set(err, RB_EPROTO, "%s: unknown outcome '%.100s'",
                         w->o->name, text ? text : "");
}

static int bad_reply(const waiter *w, const char *script, rb_error *err)
{
    return rb_error__set(err, RB_EPROTO, "%s: bad %s reply", w->o->name,
                         script);
}

/* A Redis error naming a key of the wrong type: say what repairs it. */
static int script_failed(const char *name, const rb_call *call, int rc,
                         rb_error *err)
{
    if (rc == RB_EREDIS && call->reply_err == RB_REPLY_WRONGTYPE)
        return rb_error__set(err, RB_EREDIS, "%s: a key of this barrier "
                             "holds a value of the wrong type (not written "
                             "by rbarrier?); a reset of the barrier "
                             "removes it", name);
    if (rc == RB_EREDIS && call->reply_err == RB_REPLY_DAMAGED) {
        char msg[sizeof(err->msg)];

        snprintf(msg, sizeof(msg), "%s", err->msg + 4);
        return rb_error__set(err, RB_EREDIS, "%s: %s", name, msg);
    }
    return rc;
}

/* Leave the round early; an outcome already there wins. `code` is what this
 * party reports when it did break the round. form "arrivals": the reason
 * names this party and who had arrived; "plain": what, as given. */
static int abandon(waiter *w, const char *what, const char *form, int code,
                   rb_error *err)
{
    const char *keys[3] = { w->base, w->in_key, w->out_key };
    const char *args[6] = { w->gen, w->o->id, what, w->linger, form,
                            w->o->expect };
    rb_call call = call_grace(w);
    redisReply *r = NULL;
    rb_round_reply rr;
    rb_error aerr = { RB_EPROTO, "unexpected reply" };
    const char *reason;
    size_t idlen = strlen(w->o->id);
    int rc;

    rc = rb_script__run(w->c, RB_SCRIPT_ABANDON, keys, args,
                        w->o->expect ? 6 : 5, &call, &r, &aerr);
    if (rc == RB_EUNREACHABLE && code == RB_ETIMEOUT) {
        /* Redis went away or hung: that, not the timeout, is the news
         * (nobody could be told, and nobody else can pass either). */
        return rb_error__set(err, RB_EUNREACHABLE, "%s", aerr.msg);
    }
    if (rc != RB_OK || rb_reply__round(r, &rr) != RB_OK ||
        rr.kind == RB_ROUND_WAIT) {
        freeReplyObject(r);
        return rb_error__set(err, code, "%s: %s (and could not tell the "
                             "others: %s)", w->o->name, what, aerr.msg);
    }
    if (rr.kind == RB_ROUND_OUT) {
        rc = outcome(w, rr.text, err);
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

static int timed_out(waiter *w, rb_error *err)
{
    char what[96];

    snprintf(what, sizeof(what), "timed out after %gs", w->o->timeout_s);
    return abandon(w, what, "arrivals", RB_ETIMEOUT, err);
}

/* ---- the steps ---- */

static int check_wait_opts(const rb_wait_opts *o, rb_error *err)
{
    int rc;

    if ((rc = rb_check_name(o->name, "barrier name", err)) != RB_OK)
        return rc;
    if ((rc = rb_check_id(o->id, "party id", err)) != RB_OK)
        return rc;
    if (o->prefix && (rc = rb_check_name(o->prefix, "prefix", err)) != RB_OK)
        return rc;
    if (o->n < 1 || o->n > RB_N_MAX)
        return rb_error__set(err, RB_EINVAL, "n must be 1..%d, not %ld",
                             RB_N_MAX, o->n);
    if (o->timeout_s < 0)
        return rb_error__set(err, RB_EINVAL, "timeout must not be negative");
    if (o->lease_s < 0)
        return rb_error__set(err, RB_EINVAL, "lease must not be negative");
    if (o->ttl_s < 0)
        return rb_error__set(err, RB_EINVAL, "ttl must not be negative");
    if (o->once && (!o->once->start || !o->once->wait || !o->once->kill))
        return rb_error__set(err, RB_EINVAL, "once: start, wait and kill "
                             "are all needed");
    if (o->value) {
        size_t i, len = strlen(o->value);

        if (len == 0 || len > 200)
            return rb_error__set(err, RB_EINVAL, "value must be 1..200 "
                                 "bytes");
        for (i = 0; i < len; i++)
            if ((unsigned char)o->value[i] < 0x20 || o->value[i] == 0x7f)
                return rb_error__set(err, RB_EINVAL, "value must not hold "
                                     "control characters");
    }
    if (o->expect) {
        const char *p = o->expect, *idp = NULL;
        size_t idlen = strlen(o->id);
        long count = 0;

        if (strlen(o->expect) > 100000)
            return rb_error__set(err, RB_EINVAL, "expected ids too long");
        while (*p) {
            size_t len = strcspn(p, ",");

            if (len == 0 || len > RB_NAME_MAX ||
                strcspn(p, " \t\r\n{}") < len)
                return rb_error__set(err, RB_EINVAL, "bad expected id list");
            if (len == idlen && memcmp(p, o->id, len) == 0)
                idp = p;
            count++;
            p += len;
            if (*p == ',')
                p++;
        }
        if (idp == NULL)
            return rb_error__set(err, RB_EINVAL, "id '%s' is not one of the "
                                 "expected ids", o->id);
        if (count != o->n)
            return rb_error__set(err, RB_EINVAL, "%ld expected ids but n is "
                                 "%ld", count, o->n);
    }
    return RB_OK;
}

static int setup(waiter *w, rb_conn *c, const rb_wait_opts *o,
                 rb_wait_result *res, rb_error *err)
{
    long long ttl;
    int rc;

    if ((rc = check_wait_opts(o, err)) != RB_OK)
        return rc;
    memset(w, 0, sizeof(*w));
    w->c = c;
    w->o = o;
    w->res = res;
    w->n = o->n;
    w->started = rb_now_ms();
    w->party = rb_deadline__until(
        o->timeout_s > 0
            ? w->started + (long long)(o->timeout_s * 1000.0 + 0.5)
            : 0);
    w->lease_ms = o->lease_s > 0 ? (long long)(o->lease_s * 1000.0 + 0.5)
                                 : 10000;
    if (w->lease_ms < 30)
        w->lease_ms = 30;
    w->slice_ms = w->lease_ms / 3;
    if (o->progress && o->progress_ms > 0 && o->progress_ms < w->slice_ms)
        w->slice_ms = o->progress_ms;
    ttl = o->ttl_s > 0 ? o->ttl_s : 86400;
    if ((rc = rb_key__barrier(w->base, sizeof(w->base), o->prefix, o->name,
                              err)) != RB_OK ||
        (rc = rb_key__nonces(w->nonce_key, sizeof(w->nonce_key), w->base,
                             err)) != RB_OK)
        return rc;
    snprintf(w->lease_text, sizeof(w->lease_text), "%lld", w->lease_ms);
    snprintf(w->linger, sizeof(w->linger), "%lld",
             ttl < RB_LINGER_MAX_S ? ttl : RB_LINGER_MAX_S);
    snprintf(w->ttl, sizeof(w->ttl), "%lld", ttl);
    return RB_OK;
}

/* The arrival: one script call that must reach a known end (a lost reply
 * is resent with the same nonce, and the script answers it as the first
 * time). Fills the round's keys and the result. */
static int arrive(waiter *w, rb_arrive_reply *a, rb_error *err)
{
    const rb_wait_opts *o = w->o;
    char nonce[33], n_text[24];
    const char *keys[2] = { w->base, w->nonce_key };
    const char *args[8];
    rb_call call = call_arrive(w);
    redisReply *r = NULL;
    int rc;

    rb_random_hex(nonce, 16);
    snprintf(n_text, sizeof(n_text), "%ld", o->n);
    args[0] = o->id;
    args[1] = nonce;
    args[2] = n_text;
    args[3] = w->lease_text;
    args[4] = w->ttl;
    args[5] = w->linger;
    args[6] = o->once ? "1" : "0";
    args[7] = o->value;
    rc = rb_script__run(w->c, RB_SCRIPT_ARRIVE, keys, args,
                        o->value ? 8 : 7, &call, &r, err);
    if (rc != RB_OK)
        return script_failed(o->name, &call, rc, err);
    rc = rb_reply__arrive(r, a);
    freeReplyObject(r);
    if (rc != RB_OK)
        return bad_reply(w, "arrive", err);
    if (a->kind == RB_ARRIVE_BADN)
        return rb_error__set(err, RB_EINVAL,
                             "%s: the open round has n=%ld; this party said "
                             "n=%ld (nothing written)", o->name, a->open_n,
                             o->n);
    w->gen_n = a->gen;
    w->count = a->count;
    snprintf(w->gen, sizeof(w->gen), "%lld", a->gen);
    if ((rc = rb_key__round(w->in_key, sizeof(w->in_key), w->base, a->gen,
                            "in", err)) != RB_OK ||
        (rc = rb_key__round(w->out_key, sizeof(w->out_key), w->base, a->gen,
                            "out", err)) != RB_OK)
        return rc;
    if (w->res) {
        w->res->gen = a->gen;
        w->res->count = a->count;
        w->res->n = o->n;
        w->res->completed = a->kind != RB_ARRIVE_WAIT;
        w->res->index = a->index;
        w->res->duplicate = a->dup;
    }
    return RB_OK;
}

static void report_progress(waiter *w, const rb_round_reply *rr, int force)
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
static int heartbeat(waiter *w, int *rc, rb_error *err)
{
    const char *keys[4] = { w->base, w->in_key, w->out_key, w->nonce_key };
    const char *args[6] = { w->gen, w->o->id, w->lease_text, w->linger,
                            w->ttl, "1" };
    rb_call call = call_beat(w);
    redisReply *r = NULL;
    rb_round_reply rr;

    *rc = rb_script__run(w->c, RB_SCRIPT_HEARTBEAT, keys, args,
                         w->o->expect ? 6 : 5, &call, &r, err);
    if (*rc != RB_OK) {
        *rc = script_failed(w->o->name, &call, *rc, err);
        return 1;
    }
    if (rb_reply__round(r, &rr) != RB_OK || rr.kind == RB_ROUND_BROKEN) {
        *rc = bad_reply(w, "heartbeat", err);
    } else if (rr.kind == RB_ROUND_WAIT) {
        report_progress(w, &rr, 0);
        freeReplyObject(r);
        return 0;
    } else if (rr.kind == RB_ROUND_OUT) {
        *rc = outcome(w, rr.text, err);
    } else {
        *rc = rb_error__set(err, RB_ELOST,
                            "%s: barrier state lost (round %s and its "
                            "members are gone: was Redis restarted without "
                            "persistence?)", w->o->name, w->gen);
    }
    freeReplyObject(r);
    return 1;
}

/* One blocking slice on the out list. Returns 1 with *rc when the round
 * ended or the call failed; 0 when the slice ran out or was cut.
 *
 * The slice is one attempt: when its connection drops (or the server stops
 * answering) it is not resent, the caller's heartbeat comes next. That
 * heartbeat reconnects for the full window, counted from the drop rather
 * than from the start of the slice, and on a server that restarted empty
 * it answers 'lost' at once, where a resent BLMOVE would first block a
 * whole slice on a list that will never be filled. It also means a BLMOVE
 * only ever runs on a connection where this party's entry was just seen,
 * never first thing on a new server. */
static int block_slice(waiter *w, long long slice_ms, int last, int *rc,
                       rb_error *err)
{
    char secs[32];
    const char *argv[6];
    size_t lens[6];
    int argc, i;
    rb_call call = last ? call_last_block(w, slice_ms) : call_block(slice_ms);
    redisReply *r = NULL;
    const char *text;

    if (!rb_conn__no_blmove(w->c)) {
        snprintf(secs, sizeof(secs), "%.3f", (double)call.block_ms / 1000.0);
        argv[0] = "BLMOVE";
        argv[1] = w->out_key;
        argv[2] = w->out_key;
        argv[3] = "LEFT";
        argv[4] = "LEFT";
        argv[5] = secs;
        argc = 6;
    } else {
        /* Servers before 6.0 take whole seconds only. */
        snprintf(secs, sizeof(secs), "%lld",
                 ((long long)call.block_ms + 999) / 1000);
        argv[0] = "BRPOPLPUSH";
        argv[1] = w->out_key;
        argv[2] = w->out_key;
        argv[3] = secs;
        argc = 4;
    }
    for (i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    *rc = rb_conn__call(w->c, argc, argv, lens, &call, &r, err);
    if (*rc == RB_EREDIS && !rb_conn__no_blmove(w->c) &&
        call.reply_err == RB_REPLY_UNKNOWN_COMMAND) {
        rb_conn__set_no_blmove(w->c);
        return block_slice(w, slice_ms, last, rc, err);
    }
    if (*rc == RB_EUNREACHABLE)
        return 0;
    if (*rc != RB_OK)
        return 1;
    if (rb_reply__block(r, &text) != RB_OK)
        *rc = rb_error__set(err, RB_EPROTO, "%s: bad reply to %s",
                            w->o->name, argv[0]);
    else if (text == NULL) {
        freeReplyObject(r);
        return 0;
    } else
        *rc = outcome(w, text, err);
    freeReplyObject(r);
    return 1;
}

/* Block until the round has an outcome, this party's deadline passes or
 * it is cancelled. */
static int wait_loop(waiter *w, rb_error *err)
{
    int rc;

    if (w->o->progress && w->o->expect) {
        /* Progress that names the missing ids needs the members: look at
         * the round once before blocking (on terminals only). */
        if (heartbeat(w, &rc, err)) {
            if (rc == RB_ECANCELED)
                return abandon(w, "interrupted", "arrivals", RB_ECANCELED,
                               err);
            return rc;
        }
    } else {
        report_progress(w, NULL, 1);
    }
    for (;;) {
        long long now = rb_now_ms(), slice = w->slice_ms;
        int last = 0;

        if (rb_deadline__over(&w->party, now))
            return timed_out(w, err);
        if (rb_deadline__left(&w->party, now) <= slice) {
            slice = rb_deadline__left(&w->party, now);
            last = 1;
        }
        if (block_slice(w, slice, last, &rc, err)) {
            if (rc == RB_ETIMEOUT) {
                w->cut = 1;
                return timed_out(w, err);
            }
            if (rc == RB_ECANCELED)
                return abandon(w, "interrupted", "arrivals", RB_ECANCELED,
                               err);
            return rc;
        }
        /* The slice ran out, or the connection was cut and remade (the
         * out list may be gone with a restarted server): look again. */
        if (heartbeat(w, &rc, err)) {
            if (rc == RB_ECANCELED)
                return abandon(w, "interrupted", "arrivals", RB_ECANCELED,
                               err);
            return rc;
        }
    }
}

/* Pass the round after this party's --once command succeeded. */
static int release(waiter *w, rb_error *err)
{
    const char *keys[3] = { w->base, w->in_key, w->out_key };
    const char *args[3] = { w->gen, w->o->id, w->linger };
    rb_call call = call_grace(w);
    redisReply *r = NULL;
    rb_round_reply rr;
    int rc;

    rc = rb_script__run(w->c, RB_SCRIPT_RELEASE, keys, args, 3, &call, &r,
                        err);
    if (rc != RB_OK)
        return script_failed(w->o->name, &call, rc, err);
    if (rb_reply__round(r, &rr) != RB_OK || rr.kind != RB_ROUND_OUT)
        rc = bad_reply(w, "release", err);
    else
        rc = outcome(w, rr.text, err);
    freeReplyObject(r);
    return rc;
}

/* This party completed a --once round: run the command while the others
 * stay blocked, keep this party's lease alive, then pass or break it. */
static int run_once(waiter *w, const rb_arrive_reply *a, rb_error *err)
{
    const rb_once_ops *ops = w->o->once;
    void *payload = w->o->once_payload;
    rb_once_info info;
    char what[160];
    long long next_beat;
    int rc, status = 0, ended;

    info.name = w->o->name;
    info.gen = a->gen;
    info.n = a->n;
    info.id = w->o->id;
    info.index = a->index;
    if (w->res)
        w->res->ran_once = 1;
    rc = ops->start(&info, payload, err);
    if (rc != RB_OK) {
        rb_error msg = *err;

        if (w->res)
            w->res->once_status = 127;
        snprintf(what, sizeof(what), "once-command could not start on %s",
                 w->o->id);
        abandon(w, what, "plain", RB_EBROKEN, err);
        return rb_error__set(err, RB_EBROKEN, "%s: %s", w->o->name,
                             msg.msg);
    }
    next_beat = rb_now_ms() + w->slice_ms;
    for (;;) {
        long long now = rb_now_ms(), step = next_beat - now;

        if (rb_deadline__over(&w->party, now)) {
            ops->kill(payload);
            return timed_out(w, err);
        }
        if (rb_deadline__left(&w->party, now) < step)
            step = rb_deadline__left(&w->party, now);
        ended = ops->wait(payload, (int)(step > 0 ? step : 0), &status);
        if (ended != 0)
            break;
        if (rb_conn__cancelled(w->c)) {
            ops->kill(payload);
            return abandon(w, "interrupted", "arrivals", RB_ECANCELED, err);
        }
        if (rb_now_ms() >= next_beat) {
            if (heartbeat(w, &rc, err)) {
                /* Broken meanwhile (another party's lease or timeout, a
                 * reset): the command's result no longer matters. */
                ops->kill(payload);
                if (rc == RB_ECANCELED)
                    return abandon(w, "interrupted", "arrivals",
                                   RB_ECANCELED, err);
                return rc;
            }
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
    rc = abandon(w, what, "plain", RB_EBROKEN, err);
    return rc;
}

/* After a pass: the round's values, in arrival order. */
static int read_values(waiter *w, rb_error *err)
{
    char key[RB_KEY_MAX];
    const char *argv[4] = { "LRANGE", key, "0", "-1" };
    size_t lens[4], i, count;
    rb_call call = call_admin(w->c);
    redisReply *r = NULL, **items;
    int rc;

    if ((rc = rb_key__round(key, sizeof(key), w->base, w->gen_n, "val",
                            err)) != RB_OK)
        return rc;
    for (i = 0; i < 4; i++)
        lens[i] = strlen(argv[i]);
    rc = rb_conn__call(w->c, 4, argv, lens, &call, &r, err);
    if (rc != RB_OK)
        return script_failed(w->o->name, &call, rc, err);
    if (rb_reply__strings(r, &items, &count) != RB_OK) {
        freeReplyObject(r);
        return bad_reply(w, "value list", err);
    }
    if (count) {
        w->res->values = calloc(count, sizeof(char *));
        if (w->res->values == NULL) {
            freeReplyObject(r);
            return rb_error__set(err, RB_ENOMEM, "out of memory");
        }
    }
    for (i = 0; i < count; i++) {
        w->res->values[i] = malloc(items[i]->len + 1);
        if (w->res->values[i] == NULL) {
            freeReplyObject(r);
            return rb_error__set(err, RB_ENOMEM, "out of memory");
        }
        memcpy(w->res->values[i], items[i]->str, items[i]->len + 1);
        w->res->values_count = i + 1;
    }
    freeReplyObject(r);
    return RB_OK;
}

int rb_barrier_wait(rb_wait_result *res, rb_conn *c, const rb_wait_opts *o,
                    rb_error *err)
{
    rb_error local;
    rb_arrive_reply a;
    waiter w;
    int rc;

    if (err == NULL)
        err = &local;
    if (res)
        memset(res, 0, sizeof(*res));
    if ((rc = setup(&w, c, o, res, err)) != RB_OK)
        return rc;

    /* Connect first, and let a signal cut that: nothing is sent yet, so
     * leaving is safe, where the arrival itself must run to a known end. */
    {
        rb_deadline reach = rb_conn__reach(c, w.party.until_ms);

        rc = rb_conn__connect(c, &reach, err);
    }
    if (rc == RB_ECANCELED)
        return rb_error__set(err, rc, "%s: interrupted before arriving",
                             o->name);
    if (rc != RB_OK)
        return rc;

    if ((rc = arrive(&w, &a, err)) != RB_OK)
        return rc;
    if (a.kind == RB_ARRIVE_RUN)
        rc = run_once(&w, &a, err);
    else if (a.kind == RB_ARRIVE_WAIT)
        rc = wait_loop(&w, err);
    if (res)
        res->waited_ms = rb_now_ms() - w.started;
    if (rc == RB_OK && o->value && res)
        rc = read_values(&w, err);
    return rc;
}

void rb_wait_result_clear(rb_wait_result *res)
{
    size_t i;

    if (res == NULL)
        return;
    for (i = 0; i < res->values_count; i++)
        free(res->values[i]);
    free(res->values);
    res->values = NULL;
    res->values_count = 0;
}

int rb_barrier_status(rb_status *out, rb_conn *c, const char *prefix,
                      const char *name, rb_error *err)
{
    rb_error local;
    char base[RB_KEY_MAX];
    const char *keys[1] = { base };
    rb_call call = call_admin(c);
    redisReply *r = NULL;
    int rc;

    if (err == NULL)
        err = &local;
    memset(out, 0, sizeof(*out));
    if ((rc = rb_check_name(name, "barrier name", err)) != RB_OK)
        return rc;
    if ((rc = rb_key__barrier(base, sizeof(base), prefix, name, err)))
        return rc;
    rc = rb_script__run(c, RB_SCRIPT_STATUS, keys, NULL, 0, &call, &r, err);
    if (rc != RB_OK)
        return script_failed(name, &call, rc, err);
    rc = rb_reply__status(r, out);
    freeReplyObject(r);
    if (rc == RB_ENOMEM)
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    if (rc != RB_OK)
        return rb_error__set(err, RB_EPROTO, "%s: bad status reply", name);
    return RB_OK;
}

void rb_status_clear(rb_status *st)
{
    if (st == NULL)
        return;
    free(st->members);
    st->members = NULL;
    st->members_count = 0;
}

int rb_barrier_reset(rb_reset_result *out, rb_conn *c, const char *prefix,
                     const char *name, long ttl_s, rb_error *err)
{
    rb_error local;
    char base[RB_KEY_MAX], nonce_key[RB_KEY_MAX], linger[24], ttl[24];
    const char *keys[2] = { base, nonce_key };
    const char *args[2] = { linger, ttl };
    rb_call call = call_admin(c);
    redisReply *r = NULL;
    rb_reset_reply rs;
    long t = ttl_s > 0 ? ttl_s : 86400;
    size_t i, used = 0;
    int rc;

    if (err == NULL)
        err = &local;
    if (out)
        memset(out, 0, sizeof(*out));
    if ((rc = rb_check_name(name, "barrier name", err)) != RB_OK)
        return rc;
    if ((rc = rb_key__barrier(base, sizeof(base), prefix, name, err)) ||
        (rc = rb_key__nonces(nonce_key, sizeof(nonce_key), base, err)))
        return rc;
    snprintf(linger, sizeof(linger), "%ld",
             t < RB_LINGER_MAX_S ? t : RB_LINGER_MAX_S);
    snprintf(ttl, sizeof(ttl), "%ld", t);
    rc = rb_script__run(c, RB_SCRIPT_RESET, keys, args, 2, &call, &r, err);
    if (rc != RB_OK)
        return rc;
    rc = rb_reply__reset(r, &rs);
    if (rc != RB_OK) {
        freeReplyObject(r);
        return rb_error__set(err, RB_EPROTO, "%s: bad reset reply", name);
    }
    if (out) {
        out->gen = rs.gen;
        out->members = rs.members;
        for (i = 0; i < rs.removed_count; i++) {
            int w = snprintf(out->removed + used, sizeof(out->removed) - used,
                             "%s%s", i ? ", " : "", rs.removed[i]->str);

            if (w < 0 || (size_t)w >= sizeof(out->removed) - used) {
                /* Say there was more rather than cut a key name. */
                snprintf(out->removed + (used < sizeof(out->removed) - 6
                                             ? used : sizeof(out->removed) - 6),
                         6, ", ...");
                break;
            }
            used += (size_t)w;
        }
    }
    freeReplyObject(r);
    return RB_OK;
}
