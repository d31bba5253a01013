/*
 * Barriers: the pure parts of a wait (no server, no clock): checking the
 * options before anything is sent, the lease and its wait slices, the
 * outcome of a round and the words for an arrival the round refused. Unit
 * tests feed them directly (tests/unit/test_barrier.c).
 */
#include "fmacros.h"

#include <stdio.h>
#include <string.h>

#include "rb_barrier.h"

long long rb_barrier__lease_ms(long long lease_ms)
{
    if (lease_ms <= 0)
        return RB_LEASE_DEFAULT_MS;
    return lease_ms < RB_LEASE_MIN_MS ? RB_LEASE_MIN_MS : lease_ms;
}

long long rb_barrier__slice_ms(long long lease_ms, int progress,
                               long long progress_ms)
{
    long long slice = rb_barrier__lease_ms(lease_ms) / 3;

    if (progress && progress_ms > 0 && progress_ms < slice)
        slice = progress_ms;
    return slice;
}

long long rb_barrier__next_slice(long long slice_ms, long long left_ms,
                                 int *last)
{
    *last = left_ms >= 0 && left_ms <= slice_ms;
    return *last ? left_ms : slice_ms;
}

long long rb_barrier__beat_in(long long next_beat_ms, long long now_ms)
{
    /* A slice of 0 would block forever (BLMOVE's 0 means no limit). */
    return next_beat_ms - now_ms > 1 ? next_beat_ms - now_ms : 1;
}

long long rb_barrier__linger_s(long long ttl_s)
{
    return ttl_s < RB_LINGER_MAX_S ? ttl_s : RB_LINGER_MAX_S;
}

int rb_barrier__outcome(const char *name, const char *gen, const char *text,
                        rb_error *err)
{
    const char *reason = NULL;
    int v = rb_reply__outcome(text, &reason);

    if (v == 1)
        return RB_OK;
    if (v == 0)
        return rb_error__set(err, RB_EBROKEN, "%s: round %s broken: %s",
                             name, gen, reason);
    return rb_error__set(err, RB_EPROTO, "%s: unknown outcome '%.100s'",
                         name, text ? text : "");
}

int rb_barrier__refused(const char *name, const rb_arrive_reply *a,
                        const rb_wait_opts *o, rb_error *err)
{
    const char *mine;

    if (a->kind == RB_ARRIVE_BADN)
        return rb_error__set(err, RB_EINVAL,
                             "%s: the open round has n=%ld; this party said "
                             "n=%ld (nothing written)", name, a->open_n,
                             o->n);
    if (a->kind == RB_ARRIVE_BADEXPECT) {
        /* The round's terms hold the list's digest, not the list. */
        char sha[41] = "";

        mine = o->expect ? o->expect : "";
        if (mine[0])
            rb_barrier__expect_digest(mine, sha);
        if (strcmp(a->open_text, sha) == 0)
            return rb_error__set(err, RB_EINVAL,
                                 "%s: id '%s' is not on the open round's "
                                 "--expect %.200s (nothing written)", name,
                                 o->id, mine);
        if (a->open_text[0] == '\0')
            return rb_error__set(err, RB_EINVAL, "%s: the open round has "
                                 "--expect (none); this party said %.200s "
                                 "(nothing written)", name, mine);
        return rb_error__set(err, RB_EINVAL,
                             "%s: the open round has %s --expect list (sha1 "
                             "%.12s); this party said %.200s (nothing "
                             "written)", name, mine[0] ? "another" : "an",
                             a->open_text, mine[0] ? mine : "(none)");
    }
    mine = o->reduce ? o->reduce : "";
    return rb_error__set(err, RB_EINVAL,
                         "%s: the open round has --reduce %.40s; this party "
                         "said %.40s (nothing written)", name,
                         a->open_text[0] ? a->open_text : "(none)",
                         mine[0] ? mine : "(none)");
}

/* The expected ids: well formed, n of them, this party's id among them. */
static int check_expect(const rb_wait_opts *o, rb_error *err)
{
    const char *p = o->expect, *idp = NULL;
    size_t idlen = strlen(o->id);
    long count = 0;

    if (strlen(o->expect) > (size_t)RB_N_MAX * (RB_NAME_MAX + 1))
        return rb_error__set(err, RB_EINVAL, "expected ids too long");
    while (*p) {
        size_t len = strcspn(p, ",");

        if (len == 0 || len > RB_NAME_MAX || strcspn(p, " \t\r\n{}") < len)
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
        return rb_error__set(err, RB_EINVAL, "%ld expected ids but n is %ld",
                             count, o->n);
    return RB_OK;
}

int rb_barrier__check_opts(const rb_wait_opts *o, rb_error *err)
{
    int rc;

    if (o == NULL)
        return rb_error__set(err, RB_EINVAL, "no wait options");
    /* Version 1 callers' structs end before once_held. */
    if (o->version < 1 || o->version > RB_WAIT_OPTS_VERSION)
        return rb_error__set(err, RB_EINVAL, "rb_wait_opts version %u is "
                             "not known (this library has %d)", o->version,
                             RB_WAIT_OPTS_VERSION);
    if ((rc = rb_check_name(o->name, "barrier name", err)) != RB_OK)
        return rc;
    if ((rc = rb_check_id(o->id, "party id", err)) != RB_OK)
        return rc;
    if (o->prefix && (rc = rb_check_name(o->prefix, "prefix", err)) != RB_OK)
        return rc;
    if (o->job && (rc = rb_check_name(o->job, "job name", err)) != RB_OK)
        return rc;
    if (o->job && (o->job_epoch < 1 || o->job_attempt < 0))
        return rb_error__set(err, RB_EINVAL, "job epoch must be positive "
                             "and attempt not negative");
    if (o->n < 1 || o->n > RB_N_MAX)
        return rb_error__set(err, RB_EINVAL, "n must be 1..%d, not %ld",
                             RB_N_MAX, o->n);
    if (o->lease_ms < 0)
        return rb_error__set(err, RB_EINVAL, "lease must not be negative");
    if (o->ttl_ms < 0)
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
    if (o->reduce) {
        size_t i, len = strlen(o->reduce);

        if (len == 0 || len > 20)
            return rb_error__set(err, RB_EINVAL, "reduce must be 1..20 "
                                 "bytes");
        for (i = 0; i < len; i++)
            if (!((o->reduce[i] >= 'a' && o->reduce[i] <= 'z') ||
                  (o->reduce[i] >= 'A' && o->reduce[i] <= 'Z') ||
                  (o->reduce[i] >= '0' && o->reduce[i] <= '9')))
                return rb_error__set(err, RB_EINVAL, "reduce must be a "
                                     "word of letters and digits");
    }
    if (o->expect && (rc = check_expect(o, err)) != RB_OK)
        return rc;
    return RB_OK;
}

/* ---- Redis errors, as rb_reply__classify named them ------------------- */

/* A key of the wrong type (a script names it; a plain command does not):
 * nothing was written, and a reset of the barrier removes it. */
int rb_barrier__is_wrongtype(const rb_call *call)
{
    return call->reply_err == RB_REPLY_WRONGTYPE;
}

int rb_barrier__is_damaged(const rb_call *call)
{
    return call->reply_err == RB_REPLY_DAMAGED;
}

int rb_barrier__is_unknown_command(const rb_call *call)
{
    return call->reply_err == RB_REPLY_UNKNOWN_COMMAND;
}

int rb_barrier__script_failed(const char *name, const rb_call *call, int rc,
                              rb_error *err)
{
    char msg[sizeof(err->msg)];
    const char *detail;

    if (rc == RB_EREDIS && rb_barrier__is_wrongtype(call)) {
        if (!(detail = rb_reply__wrongtype_key(err->msg)))
            return rb_error__set(err, RB_EREDIS, "%s: a key of this barrier "
                                 "holds a value of the wrong type (not "
                                 "written by rbarrier?); a reset of the "
                                 "barrier removes it", name);
        snprintf(msg, sizeof(msg), "%s", detail);
        return rb_error__set(err, RB_EREDIS, "%s: key %.400s (a reset of "
                             "the barrier removes it)", name, msg);
    }
    if (rc == RB_EREDIS && rb_barrier__is_damaged(call)) {
        snprintf(msg, sizeof(msg), "%s", rb_reply__damaged_text(err->msg));
        return rb_error__set(err, RB_EREDIS, "%s: %s", name, msg);
    }
    return rc;
}

