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

enum { PHASE_NONE = 0, PHASE_ENTER, PHASE_RUN, PHASE_LEAVE, PHASE_BROKEN };

struct rb_job {
    rb_conn *c;
    char *prefix, *name, *id, *expect;
    long n, restarts;
    long long lease_ms, timeout_ms, slice_ms;
    char base[RB_KEY_MAX];
    char list_key[RB_KEY_MAX];    /* the list this member blocks on */
    char lease_t[24], ttl_t[24], linger_t[24], n_t[24], k_t[24];
    char epoch_t[24], att_t[24];
    long long epoch;
    long att, rank;
    int phase;
    long long renewed_at;         /* last renewal that Redis took */
    long long next_keep;          /* when the next renewal is due */
    long long peer_at;            /* just after the earliest other
                                     member's deadline; 0: none */
};

/* ---- the reply ---- */

static int str_at(const redisReply *r, const char **out)
{
    if (r == NULL || (r->type != REDIS_REPLY_STRING &&
                      r->type != REDIS_REPLY_STATUS) ||
        strlen(r->str) != r->len)
        return RB_EPROTO;
    *out = r->str;
    return RB_OK;
}

int rb_job__decode(const redisReply *r, rb_job_reply *out)
{
    static const char *const kinds[] = { "wait", "go", "out", "broken",
                                         "lost", "busy", "badn", "over" };
    const char *kind;
    long long v[5];
    size_t i;

    memset(out, 0, sizeof(*out));
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 8 ||
        r->element == NULL || str_at(r->element[0], &kind) != RB_OK ||
        str_at(r->element[6], &out->text) != RB_OK)
        return RB_EPROTO;
    for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strcmp(kind, kinds[i]) == 0)
            break;
    if (i == sizeof(kinds) / sizeof(kinds[0]))
        return RB_EPROTO;
    out->kind = (rb_job_kind)i;
    if (rb_reply__int(r->element[1], 0, 1000000000000000LL, &v[0]) ||
        rb_reply__int(r->element[2], 0, 1000000000000000LL, &v[1]) ||
        rb_reply__int(r->element[3], -1, RB_N_MAX, &v[2]) ||
        rb_reply__int(r->element[4], 0, RB_N_MAX, &v[3]) ||
        rb_reply__int(r->element[5], 0, RB_N_MAX, &v[4]) ||
        rb_reply__int(r->element[7], -1, 1000000000000000LL, &out->next_ms))
        return RB_EPROTO;
    out->epoch = v[0];
    out->att = (long)v[1];
    out->rank = (long)v[2];
    out->count = (long)v[3];
    out->n = (long)v[4];
    if ((out->kind == RB_JOB_OUT || out->kind == RB_JOB_BROKEN) &&
        rb_reply__outcome(out->text, NULL) < 0)
        return RB_EPROTO;
    return RB_OK;
}

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

static int check_opts(const rb_job_opts *o, rb_error *err)
{
    int rc;

    if (o == NULL || o->version != RB_JOB_OPTS_VERSION)
        return rb_error__set(err, RB_EINVAL, "job options: unknown version");
    if ((rc = rb_check_name(o->name, "job name", err)) != RB_OK ||
        (rc = rb_check_id(o->id, "member id", err)) != RB_OK)
        return rc;
    if (o->prefix && (rc = rb_check_name(o->prefix, "prefix", err)))
        return rc;
    if (o->n < 1 || o->n > RB_N_MAX)
        return rb_error__set(err, RB_EINVAL, "n must be 1..%d, not %ld",
                             RB_N_MAX, o->n);
    if (o->lease_ms < 0 || o->timeout_ms < 0 || o->ttl_ms < 0 ||
        o->restarts < 0 || o->restarts > 1000000)
        return rb_error__set(err, RB_EINVAL, "job options: a negative "
                             "duration or restarts out of 0..1000000");
    if (o->expect) {
        const char *p = o->expect;
        size_t idlen = strlen(o->id);
        long count = 0;
        int found = 0;

        while (*p) {
            size_t len = strcspn(p, ",");

            if (len == 0 || len > RB_NAME_MAX ||
                strcspn(p, " \t\r\n{}") < len)
                return rb_error__set(err, RB_EINVAL, "bad expected id list");
            if (len == idlen && memcmp(p, o->id, len) == 0)
                found = 1;
            count++;
            p += len + (p[len] == ',');
        }
        if (!found)
            return rb_error__set(err, RB_EINVAL, "id '%s' is not one of the "
                                 "expected ids", o->id);
        if (count != o->n)
            return rb_error__set(err, RB_EINVAL, "%ld expected ids but n is "
                                 "%ld", count, o->n);
    }
    return RB_OK;
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
    if ((rc = check_opts(o, err)) != RB_OK)
        return rc;
    if ((j = calloc(1, sizeof(*j))) == NULL)
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    j->c = c;
    j->prefix = dup_or_null(o->prefix, &failed);
    j->name = dup_or_null(o->name, &failed);
    j->id = dup_or_null(o->id, &failed);
    j->expect = dup_or_null(o->expect, &failed);
    if (failed) {
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
    if ((rc = rb_key__job(j->base, sizeof(j->base), o->prefix, o->name,
                          err)) != RB_OK) {
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
    free(j);
}

int rb_job_can_restart(const rb_job *j)
{
    return j->phase == PHASE_BROKEN && j->att < j->restarts;
}

long rb_job_rank(const rb_job *j) { return j->rank; }
long rb_job_attempt(const rb_job *j) { return j->att; }
long long rb_job_epoch(const rb_job *j) { return j->epoch; }

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

static int run(rb_job *j, rb_script_id sid, const char *const *args,
               int nargs, rb_call *call, redisReply **r,
               rb_job_reply *jr, rb_error *err)
{
    const char *keys[1] = { j->base };
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

static int broken(rb_job *j, const char *outcome, rb_error *err)
{
    const char *reason = "";

    rb_reply__outcome(outcome, &reason);
    j->phase = PHASE_BROKEN;
    return rb_error__set(err, RB_EBROKEN, "%s: job broken: %s", j->name,
                         reason ? reason : outcome);
}

static int lost(rb_job *j, rb_error *err)
{
    j->phase = PHASE_NONE;
    return rb_error__set(err, RB_ELOST, "%s: job state lost (this member "
                         "is gone from attempt %ld of epoch %lld: was Redis "
                         "restarted without persistence?)", j->name, j->att,
                         j->epoch);
}

/* One blocking slice on list_key: 1 with *text (an outcome or "go") when
 * the list has one, 0 when the slice ran out or the connection dropped
 * (the renewal that comes next reconnects), < 0 an rb_code. */
static int block(rb_job *j, long long ms, char *text, size_t len,
                 rb_error *err)
{
    char secs[32];
    const char *argv[6];
    size_t lens[6];
    int argc, i, rc;
    rb_call call = { .deadline = rb_deadline__once(),
                     .block_ms = (int)ms, .cancellable = 1 };
    redisReply *r = NULL;
    const char *got;

    if (!rb_conn__no_blmove(j->c)) {
        snprintf(secs, sizeof(secs), "%.3f", (double)ms / 1000.0);
        argv[0] = "BLMOVE";
        argv[3] = "LEFT";
        argv[4] = "LEFT";
        argv[5] = secs;
        argc = 6;
    } else {
        snprintf(secs, sizeof(secs), "%lld", (ms + 999) / 1000);
        argv[0] = "BRPOPLPUSH";
        argv[3] = secs;
        argc = 4;
    }
    argv[1] = argv[2] = j->list_key;
    for (i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    rc = rb_conn__call(j->c, argc, argv, lens, &call, &r, err);
    if (rc == RB_EREDIS && !rb_conn__no_blmove(j->c) &&
        call.reply_err == RB_REPLY_UNKNOWN_COMMAND) {
        rb_conn__set_no_blmove(j->c);
        return block(j, ms, text, len, err);
    }
    if (rc == RB_EUNREACHABLE) {
        j->next_keep = 0;
        return 0;
    }
    if (rc != RB_OK)
        return rc;
    got = NULL;
    if (r->type != REDIS_REPLY_NIL &&
        (str_at(r, &got) != RB_OK ||
         (strcmp(got, "go") != 0 && rb_reply__outcome(got, NULL) < 0))) {
        freeReplyObject(r);
        return rb_error__set(err, RB_EPROTO, "%s: bad reply to %s", j->name,
                             argv[0]);
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
    const char *args[6] = { j->epoch_t, j->att_t, j->id, j->lease_t,
                            j->ttl_t, j->linger_t };
    long long start = rb_now_ms();
    rb_call call = {
        .deadline = rb_deadline__until(j->renewed_at + j->lease_ms),
        .cancellable = 1,
    };
    int rc;

    if (call.deadline.until_ms <= start)
        call.deadline.until_ms = start + 1;
    rc = run(j, RB_SCRIPT_JOB_KEEP, args, 6, &call, r, jr, err);
    if (rc == RB_EUNREACHABLE)
        return rb_error__set(err, RB_EUNREACHABLE, "%s: could not renew "
                             "the lease before it ran out: %s", j->name,
                             err->msg);
    if (rc != RB_OK)
        return rc;
    if (jr->kind == RB_JOB_WAIT || jr->kind == RB_JOB_GO) {
        j->renewed_at = start;
        j->next_keep = start + j->slice_ms;
        j->peer_at = jr->next_ms >= 0
                         ? rb_now_ms() + jr->next_ms + RB_PEER_LATE_MS : 0;
    }
    return RB_OK;
}

/* The end of an attempt as the lists or a script said it. */
static int ended(rb_job *j, const char *outcome, int *done, rb_error *err)
{
    if (strcmp(outcome, "ok") == 0) {
        j->phase = PHASE_NONE;
        *done = 1;
        return RB_OK;
    }
    return broken(j, outcome, err);
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
    rc = run(j, RB_SCRIPT_JOB_END, args, 8, &call, &r, &jr, err);
    j->phase = PHASE_NONE;
    if (rc != RB_OK)
        return rb_error__set(err, RB_ETIMEOUT, "%s: %s (and could not tell "
                             "the others: %s)", j->name, what, err->msg);
    if (jr.kind == RB_JOB_OUT && strcmp(jr.text, "go") != 0 &&
        rb_reply__outcome(jr.text, NULL) == 0) {
        rc = broken(j, jr.text, err);
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
    const char *args[9];
    char text[512];
    long long start = rb_now_ms(), until, bound;
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

        if ((rc = rb_conn__connect(j->c, &reach, err)) != RB_OK)
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
        if ((rc = run(j, RB_SCRIPT_JOB_ENTER, args, 9, &call, &r, &jr,
                      err)) != RB_OK)
            return rc;
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
        if (jr.kind != RB_JOB_BUSY)
            break;
        /* Another run of this name is on, without this id: wait for its
         * end (its out list), then try again. */
        set_attempt(j, jr.epoch, jr.att);
        freeReplyObject(r);
        r = NULL;
        if ((rc = list_key(j, "out", err)) != RB_OK)
            return rc;
        if (until && rb_now_ms() >= until)
            return rb_error__set(err, RB_ETIMEOUT, "%s: timed out: a job of "
                                 "this name runs without '%s'", j->name,
                                 j->id);
        rc = block(j, until ? (until - rb_now_ms() < j->slice_ms
                                   ? until - rb_now_ms() + RB_SLICE_MIN_MS
                                   : j->slice_ms)
                            : j->slice_ms, text, sizeof(text), err);
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
    j->renewed_at = start;
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
                rc = broken(j, jr.text, err);
                freeReplyObject(r);
                return rc;
            } else if (jr.kind == RB_JOB_LOST) {
                freeReplyObject(r);
                return lost(j, err);
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
            return broken(j, text, err);
    }
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
    if (j->phase != PHASE_RUN && j->phase != PHASE_LEAVE)
        return rb_error__set(err, RB_EINVAL, "%s: not in a running job",
                             j->name);
    if (now >= j->next_keep || (j->peer_at && now >= j->peer_at)) {
        if ((rc = keep_now(j, &jr, &r, err)) != RB_OK)
            return rc;
        if (jr.kind == RB_JOB_OUT)
            rc = ended(j, jr.text, done, err);
        else if (jr.kind == RB_JOB_LOST)
            rc = lost(j, err);
        freeReplyObject(r);
        if (rc != RB_OK || *done)
            return rc;
        now = rb_now_ms();
    }
    end = slice_until(j, max_ms >= 0 ? now + max_ms : 0);
    rc = block(j, end - now > RB_SLICE_MIN_MS ? end - now : RB_SLICE_MIN_MS,
               text, sizeof(text), err);
    if (rc < 0)
        return rc;
    if (rc == 1)
        return ended(j, text, done, err);
    return RB_OK;
}

static int end_call(rb_job *j, const char *mode, const char *what,
                    int status, int *done, rb_error *err)
{
    const char *args[8];
    char st[16];
    rb_call call = { .deadline = rb_deadline__within(
                         rb_now_ms(), j->lease_ms > RB_JOB_GRACE_MS
                                          ? j->lease_ms : RB_JOB_GRACE_MS) };
    redisReply *r = NULL;
    rb_job_reply jr;
    int rc;

    *done = 0;
    if (j->phase != PHASE_RUN && j->phase != PHASE_LEAVE &&
        j->phase != PHASE_ENTER)
        return rb_error__set(err, RB_EINVAL, "%s: not in a job", j->name);
    snprintf(st, sizeof(st), "%d", status);
    args[0] = j->epoch_t;
    args[1] = j->att_t;
    args[2] = j->id;
    args[3] = mode;
    args[4] = what;
    args[5] = st;
    args[6] = j->ttl_t;
    args[7] = j->linger_t;
    if ((rc = run(j, RB_SCRIPT_JOB_END, args, 8, &call, &r, &jr, err)))
        return rc;
    if (jr.kind == RB_JOB_OUT || jr.kind == RB_JOB_BROKEN)
        rc = ended(j, jr.text, done, err);
    else if (jr.kind == RB_JOB_LOST)
        rc = lost(j, err);
    else if (jr.kind == RB_JOB_WAIT)
        j->phase = PHASE_LEAVE;
    else
        rc = rb_error__set(err, RB_EPROTO, "%s: bad job-end reply",
                           j->name);
    freeReplyObject(r);
    return rc;
}

int rb_job_fail(rb_job *j, const char *what, int status, rb_error *err)
{
    rb_error local;
    int done;

    if (err == NULL)
        err = &local;
    if (what == NULL || what[0] == '\0' || strlen(what) > 300 ||
        strpbrk(what, "\r\n\t"))
        return rb_error__set(err, RB_EINVAL, "%s: a failure needs a "
                             "one-line reason of 1..300 bytes", j->name);
    if (status < -1 || status > 255)
        status = -1;
    return end_call(j, "fail", what, status, &done, err);
}

int rb_job_leave(rb_job *j, int *done, rb_error *err)
{
    rb_error local;

    if (err == NULL)
        err = &local;
    return end_call(j, "leave", "-", 0, done, err);
}

/* ---- status and reset ---- */

static char *dup_text(const redisReply *r)
{
    const char *s;
    char *d;

    if (str_at(r, &s) != RB_OK)
        return NULL;
    if ((d = malloc(strlen(s) + 1)) != NULL)
        memcpy(d, s, strlen(s) + 1);
    return d;
}

/* {epoch, state, att, n, restarts, now, reason, expect, (id, rank, state,
 * deadline, exit)...}, or {0}. */
int rb_job__decode_status(const redisReply *r, rb_job_status *out)
{
    long long v[6], now;
    const char *state;
    size_t i, count;

    memset(out, 0, sizeof(*out));
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
        r->element == NULL)
        return RB_EPROTO;
    if (rb_reply__int(r->element[0], 0, 1000000000000000LL, &v[0]))
        return RB_EPROTO;
    if (v[0] == 0)
        return r->elements == 1 ? RB_OK : RB_EPROTO;
    if (r->elements < 8 || (r->elements - 8) % 5 != 0 ||
        str_at(r->element[1], &state) != RB_OK ||
        strlen(state) >= sizeof(out->state) ||
        rb_reply__int(r->element[2], 0, 1000000000000000LL, &v[1]) ||
        rb_reply__int(r->element[3], 0, RB_N_MAX, &v[2]) ||
        rb_reply__int(r->element[4], 0, 1000000, &v[3]) ||
        rb_reply__int(r->element[5], 0, 1000000000000000LL, &now))
        return RB_EPROTO;
    out->epoch = v[0];
    snprintf(out->state, sizeof(out->state), "%s", state);
    out->attempt = (long)v[1];
    out->n = (long)v[2];
    out->restarts = (long)v[3];
    out->reason = dup_text(r->element[6]);
    out->expect = dup_text(r->element[7]);
    if (out->reason == NULL || out->expect == NULL) {
        rb_job_status_clear(out);
        return RB_EPROTO;
    }
    count = (r->elements - 8) / 5;
    if (count && (out->members = calloc(count, sizeof(*out->members))) ==
                     NULL) {
        rb_job_status_clear(out);
        return RB_ENOMEM;
    }
    for (i = 0; i < count; i++) {
        redisReply **e = r->element + 8 + i * 5;
        rb_job_member *m = &out->members[i];

        out->members_count = i + 1;
        if ((m->id = dup_text(e[0])) == NULL ||
            str_at(e[2], &state) != RB_OK ||
            strlen(state) >= sizeof(m->state) ||
            rb_reply__int(e[1], -1, RB_N_MAX, &v[4]) ||
            rb_reply__int(e[3], -1, 1000000000000000LL, &v[5]) ||
            rb_reply__int(e[4], -1, 255, &v[0])) {
            rb_job_status_clear(out);
            return RB_EPROTO;
        }
        m->rank = (long)v[4];
        snprintf(m->state, sizeof(m->state), "%s", state);
        m->lease_left_ms = v[5] < 0 ? -1 : (v[5] - now > 0 ? v[5] - now : 0);
        m->exit_status = (int)v[0];
    }
    return RB_OK;
}

void rb_job_status_clear(rb_job_status *st)
{
    size_t i;

    if (st == NULL)
        return;
    for (i = 0; i < st->members_count; i++)
        free(st->members[i].id);
    free(st->members);
    free(st->reason);
    free(st->expect);
    memset(st, 0, sizeof(*st));
}

int rb_job_status_get(rb_job_status *out, rb_conn *c, const char *prefix,
                      const char *name, rb_error *err)
{
    rb_error local;
    char base[RB_KEY_MAX];
    const char *keys[1] = { base };
    rb_call call = { .deadline = rb_conn__op_deadline(c), .cancellable = 1 };
    redisReply *r = NULL;
    int rc;

    if (err == NULL)
        err = &local;
    memset(out, 0, sizeof(*out));
    if ((rc = rb_check_name(name, "job name", err)) != RB_OK ||
        (prefix && (rc = rb_check_name(prefix, "prefix", err)) != RB_OK) ||
        (rc = rb_key__job(base, sizeof(base), prefix, name, err)) != RB_OK)
        return rc;
    rc = rb_script__run(c, RB_SCRIPT_JOB_STATUS, keys, NULL, 0, &call, &r,
                        err);
    if (rc == RB_EREDIS && call.reply_err == RB_REPLY_WRONGTYPE)
        return rb_error__set(err, RB_EREDIS, "%s: a key of this job holds a "
                             "value of the wrong type; reset --job removes "
                             "it", name);
    if (rc != RB_OK)
        return rc;
    rc = rb_job__decode_status(r, out);
    freeReplyObject(r);
    if (rc == RB_ENOMEM)
        return rb_error__set(err, rc, "out of memory");
    if (rc != RB_OK)
        return rb_error__set(err, rc, "%s: bad job-status reply", name);
    return RB_OK;
}

int rb_job_reset(long long *epoch, rb_conn *c, const char *prefix,
                 const char *name, rb_error *err)
{
    rb_error local;
    char base[RB_KEY_MAX];
    const char *keys[1] = { base };
    const char *args[2] = { "86400", "300" };
    rb_call call = { .deadline = rb_conn__op_deadline(c), .cancellable = 1 };
    redisReply *r = NULL;
    long long e = 0;
    int rc;

    if (err == NULL)
        err = &local;
    if (epoch)
        *epoch = 0;
    if ((rc = rb_check_name(name, "job name", err)) != RB_OK ||
        (prefix && (rc = rb_check_name(prefix, "prefix", err)) != RB_OK) ||
        (rc = rb_key__job(base, sizeof(base), prefix, name, err)) != RB_OK)
        return rc;
    rc = rb_script__run(c, RB_SCRIPT_JOB_RESET, keys, args, 2, &call, &r,
                        err);
    if (rc != RB_OK)
        return rc;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        rb_reply__int(r->element[0], 0, 1000000000000000LL, &e) != RB_OK) {
        freeReplyObject(r);
        return rb_error__set(err, RB_EPROTO, "%s: bad job-reset reply",
                             name);
    }
    freeReplyObject(r);
    if (epoch)
        *epoch = e;
    return RB_OK;
}
