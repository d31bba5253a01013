/*
 * Parameters: the seed's global value and each worker's local copy. sync and
 * train are one script each, so no update is ever lost; train carries a
 * nonce so that a retry after a lost reply returns the first answer instead
 * of adding twice.
 */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_reply.h"
#include "rb_script.h"

static int param_keys(char *global, char *localk, char *traink,
                      const char *prefix, const char *param,
                      const char *worker, rb_error *err)
{
    int rc;

    if ((rc = rb_check_name(param, "param", err)) != RB_OK)
        return rc;
    if (prefix && (rc = rb_check_name(prefix, "prefix", err)) != RB_OK)
        return rc;
    if (worker && (rc = rb_check_id(worker, "worker", err)) != RB_OK)
        return rc;
    return rb_key__param(global, localk, traink, RB_KEY_MAX, prefix, param,
                         worker, err);
}

/* A key of another type: the scripts name it ("WRONGTYPE <key> holds
 * ..."); a plain GET's error does not, so the key is added. The key names
 * the parameter, so the message does not repeat it. */
static int name_wrongtype(int rc, const rb_call *call, const char *key,
                          rb_error *err)
{
    char msg[sizeof(err->msg)];
    const char *named;

    if (rc != RB_EREDIS || call->reply_err != RB_REPLY_WRONGTYPE)
        return rc;
    if (!(named = rb_reply__wrongtype_key(err->msg)))
        return rb_error__set(err, RB_EREDIS, "key %s holds a value of "
                             "another type than a parameter's (not written "
                             "by rbarrier?); nothing was written", key);
    snprintf(msg, sizeof(msg), "%s", named);
    return rb_error__set(err, RB_EREDIS, "key %.400s", msg);
}

static const char *type_name(int type)
{
    switch (type) {
    case REDIS_REPLY_STRING: return "a string";
    case REDIS_REPLY_ARRAY: return "an array";
    case REDIS_REPLY_INTEGER: return "an integer";
    case REDIS_REPLY_NIL: return "nil";
    case REDIS_REPLY_STATUS: return "a status";
    case REDIS_REPLY_ERROR: return "an error";
    default: return "an unknown type";
    }
}

int rb_param__decode_value(char **out, const redisReply *r, const char *what,
                           rb_error *err)
{
    char num[24];
    const char *text = num;
    size_t len;

    *out = NULL;
    if (r == NULL)
        return rb_error__set(err, RB_EPROTO, "%s: no reply", what);
    if (r->type == REDIS_REPLY_STRING) {
        /* The value goes out whole, or not at all: a NUL inside would cut
         * it silently wherever it is printed. */
        if (r->str == NULL || memchr(r->str, '\0', r->len) != NULL)
            return rb_error__set(err, RB_EPROTO, "%s: the value holds a NUL "
                                 "byte", what);
        text = r->str;
        len = r->len;
    } else if (r->type == REDIS_REPLY_INTEGER) {
        len = (size_t)snprintf(num, sizeof(num), "%lld", r->integer);
    } else if (r->type == REDIS_REPLY_NIL) {
        len = (size_t)snprintf(num, sizeof(num), "0");
    } else {
        return rb_error__set(err, RB_EPROTO, "%s: unexpected reply (%s)",
                             what, type_name(r->type));
    }
    if ((*out = malloc(len + 1)) == NULL)
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    memcpy(*out, text, len);
    (*out)[len] = '\0';
    return RB_OK;
}

int rb_param__decode_train(char **local_out, char **global_out,
                           const redisReply *r, rb_error *err)
{
    int rc;

    *local_out = *global_out = NULL;
    if (r == NULL || r->type != REDIS_REPLY_ARRAY || r->elements != 2)
        return rb_error__set(err, RB_EPROTO, "train: unexpected reply (%s%s)",
                             r ? type_name(r->type) : "none",
                             r && r->type == REDIS_REPLY_ARRAY
                                 ? " not of 2 elements" : "");
    /* Both values as the script returns them: strings, never nil. */
    if (r->element[0]->type == REDIS_REPLY_NIL ||
        r->element[1]->type == REDIS_REPLY_NIL)
        return rb_error__set(err, RB_EPROTO, "train: unexpected reply (nil "
                             "value)");
    if ((rc = rb_param__decode_value(local_out, r->element[0], "train",
                                     err)) != RB_OK)
        return rc;
    if ((rc = rb_param__decode_value(global_out, r->element[1], "train",
                                     err)) != RB_OK) {
        free(*local_out);
        *local_out = NULL;
    }
    return rc;
}

int rb_param_sync(char **out, rb_conn *c, const char *prefix,
                  const char *param, const char *worker, long long ttl_ms,
                  rb_error *err)
{
    rb_error local;
    char global[RB_KEY_MAX], localk[RB_KEY_MAX], traink[RB_KEY_MAX], ttl[24];
    const char *keys[2] = { global, localk };
    const char *args[1] = { ttl };
    rb_call call = {
        .deadline = rb_conn__op_deadline(c),
        .cancellable = 1,
    };
    redisReply *r = NULL;
    int rc;

    if (err == NULL)
        err = &local;
    *out = NULL;
    rc = param_keys(global, localk, traink, prefix, param, worker, err);
    if (rc != RB_OK)
        return rc;
    snprintf(ttl, sizeof(ttl), "%lld", rb_key__ttl_s(ttl_ms));
    rc = rb_script__run(c, RB_SCRIPT_SYNC, keys, args, 1, &call, &r, err);
    if (rc != RB_OK)
        return name_wrongtype(rc, &call, global, err);
    rc = rb_param__decode_value(out, r, "sync", err);
    freeReplyObject(r);
    return rc;
}

int rb_param_train(char **local_out, char **global_out, rb_conn *c,
                   const char *prefix, const char *param, const char *worker,
                   const char *by, long long ttl_ms, rb_error *err)
{
    rb_error local;
    char global[RB_KEY_MAX], localk[RB_KEY_MAX], traink[RB_KEY_MAX];
    char ttl[24], nonce[33];
    const char *keys[3] = { global, localk, traink };
    const char *args[4];
    rb_call call = {
        .deadline = rb_conn__op_deadline(c),
        .cancellable = 1,
        .fault = RB_FAULT_TRAIN_REPLY,
    };
    redisReply *r = NULL;
    int rc, is_float = 0;

    if (err == NULL)
        err = &local;
    *local_out = *global_out = NULL;
    if ((rc = rb_check_number(&is_float, by, "increment", err)) != RB_OK)
        return rc;
    rc = param_keys(global, localk, traink, prefix, param, worker, err);
    if (rc != RB_OK)
        return rc;
    snprintf(ttl, sizeof(ttl), "%lld", rb_key__ttl_s(ttl_ms));
    rb_random_hex(nonce, 16);
    args[0] = by;
    args[1] = is_float ? "1" : "0";
    args[2] = nonce;
    args[3] = ttl;
    rc = rb_script__run(c, RB_SCRIPT_TRAIN, keys, args, 4, &call, &r, err);
    if (rc != RB_OK)
        return name_wrongtype(rc, &call, global, err);
    rc = rb_param__decode_train(local_out, global_out, r, err);
    freeReplyObject(r);
    return rc;
}

/* GET of the global value; *r the reply (nil when never set). */
static int get_reply(rb_conn *c, const char *global, redisReply **r,
                     rb_error *err)
{
    const char *argv[2] = { "GET", global };
    size_t lens[2] = { 3, strlen(global) };
    rb_call call = {
        .deadline = rb_conn__op_deadline(c),
        .cancellable = 1,
    };
    int rc = rb_conn__call(c, 2, argv, lens, &call, r, err);

    return rc == RB_OK ? RB_OK : name_wrongtype(rc, &call, global, err);
}

int rb_param_get(char **out, rb_conn *c, const char *prefix,
                 const char *param, rb_error *err)
{
    rb_error local;
    char global[RB_KEY_MAX];
    redisReply *r = NULL;
    int rc;

    if (err == NULL)
        err = &local;
    *out = NULL;
    rc = param_keys(global, NULL, NULL, prefix, param, NULL, err);
    if (rc != RB_OK || (rc = get_reply(c, global, &r, err)) != RB_OK)
        return rc;
    rc = rb_param__decode_value(out, r, "get", err);
    freeReplyObject(r);
    return rc;
}

/* A blocking slice no longer than this: the socket's timeout follows it,
 * and a dropped connection is noticed within it. */
#define RB_PARAM_SLICE_MS 5000

int rb_param_get_until(char **out, rb_conn *c, const char *prefix,
                       const char *param, long long timeout_ms,
                       rb_error *err)
{
    rb_error local;
    char global[RB_KEY_MAX], wake[RB_KEY_MAX];
    long long until = timeout_ms > 0 ? rb_now_ms() + timeout_ms : 0;
    redisReply *r = NULL;
    int rc;

    if (err == NULL)
        err = &local;
    *out = NULL;
    if ((rc = param_keys(global, NULL, NULL, prefix, param, NULL, err)) ||
        (rc = rb_key__param_wake(wake, sizeof(wake), prefix, param, err)) ||
        (rc = get_reply(c, global, &r, err)))
        return rc;
    /* Set before this call (by set, or made by train): no wait. A set from
     * now on is on the wake list, which the blocking read finds whether it
     * came before the read or during it. */
    while (r->type == REDIS_REPLY_NIL) {
        long long now = rb_now_ms(), slice = RB_PARAM_SLICE_MS;
        /* With a timeout the last slice is cut at it to the millisecond
         * (Redis' own blocking timeouts tick at 100 ms), as timeout(1). */
        rb_call call = {
            .deadline = until ? rb_deadline__exact(until)
                              : rb_conn__op_deadline(c),
            .cancellable = 1,
        };

        freeReplyObject(r);
        r = NULL;
        if (until && until - now < slice)
            slice = until - now;
        call.block_ms = (int)(slice > 0 ? slice : 0);
        rc = until && now >= until
                 ? RB_ETIMEOUT
                 : rb_conn__block_rotate(c, wake, &call, &r, NULL, err);
        if (rc == RB_ETIMEOUT)
            return rb_error__set(err, RB_ETIMEOUT, "%s: not set within %gs",
                                 param, (double)timeout_ms / 1000.0);
        if (rc != RB_OK)
            return name_wrongtype(rc, &call, wake, err);
    }
    rc = rb_param__decode_value(out, r, "get", err);
    freeReplyObject(r);
    return rc;
}

int rb_param_set(rb_conn *c, const char *prefix, const char *param,
                 const char *value, long long ttl_ms, rb_error *err)
{
    rb_error local;
    char global[RB_KEY_MAX], ttl[24];
    const char *keys[1] = { global };
    const char *args[2] = { value, ttl };
    rb_call call = {
        .deadline = rb_conn__op_deadline(c),
        .cancellable = 1,
    };
    redisReply *r = NULL;
    int rc;

    if (err == NULL)
        err = &local;
    if ((rc = rb_check_number(NULL, value, "value", err)) != RB_OK)
        return rc;
    rc = param_keys(global, NULL, NULL, prefix, param, NULL, err);
    if (rc != RB_OK)
        return rc;
    snprintf(ttl, sizeof(ttl), "%lld", rb_key__ttl_s(ttl_ms));
    rc = rb_script__run(c, RB_SCRIPT_SET, keys, args, 2, &call, &r, err);
    freeReplyObject(r);
    return name_wrongtype(rc, &call, global, err);
}
