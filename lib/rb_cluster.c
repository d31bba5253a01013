/*
 * The cluster router: a call goes to the master of its key's slot, from a
 * map filled by CLUSTER SLOTS (asked again after a MOVED, a CLUSTERDOWN or
 * a lost node) and corrected by each MOVED as it comes.
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

static int have_map(rb_conn *c)
{
    if (c->slot_node == NULL) {
        c->slot_node = malloc(RB_SLOTS * sizeof(short));
        if (c->slot_node == NULL)
            return 0;
        memset(c->slot_node, 0xff, RB_SLOTS * sizeof(short));
    }
    return 1;
}

int rb_cluster__load(rb_conn *c, const redisReply *r)
{
    size_t k;
    int ranges = 0;

    if (!have_map(c) || r->type != REDIS_REPLY_ARRAY)
        return 0;
    for (k = 0; k < r->elements; k++) {
        const redisReply *e = r->element[k];
        const redisReply *m;
        const char *host;
        long long s, t;
        int idx;

        if (e->type != REDIS_REPLY_ARRAY || e->elements < 3 ||
            e->element[0]->type != REDIS_REPLY_INTEGER ||
            e->element[1]->type != REDIS_REPLY_INTEGER ||
            e->element[2]->type != REDIS_REPLY_ARRAY ||
            e->element[2]->elements < 2 ||
            !is_str(e->element[2]->element[0]) ||
            e->element[2]->element[1]->type != REDIS_REPLY_INTEGER)
            continue;
        m = e->element[2];
        /* An empty or "?" endpoint means "the address you asked". */
        host = m->element[0]->str;
        if ((host[0] == '\0' || strcmp(host, "?") == 0) && c->seed_host)
            host = c->seed_host;
        idx = rb_router__add_node(c, host, (int)m->element[1]->integer,
                                  NULL);
        if (idx < 0)
            continue;
        for (s = e->element[0]->integer, t = e->element[1]->integer;
             s <= t && s < RB_SLOTS; s++)
            if (s >= 0)
                c->slot_node[s] = (short)idx;
        ranges++;
    }
    return ranges;
}

/* CLUSTER SLOTS of the first node that answers it. */
static rb_node_io refresh(rb_conn *c, const rb_deadline *d, int cancel_fd,
                          rb_error *err)
{
    const char *q[2] = { "CLUSTER", "SLOTS" };
    int i;

    if (!have_map(c))
        return RB_NODE_FAILED;
    for (i = 0; i < c->nnodes; i++) {
        rb_node *n = c->nodes[i];
        redisReply *r = NULL;
        rb_node_io io;

        io = rb_router__open(c, n, d, cancel_fd, err);
        if (io == RB_NODE_CANCELED || io == RB_NODE_REFUSED)
            return io;
        if (io != RB_NODE_OK)
            continue;
        io = rb_router__ask(n, 2, q,
                            rb_router__attempt_until(d, rb_now_ms()),
                            cancel_fd, &r, err);
        if (io == RB_NODE_CANCELED)
            return io;
        if (io != RB_NODE_OK)
            continue;
        if (r->type != REDIS_REPLY_ARRAY || r->elements == 0) {
            freeReplyObject(r);
            continue;
        }
        rb_cluster__load(c, r);
        freeReplyObject(r);
        c->map_stale = 0;
        return RB_NODE_OK;
    }
    c->map_stale = 1;
    return RB_NODE_FAILED;
}

rb_node_io rb_cluster__route(rb_conn *c, const char *key, size_t keylen,
                             const rb_deadline *d, int cancel_fd, int *out,
                             rb_error *err)
{
    rb_node_io io;
    int idx = -1;

    *out = -1;
    /* A map that cannot be refreshed now still routes by what it knows. */
    if (c->map_stale && (io = refresh(c, d, cancel_fd, err)) != RB_NODE_OK &&
        io != RB_NODE_FAILED)
        return io;
    if (key && c->slot_node)
        idx = c->slot_node[rb_key__slot(key, keylen)];
    if (idx < 0)
        idx = c->current >= 0 ? c->current : 0;
    if ((io = rb_router__open(c, c->nodes[idx], d, cancel_fd, err)) !=
        RB_NODE_OK)
        return io;
    *out = idx;
    return RB_NODE_OK;
}

int rb_cluster__redirect(rb_conn *c, const char *msg, int remember)
{
    const char *sp1 = strchr(msg, ' '), *sp2, *colon;
    char host[RB_URL_HOST_MAX + 1];
    long slot;
    int idx;
    size_t hl;

    if (sp1 == NULL || (sp2 = strchr(sp1 + 1, ' ')) == NULL ||
        (colon = strrchr(sp2 + 1, ':')) == NULL)
        return -1;
    slot = strtol(sp1 + 1, NULL, 10);
    hl = (size_t)(colon - sp2 - 1);
    if (hl == 0 || hl >= sizeof(host) || slot < 0 || slot >= RB_SLOTS)
        return -1;
    memcpy(host, sp2 + 1, hl);
    host[hl] = '\0';
    idx = rb_router__add_node(c, host, atoi(colon + 1), NULL);
    if (idx >= 0 && remember && have_map(c))
        c->slot_node[slot] = (short)idx;
    return idx;
}
