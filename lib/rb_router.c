/*
 * What the routers share: the handle's data nodes, how one is opened (the
 * hello: AUTH, SELECT, CLIENT SETNAME and, for a plain URL, the cluster
 * probe), the single server router, and the rules that say what a failed
 * attempt means. The rules are a pure function of the attempt, so each is
 * unit-tested (tests/unit/test_router.c) without a server:
 *
 *   dropped connection, no connect   drop it; ask for the route again;
 *                                    resend as the deadline allows
 *   LOADING, BUSY, TRYAGAIN,         "not now": resend to the same node as
 *   MASTERDOWN                       the deadline allows
 *   CLUSTERDOWN                      the slot map is being rebuilt: the
 *                                    same, with a fresh map
 *   READONLY, UNBLOCKED              the node is no longer a master (a
 *                                    failover): ask for the route again
 *   MOVED slot host:port             the slot lives there: remember it,
 *                                    (a plain URL: route by slots from
 *                                    now on) and send there now
 *   ASK slot host:port               this once, ASKING + the call there
 *   a redirect after 16 in a row     the nodes disagree (a slot half
 *                                    moved: each says the other owns it):
 *                                    a fresh map, resend as the deadline
 *                                    allows
 *   too few replicas (--replicas)    ask for the route again, resend
 *   any other error reply            final
 *
 * A redirect is followed under any deadline: the command did not run. A
 * resend is safe only because every command rbarrier sends is idempotent
 * or carries a nonce (arrive, train): the scripts make a repeat harmless.
 */
#include "fmacros.h"

#include <string.h>

#include "rb_router.h"

int rb_router__add_node(rb_conn *c, const char *host, int port,
                        const char *path)
{
    int i;

    for (i = 0; i < c->nnodes; i++)
        if (path == NULL && rb_node__is(c->nodes[i], host, port))
            return i;
    if (c->nnodes == RB_NODES_MAX)
        return -1;
    c->nodes[c->nnodes] = rb_node__new(host, port, path);
    if (c->nodes[c->nnodes] == NULL)
        return -1;
    return c->nnodes++;
}

long long rb_router__attempt_until(const rb_deadline *d, long long now)
{
    return rb_deadline__attempt_until(d, now, RB_CONNECT_ATTEMPT_MS);
}

rb_node_io rb_router__open(rb_conn *c, rb_node *n, const rb_deadline *d,
                           int cancel_fd, rb_error *err)
{
    /* A plain URL may name a cluster node: ask along with the first
     * command (no round trip of its own), so that cluster routing starts
     * before the first MOVED, and survives that node's death even when it
     * served every call so far. */
    rb_node_hello hello = {
        .user = c->user,
        .password = c->password,
        .db = c->db,
        .client_name = c->client_name,
        .probe_cluster = c->mode == RB_ROUTE_ONE && !c->probed &&
                         !c->stream.is_unix,
    };

    if (rb_node__connected(n))
        return RB_NODE_OK;
    return rb_node__connect(n, &c->stream, &hello,
                            rb_router__attempt_until(d, rb_now_ms()),
                            cancel_fd, err);
}

rb_node_io rb_router__ask(rb_node *n, int argc, const char **argv,
                          long long until, int cancel_fd, redisReply **r,
                          rb_error *err)
{
    size_t lens[8];
    rb_cmd cmd = { .argc = argc, .argv = argv, .lens = lens };
    int i;

    for (i = 0; i < argc && i < 8; i++)
        lens[i] = strlen(argv[i]);
    return rb_node__exchange(n, &cmd, 1, until, cancel_fd, r, err);
}

rb_node_io rb_router__one(rb_conn *c, const rb_deadline *d, int cancel_fd,
                          int *out, rb_error *err)
{
    rb_node_io io = RB_NODE_FAILED;
    int tries;

    *out = -1;
    if (c->current < 0)
        c->current = 0;
    for (tries = 0; tries < c->nnodes; tries++) {
        io = rb_router__open(c, c->nodes[c->current], d, cancel_fd, err);
        if (io != RB_NODE_FAILED)
            break;
        c->current = (c->current + 1) % c->nnodes;
    }
    if (io != RB_NODE_OK)
        return io;
    *out = c->current;
    return RB_NODE_OK;
}

/* Ask for the route again: the node is gone or no longer the one. */
static rb_decision reroute(rb_route_mode mode)
{
    rb_decision d = { .next = RB_NEXT_ROUTE, .drop = 1 };

    d.refresh_map = mode == RB_ROUTE_CLUSTER;
    d.ask_sentinels = mode == RB_ROUTE_SENTINEL;
    return d;
}

rb_decision rb_router__decide(const rb_attempt *a)
{
    rb_decision d = { .next = RB_NEXT_STOP };

    switch (a->failure) {
    case RB_FAILED_DROPPED:
    case RB_FAILED_CONNECT:
    case RB_FAILED_ACKS:
        /* Short of replicas: the node may be a master the others left
         * behind (a failover under way). */
        return reroute(a->mode);
    case RB_FAILED_REPLY:
        break;
    }
    switch (a->reply) {
    case RB_REPLY_MOVED:
    case RB_REPLY_ASK:
        if (a->redirects >= RB_REDIRECTS_MAX) {
            /* Not an error: a migration settles node by node, and until
             * it has, the source and the target may each send the call
             * to the other. */
            d.next = RB_NEXT_ROUTE;
            d.refresh_map = 1;
            return d;
        }
        d.next = RB_NEXT_REDIRECT;
        if (a->reply == RB_REPLY_ASK) {
            d.asking = 1;
            return d;
        }
        d.remember_slot = 1;
        d.refresh_map = 1;
        d.to_cluster = a->mode == RB_ROUTE_ONE;
        return d;
    case RB_REPLY_LOADING:
    case RB_REPLY_BUSY:
    case RB_REPLY_TRYAGAIN:
    case RB_REPLY_MASTERDOWN:
        d.next = RB_NEXT_SAME;
        return d;
    case RB_REPLY_CLUSTERDOWN:
    case RB_REPLY_READONLY:
    case RB_REPLY_UNBLOCKED:
        return reroute(a->mode);
    default:
        return d;
    }
}
