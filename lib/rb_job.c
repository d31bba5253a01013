/*
 * Jobs (DESIGN.md "Jobs"). The barrier's pattern, held for a whole run:
 * members enter by one script, block on the attempt's go list until all
 * are in, then block on its out list while their work runs, renewing their
 * lease between slices by one script that also breaks the job when any
 * member's lease ran out. A failure report, the last leave or a reset
 * pushes onto the lists, so every blocked member wakes at once; nobody
 * polls. A slice ends at the next renewal or just after the earliest other
 * member's lease deadline, whichever is first, so a silent death is seen
 * within about a lease, not a lease and a third.
 */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_job.h"
#include "rb_reply.h"
#include "rb_script.h"

#define RB_LINGER_MAX_S 300
#define RB_JOB_GRACE_MS 2000
/* Looking again this long after another member's deadline: Redis' blocking
 * timeouts tick at 100 ms, and the deadline must have passed on its clock. */
#define RB_PEER_LATE_MS 100
#define RB_SLICE_MIN_MS 10

/* ---- the handle ---- */

static char *dup_or_null(const char *s, int *failed)
{
    char *d;

    if (s == NULL)
        return NULL;
    if ((d = malloc(strlen(s) + 1)) == NULL)
        *failed = 1;
    else
        memcpy(d, s, strlen(s) + 1);
    return d;
}

int rb_job_new(rb_job **out, rb_conn *c, const rb_job_opts *o, rb_error *err)
{
    rb_error local;
    rb_job *j;
    long long ttl;
    int failed = 0, rc;

    if (err == NULL)
        err = &local;
    *out = NULL;
    if ((rc = rb_job__check_opts(o, err)) != RB_OK)
        return rc;
    if ((j = calloc(1, sizeof(*j))) == NULL)
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    j->c = c;
    j->prefix = dup_or_null(o->prefix, &failed);
    j->name = dup_or_null(o->name, &failed);
    j->id = dup_or_null(o->id, &failed);
    j->expect = dup_or_null(o->expect, &failed);
    if (failed || rb_job__rdv_init(&j->rdv, o, err) != RB_OK) {
        rb_job_free(j);
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    }
    j->n = o->n;
    j->restarts = o->restarts;
    j->lease_ms = o->lease_ms > 0 ? o->lease_ms : 10000;
    if (j->lease_ms < 30)
        j->lease_ms = 30;
    j->slice_ms = j->lease_ms / 3;
    j->timeout_ms = o->timeout_ms;
    ttl = o->ttl_ms > 0 ? (o->ttl_ms + 999) / 1000 : 86400;
    snprintf(j->lease_t, sizeof(j->lease_t), "%lld", j->lease_ms);
    snprintf(j->ttl_t, sizeof(j->ttl_t), "%lld", ttl);
    snprintf(j->linger_t, sizeof(j->linger_t), "%lld",
             ttl < RB_LINGER_MAX_S ? ttl : RB_LINGER_MAX_S);
    snprintf(j->n_t, sizeof(j->n_t), "%ld", j->n);
    snprintf(j->k_t, sizeof(j->k_t), "%ld", j->restarts);
    j->rank = -1;
    rb_random_hex(j->nonce, 16);
    if ((rc = rb_key__job(j->base, sizeof(j->base), o->prefix, o->name,
                          err)) != RB_OK ||
        (rc = rb_keeper__init(&j->keeper, o->prefix, j->base, err)) !=
            RB_OK) {
        rb_job_free(j);
        return rc;
    }
    *out = j;
    return RB_OK;
}

void rb_job_free(rb_job *j)
{
    if (j == NULL)
        return;
    free(j->prefix);
    free(j->name);
    free(j->id);
    free(j->expect);
    rb_job__rdv_free(&j->rdv);
    free(j);
}

int rb_job_can_restart(const rb_job *j)
{
    return j->phase == PHASE_BROKEN && j->att < j->restarts;
}

long rb_job_rank(const rb_job *j) { return j->rank; }
long rb_job_attempt(const rb_job *j) { return j->att; }
long long rb_job_epoch(const rb_job *j) { return j->epoch; }

long long rb_job_lease_left_ms(const rb_job *j)
{
    return j->renewed_at + j->lease_ms - rb_now_ms();
}

/* ---- calls ---- */

static int script_failed(const rb_job *j, const rb_call *call, int rc,
                         rb_error *err)
{
    if (rc == RB_EREDIS && call->reply_err == RB_REPLY_WRONGTYPE)
        return rb_error__set(err, RB_EREDIS, "%s: a key of this job holds a "
                             "value of the wrong type (not written by "
                             "rbarrier?); reset --job removes it", j->name);
    return rc;
}

int rb_job__run(rb_job *j, rb_script_id sid, const char *const *args,
                int nargs, rb_call *call, redisReply **r, rb_job_reply *jr,
                rb_error *err)
{
    const char *keys[2] = { j->base, j->keeper.key };
    int rc = rb_script__run(j->c, sid, keys, args, nargs, call, r, err);

    if (rc != RB_OK)
        return script_failed(j, call, rc, err);
    if (rb_job__decode(*r, jr) != RB_OK) {
        freeReplyObject(*r);
        *r = NULL;
        return rb_error__set(err, RB_EPROTO, "%s: bad %s reply", j->name,
                             rb_scripts[sid].name);
    }
    return RB_OK;
}

static void set_attempt(rb_job *j, long long epoch, long att)
{
    j->epoch = epoch;
    j->att = att;
    snprintf(j->epoch_t, sizeof(j->epoch_t), "%lld", epoch);
    snprintf(j->att_t, sizeof(j->att_t), "%ld", att);
}

static int list_key(rb_job *j, const char *part, rb_error *err)
{
    int w = snprintf(j->list_key, sizeof(j->list_key), "%s:%lld:%ld:%s",
                     j->base, j->epoch, j->att, part);

    if (w < 0 || (size_t)w >= sizeof(j->list_key))
        return rb_error__set(err, RB_EINVAL, "job key too long");
    return RB_OK;
}

/* One blocking slice on list_key: 1 with *text (an outcome or "go") when
 * the list has one, 0 when the slice ran out or the connection dropped
 * (the renewal that comes next reconnects), < 0 an rb_code. On the go
 * list this member's rendezvous values are read in the same write, and
 * taken if 'go' came. */
static int block(rb_job *j, long long ms, char *text, size_t len,
                 rb_error *err)
{
    rb_call call = { .deadline = rb_deadline__once(),
                     .block_ms = (int)ms, .cancellable = 1 };
    redisReply *r = NULL, *v;
    const char *got, *cmd;
    int rc;

    if (j->phase == PHASE_ENTER)
        call.then = rb_job__rdv_read(&j->rdv, j->base, j->epoch, j->att,
                                     j->id);
    rc = rb_conn__block_rotate(j->c, j->list_key, &call, &r, &cmd, err);
    if ((v = call.then_reply) != NULL) {
        if (rc == RB_OK && r->type == REDIS_REPLY_STRING &&
            strcmp(r->str, "go") == 0 &&
            v->type == REDIS_REPLY_ARRAY && v->elements == 3)
            rb_job__rdv_take(&j->rdv, v->element[0], v->element[1],
                             v->element[2], j->rank, j->n);
        freeReplyObject(v);
    }
    if (rc == RB_EUNREACHABLE) {
        j->next_keep = 0;
        return 0;
    }
    if (rc != RB_OK)
        return rc;
    got = NULL;
    if (r->type != REDIS_REPLY_NIL &&
        (rb_job__str_at(r, &got) != RB_OK ||
         (strcmp(got, "go") != 0 && rb_reply__outcome(got, NULL) < 0 &&
          strncmp(got, "stopping ", 9) != 0))) {
        freeReplyObject(r);
        return rb_error__set(err, RB_EPROTO, "%s: bad reply to %s", j->name,
                             cmd);
    }
    if (got)
        snprintf(text, len, "%s", got);
    freeReplyObject(r);
    return got ? 1 : 0;
}

/* Renew this member's lease (job-keep). The renewal may be resent until
 * the lease would run out: past that the others presume this member dead. */
static int keep_now(rb_job *j, rb_job_reply *jr, redisReply **r,
                    rb_error *err)
{
    char age[24];
    long long start = rb_now_ms();
    long long ago = j->progress_at > 0 && start >= j->progress_at
                        ? start - j->progress_at : -1;
    /* Only a lease that may have passed on the server can have been taken
     * over by another runner of this id: then the nonce goes along. */
    int late = start >= j->renewed_at + j->lease_ms - j->slice_ms;
    const char *args[9] = { j->epoch_t, j->att_t, j->id, j->lease_t,
                            j->ttl_t, j->linger_t, age,
                            j->halt == j->halt_sent ? ""
                            : j->halt ? "halt" : "run",
                            late ? j->nonce : "" };
    rb_call call = {
        .deadline = rb_deadline__until(j->renewed_at + j->lease_ms),
        .cancellable = 1,
    };
    int rc, sent;

    /* The command's progress rides on the renewal (the stall's blame,
     * status), and only once it is older than a renewal interval: a
     * command that progresses more often costs nothing. */
    sent = ago >= j->slice_ms;
    if (sent)
        snprintf(age, sizeof(age), "%lld", ago);
    else
        snprintf(age, sizeof(age), "%s", j->prog_sent ? "fresh" : "-1");
    if (call.deadline.until_ms <= start)
        call.deadline.until_ms = start + j->slice_ms;
    rc = rb_job__run(j, RB_SCRIPT_JOB_KEEP, args, 9, &call, r, jr, err);
    if (rc == RB_EUNREACHABLE)
        return rb_error__set(err, RB_EUNREACHABLE, "%s: could not renew "
                             "the lease before it ran out: %s", j->name,
                             err->msg);
    if (rc != RB_OK)
        return rc;
    if (jr->kind == RB_JOB_WAIT || jr->kind == RB_JOB_GO ||
        jr->kind == RB_JOB_STOP) {
        j->halt_sent = j->halt;
        j->prog_sent = sent;
        j->renewed_at = start;
        j->next_keep = start + j->slice_ms;
        j->peer_at = jr->next_ms >= 0
                         ? rb_now_ms() + jr->next_ms + RB_PEER_LATE_MS : 0;
    }
    return RB_OK;
}

/* How long the next slice may block: to the next renewal, or just after
 * the earliest other member's deadline, or until (0: none). */
static long long slice_until(const rb_job *j, long long until)
{
    long long end = j->next_keep;

    if (j->peer_at && j->peer_at < end)
        end = j->peer_at;
    if (until && until < end)
        end = until;
    return end;
}

/* ---- entering ---- */

static int abandon_enter(rb_job *j, rb_error *err)
{
    const char *args[8];
    char what[256];
    rb_call call = { .deadline = rb_deadline__within(rb_now_ms(),
                                                     RB_JOB_GRACE_MS) };
    redisReply *r = NULL;
    rb_job_reply jr;
    int rc;

    snprintf(what, sizeof(what), "%s timed out after %gs entering", j->id,
             (double)(j->att > 0 && j->timeout_ms == 0 ? RB_JOB_REENTER_MS
                                                      : j->timeout_ms) /
                 1000.0);
    args[0] = j->epoch_t;
    args[1] = j->att_t;
    args[2] = j->id;
    args[3] = "abandon";
    args[4] = what;
    args[5] = "-1";
    args[6] = j->ttl_t;
    args[7] = j->linger_t;
    rc = rb_job__run(j, RB_SCRIPT_JOB_END, args, 8, &call, &r, &jr, err);
    j->phase = PHASE_NONE;
    if (rc != RB_OK)
        return rb_error__set(err, RB_ETIMEOUT, "%s: %s (and could not tell "
                             "the others: %s)", j->name, what, err->msg);
    if (jr.kind == RB_JOB_OUT && strcmp(jr.text, "go") != 0 &&
        rb_reply__outcome(jr.text, NULL) == 0) {
        rc = rb_job__broken(j, jr.text, err);
    } else if (jr.kind == RB_JOB_BROKEN) {
        const char *reason = "";

        rb_reply__outcome(jr.text, &reason);
        rc = rb_error__set(err, RB_ETIMEOUT, "%s: job broken: %s", j->name,
                           reason);
    } else {
        rc = rb_error__set(err, RB_ETIMEOUT, "%s: %s", j->name, what);
    }
    freeReplyObject(r);
    return rc;
}

int rb_job_enter(rb_job *j, rb_error *err)
{
    rb_error local;
    const char *args[13];
    char text[512];
    long long start = rb_now_ms(), until, bound, slice, dup_until = 0;
    long long sent = start;
    int quarantined = 0;
    redisReply *r = NULL;
    rb_job_reply jr;
    int rc, reenter;

    if (err == NULL)
        err = &local;
    if (j->phase != PHASE_NONE && !rb_job_can_restart(j))
        return rb_error__set(err, RB_EINVAL, "%s: this member cannot "
                             "enter now", j->name);
    reenter = j->phase == PHASE_BROKEN;
    bound = j->timeout_ms ? j->timeout_ms
                          : (reenter ? RB_JOB_REENTER_MS : 0);
    until = bound ? start + bound : 0;
    {
        rb_deadline reach = rb_conn__reach(j->c, until);

        if ((rc = rb_conn__connect(j->c, &reach, err)) != RB_OK ||
            (rc = rb_job__rdv_offer(&j->rdv, j->c, err)) != RB_OK)
            return rc;
    }
    for (;;) {
        char att_next[24];
        rb_call call = {
            .deadline = rb_deadline__sooner(
                rb_deadline__within(rb_now_ms(), j->lease_ms), until),
        };

        snprintf(att_next, sizeof(att_next), "%ld", j->att + 1);
        args[0] = j->id;
        args[1] = j->n_t;
        args[2] = j->lease_t;
        args[3] = j->ttl_t;
        args[4] = j->linger_t;
        args[5] = j->k_t;
        args[6] = reenter ? j->epoch_t : "new";
        args[7] = reenter ? att_next : "0";
        args[8] = j->expect ? j->expect : "";
        args[9] = j->rdv.host ? j->rdv.host : j->id;
        args[10] = j->rdv.endpoint;
        args[11] = j->nonce;
        args[12] = j->keeper.marked;
        sent = rb_now_ms();
        if ((rc = rb_job__run(j, RB_SCRIPT_JOB_ENTER, args, 13, &call, &r,
                              &jr, err)) != RB_OK)
            return rc;
        if ((rc = rb_keeper__answer(&j->keeper, j->c,
                                    jr.kind == RB_JOB_KEEPER ? (int)jr.rank
                                                             : 0,
                                    jr.text[0] == 'm', &call, j->name,
                                    err)) != RB_OK) {
            freeReplyObject(r);
            return rc;
        }
        if (jr.kind == RB_JOB_KEEPER) {
            freeReplyObject(r);
            r = NULL;
            continue;   /* the markers are loaded: enter again */
        }
        if (jr.kind == RB_JOB_BADN) {
            rc = rb_error__set(err, RB_EINVAL, "%s: the open job has %s; "
                               "this member differs (nothing written)",
                               j->name, jr.text);
            freeReplyObject(r);
            return rc;
        }
        if (jr.kind == RB_JOB_OVER) {
            rc = rb_error__set(err, RB_EBROKEN, "%s: job broken: %s",
                               j->name, jr.text);
            j->phase = PHASE_NONE;
            freeReplyObject(r);
            return rc;
        }
        if (jr.kind != RB_JOB_BUSY && jr.kind != RB_JOB_DUP &&
            jr.kind != RB_JOB_QUARANTINE)
            break;
        /* Busy: another run of this name is on, without this id. Dup:
         * another runner holds this id; past its lease deadline it is
         * dead and this one takes the place, but if it renewed meanwhile
         * it lives and this one is refused. Either way: wait on the
         * attempt's out list (its end wakes us), then try again. */
        slice = j->slice_ms;
        if (jr.kind == RB_JOB_DUP) {
            long long now = rb_now_ms();

            if (dup_until && now >= dup_until) {
                freeReplyObject(r);
                return rb_error__set(err, RB_EINVAL, "%s: id '%s' is held "
                                     "by a live runner (it renewed its "
                                     "lease); nothing written", j->name,
                                     j->id);
            }
            if (!dup_until)
                dup_until = now + jr.next_ms + RB_PEER_LATE_MS;
            slice = dup_until - now;
        }
        /* A lost run's members may still run until then: nothing to wake
         * for (attempt 0 of epoch 0 is no run's), the slice is the wait. */
        quarantined = jr.kind == RB_JOB_QUARANTINE;
        if (quarantined)
            slice = jr.next_ms + RB_SLICE_MIN_MS < j->slice_ms
                        ? jr.next_ms + RB_SLICE_MIN_MS : j->slice_ms;
        set_attempt(j, jr.epoch, jr.att);
        freeReplyObject(r);
        r = NULL;
        if ((rc = list_key(j, "out", err)) != RB_OK)
            return rc;
        if (until && rb_now_ms() >= until && quarantined)
            return rb_error__set(err, RB_ETIMEOUT, "%s: timed out: the "
                                 "job's state was lost while its members "
                                 "ran, and a new run waits until their "
                                 "leases have passed", j->name);
        if (until && rb_now_ms() >= until)
            return rb_error__set(err, RB_ETIMEOUT, "%s: timed out: a job of "
                                 "this name runs without '%s'", j->name,
                                 j->id);
        if (until && until - rb_now_ms() < slice)
            slice = until - rb_now_ms() + RB_SLICE_MIN_MS;
        rc = block(j, slice > RB_SLICE_MIN_MS ? slice : RB_SLICE_MIN_MS,
                   text, sizeof(text), err);
        if (rc < 0)
            return rc == RB_ECANCELED
                       ? rb_error__set(err, rc, "%s: interrupted before "
                                       "entering", j->name)
                       : rc;
    }
    if (jr.kind != RB_JOB_WAIT && jr.kind != RB_JOB_GO) {
        freeReplyObject(r);
        return rb_error__set(err, RB_EPROTO, "%s: bad job-enter reply",
                             j->name);
    }
    set_attempt(j, jr.epoch, jr.att);
    j->rank = jr.rank;
    j->rdv.taken = 0;
    if (jr.kind == RB_JOB_GO && jr.rdv[0])
        rb_job__rdv_take(&j->rdv, jr.rdv[0], jr.rdv[1], jr.rdv[2], j->rank,
                         j->n);
    /* The lease runs from the sending of the entry that was answered, not
     * from the first try: a wait (busy, dup, a quarantine) came between. */
    j->renewed_at = sent;
    j->next_keep = rb_now_ms() + j->slice_ms;
    j->peer_at = 0;
    j->phase = jr.kind == RB_JOB_GO ? PHASE_RUN : PHASE_ENTER;
    freeReplyObject(r);
    if ((rc = list_key(j, j->phase == PHASE_RUN ? "out" : "go", err)))
        return rc;
    while (j->phase == PHASE_ENTER) {
        long long now = rb_now_ms(), end;

        if (until && now >= until)
            return abandon_enter(j, err);
        if (now >= j->next_keep || (j->peer_at && now >= j->peer_at)) {
            if ((rc = keep_now(j, &jr, &r, err)) != RB_OK)
                return rc;
            if (jr.kind == RB_JOB_GO) {
                j->phase = PHASE_RUN;
            } else if (jr.kind == RB_JOB_OUT) {
                rc = rb_job__broken(j, jr.text, err);
                freeReplyObject(r);
                return rc;
            } else if (jr.kind == RB_JOB_LOST) {
                rc = rb_job__lost(j, jr.text, err);
                freeReplyObject(r);
                return rc;
            }
            freeReplyObject(r);
            r = NULL;
            continue;
        }
        end = slice_until(j, until);
        rc = block(j, end - now > RB_SLICE_MIN_MS ? end - now
                                                  : RB_SLICE_MIN_MS,
                   text, sizeof(text), err);
        if (rc < 0)
            return rc;
        if (rc == 1 && strcmp(text, "go") == 0)
            j->phase = PHASE_RUN;
        else if (rc == 1)
            return rb_job__broken(j, text, err);
    }
    /* A runner stopped (SIGSTOP) past its lease while it waited may have
     * been replaced: it confirms before its work starts. */
    if (rb_now_ms() - j->renewed_at >= j->lease_ms - j->slice_ms) {
        if ((rc = keep_now(j, &jr, &r, err)) != RB_OK)
            return rc;
        if (jr.kind == RB_JOB_OUT || jr.kind == RB_JOB_LOST)
            rc = jr.kind == RB_JOB_OUT ? rb_job__broken(j, jr.text, err)
                                       : rb_job__lost(j, jr.text, err);
        freeReplyObject(r);
        if (rc != RB_OK)
            return rc;
    }
    /* Read with 'go' (job-enter's, or the go list's), or read now. */
    if (!j->rdv.taken &&
        (rc = rb_job__rdv_fetch(&j->rdv, j->c, j->base, j->epoch, j->att,
                                j->id, j->rank, j->n, j->lease_ms, err)))
        return rc;
    return list_key(j, "out", err);
}

/* ---- running and leaving ---- */

int rb_job_keep(rb_job *j, long long max_ms, int *done, rb_error *err)
{
    rb_error local;
    char text[512];
    long long now = rb_now_ms(), end;
    redisReply *r = NULL;
    rb_job_reply jr;
    int rc;

    if (err == NULL)
        err = &local;
    *done = 0;
    if (j->phase != PHASE_RUN && j->phase != PHASE_LEAVE &&
        j->phase != PHASE_STOPPING)
        return rb_error__set(err, RB_EINVAL, "%s: not in a running job",
                             j->name);
    if (now >= j->next_keep || (j->peer_at && now >= j->peer_at)) {
        if ((rc = keep_now(j, &jr, &r, err)) != RB_OK)
            return rc;
        if (jr.kind == RB_JOB_OUT || jr.kind == RB_JOB_STOP)
            rc = rb_job__ended(j, jr.text, done, err);
        else if (jr.kind == RB_JOB_LOST)
            rc = rb_job__lost(j, jr.text, err);
        freeReplyObject(r);
        /* Back at once after a renewal: the caller's watchdog learns the
         * new deadline now, not a slice later. The next call blocks. */
        return rc;
    }
    end = slice_until(j, max_ms >= 0 ? now + max_ms : 0);
    /* While the job stops its out list holds the stop, which a blocking
     * read would return at once: this member waits on a list nobody
     * writes (a sleep its cancel fd ends) until its command has ended. */
    if (j->phase == PHASE_STOPPING && (rc = list_key(j, "hold", err)))
        return rc;
    rc = block(j, end - now > RB_SLICE_MIN_MS ? end - now : RB_SLICE_MIN_MS,
               text, sizeof(text), err);
    if (rc < 0)
        return rc;
    if (rc == 1)
        return rb_job__ended(j, text, done, err);
    return RB_OK;
}
