/*
 * Barriers: status and reset, the two calls an operator makes. Each is one
 * script (a consistent snapshot; a reset no arrival can interleave with),
 * and each result owns what it holds (strings of any length, never cut to
 * a buffer of the library's choosing), freed by its clear function.
 */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_barrier.h"
#include "rb_script.h"

static rb_call call_admin(const rb_conn *c)
{
    rb_call call = {
        .deadline = rb_conn__op_deadline(c),
        .cancellable = 1,
    };

    return call;
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
    if (prefix && (rc = rb_check_name(prefix, "prefix", err)) != RB_OK)
        return rc;
    if ((rc = rb_key__barrier(base, sizeof(base), prefix, name, err)))
        return rc;
    rc = rb_script__run(c, RB_SCRIPT_STATUS, keys, NULL, 0, &call, &r, err);
    if (rc != RB_OK)
        return rb_barrier__script_failed(name, &call, rc, err);
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
    size_t i;

    if (st == NULL)
        return;
    for (i = 0; i < st->members_count; i++)
        free(st->members[i].id);
    free(st->members);
    free(st->last_outcome);
    memset(st, 0, sizeof(*st));
}

int rb_barrier__reset_from_reply(rb_reset_result *res, const redisReply *r)
{
    rb_reset_reply rs;
    size_t i;

    memset(res, 0, sizeof(*res));
    if (rb_reply__reset(r, &rs) != RB_OK)
        return RB_EPROTO;
    res->gen = rs.gen;
    res->members = rs.members;
    if (rs.removed_count == 0)
        return RB_OK;
    if ((res->removed = calloc(rs.removed_count, sizeof(char *))) == NULL)
        return RB_ENOMEM;
    for (i = 0; i < rs.removed_count; i++) {
        size_t len = rs.removed[i]->len;

        if ((res->removed[i] = malloc(len + 1)) == NULL)
            return RB_ENOMEM;
        memcpy(res->removed[i], rs.removed[i]->str, len + 1);
        res->removed_count = i + 1;
    }
    return RB_OK;
}

int rb_barrier_reset(rb_reset_result *out, rb_conn *c, const char *prefix,
                     const char *name, long long ttl_ms, rb_error *err)
{
    rb_error local;
    rb_reset_result tmp;
    char base[RB_KEY_MAX], nonce_key[RB_KEY_MAX], linger[24], ttl[24];
    const char *keys[2] = { base, nonce_key };
    const char *args[2] = { linger, ttl };
    rb_call call = call_admin(c);
    redisReply *r = NULL;
    long long t = rb_key__ttl_s(ttl_ms);
    int rc;

    if (err == NULL)
        err = &local;
    if (out == NULL)
        out = &tmp;
    memset(out, 0, sizeof(*out));
    if ((rc = rb_check_name(name, "barrier name", err)) != RB_OK)
        return rc;
    if (prefix && (rc = rb_check_name(prefix, "prefix", err)) != RB_OK)
        return rc;
    if ((rc = rb_key__barrier(base, sizeof(base), prefix, name, err)) ||
        (rc = rb_key__nonces(nonce_key, sizeof(nonce_key), base, err)))
        return rc;
    snprintf(linger, sizeof(linger), "%lld", rb_barrier__linger_s(t));
    snprintf(ttl, sizeof(ttl), "%lld", t);
    rc = rb_script__run(c, RB_SCRIPT_RESET, keys, args, 2, &call, &r, err);
    if (rc != RB_OK)
        return rc;
    rc = rb_barrier__reset_from_reply(out, r);
    freeReplyObject(r);
    if (out == &tmp)
        rb_reset_result_clear(&tmp);
    if (rc == RB_ENOMEM)
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    if (rc != RB_OK)
        return rb_error__set(err, RB_EPROTO, "%s: bad reset reply", name);
    return RB_OK;
}

void rb_reset_result_clear(rb_reset_result *res)
{
    size_t i;

    if (res == NULL)
        return;
    for (i = 0; i < res->removed_count; i++)
        free(res->removed[i]);
    free(res->removed);
    memset(res, 0, sizeof(*res));
}
