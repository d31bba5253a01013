/*
 * A job's pure parts and its read-only side: the options' check, the
 * scripts' replies decoded (unit-tested with hostile replies), status and
 * reset.
 */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_job.h"
#include "rb_reply.h"
#include "rb_script.h"

/* ---- the options ---- */

int rb_job__check_opts(const rb_job_opts *o, rb_error *err)
{
    int rc;

    if (o == NULL || o->version < 1 || o->version > RB_JOB_OPTS_VERSION)
        return rb_error__set(err, RB_EINVAL, "job options: unknown version");
    if (o->version >= 2 &&
        ((o->host && (rc = rb_check_id(o->host, "host", err)) != RB_OK) ||
         (o->master_addr && (rc = rb_check_id(o->master_addr, "master "
                                              "address", err)) != RB_OK)))
        return rc;
    if (o->version >= 2 && (o->master_port < 0 || o->master_port > 65535))
        return rb_error__set(err, RB_EINVAL, "master port must be "
                             "0..65535, not %d", o->master_port);
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

/* ---- the reply ---- */

int rb_job__str_at(const redisReply *r, const char **out)
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
                                         "lost", "busy", "badn", "over",
                                         "stop", "dup", "keeper",
                                         "quarantine" };
    const char *kind;
    long long v[5];
    size_t i;

    memset(out, 0, sizeof(*out));
    if (r == NULL || r->type != REDIS_REPLY_ARRAY ||
        (r->elements != 8 && r->elements != 11) || r->element == NULL ||
        rb_job__str_at(r->element[0], &kind) != RB_OK ||
        rb_job__str_at(r->element[6], &out->text) != RB_OK)
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
    if (out->kind == RB_JOB_STOP && strncmp(out->text, "stopping ", 9) != 0)
        return RB_EPROTO;
    if (r->elements == 11) {
        /* A 'go' with the rendezvous values: text or nil each. */
        if (out->kind != RB_JOB_GO)
            return RB_EPROTO;
        for (i = 0; i < 3; i++) {
            const redisReply *e = r->element[8 + i];

            if (e == NULL || (e->type != REDIS_REPLY_NIL &&
                              e->type != REDIS_REPLY_STRING))
                return RB_EPROTO;
            out->rdv[i] = e;
        }
    }
    if (out->kind == RB_JOB_KEEPER &&
        (out->rank < 10 || out->rank > 60 ||
         (strcmp(out->text, "missing") != 0 &&
          strcmp(out->text, "class") != 0)))
        return RB_EPROTO;
    if (out->kind == RB_JOB_QUARANTINE && out->next_ms < 0)
        return RB_EPROTO;
    if (out->kind == RB_JOB_BROKEN && rb_reply__outcome(out->text, NULL) < 0)
        return RB_EPROTO;
    if (out->kind == RB_JOB_OUT && rb_reply__outcome(out->text, NULL) < 0 &&
        strncmp(out->text, "stopping ", 9) != 0)
        return RB_EPROTO;
    return RB_OK;
}

static char *dup_text(const redisReply *r)
{
    const char *s;
    char *d;

    if (rb_job__str_at(r, &s) != RB_OK)
        return NULL;
    if ((d = malloc(strlen(s) + 1)) != NULL)
        memcpy(d, s, strlen(s) + 1);
    return d;
}

/* {epoch, state, att, n, restarts, now, reason, expect, (id, rank, state,
 * deadline, exit, progress)...}, or {0}. */
/* A state is a short word; a longer one is not a reply of ours. */
#define RB_JOB_STATE_MAX 15

int rb_job__decode_status(const redisReply *r, rb_job_status *out)
{
    long long v[7], now;
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
    if (r->elements < 8 || (r->elements - 8) % 6 != 0 ||
        rb_job__str_at(r->element[1], &state) != RB_OK ||
        strlen(state) > RB_JOB_STATE_MAX ||
        rb_reply__int(r->element[2], 0, 1000000000000000LL, &v[1]) ||
        rb_reply__int(r->element[3], 0, RB_N_MAX, &v[2]) ||
        rb_reply__int(r->element[4], 0, 1000000, &v[3]) ||
        rb_reply__int(r->element[5], 0, 1000000000000000LL, &now))
        return RB_EPROTO;
    out->epoch = v[0];
    out->attempt = (long)v[1];
    out->n = (long)v[2];
    out->restarts = (long)v[3];
    out->state = dup_text(r->element[1]);
    out->reason = dup_text(r->element[6]);
    out->expect = dup_text(r->element[7]);
    if (out->state == NULL || out->reason == NULL || out->expect == NULL) {
        rb_job_status_clear(out);
        return RB_EPROTO;
    }
    count = (r->elements - 8) / 6;
    if (count && (out->members = calloc(count, sizeof(*out->members))) ==
                     NULL) {
        rb_job_status_clear(out);
        return RB_ENOMEM;
    }
    for (i = 0; i < count; i++) {
        redisReply **e = r->element + 8 + i * 6;
        rb_job_member *m = &out->members[i];

        out->members_count = i + 1;
        if ((m->id = dup_text(e[0])) == NULL ||
            rb_job__str_at(e[2], &state) != RB_OK ||
            strlen(state) > RB_JOB_STATE_MAX ||
            (m->state = dup_text(e[2])) == NULL ||
            rb_reply__int(e[1], -1, RB_N_MAX, &v[4]) ||
            rb_reply__int(e[3], -1, 1000000000000000LL, &v[5]) ||
            rb_reply__int(e[4], -1, 255, &v[0]) ||
            rb_reply__int(e[5], -1, 1000000000000000LL, &v[6])) {
            rb_job_status_clear(out);
            return RB_EPROTO;
        }
        m->rank = (long)v[4];
        m->lease_left_ms = v[5] < 0 ? -1 : (v[5] - now > 0 ? v[5] - now : 0);
        m->exit_status = (int)v[0];
        m->progress_age_ms = v[6] < 0 ? -1 : (now - v[6] > 0 ? now - v[6] : 0);
    }
    return RB_OK;
}

void rb_job_status_clear(rb_job_status *st)
{
    size_t i;

    if (st == NULL)
        return;
    for (i = 0; i < st->members_count; i++) {
        free(st->members[i].id);
        free(st->members[i].state);
    }
    free(st->members);
    free(st->state);
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
