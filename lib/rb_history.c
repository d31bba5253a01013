/*
 * A name's history, read side: the stream the scripts append to
 * (lua/includes/history.lua) and its counters. Read only. The stream is
 * read newest first in pages of PAGE entries (XREVRANGE ... COUNT), each
 * page one short call, so a reader never holds Redis for long whatever the
 * cap; the pages are turned oldest first for the caller.
 */
#include "fmacros.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rb_reply.h"

#define PAGE 500
#define ALL 20000   /* "all": past the scripts' cap and its slack */

static char *dup_str(const redisReply *r)
{
    char *s;

    if (r == NULL || r->type != REDIS_REPLY_STRING)
        return NULL;
    if (!(s = malloc(r->len + 1)))
        return NULL;
    memcpy(s, r->str, r->len);
    s[r->len] = '\0';
    return s;
}

static long long to_ll(const redisReply *r)
{
    char buf[32];
    size_t n;

    if (r == NULL || r->type != REDIS_REPLY_STRING)
        return 0;
    n = r->len < sizeof(buf) - 1 ? r->len : sizeof(buf) - 1;
    memcpy(buf, r->str, n);
    buf[n] = '\0';
    return strtoll(buf, NULL, 10);
}

static void event_clear(rb_event *e)
{
    free(e->event);
    free(e->id);
    free(e->cause);
    free(e->reason);
    free(e->in);
    free(e->outcome);
    memset(e, 0, sizeof(*e));
}

/* One stream entry, [id, [field, value, ...]]. Unknown fields are skipped:
 * a later build may record more. Returns RB_OK, RB_EPROTO or RB_ENOMEM. */
static int decode_entry(rb_event *e, const redisReply *r)
{
    const redisReply *f;
    size_t i;
    char **slot;

    memset(e, 0, sizeof(*e));
    e->kind = '?';
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
        r->element[0]->type != REDIS_REPLY_STRING ||
        r->element[1]->type != REDIS_REPLY_ARRAY ||
        r->element[1]->elements % 2)
        return RB_EPROTO;
    e->ms = strtoll(r->element[0]->str, NULL, 10);
    if (strchr(r->element[0]->str, '-'))
        e->seq = strtoll(strchr(r->element[0]->str, '-') + 1, NULL, 10);
    f = r->element[1];
    for (i = 0; i < f->elements; i += 2) {
        const redisReply *k = f->element[i], *v = f->element[i + 1];

        if (k->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING)
            return RB_EPROTO;
        slot = NULL;
        if (strcmp(k->str, "k") == 0 && v->len == 1)
            e->kind = v->str[0];
        else if (strcmp(k->str, "e") == 0)
            slot = &e->event;
        else if (strcmp(k->str, "id") == 0)
            slot = &e->id;
        else if (strcmp(k->str, "c") == 0)
            slot = &e->cause;
        else if (strcmp(k->str, "r") == 0)
            slot = &e->reason;
        else if (strcmp(k->str, "in") == 0)
            slot = &e->in;
        else if (strcmp(k->str, "g") == 0)
            e->g = to_ll(v);
        else if (strcmp(k->str, "n") == 0)
            e->n = to_ll(v);
        else if (strcmp(k->str, "ep") == 0)
            e->epoch = to_ll(v);
        else if (strcmp(k->str, "restart") == 0)
            e->restart = 1;
        else if (strcmp(k->str, "o") == 0)
            slot = &e->outcome;
        if (slot && *slot == NULL && !(*slot = dup_str(v)))
            return RB_ENOMEM;
    }
    if (e->event == NULL && !(e->event = strdup("?")))
        return RB_ENOMEM;
    e->passed = e->outcome && strcmp(e->outcome, "ok") == 0;
    return RB_OK;
}

/* One read; a key of another type is named (the reply does not). */
static int call(rb_conn *c, int argc, const char **argv, redisReply **r,
                rb_error *err)
{
    size_t lens[8];
    rb_call cl = { .deadline = rb_conn__op_deadline(c), .cancellable = 1 };
    int i, rc;

    for (i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    rc = rb_conn__call(c, argc, argv, lens, &cl, r, err);
    if (rc == RB_EREDIS && cl.reply_err == RB_REPLY_WRONGTYPE)
        return rb_error__set(err, RB_EREDIS, "key %s holds a value of "
                             "another type than rbarrier's history", argv[1]);
    return rc;
}

static int read_counters(rb_history *out, rb_conn *c, const char *key,
                         rb_error *err)
{
    const char *argv[2] = { "HGETALL", key };
    redisReply *r = NULL;
    size_t i;
    int rc;

    if ((rc = call(c, 2, argv, &r, err)) != RB_OK)
        return rc;
    if (r->type != REDIS_REPLY_ARRAY || r->elements % 2) {
        freeReplyObject(r);
        return rb_error__set(err, RB_EPROTO, "history counters: bad reply");
    }
    if (r->elements &&
        !(out->counters = calloc(r->elements / 2, sizeof(rb_counter)))) {
        freeReplyObject(r);
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    }
    for (i = 0; i < r->elements; i += 2) {
        rb_counter *k = &out->counters[out->counters_count];

        if (!(k->field = dup_str(r->element[i]))) {
            freeReplyObject(r);
            return rb_error__set(err, RB_ENOMEM, "out of memory");
        }
        k->value = to_ll(r->element[i + 1]);
        out->counters_count++;
    }
    freeReplyObject(r);
    return RB_OK;
}

/* The stream, newest first, into out->events (turned around at the end).
 * Each page starts at the previous page's oldest id, which comes back
 * first and is skipped: "(" ranges need Redis 6.2. */
static int read_events(rb_history *out, rb_conn *c, const char *key,
                       size_t max, rb_error *err)
{
    char end[48] = "+", count[24];
    const char *argv[6] = { "XREVRANGE", key, end, "-", "COUNT", count };
    size_t cap = 0, i, skip = 0;
    int rc;

    for (;;) {
        redisReply *r = NULL;
        size_t want = max - out->events_count;

        if (want == 0)
            break;
        snprintf(count, sizeof(count), "%zu", (want < PAGE ? want : PAGE) +
                 skip);
        if ((rc = call(c, 6, argv, &r, err)) != RB_OK)
            return rc;
        if (r->type != REDIS_REPLY_ARRAY) {
            freeReplyObject(r);
            return rb_error__set(err, RB_EPROTO, "history: bad reply");
        }
        if (r->elements <= skip) {
            freeReplyObject(r);
            break;
        }
        if (out->events_count + r->elements > cap) {
            size_t ncap = cap ? cap * 2 : PAGE;
            rb_event *ev;

            while (ncap < out->events_count + r->elements)
                ncap *= 2;
            if (!(ev = realloc(out->events, ncap * sizeof(*ev)))) {
                freeReplyObject(r);
                return rb_error__set(err, RB_ENOMEM, "out of memory");
            }
            out->events = ev;
            cap = ncap;
        }
        for (i = skip; i < r->elements; i++) {
            rc = decode_entry(&out->events[out->events_count], r->element[i]);
            if (rc != RB_OK) {
                event_clear(&out->events[out->events_count]);
                freeReplyObject(r);
                return rb_error__set(err, rc, rc == RB_ENOMEM ?
                                     "out of memory" :
                                     "history: bad stream entry");
            }
            out->events_count++;
        }
        snprintf(end, sizeof(end), "%.*s",
                 (int)r->element[r->elements - 1]->element[0]->len,
                 r->element[r->elements - 1]->element[0]->str);
        i = r->elements;
        freeReplyObject(r);
        if (i < (size_t)atoll(count))
            break;
        skip = 1;
    }
    for (i = 0; i < out->events_count / 2; i++) {
        rb_event t = out->events[i];

        out->events[i] = out->events[out->events_count - 1 - i];
        out->events[out->events_count - 1 - i] = t;
    }
    return RB_OK;
}

int rb_history_read(rb_history *out, rb_conn *c, const char *prefix,
                    const char *name, size_t max, rb_error *err)
{
    rb_error local;
    char key[RB_KEY_MAX], counters[RB_KEY_MAX];
    const char *argv[2] = { "TYPE", key };
    redisReply *r = NULL;
    int rc;

    if (err == NULL)
        err = &local;
    memset(out, 0, sizeof(*out));
    if ((rc = rb_check_name(name, "name", err)) != RB_OK ||
        (prefix && (rc = rb_check_name(prefix, "prefix", err)) != RB_OK) ||
        (rc = rb_key__history(key, sizeof(key), prefix, name, "",
                              err)) != RB_OK ||
        (rc = rb_key__history(counters, sizeof(counters), prefix, name,
                              ":n", err)) != RB_OK)
        return rc;
    /* The off switch is a string where the stream would be. */
    if ((rc = call(c, 2, argv, &r, err)) != RB_OK)
        return rc;
    if (r->type != REDIS_REPLY_STATUS || (strcmp(r->str, "none") != 0 &&
                                          strcmp(r->str, "stream") != 0 &&
                                          strcmp(r->str, "string") != 0)) {
        freeReplyObject(r);
        return rb_error__set(err, RB_EREDIS, "key %s holds a value of "
                             "another type than rbarrier's history", key);
    }
    out->off = strcmp(r->str, "string") == 0;
    freeReplyObject(r);
    if (!out->off &&
        (rc = read_events(out, c, key, max ? max : ALL, err)) != RB_OK)
        return rc;
    return read_counters(out, c, counters, err);
}

void rb_history_clear(rb_history *h)
{
    size_t i;

    if (h == NULL)
        return;
    for (i = 0; i < h->events_count; i++)
        event_clear(&h->events[i]);
    free(h->events);
    for (i = 0; i < h->counters_count; i++)
        free(h->counters[i].field);
    free(h->counters);
    memset(h, 0, sizeof(*h));
}

int rb_history_off(rb_conn *c, const char *prefix, const char *name,
                   long long ttl_ms, rb_error *err)
{
    rb_error local;
    char key[RB_KEY_MAX], ttl[24];
    const char *set[5] = { "SET", key, "off", "EX", ttl };
    redisReply *r = NULL;
    int rc;

    if (err == NULL)
        err = &local;
    if ((rc = rb_check_name(name, "name", err)) != RB_OK ||
        (prefix && (rc = rb_check_name(prefix, "prefix", err)) != RB_OK) ||
        (rc = rb_key__history(key, sizeof(key), prefix, name, "",
                              err)) != RB_OK)
        return rc;
    snprintf(ttl, sizeof(ttl), "%lld", rb_key__ttl_s(ttl_ms));
    rc = call(c, 5, set, &r, err);
    if (rc == RB_OK)
        freeReplyObject(r);
    return rc;
}
