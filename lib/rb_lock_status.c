/*
 * A lock's read-only side and its pure parts: status, reset, and the
 * scripts' replies decoded (unit-tested with hostile replies).
 */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_lock.h"
#include "rb_reply.h"
#include "rb_script.h"

/* ---- status and reset ---- */

int rb_lock_status(rb_lock_state *out, rb_conn *c, const char *prefix,
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
    if ((rc = rb_check_name(name, "lock name", err)) != RB_OK ||
        (rc = rb_key__lock(base, sizeof(base), prefix, name, err)) != RB_OK)
        return rc;
    rc = rb_script__run(c, RB_SCRIPT_LOCK_STATUS, keys, NULL, 0, &call, &r,
                        err);
    if (rc == RB_EREDIS && call.reply_err == RB_REPLY_WRONGTYPE)
        return rb_error__set(err, RB_EREDIS, "lock %s: a key of this lock "
                             "holds a value of the wrong type", name);
    if (rc != RB_OK)
        return rc;
    rc = rb_lock__decode_status(r, out);
    freeReplyObject(r);
    if (rc == RB_ENOMEM)
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    if (rc != RB_OK)
        return rb_error__set(err, RB_EPROTO, "lock %s: bad status reply",
                             name);
    return RB_OK;
}

void rb_lock_state_clear(rb_lock_state *st)
{
    size_t i;

    if (st == NULL)
        return;
    for (i = 0; i < st->holders_count; i++)
        free(st->holders[i].id);
    for (i = 0; i < st->waiters_count; i++)
        free(st->waiters[i].id);
    free(st->holders);
    free(st->waiters);
    memset(st, 0, sizeof(*st));
}

int rb_lock_reset(long *holders, long *waiters, rb_conn *c,
                  const char *prefix, const char *name, rb_error *err)
{
    rb_error local;
    char base[RB_KEY_MAX];
    const char *keys[1] = { base };
    rb_call call = { .deadline = rb_conn__op_deadline(c), .cancellable = 1 };
    redisReply *r = NULL;
    long long h, w;
    int rc;

    if (err == NULL)
        err = &local;
    if ((rc = rb_check_name(name, "lock name", err)) != RB_OK ||
        (rc = rb_key__lock(base, sizeof(base), prefix, name, err)) != RB_OK)
        return rc;
    rc = rb_script__run(c, RB_SCRIPT_LOCK_RESET, keys, NULL, 0, &call, &r,
                        err);
    if (rc != RB_OK)
        return rc;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        rb_reply__int(r->element[0], 0, 1LL << 40, &h) != RB_OK ||
        rb_reply__int(r->element[1], 0, 1LL << 40, &w) != RB_OK) {
        freeReplyObject(r);
        return rb_error__set(err, RB_EPROTO, "lock %s: bad reset reply",
                             name);
    }
    freeReplyObject(r);
    if (holders)
        *holders = (long)h;
    if (waiters)
        *waiters = (long)w;
    return RB_OK;
}

/* ---- reply decoders (pure) ---- */

#define TOKEN_MAX (1LL << 53)   /* a Lua number stays exact below this */

static int is_word(const redisReply *r)
{
    return r && r->type == REDIS_REPLY_STRING && r->str && r->len > 0 &&
           memchr(r->str, '\0', r->len) == NULL;
}

static int word_is(const redisReply *r, const char *s)
{
    return is_word(r) && strcmp(r->str, s) == 0;
}

int rb_lock__decode(const redisReply *r, rb_lock_reply *out)
{
    long long v;

    memset(out, 0, sizeof(*out));
    out->next_ms = -1;
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
        r->element == NULL)
        return RB_EPROTO;
    if (word_is(r->element[0], "held") || word_is(r->element[0], "released")) {
        out->kind = r->element[0]->str[0] == 'h' ? RB_LOCK_HELD
                                                 : RB_LOCK_RELEASED;
        if (r->elements != 2 ||
            rb_reply__int(r->element[1], 1, TOKEN_MAX, &out->token) != RB_OK)
            return RB_EPROTO;
        return RB_OK;
    }
    if (word_is(r->element[0], "wait")) {
        out->kind = RB_LOCK_WAIT;
        if (r->elements != 2 ||
            rb_reply__int(r->element[1], -1, 1LL << 40, &out->next_ms) !=
                RB_OK)
            return RB_EPROTO;
        return RB_OK;
    }
    if (word_is(r->element[0], "badmax")) {
        out->kind = RB_LOCK_BADMAX;
        if (r->elements != 2 ||
            rb_reply__int(r->element[1], 0, RB_LOCK_MAX, &v) != RB_OK)
            return RB_EPROTO;
        out->max = (long)v;
        return RB_OK;
    }
    if (word_is(r->element[0], "keeper")) {
        out->kind = RB_LOCK_KEEPER;
        if (r->elements != 3 ||
            rb_reply__int(r->element[1], 10, 60, &v) != RB_OK ||
            !(word_is(r->element[2], "missing") ||
              word_is(r->element[2], "class")))
            return RB_EPROTO;
        out->klass = (int)v;
        out->keeper_missing = r->element[2]->str[0] == 'm';
        return RB_OK;
    }
    if (word_is(r->element[0], "busy")) {
        out->kind = RB_LOCK_BUSY;
        if (r->elements == 2)
            return rb_reply__int(r->element[1], 0, 1LL << 40,
                                 &out->next_ms) == RB_OK ? RB_OK : RB_EPROTO;
        return r->elements == 1 ? RB_OK : RB_EPROTO;
    }
    if (r->elements != 1)
        return RB_EPROTO;
    if (word_is(r->element[0], "lost"))
        out->kind = RB_LOCK_LOST;
    else if (word_is(r->element[0], "gone"))
        out->kind = RB_LOCK_GONE;
    else if (word_is(r->element[0], "left"))
        out->kind = RB_LOCK_LEFT;
    else if (word_is(r->element[0], "none"))
        out->kind = RB_LOCK_NONE;
    else
        return RB_EPROTO;
    return RB_OK;
}

int rb_lock__decode_wake(const redisReply *r, const char *nonce,
                         long long *token)
{
    const redisReply *v;
    size_t nlen = strlen(nonce);
    redisReply num;

    if (!is_word(r))
        return RB_EPROTO;
    v = r;
    if (strcmp(v->str, "reset") == 0)
        return 2;
    if (v->len <= nlen + 1 || v->str[nlen] != ' ' ||
        strchr(v->str, ' ') != v->str + nlen)
        return RB_EPROTO;
    if (memcmp(v->str, nonce, nlen) != 0)
        return 0;
    memset(&num, 0, sizeof(num));
    num.type = REDIS_REPLY_STRING;
    num.str = v->str + nlen + 1;
    num.len = v->len - nlen - 1;
    if (rb_reply__int(&num, 1, TOKEN_MAX, token) != RB_OK)
        return RB_EPROTO;
    return 1;
}

static char *dup_word(const redisReply *r)
{
    char *s;

    if (!is_word(r) || r->len > RB_NAME_MAX)
        return NULL;
    if ((s = malloc(r->len + 1)) != NULL)
        memcpy(s, r->str, r->len + 1);
    return s;
}

/* 1 shared, 0 exclusive, -1 neither. */
static int mode_of(const redisReply *r)
{
    if (word_is(r, "s"))
        return 1;
    return word_is(r, "x") ? 0 : -1;
}

int rb_lock__decode_status(const redisReply *r, rb_lock_state *out)
{
    long long max, now, token, nh, deadline, since;
    size_t i, k;

    memset(out, 0, sizeof(*out));
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements < 4 ||
        r->element == NULL ||
        rb_reply__int(r->element[0], 0, RB_LOCK_MAX, &max) != RB_OK ||
        rb_reply__int(r->element[1], 0, TOKEN_MAX, &now) != RB_OK ||
        rb_reply__int(r->element[2], 0, TOKEN_MAX, &token) != RB_OK ||
        rb_reply__int(r->element[3], 0, 1LL << 40, &nh) != RB_OK ||
        (size_t)nh > (r->elements - 4) / 5 ||
        (r->elements - 4 - 5 * (size_t)nh) % 3 != 0)
        return RB_EPROTO;
    out->max = (long)max;
    out->token = token;
    if (nh && (out->holders = calloc((size_t)nh, sizeof(*out->holders))) ==
                  NULL)
        return RB_ENOMEM;
    for (i = 0, k = 4; i < (size_t)nh; i++, k += 5) {
        rb_lock_holder *h = &out->holders[i];

        if (!is_word(r->element[k]) ||
            rb_reply__int(r->element[k + 1], 0, TOKEN_MAX, &h->token) !=
                RB_OK ||
            rb_reply__int(r->element[k + 2], 0, TOKEN_MAX, &deadline) !=
                RB_OK ||
            rb_reply__int(r->element[k + 3], 0, TOKEN_MAX, &since) != RB_OK ||
            (h->shared = mode_of(r->element[k + 4])) < 0)
            goto bad;
        if ((h->id = dup_word(r->element[k])) == NULL)
            goto nomem_or_bad;
        out->holders_count = i + 1;
        h->lease_left_ms = deadline - now;
        h->held_ms = since ? now - since : 0;
    }
    if (k < r->elements) {
        size_t nw = (r->elements - k) / 3;

        if ((out->waiters = calloc(nw, sizeof(*out->waiters))) == NULL) {
            rb_lock_state_clear(out);
            return RB_ENOMEM;
        }
        for (i = 0; i < nw; i++, k += 3) {
            rb_lock_waiter *w = &out->waiters[i];

            if (!is_word(r->element[k]) ||
                rb_reply__int(r->element[k + 1], 0, TOKEN_MAX, &deadline) !=
                    RB_OK ||
                (w->shared = mode_of(r->element[k + 2])) < 0)
                goto bad;
            if ((w->id = dup_word(r->element[k])) == NULL)
                goto nomem_or_bad;
            out->waiters_count = i + 1;
            w->lease_left_ms = deadline - now;
        }
    }
    return RB_OK;
nomem_or_bad:
    if (r->element[k]->len <= RB_NAME_MAX) {
        rb_lock_state_clear(out);
        return RB_ENOMEM;
    }
bad:
    rb_lock_state_clear(out);
    return RB_EPROTO;
}
