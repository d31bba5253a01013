/*
 * The sentinel router: the master's address from the first sentinel that
 * knows it, then that server's ROLE must say master (a sentinel may lag a
 * failover). Asked again whenever the handle lost its master: a drop, a
 * READONLY, too few replicas.
 */
#include "fmacros.h"

#include <stdlib.h>
#include <string.h>

#include "rb_router.h"

static int is_str(const redisReply *r)
{
    return r && (r->type == REDIS_REPLY_STRING ||
                 r->type == REDIS_REPLY_STATUS);
}

static rb_node_io find_master(rb_conn *c, const rb_deadline *d,
                              int cancel_fd, rb_error *err)
{
    const char *q[3] = { "SENTINEL", "get-master-addr-by-name",
                         c->master };
    const char *role[1] = { "ROLE" };
    rb_node_hello none = { .password = NULL };
    rb_stream_cfg stream = c->stream;
    rb_error last = { RB_EUNREACHABLE, "no sentinel answered" };
    int i;

    for (i = 0; i < c->nsentinels; i++) {
        rb_node *s = c->sentinels[i];
        redisReply *r = NULL;
        rb_node_io io;
        int idx;

        io = rb_node__connect(s, &stream, &none,
                              rb_router__attempt_until(d, rb_now_ms()),
                              cancel_fd, &last);
        if (io == RB_NODE_OK)
            io = rb_router__ask(s, 3, q,
                                rb_router__attempt_until(d, rb_now_ms()),
                                cancel_fd, &r, &last);
        if (io == RB_NODE_CANCELED) {
            rb_error__set(err, RB_ECANCELED, "interrupted");
            return io;
        }
        if (io != RB_NODE_OK)
            continue;
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            !is_str(r->element[0]) || !is_str(r->element[1])) {
            rb_error__set(&last, RB_EUNREACHABLE,
                          "sentinel %s does not know master '%s'%s%s",
                          rb_node__name(s), c->master,
                          r->type == REDIS_REPLY_ERROR ? ": " : "",
                          r->type == REDIS_REPLY_ERROR ? r->str : "");
            freeReplyObject(r);
            continue;
        }
        idx = rb_router__add_node(c, r->element[0]->str,
                                  atoi(r->element[1]->str), NULL);
        freeReplyObject(r);
        if (idx < 0) {
            rb_error__set(err, RB_ENOMEM, "out of memory");
            return RB_NODE_FAILED;
        }
        io = rb_router__open(c, c->nodes[idx], d, cancel_fd, err);
        if (io != RB_NODE_OK)
            return io;
        io = rb_router__ask(c->nodes[idx], 1, role,
                            rb_router__attempt_until(d, rb_now_ms()),
                            cancel_fd, &r, err);
        if (io != RB_NODE_OK)
            return io;
        if (r->type != REDIS_REPLY_ARRAY || r->elements < 1 ||
            !is_str(r->element[0]) ||
            strcmp(r->element[0]->str, "master") != 0) {
            /* Not master yet (or any more): ask again after a backoff. */
            rb_error__set(err, RB_EUNREACHABLE,
                          "Redis at %s, named by the sentinels as master "
                          "'%s', is not a master (a failover is under way)",
                          rb_node__name(c->nodes[idx]), c->master);
            freeReplyObject(r);
            rb_node__drop(c->nodes[idx]);
            return RB_NODE_FAILED;
        }
        freeReplyObject(r);
        c->current = idx;
        return RB_NODE_OK;
    }
    rb_error__set(err, RB_EUNREACHABLE, "cannot reach a sentinel for master "
                  "'%s' (%s)", c->master, last.msg);
    return RB_NODE_FAILED;
}

rb_node_io rb_sentinel__route(rb_conn *c, const rb_deadline *d,
                              int cancel_fd, int *out, rb_error *err)
{
    rb_node_io io;

    *out = -1;
    if (c->current < 0 || !rb_node__connected(c->nodes[c->current])) {
        c->current = -1;
        if ((io = find_master(c, d, cancel_fd, err)) != RB_NODE_OK)
            return io;
    }
    *out = c->current;
    return RB_NODE_OK;
}
