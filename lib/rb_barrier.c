/*
 * Barriers. A round is a generation: parties arrive by one script, block on
 * the round's out list with a rotating BLMOVE (the outcome stays, so every
 * waiter and every late retry reads the same one), and between blocking
 * slices renew their lease by one heartbeat script. Nobody polls: a round's
 * completing arrival wakes every waiter at once, and an idle party costs
 * two commands per slice (lease/3) whatever n is.
 */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_script.h"

#define RB_LINGER_MAX_S 300   /* ended rounds stay readable this long */
/* A deadline long past: the call is sent once and never retried. */
#define RB_ONE_ATTEMPT 1

typedef struct waiter {
    rb_conn *c;
    const rb_wait_opts *o;
    char base[RB_KEY_MAX];
    char nonce_key[RB_KEY_MAX];
    char in_key[RB_KEY_MAX];
    char out_key[RB_KEY_MAX];
    char gen[24];
    char lease_ms[24];
    char linger[24];
    char ttl[24];
    long long deadline;       /* 0: none */
    long long started;
} waiter;

static long long reply_int(const redisReply *r)
{
    if (r->type == REDIS_REPLY_INTEGER)
        return r->integer;
    if (r->type == REDIS_REPLY_STRING)
        return strtoll(r->str, NULL, 10);
    return -1;
}

static int is_array(const redisReply *r, size_t min)
{
    return r && r->type == REDIS_REPLY_ARRAY && r->elements >= min;
}

static int elem_is(const redisReply *r, size_t i, const char *s)
{
    return r->element[i]->type == REDIS_REPLY_STRING &&
           strcmp(r->element[i]->str, s) == 0;
}

static int outcome(const waiter *w, const char *text, rb_error *err)
{
    if (strcmp(text, "ok") == 0)
        return RB_OK;
    if (strncmp(text, "broken ", 7) == 0)
        return rb_error__set(err, RB_EBROKEN, "%s: round %s broken: %s",
                             w->o->name, w->gen, text + 7);
    return rb_error__set(err, RB_EPROTO, "%s: unknown outcome '%.100s'",
                         w->o->name, text);
}

/* Leave the round early; an outcome already there wins. `code` is what this
 * party reports when it did break the round. */
static int abandon(waiter *w, const char *what, int code, rb_error *err)
{
    const char *keys[3] = { w->base, w->in_key, w->out_key };
    const char *args[5] = { w->gen, w->o->id, what, w->linger, "arrivals" };
    rb_call call = { 0, 0, 0, RB_FAULT_NONE };
    redisReply *r = NULL;
    rb_error aerr = { RB_EPROTO, "unexpected reply to abandon" };
    int rc;

    /* A short, uncancellable grace: the break must reach the others. */
    call.deadline_ms = rb_now_ms() + 2000;
    rc = rb_script__run(w->c, RB_SCRIPT_ABANDON, keys, args, 5, &call, &r,
                        &aerr);
    if (rc == RB_OK && is_array(r, 2) && elem_is(r, 0, "out") &&
        r->element[1]->type == REDIS_REPLY_STRING) {
        rc = outcome(w, r->element[1]->str, err);
        freeReplyObject(r);
        return rc;
    }
    if (rc == RB_OK && is_array(r, 2) && elem_is(r, 0, "broken") &&
        r->element[1]->type == REDIS_REPLY_STRING) {
        /* "broken <id> timed out after 1s (1/2 arrived: ...)": say it
         * from this party's side, without its own id. */
        const char *reason = r->element[1]->str + 7;
        size_t idlen = strlen(w->o->id);

        if (strncmp(reason, w->o->id, idlen) == 0 && reason[idlen] == ' ')
            reason += idlen + 1;
        rb_error__set(err, code, "%s: %s", w->o->name, reason);
        freeReplyObject(r);
        return code;
    }
    freeReplyObject(r);
    return rb_error__set(err, code, "%s: %s (and could not tell the others: "
                         "%s)", w->o->name, what, aerr.msg);
}

static void timed_out_text(const waiter *w, char *buf, size_t len)
{
    snprintf(buf, len, "timed out after %gs", w->o->timeout_s);
}

/* One heartbeat. Returns 1 when the round ended (rc in *rc), 0 to go on. */
static int heartbeat(waiter *w, rb_progress *prog, int *rc, rb_error *err)
{
    const char *keys[4] = { w->base, w->in_key, w->out_key, w->nonce_key };
    const char *args[5] = { w->gen, w->o->id, w->lease_ms, w->linger,
                            w->ttl };
    rb_call call = { 0, 0, 1, RB_FAULT_NONE };
    redisReply *r = NULL;

    call.deadline_ms = w->deadline;
    *rc = rb_script__run(w->c, RB_SCRIPT_HEARTBEAT, keys, args, 5, &call, &r,
                         err);
    if (*rc != RB_OK)
        return 1;
    if (is_array(r, 2) && elem_is(r, 0, "out") &&
        r->element[1]->type == REDIS_REPLY_STRING) {
        *rc = outcome(w, r->element[1]->str, err);
    } else if (is_array(r, 3) && elem_is(r, 0, "wait")) {
        prog->count = (long)reply_int(r->element[1]);
        prog->n = (long)reply_int(r->element[2]);
        freeReplyObject(r);
        return 0;
    } else if (is_array(r, 1) && elem_is(r, 0, "lost")) {
        *rc = rb_error__set(err, RB_ELOST,
                            "%s: barrier state lost (round %s and its "
                            "members are gone: was Redis restarted without "
                            "persistence?)", w->o->name, w->gen);
    } else {
        *rc = rb_error__set(err, RB_EPROTO, "%s: bad heartbeat reply",
                            w->o->name);
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
static int block_slice(waiter *w, long long slice_ms, int *rc, rb_error *err)
{
    char secs[32];
    const char *argv[6];
    size_t lens[6];
    int argc, i;
    rb_call call = { 0, 0, 1, RB_FAULT_NONE };
    redisReply *r = NULL;

    call.block_ms = (int)slice_ms;
    call.deadline_ms = RB_ONE_ATTEMPT;
    if (!rb_conn__no_blmove(w->c)) {
        snprintf(secs, sizeof(secs), "%.3f", (double)slice_ms / 1000.0);
        argv[0] = "BLMOVE";
        argv[1] = w->out_key;
        argv[2] = w->out_key;
        argv[3] = "LEFT";
        argv[4] = "LEFT";
        argv[5] = secs;
        argc = 6;
    } else {
        /* Servers before 6.0 take whole seconds only. */
        snprintf(secs, sizeof(secs), "%lld", (slice_ms + 999) / 1000);
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
        strstr(err->msg, "unknown command")) {
        rb_conn__set_no_blmove(w->c);
        return block_slice(w, slice_ms, rc, err);
    }
    if (*rc == RB_EUNREACHABLE)
        return 0;
    if (*rc != RB_OK)
        return 1;
    if (r->type == REDIS_REPLY_NIL) {
        freeReplyObject(r);
        return 0;
    }
    if (r->type == REDIS_REPLY_STRING)
        *rc = outcome(w, r->str, err);
    else
        *rc = rb_error__set(err, RB_EPROTO, "%s: bad reply to %s",
                            w->o->name, argv[0]);
    freeReplyObject(r);
    return 1;
}

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
    return RB_OK;
}

int rb_barrier_wait(rb_conn *c, const rb_wait_opts *o, rb_wait_result *res,
                    rb_error *err)
{
    rb_error local;
    waiter w;
    char nonce[33], n_text[24];
    const char *keys[2];
    const char *args[6];
    rb_call call = { 0, 0, 0, RB_FAULT_ARRIVE_REPLY };
    redisReply *r = NULL;
    rb_progress prog;
    long long lease_ms, slice_ms, ttl;
    int rc;

    if (err == NULL)
        err = &local;
    if ((rc = check_wait_opts(o, err)) != RB_OK)
        return rc;

    memset(&w, 0, sizeof(w));
    w.c = c;
    w.o = o;
    w.started = rb_now_ms();
    w.deadline = o->timeout_s > 0
                     ? w.started + (long long)(o->timeout_s * 1000.0 + 0.5)
                     : 0;
    lease_ms = o->lease_s > 0 ? (long long)(o->lease_s * 1000.0 + 0.5) : 10000;
    if (lease_ms < 30)
        lease_ms = 30;
    slice_ms = lease_ms / 3;
    ttl = o->ttl_s > 0 ? o->ttl_s : 86400;
    if ((rc = rb_key__barrier(w.base, sizeof(w.base), o->prefix, o->name,
                              err)) != RB_OK)
        return rc;
    if ((rc = rb_key__nonces(w.nonce_key, sizeof(w.nonce_key), w.base,
                             err)) != RB_OK)
        return rc;
    snprintf(w.lease_ms, sizeof(w.lease_ms), "%lld", lease_ms);
    snprintf(w.linger, sizeof(w.linger), "%lld",
             ttl < RB_LINGER_MAX_S ? ttl : RB_LINGER_MAX_S);
    snprintf(n_text, sizeof(n_text), "%ld", o->n);
    snprintf(w.ttl, sizeof(w.ttl), "%lld", ttl);
    rb_random_hex(nonce, 16);
    /* A waiter cut off for longer than its lease is presumed dead by the
     * others: there is no point reconnecting beyond that. */
    rb_conn__set_retry_window(c, (int)lease_ms);

    /* Connect first, and let a signal cut that: nothing is sent yet, so
     * leaving is safe, where the arrival itself must run to a known end. */
    rc = rb_conn_connect(c, w.deadline, err);
    if (rc == RB_ECANCELED)
        return rb_error__set(err, rc, "%s: interrupted before arriving",
                             o->name);
    if (rc != RB_OK)
        return rc;

    keys[0] = w.base;
    keys[1] = w.nonce_key;
    args[0] = o->id;
    args[1] = nonce;
    args[2] = n_text;
    args[3] = w.lease_ms;
    args[4] = w.ttl;
    args[5] = w.linger;
    /* Not cancellable: once sent, the arrival must be known, so that an
     * interrupted party can break the round it is in. */
    call.deadline_ms = w.deadline;
    rc = rb_script__run(c, RB_SCRIPT_ARRIVE, keys, args, 6, &call, &r, err);
    if (rc != RB_OK)
        return rc;
    if (is_array(r, 2) && elem_is(r, 0, "badn")) {
        rc = rb_error__set(err, RB_EINVAL,
                           "%s: the open round has n=%lld; this party said "
                           "n=%ld (nothing written)", o->name,
                           reply_int(r->element[1]), o->n);
        freeReplyObject(r);
        return rc;
    }
    if (!is_array(r, 4) || (r->element[1]->type != REDIS_REPLY_STRING &&
                            r->element[1]->type != REDIS_REPLY_INTEGER)) {
        freeReplyObject(r);
        return rb_error__set(err, RB_EPROTO, "%s: bad arrive reply", o->name);
    }
    snprintf(w.gen, sizeof(w.gen), "%lld", reply_int(r->element[1]));
    memset(&prog, 0, sizeof(prog));
    prog.gen = reply_int(r->element[1]);
    prog.count = (long)reply_int(r->element[2]);
    prog.n = o->n;
    if (res) {
        res->gen = prog.gen;
        res->count = prog.count;
        res->n = o->n;
        res->completed = elem_is(r, 0, "done");
    }
    if (elem_is(r, 0, "done")) {
        freeReplyObject(r);
        return RB_OK;
    }
    freeReplyObject(r);
    if ((rc = rb_key__round(w.in_key, sizeof(w.in_key), w.base, prog.gen,
                            "in", err)) != RB_OK ||
        (rc = rb_key__round(w.out_key, sizeof(w.out_key), w.base, prog.gen,
                            "out", err)) != RB_OK)
        return rc;

    for (;;) {
        long long now = rb_now_ms(), slice = slice_ms;
        char what[96];

        if (w.deadline) {
            if (now >= w.deadline) {
                timed_out_text(&w, what, sizeof(what));
                return abandon(&w, what, RB_ETIMEOUT, err);
            }
            if (w.deadline - now < slice)
                slice = w.deadline - now;
        }
        if (block_slice(&w, slice, &rc, err)) {
            if (rc == RB_ECANCELED)
                return abandon(&w, "interrupted", RB_ECANCELED, err);
            return rc;
        }
        /* The slice ran out, or the connection was cut and remade (the
         * out list may be gone with a restarted server): look again. */
        prog.waited_ms = rb_now_ms() - w.started;
        if (heartbeat(&w, &prog, &rc, err)) {
            if (rc == RB_ECANCELED)
                return abandon(&w, "interrupted", RB_ECANCELED, err);
            return rc;
        }
        if (o->progress)
            o->progress(&prog, o->payload);
    }
}

int rb_barrier_status(rb_conn *c, const char *prefix, const char *name,
                      rb_status *out, rb_error *err)
{
    rb_error local;
    char base[RB_KEY_MAX];
    const char *keys[1] = { base };
    rb_call call = { 0, 0, 1, RB_FAULT_NONE };
    redisReply *r = NULL;
    long long now;
    size_t i;
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
        return rc;
    if (!is_array(r, 4) || (r->elements - 4) % 2 != 0) {
        freeReplyObject(r);
        return rb_error__set(err, RB_EPROTO, "%s: bad status reply", name);
    }
    out->gen = reply_int(r->element[0]);
    out->n = (long)reply_int(r->element[1]);
    now = reply_int(r->element[2]);
    if (r->element[3]->type == REDIS_REPLY_STRING)
        snprintf(out->last_outcome, sizeof(out->last_outcome), "%s",
                 r->element[3]->str);
    out->members_count = (r->elements - 4) / 2;
    if (out->members_count) {
        out->members = calloc(out->members_count, sizeof(rb_member));
        if (out->members == NULL) {
            freeReplyObject(r);
            out->members_count = 0;
            return rb_error__set(err, RB_ENOMEM, "out of memory");
        }
    }
    for (i = 0; i < out->members_count; i++) {
        const redisReply *id = r->element[4 + 2 * i];
        const redisReply *score = r->element[5 + 2 * i];

        snprintf(out->members[i].id, sizeof(out->members[i].id), "%s",
                 id->type == REDIS_REPLY_STRING ? id->str : "?");
        out->members[i].lease_left_ms =
            (long long)strtod(score->type == REDIS_REPLY_STRING ? score->str
                                                                : "0",
                              NULL) - now;
    }
    freeReplyObject(r);
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

int rb_barrier_reset(rb_conn *c, const char *prefix, const char *name,
                     long ttl_s, long long *broken_gen, long *members,
                     rb_error *err)
{
    rb_error local;
    char base[RB_KEY_MAX], nonce_key[RB_KEY_MAX], linger[24], ttl[24];
    const char *keys[2] = { base, nonce_key };
    const char *args[2] = { linger, ttl };
    rb_call call = { 0, 0, 1, RB_FAULT_NONE };
    redisReply *r = NULL;
    long t = ttl_s > 0 ? ttl_s : 86400;
    int rc;

    if (err == NULL)
        err = &local;
    if ((rc = rb_check_name(name, "barrier name", err)) != RB_OK)
        return rc;
    if ((rc = rb_key__barrier(base, sizeof(base), prefix, name, err)))
        return rc;
    if ((rc = rb_key__nonces(nonce_key, sizeof(nonce_key), base, err)))
        return rc;
    snprintf(linger, sizeof(linger), "%ld",
             t < RB_LINGER_MAX_S ? t : RB_LINGER_MAX_S);
    snprintf(ttl, sizeof(ttl), "%ld", t);
    rc = rb_script__run(c, RB_SCRIPT_RESET, keys, args, 2, &call, &r, err);
    if (rc != RB_OK)
        return rc;
    if (!is_array(r, 2)) {
        freeReplyObject(r);
        return rb_error__set(err, RB_EPROTO, "%s: bad reset reply", name);
    }
    if (broken_gen)
        *broken_gen = reply_int(r->element[0]);
    if (members)
        *members = (long)reply_int(r->element[1]);
    freeReplyObject(r);
    return RB_OK;
}
