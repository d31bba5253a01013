/*
 * Barriers: arrival and the wait loop. A round is a generation: parties
 * arrive by one script, block on the round's out list with a rotating
 * BLMOVE (the outcome stays, so every waiter and every late retry reads the
 * same one), and between blocking slices renew their lease by one
 * heartbeat script. Nobody polls: a round's completing arrival wakes every
 * waiter at once, and an idle party costs two commands per slice (lease/3)
 * whatever n is.
 *
 * rb_barrier_wait reads as its steps: arrive (the one step that must reach
 * a known end, or be withdrawn), then either wait for the outcome or, for
 * the party whose arrival completed a --once round, run the command
 * (rb_barrier_once.c). Status and reset are in rb_barrier_status.c; reply
 * decoders in rb_reply.c.
 */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_barrier.h"
#include "rb_script.h"

/* ---- how long each call may try (the one place this module says it) ---- */

static rb_call call_arrive(const rb_waiter *w)
{
    /* Not cancellable: once sent, the arrival must be known, so that an
     * interrupted party can break the round it is in. */
    rb_call call = {
        .deadline = rb_deadline__sooner(w->party, rb_barrier__resend_until(w)),
        .fault = RB_FAULT_ARRIVE_REPLY,
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

static rb_call call_last_block(const rb_waiter *w, long long slice_ms)
{
    rb_call call = {
        .deadline = rb_deadline__exact(w->party.until_ms),
        .block_ms = (int)(slice_ms + RB_LAST_SLICE_EXTRA_MS),
        .cancellable = 1,
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

/* ---- the steps ---- */

static int setup(rb_waiter *w, rb_conn *c, const rb_wait_opts *o,
                 rb_wait_result *res, rb_error *err)
{
    long long ttl;
    int rc;

    if ((rc = rb_barrier__check_opts(o, err)) != RB_OK)
        return rc;
    memset(w, 0, sizeof(*w));
    w->c = c;
    w->o = o;
    w->res = res;
    w->n = o->n;
    w->started = rb_now_ms();
    w->party = rb_deadline__until(o->timeout_ms > 0
                                      ? w->started + o->timeout_ms : 0);
    w->lease_ms = rb_barrier__lease_ms(o->lease_ms);
    w->slice_ms = rb_barrier__slice_ms(o->lease_ms, o->progress != NULL,
                                       o->progress_ms);
    ttl = rb_key__ttl_s(o->ttl_ms);
    if (o->job) {
        if ((rc = rb_key__job_barrier(w->base, sizeof(w->base), o->prefix,
                                      o->job, o->job_epoch, o->job_attempt,
                                      o->name, err)) != RB_OK ||
            (rc = rb_key__job_attempt(w->job_out, sizeof(w->job_out),
                                      o->prefix, o->job, o->job_epoch,
                                      o->job_attempt, "out", err)) != RB_OK ||
            (rc = rb_key__job_attempt(w->job_bar, sizeof(w->job_bar),
                                      o->prefix, o->job, o->job_epoch,
                                      o->job_attempt, "bar", err)) != RB_OK)
            return rc;
    } else if ((rc = rb_key__barrier(w->base, sizeof(w->base), o->prefix,
                                     o->name, err)) != RB_OK)
        return rc;
    if ((rc = rb_key__nonces(w->nonce_key, sizeof(w->nonce_key), w->base,
                             err)) != RB_OK)
        return rc;
    snprintf(w->lease_text, sizeof(w->lease_text), "%lld", w->lease_ms);
    snprintf(w->linger, sizeof(w->linger), "%lld",
             rb_barrier__linger_s(ttl));
    snprintf(w->ttl, sizeof(w->ttl), "%lld", ttl);
    return RB_OK;
}

/* An arrival whose call failed may still have run (its reply lost, or its
 * --replicas not acknowledged): it must count for nobody. The nonce finds
 * the round it was counted in, which is broken unless it already ended.
 * Best effort: the caller reports its own failure either way, and a
 * party that could not be withdrawn is presumed dead after its lease. */
static void withdraw(rb_waiter *w, const char *nonce, const rb_error *why)
{
    const char *keys[2] = { w->base, w->nonce_key };
    char what[300];
    const char *args[4] = { w->o->id, nonce, what, w->linger };
    /* One attempt: a server that could not take the arrival will not take
     * this either, and with --replicas its write lands before the WAIT
     * that cannot be met. */
    rb_call call = { .deadline = rb_deadline__once() };
    redisReply *r = NULL;
    rb_error werr;
    size_t i;

    snprintf(what, sizeof(what), "could not confirm its arrival (%.200s)",
             why->msg);
    for (i = 0; what[i]; i++)
        if ((unsigned char)what[i] < 0x20 || what[i] == 0x7f)
            what[i] = ' ';
    rb_script__run(w->c, RB_SCRIPT_WITHDRAW, keys, args, 4, &call, &r,
                   &werr);
    freeReplyObject(r);
}

/* The arrival: one script call that must reach a known end (a lost reply
 * is resent with the same nonce, and the script answers it as the first
 * time), or be withdrawn. Fills the round's keys and the result. */
static int arrive(rb_waiter *w, rb_arrive_reply *a, rb_error *err)
{
    const rb_wait_opts *o = w->o;
    char nonce[33], n_text[24];
    const char *reason = NULL;
    const char *keys[4] = { w->base, w->nonce_key, w->job_out, w->job_bar };
    const char *args[10];
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
    args[7] = o->value ? o->value : "";
    args[9] = o->reduce ? o->reduce : "";
    /* In a job, the attempt's out list and bar set too: the job's break
     * refuses the arrival, or reaches the round's out list later. */
    rc = rb_barrier__arrive_call(w, keys, o->job ? 4 : 2, args, &call, &r,
                                 err);
    if (rc == RB_EUNREACHABLE || rc == RB_ETIMEOUT || rc == RB_ECANCELED ||
        (rc == RB_EREDIS && !rb_barrier__is_wrongtype(&call) &&
         !rb_barrier__is_damaged(&call)))
        withdraw(w, nonce, err);
    if (rc != RB_OK)
        return rb_barrier__script_failed(o->name, &call, rc, err);
    rc = rb_reply__arrive(r, a);
    if (rc != RB_OK || a->kind == RB_ARRIVE_NEEDLIST) {
        freeReplyObject(r);
        rc = rb_barrier__bad_reply(w, "arrive", err);
        withdraw(w, nonce, err);
        return rc;
    }
    if (a->kind == RB_ARRIVE_BADN || a->kind == RB_ARRIVE_BADEXPECT ||
        a->kind == RB_ARRIVE_BADREDUCE) {
        rc = rb_barrier__refused(o->name, a, o, err);
        freeReplyObject(r);
        return rc;
    }
    if (a->kind == RB_ARRIVE_JOBBROKEN) {
        /* Nothing was written: the job broke before this arrival. */
        rc = rb_reply__outcome(a->open_text, &reason) == 0
                 ? rb_error__set(err, RB_EBROKEN, "%s: job %s broken: %s",
                                 o->name, o->job, reason)
                 : rb_error__set(err, RB_EPROTO, "%s: unknown job outcome",
                                 o->name);
        freeReplyObject(r);
        return rc;
    }
    freeReplyObject(r);
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
static int block_slice(rb_waiter *w, long long slice_ms, int last, int *rc,
                       rb_error *err)
{
    rb_call call = last ? call_last_block(w, slice_ms) : call_block(slice_ms);
    redisReply *r = NULL;
    const char *text, *cmd;

    *rc = rb_conn__block_rotate(w->c, w->out_key, &call, &r, &cmd, err);
    if (*rc == RB_EUNREACHABLE)
        return 0;
    /* The out key holds another type (an arrival that does not end its
     * round never touches it): the heartbeat that follows reads it first
     * and names it, which BLMOVE's own error does not. */
    if (*rc == RB_EREDIS && rb_barrier__is_wrongtype(&call))
        return 0;
    if (*rc != RB_OK)
        return 1;
    if (rb_reply__block(r, &text) != RB_OK)
        *rc = rb_error__set(err, RB_EPROTO, "%s: bad reply to %s",
                            w->o->name, cmd);
    else if (text == NULL) {
        freeReplyObject(r);
        return 0;
    } else
        *rc = rb_barrier__outcome(w->o->name, w->gen, text, err);
    freeReplyObject(r);
    return 1;
}

/* Block until the round has an outcome, this party's deadline passes or
 * it is cancelled. */
static int wait_loop(rb_waiter *w, rb_error *err)
{
    long long next_beat;
    int rc;

    if (w->o->progress && w->o->expect) {
        /* Progress that names the missing ids needs the members: look at
         * the round once before blocking (on terminals only). */
        if (rb_barrier__heartbeat(w, &rc, err)) {
            if (rc == RB_ECANCELED)
                return rb_barrier__abandon(w, "interrupted", "arrivals", RB_ECANCELED,
                               err);
            return rc;
        }
    } else {
        rb_barrier__report_progress(w, NULL, 1);
    }
    /* The arrival renewed the lease: the next renewal is due a slice after
     * it was sent. Each slice blocks until that moment rather than for a
     * whole slice after the last heartbeat's reply, so an idle party sends
     * one renewal and one blocking read per slice, and the renewals do not
     * drift later by a round trip and a server tick each time. */
    next_beat = rb_now_ms() + w->slice_ms;
    for (;;) {
        long long now = rb_now_ms(), slice;
        int last;

        if (rb_deadline__over(&w->party, now))
            return rb_barrier__timed_out(w, err);
        slice = rb_barrier__next_slice(rb_barrier__beat_in(next_beat, now),
                                       w->party.until_ms
                                           ? rb_deadline__left(&w->party, now)
                                           : -1,
                                       &last);
        if (block_slice(w, slice, last, &rc, err)) {
            if (rc == RB_ETIMEOUT) {
                w->cut = 1;
                return rb_barrier__timed_out(w, err);
            }
            if (rc == RB_ECANCELED)
                return rb_barrier__abandon(w, "interrupted", "arrivals", RB_ECANCELED,
                               err);
            return rc;
        }
        /* The slice ran out, or the connection was cut and remade (the
         * out list may be gone with a restarted server): look again. */
        next_beat = rb_now_ms() + w->slice_ms;
        if (rb_barrier__heartbeat(w, &rc, err)) {
            if (rc == RB_ECANCELED)
                return rb_barrier__abandon(w, "interrupted", "arrivals", RB_ECANCELED,
                               err);
            return rc;
        }
    }
}

/* After a pass: the round's values, in arrival order. */
static int read_values(rb_waiter *w, rb_error *err)
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
        return rb_barrier__script_failed(w->o->name, &call, rc, err);
    if (rb_reply__strings(r, &items, &count) != RB_OK) {
        freeReplyObject(r);
        return rb_error__set(err, RB_EPROTO, "%s: bad value list reply",
                             w->o->name);
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
    rb_waiter w;
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
        rc = rb_barrier__run_once(&w, &a, err);
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
