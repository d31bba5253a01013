/*
 * Parameters: the seed's global value and each worker's local copy. sync and
 * train are one script each, so no update is ever lost; train carries a
 * nonce so that a retry after a lost reply returns the first answer instead
 * of adding twice.
 */
#include "fmacros.h"

#include <stdio.h>
#include <string.h>

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

static int copy_str(const redisReply *r, char *out, size_t outlen,
                    rb_error *err)
{
    if (r->type == REDIS_REPLY_STRING) {
        snprintf(out, outlen, "%s", r->str);
        return RB_OK;
    }
    if (r->type == REDIS_REPLY_INTEGER) {
        snprintf(out, outlen, "%lld", r->integer);
        return RB_OK;
    }
    if (r->type == REDIS_REPLY_NIL) {
        snprintf(out, outlen, "0");
        return RB_OK;
    }
    return rb_error__set(err, RB_EPROTO, "unexpected reply type %d", r->type);
}

int rb_param_sync(rb_conn *c, const char *prefix, const char *param,
                  const char *worker, long ttl_s, char *out, size_t outlen,
                  rb_error *err)
{
    rb_error local;
    char global[RB_KEY_MAX], localk[RB_KEY_MAX], traink[RB_KEY_MAX], ttl[24];
    const char *keys[2] = { global, localk };
    const char *args[1] = { ttl };
    rb_call call = {
        .deadline = rb_deadline__within(rb_now_ms(), RB_RESEND_WINDOW_MS),
        .cancellable = 1,
    };
    redisReply *r = NULL;
    int rc;

    if (err == NULL)
        err = &local;
    rc = param_keys(global, localk, traink, prefix, param, worker, err);
    if (rc != RB_OK)
        return rc;
    snprintf(ttl, sizeof(ttl), "%ld", ttl_s > 0 ? ttl_s : 86400);
    rc = rb_script__run(c, RB_SCRIPT_SYNC, keys, args, 1, &call, &r, err);
    if (rc != RB_OK)
        return rc;
    rc = copy_str(r, out, outlen, err);
    freeReplyObject(r);
    return rc;
}

int rb_param_train(rb_conn *c, const char *prefix, const char *param,
                   const char *worker, const char *by, long ttl_s,
                   char *local_out, char *global_out, size_t outlen,
                   rb_error *err)
{
    rb_error local;
    char global[RB_KEY_MAX], localk[RB_KEY_MAX], traink[RB_KEY_MAX];
    char ttl[24], nonce[33];
    const char *keys[3] = { global, localk, traink };
    const char *args[4];
    rb_call call = {
        .deadline = rb_deadline__within(rb_now_ms(), RB_RESEND_WINDOW_MS),
        .cancellable = 1,
        .fault = RB_FAULT_TRAIN_REPLY,
    };
    redisReply *r = NULL;
    int rc, is_float = 0;

    if (err == NULL)
        err = &local;
    if ((rc = rb_check_number(by, "increment", &is_float, err)) != RB_OK)
        return rc;
    rc = param_keys(global, localk, traink, prefix, param, worker, err);
    if (rc != RB_OK)
        return rc;
    snprintf(ttl, sizeof(ttl), "%ld", ttl_s > 0 ? ttl_s : 86400);
    rb_random_hex(nonce, 16);
    args[0] = by;
    args[1] = is_float ? "1" : "0";
    args[2] = nonce;
    args[3] = ttl;
    rc = rb_script__run(c, RB_SCRIPT_TRAIN, keys, args, 4, &call, &r, err);
    if (rc != RB_OK)
        return rc;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2) {
        freeReplyObject(r);
        return rb_error__set(err, RB_EPROTO, "bad train reply");
    }
    rc = copy_str(r->element[0], local_out, outlen, err);
    if (rc == RB_OK)
        rc = copy_str(r->element[1], global_out, outlen, err);
    freeReplyObject(r);
    return rc;
}

int rb_param_get(rb_conn *c, const char *prefix, const char *param,
                 char *out, size_t outlen, rb_error *err)
{
    rb_error local;
    char global[RB_KEY_MAX];
    const char *argv[2] = { "GET", global };
    size_t lens[2];
    rb_call call = {
        .deadline = rb_deadline__within(rb_now_ms(), RB_RESEND_WINDOW_MS),
        .cancellable = 1,
    };
    redisReply *r = NULL;
    int rc;

    if (err == NULL)
        err = &local;
    rc = param_keys(global, NULL, NULL, prefix, param, NULL, err);
    if (rc != RB_OK)
        return rc;
    lens[0] = 3;
    lens[1] = strlen(global);
    rc = rb_conn__call(c, 2, argv, lens, &call, &r, err);
    if (rc != RB_OK)
        return rc;
    rc = copy_str(r, out, outlen, err);
    freeReplyObject(r);
    return rc;
}

int rb_param_set(rb_conn *c, const char *prefix, const char *param,
                 const char *value, long ttl_s, rb_error *err)
{
    rb_error local;
    char global[RB_KEY_MAX], ttl[24];
    const char *keys[1] = { global };
    const char *args[2] = { value, ttl };
    rb_call call = {
        .deadline = rb_deadline__within(rb_now_ms(), RB_RESEND_WINDOW_MS),
        .cancellable = 1,
    };
    redisReply *r = NULL;
    int rc;

    if (err == NULL)
        err = &local;
    if ((rc = rb_check_number(value, "value", NULL, err)) != RB_OK)
        return rc;
    rc = param_keys(global, NULL, NULL, prefix, param, NULL, err);
    if (rc != RB_OK)
        return rc;
    snprintf(ttl, sizeof(ttl), "%ld", ttl_s > 0 ? ttl_s : 86400);
    rc = rb_script__run(c, RB_SCRIPT_SET, keys, args, 2, &call, &r, err);
    freeReplyObject(r);
    return rc;
}
