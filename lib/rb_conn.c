/*
 * The connection handle and its one resend loop. A router (rb_router.h)
 * picks the node for a call; the node connects and exchanges; when an
 * attempt fails, rb_router__decide says what the failure means, and this
 * loop does it: follow a redirect at once, or resend (reconnecting as
 * needed) after a backoff for as long as the call's deadline allows.
 * Connecting is one more attempt of the same loop: a refused connect is a
 * failure like a dropped connection, under the same rules.
 *
 * Before a handle has ever connected, a failed attempt is retried by the
 * handle's own rule (rb_deadline__reach: --connect-timeout, else once, so
 * that a wrong URL fails at once), except that a server which took the
 * connection and cut it is tried again for a moment (a restart, clients
 * being killed).
 */
#include "fmacros.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_acl.h"
#include "rb_router.h"

/* The unreachable notice comes after this long of failing. */
#define RB_NOTICE_AFTER_MS 5000
/* A first connection cut after the server took it is tried this long. */
#define RB_CUT_RETRY_MS 2000

/* ---- the handle ------------------------------------------------------- */

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);

    if (d)
        memcpy(d, s, n);
    return d;
}

int rb_conn_new(rb_conn **out, const rb_url *url, const rb_conn_opts *opts,
                rb_error *err)
{
    rb_conn *c;
    rb_conn_opts defaults = RB_CONN_OPTS_INIT;
    const char *password = NULL;
    rb_url_kind kind;
    size_t i, nodes;
    int rc;

    *out = NULL;
    if (url == NULL)
        return rb_error__set(err, RB_EINVAL, "no URL");
    if (opts && opts->version != RB_CONN_OPTS_VERSION)
        return rb_error__set(err, RB_EINVAL, "rb_conn_opts version %u is "
                             "not one this library knows (%d)",
                             opts->version, RB_CONN_OPTS_VERSION);
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    c->opts = opts ? *opts : defaults;
    c->current = -1;
    if (c->opts.connect_timeout_ms < 0)
        c->opts.connect_timeout_ms = 0;
    if (c->opts.command_timeout_ms <= 0)
        c->opts.command_timeout_ms = 5000;
    if (c->opts.replicas < 0)
        c->opts.replicas = 0;
    if (c->opts.password)
        password = c->opts.password;
    else
        password = rb_url_get_password(url);
    if (password && strlen(password) > RB_URL_PASSWORD_MAX) {
        rb_conn_free(c);
        return rb_error__set(err, RB_EINVAL, "password is longer than %d "
                             "bytes", RB_URL_PASSWORD_MAX);
    }
    if (password && (c->password = dup_str(password)) == NULL)
        goto nomem;
    c->opts.password = NULL;   /* not kept: the caller's memory */
    if (c->opts.client_name && c->opts.client_name[0]) {
        if (strlen(c->opts.client_name) > RB_URL_HOST_MAX) {
            rb_conn_free(c);
            return rb_error__set(err, RB_EINVAL, "client name is longer "
                                 "than %d bytes", RB_URL_HOST_MAX);
        }
        if ((c->client_name = dup_str(c->opts.client_name)) == NULL)
            goto nomem;
    }
    c->opts.client_name = NULL;
    kind = rb_url_get_kind(url);
    nodes = rb_url_nodes_count(url);
    c->db = rb_url_get_db(url);
    if (rb_url_get_user(url)[0] &&
        (c->user = dup_str(rb_url_get_user(url))) == NULL)
        goto nomem;
    if (kind == RB_URL_SENTINEL &&
        (c->master = dup_str(rb_url_get_master(url))) == NULL)
        goto nomem;
    if (kind == RB_URL_TCP &&
        (c->seed_host = dup_str(rb_url_get_host(url, 0))) == NULL)
        goto nomem;
    /* OpenSSL is loaded and set up only here, for a rediss:// URL: a
     * plain one costs it nothing, start-up included. */
    if (rb_url_is_tls(url) &&
        (rc = rb_tls__ctx_new(&c->tls, c->opts.tls, err)) != RB_OK) {
        rb_conn_free(c);
        return rc;
    }
    c->opts.tls = NULL;
    c->stream.is_unix = kind == RB_URL_UNIX;
    c->stream.tls = c->tls;

    if (kind == RB_URL_UNIX) {
        if (rb_router__add_node(c, NULL, 0, rb_url_get_path(url)) < 0)
            goto nomem;
    } else if (kind == RB_URL_SENTINEL) {
        c->mode = RB_ROUTE_SENTINEL;
        for (i = 0; i < nodes && i < RB_NODES_MAX; i++) {
            c->sentinels[i] = rb_node__new(rb_url_get_host(url, i),
                                           rb_url_get_port(url, i), NULL);
            if (c->sentinels[i] == NULL)
                goto nomem;
            c->nsentinels++;
        }
    } else {
        for (i = 0; i < nodes; i++)
            if (rb_router__add_node(c, rb_url_get_host(url, i),
                                    rb_url_get_port(url, i), NULL) < 0)
                goto nomem;
    }
    *out = c;
    return RB_OK;

nomem:
    rb_conn_free(c);
    return rb_error__set(err, RB_ENOMEM, "out of memory");
}

void rb_conn_free(rb_conn *c)
{
    int i;

    if (c == NULL)
        return;
    for (i = 0; i < c->nnodes; i++)
        rb_node__free(c->nodes[i]);
    for (i = 0; i < c->nsentinels; i++)
        rb_node__free(c->sentinels[i]);
    free(c->slot_node);
    rb_tls__ctx_free(c->tls);
    if (c->password) {
        rb_secret__wipe(c->password, strlen(c->password));
        free(c->password);
    }
    free(c->client_name);
    free(c->user);
    free(c->master);
    free(c->seed_host);
    free(c);
}

int rb_conn__no_blmove(const rb_conn *c) { return c->no_blmove; }
void rb_conn__set_no_blmove(rb_conn *c) { c->no_blmove = 1; }

int rb_conn__cancelled(const rb_conn *c)
{
    struct pollfd p;

    if (c->opts.cancel_fd < 0)
        return 0;
    p.fd = c->opts.cancel_fd;
    p.events = POLLIN;
    p.revents = 0;
    return poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP));
}

/* ---- routes ------------------------------------------------------------ */

/* The node for a call on key (NULL: any), connected. */
static rb_node_io route(rb_conn *c, const char *key, size_t keylen,
                        const rb_deadline *d, int cancel_fd, int *out,
                        rb_error *err)
{
    if (c->mode == RB_ROUTE_SENTINEL)
        return rb_sentinel__route(c, d, cancel_fd, out, err);
    if (c->mode == RB_ROUTE_CLUSTER)
        return rb_cluster__route(c, key, keylen, d, cancel_fd, out, err);
    return rb_router__one(c, d, cancel_fd, out, err);
}

/* The cluster probe's answer, when one came on node idx: a plain URL of a
 * cluster node routes by slots from now on. */
static void adopt_probe(rb_conn *c, int idx)
{
    redisReply *slots;

    if (idx < 0 || !rb_node__take_probe(c->nodes[idx], &slots))
        return;
    c->probed = 1;
    if (slots && slots->elements > 0 && c->mode == RB_ROUTE_ONE &&
        rb_cluster__load(c, slots) > 0)
        c->mode = RB_ROUTE_CLUSTER;
    if (slots)
        freeReplyObject(slots);
}

/* ---- waiting between attempts ---------------------------------------- */

static int backoff_sleep(rb_conn *c, int ms, int cancellable)
{
    struct pollfd p;

    if (ms <= 0)
        return 0;
    if (cancellable && c->opts.cancel_fd >= 0) {
        p.fd = c->opts.cancel_fd;
        p.events = POLLIN;
        p.revents = 0;
        return poll(&p, 1, ms) > 0;
    }
    poll(NULL, 0, ms);
    return 0;
}

int rb_conn__pause(rb_conn *c, int ms)
{
    return backoff_sleep(c, ms, 1);
}

static int next_delay(int delay, int cap)
{
    return delay * 2 > cap ? cap : delay * 2;
}

/* Tell the caller once that Redis cannot be reached, when the retrying
 * has lasted a while and goes on: a restart or a pause of a few seconds is
 * not worth a line on stderr, a server that stays away is. */
static void notice(rb_conn *c, const rb_deadline *d, long long failing_since,
                   const rb_error *err)
{
    long long now = rb_now_ms(), left = rb_deadline__left(d, now);

    if (c->noticed || c->opts.on_unreachable == NULL || left == 0 ||
        err->code != RB_EUNREACHABLE ||
        now - failing_since < RB_NOTICE_AFTER_MS)
        return;
    c->noticed = 1;
    c->opts.on_unreachable(c->opts.payload, err->msg,
                           d->until_ms ? left : 0);
}

/* Before the first connection: a server that took the connection and cut
 * it is there, so one attempt becomes a moment of them; one that found
 * nobody listening stays one attempt, as a wrong URL should. (A server
 * that refuses us for good, AUTH or a TLS alert, never gets here.) */
static void retry_a_cut(const rb_conn *c, rb_deadline *reach)
{
    int i, reached = 0;

    if (reach->kind != RB_DEADLINE_ONCE)
        return;
    for (i = 0; i < c->nnodes && !reached; i++)
        reached = rb_node__reached(c->nodes[i]);
    for (i = 0; i < c->nsentinels && !reached; i++)
        reached = rb_node__reached(c->sentinels[i]);
    if (reached)
        *reach = rb_deadline__within(rb_now_ms(), RB_CUT_RETRY_MS);
}

/* ---- one attempt (rb_conn_exchange.c) and what its error means ------- */

/* The message of an error reply that ends the call or is resent. */
static void word_error(rb_error *err, rb_next next, rb_reply_err kind,
                       const rb_node *n, int argc, const char **argv,
                       const size_t *lens)
{
    char text[sizeof(err->msg)];

    memcpy(text, err->msg, sizeof(text));
    if (next == RB_NEXT_STOP)
        rb_acl__explain(err, kind, text, argc, argv, lens);
    else if (next == RB_NEXT_SAME)
        rb_error__set(err, RB_EUNREACHABLE, "Redis is not ready: %s", text);
    else if (next == RB_NEXT_ROUTE)
        rb_error__set(err, RB_EUNREACHABLE, "Redis at %s cannot take "
                      "the call now: %s", rb_node__name(n), text);
}

/* ---- the resend loop -------------------------------------------------- */

/* Send the call (argc 0: only reach a node) until it is answered, fails
 * for good, or rule says stop. reach: the rule before the handle has ever
 * connected. */
static int run(rb_conn *c, int argc, const char **argv, const size_t *lens,
               rb_call *call, rb_deadline reach, redisReply **out,
               rb_error *err)
{
    const rb_deadline *d = &call->deadline;
    int cancel_fd = call->cancellable ? c->opts.cancel_fd : -1;
    int delay = RB_BACKOFF_MIN_MS, target = -1, asking = 0;
    long long since = 0;
    size_t keylen = 0;
    const char *key =
        argc > 0 ? rb_conn__call_key(argc, argv, lens, &keylen) : NULL;
    rb_attempt at = { .redirects = 0 };

    call->reply_err = RB_REPLY_NONE;
    call->then_reply = NULL;
    for (;;) {
        const rb_deadline *rule = c->connected_once ? d : &reach;
        rb_reply_err kind = RB_REPLY_NONE;
        rb_answer a = RB_ANSWER_DONE;
        rb_decision dec;
        rb_node_io io;
        long long now, left;
        int idx = -1, reached = 0;

        if (call->cancellable && rb_conn__cancelled(c))
            return rb_error__set(err, RB_ECANCELED, "interrupted");
        at.mode = c->mode;
        if (target >= 0) {
            idx = target;
            io = rb_router__open(c, c->nodes[idx], rule, cancel_fd, err);
        } else {
            io = route(c, key, keylen, rule, cancel_fd, &idx, err);
        }
        adopt_probe(c, idx);
        if (io == RB_NODE_OK) {
            reached = 1;
            if (argc == 0) {
                c->connected_once = 1;
                return RB_OK;
            }
            io = rb_conn__exchange(c, idx, asking, argc, argv, lens, key,
                                   keylen, call, &a, &kind, out, err);
            adopt_probe(c, idx);
        }
        target = -1;
        asking = 0;
        if (io == RB_NODE_CANCELED)
            return rb_error__set(err, RB_ECANCELED, "interrupted");
        if (io == RB_NODE_REFUSED)
            return err->code;
        if (io == RB_NODE_EXPIRED && d->kind == RB_DEADLINE_EXACT)
            return rb_error__set(err, RB_ETIMEOUT, "deadline reached");
        if (io != RB_NODE_OK) {
            if (err->code == RB_ENOMEM || err->code == RB_EPROTO)
                return err->code;
            at.failure = reached ? RB_FAILED_DROPPED : RB_FAILED_CONNECT;
            call->reply_err = RB_REPLY_NONE;
        } else {
            /* The server answered: from now on a drop is resent as the
             * call says. */
            c->connected_once = 1;
            rule = d;
            c->last = idx;
            if (a == RB_ANSWER_DONE)
                return RB_OK;
            at.failure =
                a == RB_ANSWER_ACKS ? RB_FAILED_ACKS : RB_FAILED_REPLY;
            at.reply = kind;
            call->reply_err = kind;
        }
        dec = rb_router__decide(&at);
        if (dec.drop && idx >= 0)
            rb_node__drop(c->nodes[idx]);
        if (dec.ask_sentinels)
            c->current = -1;
        if (at.failure == RB_FAILED_REPLY)
            word_error(err, dec.next, kind, idx >= 0 ? c->nodes[idx] : NULL,
                       argc, argv, lens);
        if (dec.next == RB_NEXT_STOP)
            return err->code;
        if (dec.next == RB_NEXT_REDIRECT) {
            target = rb_cluster__redirect(c, err->msg, dec.remember_slot);
            if (target < 0)
                return rb_error__set(err, RB_EREDIS, "%s (after %d "
                                     "redirects)", err->msg, at.redirects);
            if (dec.to_cluster)
                c->mode = RB_ROUTE_CLUSTER;
            if (dec.refresh_map)
                c->map_stale = 1;
            asking = dec.asking;
            at.redirects++;
            continue;
        }
        if (dec.refresh_map)
            c->map_stale = 1;

        /* Resend as the deadline allows. */
        if (!c->connected_once)
            retry_a_cut(c, &reach);
        now = rb_now_ms();
        left = rb_deadline__left(rule, now);
        if (left == 0) {
            if (d->kind == RB_DEADLINE_EXACT && now >= d->until_ms)
                return rb_error__set(err, RB_ETIMEOUT, "deadline reached");
            return err->code;
        }
        if (since == 0)
            since = now;
        notice(c, rule, since, err);
        if (backoff_sleep(c, delay < left ? delay : (int)left,
                          call->cancellable))
            return rb_error__set(err, RB_ECANCELED, "interrupted");
        delay = next_delay(delay, rb_deadline__backoff_cap(rule, now));
        at.redirects = 0;
    }
}

int rb_conn__call(rb_conn *c, int argc, const char **argv,
                  const size_t *lens, rb_call *call, redisReply **out,
                  rb_error *err)
{
    *out = NULL;
    return run(c, argc, argv, lens, call, rb_conn__reach(c, 0), out, err);
}

int rb_conn__connect(rb_conn *c, const rb_deadline *reach, rb_error *err)
{
    rb_call call = { .deadline = *reach, .cancellable = 1 };
    redisReply *none = NULL;

    return run(c, 0, NULL, NULL, &call, *reach, &none, err);
}

int rb_conn_connect(rb_conn *c, long long until_ms, rb_error *err)
{
    rb_error local;
    rb_deadline d = rb_conn__reach(c, until_ms);

    if (err == NULL)
        err = &local;
    return rb_conn__connect(c, &d, err);
}

rb_deadline rb_conn__reach(const rb_conn *c, long long party_until)
{
    return rb_deadline__reach(rb_now_ms(), party_until,
                              c->opts.connect_timeout_ms);
}

long long rb_conn__ack_window_ms(const rb_conn *c)
{
    return c->opts.replicas > 0 ? RB_RESEND_WINDOW_REPLICAS_MS : 0;
}

rb_deadline rb_conn__op_deadline(const rb_conn *c)
{
    long long ms = rb_conn__ack_window_ms(c);

    if (ms < RB_RESEND_WINDOW_MS)
        ms = RB_RESEND_WINDOW_MS;
    if (c->opts.connect_timeout_ms > ms)
        ms = c->opts.connect_timeout_ms;
    return rb_deadline__within(rb_now_ms(), ms);
}
