/*
 * The router: which node serves a call, and one resend loop that decides
 * what each failure means. Nodes (rb_node.c) only connect and exchange;
 * every decision to try again is taken here, by one rule per failure:
 *
 *   dropped connection, no connect   forget the route; resend as the
 *                                    deadline allows (before the first
 *                                    connection: once, or for 2 s when a
 *                                    server took it and cut it)
 *   LOADING, BUSY, TRYAGAIN,         "not now": resend as the deadline
 *   MASTERDOWN                       allows, to the same node
 *   CLUSTERDOWN                      the slot map is being rebuilt: the
 *                                    same, with a fresh map
 *   READONLY, UNBLOCKED              the node is no longer a master (a
 *                                    failover): forget the route, resend
 *   MOVED slot host:port             the slot lives there: remember it,
 *                                    switch to cluster routing, send there
 *   ASK slot host:port               this once, ASKING + the call there
 *   WAIT K short (--replicas)        resend as the deadline allows
 *   any other error reply            final: RB_EREDIS with its text
 *
 * A redirect is followed under any deadline: the command did not run. A
 * resend is safe only because every command rbarrier sends is idempotent or
 * carries a nonce (arrive, train): the scripts make a repeat harmless.
 *
 * Routes: the URL's one server (or its seeds, tried in turn); the cluster
 * slot of the call's key (CLUSTER SLOTS, refreshed after MOVED); or the
 * master the sentinels name (checked with ROLE, asked again after a
 * failover).
 */
#include "fmacros.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "rb_acl.h"
#include "rb_node.h"

/* One connect attempt waits this long at most. */
#define RB_CONNECT_ATTEMPT_MS 2000
/* The unreachable notice comes after this long of failing. */
#define RB_NOTICE_AFTER_MS 5000
#define RB_NODES_MAX 64
#define RB_SLOTS 16384
#define RB_REDIRECTS_MAX 16
/* How long one WAIT for replica acknowledgements may block. */
#define RB_ACK_MAX_MS 1000
/* The key an acknowledged write touches: next to the call's own key (same
 * slot), expiring on its own. */
#define RB_ACK_SUFFIX ":ack"
#define RB_ACK_TTL_MS "60000"

typedef enum route_mode {
    ROUTE_ONE,            /* the URL's server, or its seeds in turn */
    ROUTE_CLUSTER,        /* the slot map */
    ROUTE_SENTINEL        /* the master the sentinels name */
} route_mode;

struct rb_conn {
    rb_url url;
    rb_conn_opts opts;
    char password[RB_URL_PASSWORD_MAX + 1];
    int has_password;
    char client_name[RB_URL_HOST_MAX + 1];
    rb_tls_ctx *tls;
    rb_stream_cfg stream;
    route_mode mode;
    rb_node *nodes[RB_NODES_MAX];     /* data nodes; the URL's seeds first */
    int nnodes;
    rb_node *sentinels[RB_URL_NODES_MAX];
    int nsentinels;
    int current;              /* ONE, SENTINEL: the serving node; -1: none */
    short *slot_node;         /* CLUSTER: node index per slot; -1: unknown */
    int map_stale;            /* CLUSTER: ask CLUSTER SLOTS before routing */
    int probed;               /* ONE: asked whether it is a cluster */
    int connected_once;       /* a drop now is retried as the call says */
    int noticed;              /* on_unreachable was called */
    int no_blmove;
};

long long rb_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- the handle ------------------------------------------------------- */

static int add_node(rb_conn *c, const char *host, int port, const char *path)
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

int rb_conn_new(rb_conn **out, const rb_url *url, const rb_conn_opts *opts,
                rb_error *err)
{
    rb_conn *c = calloc(1, sizeof(*c));
    rb_conn_opts defaults = RB_CONN_OPTS_INIT;
    size_t i;
    int rc;

    *out = NULL;
    if (c == NULL)
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    c->url = *url;
    c->opts = opts ? *opts : defaults;
    c->current = -1;
    if (c->opts.connect_timeout_ms < 0)
        c->opts.connect_timeout_ms = 0;
    if (c->opts.command_timeout_ms <= 0)
        c->opts.command_timeout_ms = 5000;
    if (c->opts.replicas < 0)
        c->opts.replicas = 0;
    if (c->opts.password) {
        if (strlen(c->opts.password) >= sizeof(c->password)) {
            rb_conn_free(c);
            return rb_error__set(err, RB_EINVAL,
                                 "password is longer than %zu bytes",
                                 sizeof(c->password) - 1);
        }
        memcpy(c->password, c->opts.password, strlen(c->opts.password) + 1);
        c->has_password = 1;
    } else if (url->has_password) {
        memcpy(c->password, url->password, sizeof(c->password));
        c->has_password = 1;
    }
    c->opts.password = NULL;   /* not kept: the caller's memory */
    if (c->opts.client_name) {
        if (strlen(c->opts.client_name) >= sizeof(c->client_name)) {
            rb_conn_free(c);
            return rb_error__set(err, RB_EINVAL,
                                 "client name is longer than %zu bytes",
                                 sizeof(c->client_name) - 1);
        }
        memcpy(c->client_name, c->opts.client_name,
               strlen(c->opts.client_name) + 1);
    }
    c->opts.client_name = NULL;
    if (url->tls &&
        (rc = rb_tls__ctx_new(&c->tls, c->opts.tls, err)) != RB_OK) {
        rb_conn_free(c);
        return rc;
    }
    c->opts.tls = NULL;
    c->stream.is_unix = url->kind == RB_URL_UNIX;
    c->stream.tls = c->tls;

    if (url->kind == RB_URL_UNIX) {
        if (add_node(c, NULL, 0, url->path) < 0)
            goto nomem;
    } else if (url->kind == RB_URL_SENTINEL) {
        c->mode = ROUTE_SENTINEL;
        for (i = 0; i < url->nodes_count; i++) {
            c->sentinels[i] = rb_node__new(url->nodes[i].host,
                                           url->nodes[i].port, NULL);
            if (c->sentinels[i] == NULL)
                goto nomem;
            c->nsentinels++;
        }
    } else {
        for (i = 0; i < url->nodes_count; i++)
            if (add_node(c, url->nodes[i].host, url->nodes[i].port,
                         NULL) < 0)
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
    memset(c->password, 0, sizeof(c->password));
    memset(&c->url, 0, sizeof(c->url));
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

/* ---- reaching a node -------------------------------------------------- */

/* The end of one connect attempt within d. */
static long long attempt_until(const rb_deadline *d, long long now)
{
    return rb_deadline__attempt_until(d, now, RB_CONNECT_ATTEMPT_MS);
}

static int is_str(const redisReply *r)
{
    return r && (r->type == REDIS_REPLY_STRING ||
                 r->type == REDIS_REPLY_STATUS);
}

/* Fill the slot map from a CLUSTER SLOTS reply (masters only: rbarrier
 * writes). Returns how many slot ranges it took. */
static int load_slots(rb_conn *c, const redisReply *r)
{
    size_t k;
    int ranges = 0;

    if (c->slot_node == NULL) {
        c->slot_node = malloc(RB_SLOTS * sizeof(short));
        if (c->slot_node == NULL)
            return 0;
        memset(c->slot_node, 0xff, RB_SLOTS * sizeof(short));
    }
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
        if (host[0] == '\0' || strcmp(host, "?") == 0)
            host = c->url.nodes[0].host;
        idx = add_node(c, host, (int)m->element[1]->integer, NULL);
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

/* Connect a data node (with the handshake), one attempt. */
static rb_node_io open_node(rb_conn *c, rb_node *n, const rb_deadline *d,
                            int cancel_fd, rb_error *err)
{
    rb_node_hello hello = {
        .user = c->url.user,
        .password = c->has_password ? c->password : NULL,
        .db = c->url.db,
        .client_name = c->client_name,
    };

    redisReply *slots = NULL;
    rb_node_io io;

    if (rb_node__connected(n))
        return RB_NODE_OK;
    /* A plain URL may name a cluster node: ask in the handshake's write
     * (no extra round trip), so that cluster routing starts before the
     * first MOVED, and survives that node's death even when it served
     * every call so far. */
    if (c->mode == ROUTE_ONE && !c->probed && !c->stream.is_unix)
        hello.cluster_slots = &slots;
    io = rb_node__connect(n, &c->stream, &hello,
                          attempt_until(d, rb_now_ms()), cancel_fd, err);
    if (io == RB_NODE_OK && hello.cluster_slots) {
        c->probed = 1;
        if (slots && slots->elements > 0 && load_slots(c, slots) > 0)
            c->mode = ROUTE_CLUSTER;
    }
    if (slots)
        freeReplyObject(slots);
    return io;
}

/* Fill err and return io: a failure site reads `return io_fail(...)`. */
static rb_node_io io_fail(rb_node_io io, rb_error *err, int code,
                          const char *msg)
{
    rb_error__set(err, code, "%s", msg);
    return io;
}

/* One command on a connected node, reply by `until`. */
static rb_node_io ask(rb_node *n, int argc, const char **argv,
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

/* Sentinel: the master's address from the first sentinel that knows it;
 * then its ROLE must say master (a sentinel may lag a failover). */
static rb_node_io find_master(rb_conn *c, const rb_deadline *d,
                              int cancel_fd, rb_error *err)
{
    const char *q[3] = { "SENTINEL", "get-master-addr-by-name",
                         c->url.master };
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
                              attempt_until(d, rb_now_ms()), cancel_fd,
                              &last);
        if (io == RB_NODE_CANCELED)
            return io_fail(RB_NODE_CANCELED, err, RB_ECANCELED,
                           "interrupted");
        if (io != RB_NODE_OK)
            continue;
        io = ask(s, 3, q, attempt_until(d, rb_now_ms()), cancel_fd, &r,
                 &last);
        if (io == RB_NODE_CANCELED)
            return io_fail(RB_NODE_CANCELED, err, RB_ECANCELED,
                           "interrupted");
        if (io != RB_NODE_OK)
            continue;
        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2 ||
            !is_str(r->element[0]) || !is_str(r->element[1])) {
            rb_error__set(&last, RB_EUNREACHABLE,
                          "sentinel %s does not know master '%s'%s%s",
                          rb_node__name(s), c->url.master,
                          r->type == REDIS_REPLY_ERROR ? ": " : "",
                          r->type == REDIS_REPLY_ERROR ? r->str : "");
            freeReplyObject(r);
            continue;
        }
        idx = add_node(c, r->element[0]->str, atoi(r->element[1]->str),
                       NULL);
        freeReplyObject(r);
        if (idx < 0)
            return io_fail(RB_NODE_FAILED, err, RB_ENOMEM, "out of memory");
        io = open_node(c, c->nodes[idx], d, cancel_fd, err);
        if (io != RB_NODE_OK)
            return io;
        io = ask(c->nodes[idx], 1, role, attempt_until(d, rb_now_ms()),
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
                          rb_node__name(c->nodes[idx]), c->url.master);
            freeReplyObject(r);
            rb_node__drop(c->nodes[idx]);
            return RB_NODE_FAILED;
        }
        freeReplyObject(r);
        c->current = idx;
        return RB_NODE_OK;
    }
    rb_error__set(err, RB_EUNREACHABLE, "cannot reach a sentinel for master "
                  "'%s' (%s)", c->url.master, last.msg);
    return RB_NODE_FAILED;
}

/* Cluster: fill the slot map from CLUSTER SLOTS of the first node that
 * answers it. Masters only: rbarrier writes. */
static rb_node_io refresh_slots(rb_conn *c, const rb_deadline *d,
                                int cancel_fd, rb_error *err)
{
    const char *q[2] = { "CLUSTER", "SLOTS" };
    int i, tried;

    if (c->slot_node == NULL) {
        c->slot_node = malloc(RB_SLOTS * sizeof(short));
        if (c->slot_node == NULL)
            return io_fail(RB_NODE_FAILED, err, RB_ENOMEM, "out of memory");
        memset(c->slot_node, 0xff, RB_SLOTS * sizeof(short));
    }
    for (tried = 0, i = 0; tried < c->nnodes; tried++, i++) {
        rb_node *n = c->nodes[i];
        redisReply *r = NULL;
        rb_node_io io;

        io = open_node(c, n, d, cancel_fd, err);
        if (io == RB_NODE_CANCELED || io == RB_NODE_REFUSED)
            return io;
        if (io != RB_NODE_OK)
            continue;
        io = ask(n, 2, q, attempt_until(d, rb_now_ms()), cancel_fd, &r, err);
        if (io == RB_NODE_CANCELED)
            return io;
        if (io != RB_NODE_OK)
            continue;
        if (r->type != REDIS_REPLY_ARRAY || r->elements == 0) {
            freeReplyObject(r);
            continue;
        }
        load_slots(c, r);
        freeReplyObject(r);
        c->map_stale = 0;
        return RB_NODE_OK;
    }
    c->map_stale = 1;
    return RB_NODE_FAILED;
}

/* The node for a call on key (NULL: any), connected. */
static rb_node_io route(rb_conn *c, const char *key, size_t keylen,
                        const rb_deadline *d, int cancel_fd, int *out,
                        rb_error *err)
{
    rb_node_io io = RB_NODE_FAILED;
    int tries;

    *out = -1;
    if (c->mode == ROUTE_SENTINEL) {
        if (c->current < 0 || !rb_node__connected(c->nodes[c->current])) {
            c->current = -1;
            if ((io = find_master(c, d, cancel_fd, err)) != RB_NODE_OK)
                return io;
        }
        *out = c->current;
        return RB_NODE_OK;
    }
    if (c->mode == ROUTE_CLUSTER) {
        int idx = -1;

        if (c->map_stale &&
            (io = refresh_slots(c, d, cancel_fd, err)) != RB_NODE_OK &&
            io != RB_NODE_FAILED)
            return io;
        if (key && c->slot_node)
            idx = c->slot_node[rb_key__slot(key, keylen)];
        if (idx < 0)
            idx = c->current >= 0 ? c->current : 0;
        if ((io = open_node(c, c->nodes[idx], d, cancel_fd, err)) !=
            RB_NODE_OK)
            return io;
        *out = idx;
        return RB_NODE_OK;
    }
    /* One server, or seeds in turn: one attempt tries each seed once,
     * from the one that served last. */
    if (c->current < 0)
        c->current = 0;
    for (tries = 0; tries < c->nnodes; tries++) {
        io = open_node(c, c->nodes[c->current], d, cancel_fd, err);
        if (io != RB_NODE_FAILED)
            break;
        c->current = (c->current + 1) % c->nnodes;
    }
    if (io != RB_NODE_OK)
        return io;
    *out = c->current;
    return RB_NODE_OK;
}

/* After a drop or a demoted master: ask for the route again. */
static void forget_route(rb_conn *c, int idx)
{
    if (idx >= 0)
        rb_node__drop(c->nodes[idx]);
    if (c->mode == ROUTE_SENTINEL)
        c->current = -1;
    else if (c->mode == ROUTE_CLUSTER)
        c->map_stale = 1;
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

/* A first connection that found a server but was cut before it served
 * (a restart, clients being killed) is tried again for a moment; one that
 * found nobody listening fails at once, as a wrong URL should. A server
 * that refuses us for good (AUTH, a TLS alert) is RB_NODE_REFUSED and never
 * gets here. */
#define RB_CUT_RETRY_MS 2000

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

/* ---- the resend loop ------------------------------------------------- */

typedef enum verdict {
    V_DONE,               /* the reply is the answer */
    V_FINAL,              /* an error that retrying cannot change */
    V_RESEND,             /* not now: resend as the deadline allows */
    V_REROUTE,            /* the route is wrong: ask again, then resend */
    V_MOVED,              /* follow a redirect now */
    V_ASK
} verdict;

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* What an error reply means: the rules of the header comment. */
static verdict judge_error(const char *msg)
{
    if (starts(msg, "MOVED "))
        return V_MOVED;
    if (starts(msg, "ASK "))
        return V_ASK;
    if (starts(msg, "LOADING") || starts(msg, "BUSY") ||
        starts(msg, "TRYAGAIN") || starts(msg, "MASTERDOWN"))
        return V_RESEND;
    if (starts(msg, "CLUSTERDOWN") || starts(msg, "READONLY") ||
        starts(msg, "UNBLOCKED"))
        return V_REROUTE;
    return V_FINAL;
}

/* "MOVED 3999 127.0.0.1:6381" -> the node for that address, and the slot
 * remembered there. -1 when the text is not understood. */
static int redirect_target(rb_conn *c, const char *msg)
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
    idx = add_node(c, host, atoi(colon + 1), NULL);
    if (idx >= 0 && starts(msg, "MOVED ")) {
        if (c->mode != ROUTE_CLUSTER) {
            /* A plain URL of a cluster node: cluster routing from now. */
            c->mode = ROUTE_CLUSTER;
            c->map_stale = 1;
        }
        if (c->slot_node == NULL) {
            c->slot_node = malloc(RB_SLOTS * sizeof(short));
            if (c->slot_node)
                memset(c->slot_node, 0xff, RB_SLOTS * sizeof(short));
        }
        if (c->slot_node)
            c->slot_node[slot] = (short)idx;
        c->map_stale = 1;
    }
    return idx;
}

/* The key a command names, for routing: the first key of EVAL/EVALSHA,
 * else the first argument. */
static const char *call_key(int argc, const char **argv, const size_t *lens,
                            size_t *len)
{
    int k = 1;

    if (argc > 2 && (strcasecmp(argv[0], "EVALSHA") == 0 ||
                     strcasecmp(argv[0], "EVAL") == 0)) {
        if (atoi(argv[2]) < 1 || argc < 4)
            return NULL;
        k = 3;
    }
    if (argc <= k)
        return NULL;
    *len = lens[k];
    return argv[k];
}

/* One exchange for the call on node idx: [ASKING] call [ack-write WAIT K].
 * Sets *v, and *out when the reply is the answer. */
static rb_node_io exchange(rb_conn *c, int idx, int asking, int argc,
                           const char **argv, const size_t *lens,
                           const char *key, size_t keylen,
                           const rb_call *call, verdict *v,
                           redisReply **out, rb_error *err)
{
    const rb_deadline *d = &call->deadline;
    rb_cmd cmds[RB_NODE_CMDS_MAX];
    redisReply *r[RB_NODE_CMDS_MAX];
    const char *asking_argv[1] = { "ASKING" };
    size_t asking_len[1] = { 6 };
    const char *ack_argv[5], *wait_argv[3];
    size_t ack_len[5], wait_len[3];
    char ack_key[RB_KEY_MAX + 8], k_text[16], ms_text[24];
    long long now = rb_now_ms(), ack_ms = 0, left, reply_by;
    int n = 0, main_at, wait_at = -1, i;
    rb_node_io io;

    *v = V_FINAL;
    if (asking) {
        cmds[n].argc = 1;
        cmds[n].argv = asking_argv;
        cmds[n++].lens = asking_len;
    }
    main_at = n;
    cmds[n].argc = argc;
    cmds[n].argv = argv;
    cmds[n++].lens = lens;
    if (c->opts.replicas > 0 && key && keylen + 8 < sizeof(ack_key)) {
        /* A write of our own that always replicates, then WAIT: the
         * stream is ordered, so everything the call wrote or read before
         * it is on K replicas once this is. */
        left = rb_deadline__left(d, now);
        ack_ms = left > 0 && left < RB_ACK_MAX_MS ? left : RB_ACK_MAX_MS;
        if (ack_ms < 10)
            ack_ms = 10;
        memcpy(ack_key, key, keylen);
        memcpy(ack_key + keylen, RB_ACK_SUFFIX, sizeof(RB_ACK_SUFFIX));
        ack_argv[0] = "SET";
        ack_argv[1] = ack_key;
        ack_argv[2] = "1";
        ack_argv[3] = "PX";
        ack_argv[4] = RB_ACK_TTL_MS;
        for (i = 0; i < 5; i++)
            ack_len[i] = strlen(ack_argv[i]);
        snprintf(k_text, sizeof(k_text), "%d", c->opts.replicas);
        snprintf(ms_text, sizeof(ms_text), "%lld", ack_ms);
        wait_argv[0] = "WAIT";
        wait_argv[1] = k_text;
        wait_argv[2] = ms_text;
        for (i = 0; i < 3; i++)
            wait_len[i] = strlen(wait_argv[i]);
        cmds[n].argc = 5;
        cmds[n].argv = ack_argv;
        cmds[n++].lens = ack_len;
        wait_at = n;
        cmds[n].argc = 3;
        cmds[n].argv = wait_argv;
        cmds[n++].lens = wait_len;
    }
    reply_by = rb_deadline__reply_by(d, now, call->block_ms + ack_ms,
                                     c->opts.command_timeout_ms);
    io = rb_node__exchange(c->nodes[idx], cmds, n, reply_by,
                           call->cancellable ? c->opts.cancel_fd : -1, r,
                           err);
    if (io != RB_NODE_OK)
        return io;
    if (call->fault != RB_FAULT_NONE && rb_fault__fire(call->fault)) {
        /* The script ran; pretend its reply was lost on the wire. */
        for (i = 0; i < n; i++)
            freeReplyObject(r[i]);
        rb_node__drop(c->nodes[idx]);
        rb_error__set(err, RB_EUNREACHABLE, "injected fault: reply lost");
        return RB_NODE_FAILED;
    }
    if (r[main_at]->type == REDIS_REPLY_ERROR) {
        *v = judge_error(r[main_at]->str);
        if (*v == V_FINAL) {
            rb_error__set(err, RB_EREDIS, "%s", r[main_at]->str);
            rb_acl__explain(err, r[main_at]->str, argc, argv, lens);
        } else if (*v == V_MOVED || *v == V_ASK)
            rb_error__set(err, RB_EREDIS, "%s", r[main_at]->str);
        else if (*v == V_REROUTE)
            rb_error__set(err, RB_EUNREACHABLE, "Redis at %s cannot take "
                          "the call now: %s", rb_node__name(c->nodes[idx]),
                          r[main_at]->str);
        else
            rb_error__set(err, RB_EUNREACHABLE, "Redis is not ready: %s",
                          r[main_at]->str);
    } else if (wait_at >= 0 && (r[wait_at]->type != REDIS_REPLY_INTEGER ||
                                r[wait_at]->integer < c->opts.replicas)) {
        /* Short of replicas: the node may be a master the others left
         * behind (a failover under way), so ask for the route again; one
         * attempt leaves the resend to the caller's next call. */
        *v = V_REROUTE;
        rb_error__set(err, d->kind == RB_DEADLINE_UNTIL ? RB_EREDIS
                                                        : RB_EUNREACHABLE,
                      "only %lld of %d replicas "
                      "acknowledged the write at %s",
                      r[wait_at]->type == REDIS_REPLY_INTEGER
                          ? r[wait_at]->integer : 0LL,
                      c->opts.replicas, rb_node__name(c->nodes[idx]));
    } else {
        *v = V_DONE;
        *out = r[main_at];
        r[main_at] = NULL;
    }
    for (i = 0; i < n; i++)
        if (r[i])
            freeReplyObject(r[i]);
    return RB_NODE_OK;
}

int rb_conn__call(rb_conn *c, int argc, const char **argv,
                  const size_t *lens, const rb_call *call, redisReply **out,
                  rb_error *err)
{
    const rb_deadline *d = &call->deadline;
    /* A handle that never connected reaches Redis by its own rule: one
     * attempt (a wrong URL fails at once) unless the caller asked to
     * retry for a while. */
    rb_deadline reach = rb_conn__reach(c, 0);
    int cancel_fd = call->cancellable ? c->opts.cancel_fd : -1;
    int delay = RB_BACKOFF_MIN_MS, redirects = 0, ask_at = -1;
    long long since = 0;
    size_t keylen = 0;
    const char *key = call_key(argc, argv, lens, &keylen);

    *out = NULL;
    for (;;) {
        const rb_deadline *rule = c->connected_once ? d : &reach;
        verdict v = V_RESEND;
        rb_node_io io;
        long long now, left;
        int idx;

        if (call->cancellable && rb_conn__cancelled(c))
            return rb_error__set(err, RB_ECANCELED, "interrupted");
        if (ask_at >= 0) {
            idx = ask_at;
            io = open_node(c, c->nodes[idx], rule, cancel_fd, err);
        } else {
            io = route(c, key, keylen, rule, cancel_fd, &idx, err);
        }
        if (io == RB_NODE_OK) {
            c->connected_once = 1;
            rule = d;
            io = exchange(c, idx, ask_at >= 0, argc, argv, lens, key,
                          keylen, call, &v, out, err);
        }
        ask_at = -1;
        if (io == RB_NODE_CANCELED)
            return rb_error__set(err, RB_ECANCELED, "interrupted");
        if (io == RB_NODE_REFUSED)
            return err->code;
        if (io == RB_NODE_EXPIRED && d->kind == RB_DEADLINE_EXACT)
            return rb_error__set(err, RB_ETIMEOUT, "deadline reached");
        if (io != RB_NODE_OK) {
            if (err->code == RB_ENOMEM || err->code == RB_EPROTO)
                return err->code;
            forget_route(c, idx);
        } else if (v == V_DONE) {
            return RB_OK;
        } else if (v == V_FINAL) {
            return RB_EREDIS;
        } else if (v == V_MOVED || v == V_ASK) {
            int to = redirect_target(c, err->msg);

            if (to < 0 || ++redirects > RB_REDIRECTS_MAX)
                return rb_error__set(err, RB_EREDIS, "%s (after %d "
                                     "redirects)", err->msg, redirects);
            if (v == V_ASK)
                ask_at = to;
            continue;
        } else if (v == V_REROUTE) {
            forget_route(c, idx);
        }

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
    }
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

int rb_conn__connect(rb_conn *c, const rb_deadline *reach, rb_error *err)
{
    int cancel_fd = c->opts.cancel_fd, delay = RB_BACKOFF_MIN_MS;
    long long since = rb_now_ms();
    rb_deadline rule = *reach;

    for (;;) {
        long long now, left;
        int idx;
        rb_node_io io = route(c, NULL, 0, &rule, cancel_fd, &idx, err);

        if (io == RB_NODE_OK) {
            c->connected_once = 1;
            return RB_OK;
        }
        if (io == RB_NODE_CANCELED)
            return rb_error__set(err, RB_ECANCELED, "interrupted");
        if (io == RB_NODE_REFUSED || err->code == RB_ENOMEM)
            return err->code;
        retry_a_cut(c, &rule);
        now = rb_now_ms();
        left = rb_deadline__left(&rule, now);
        if (left == 0)
            return err->code;
        notice(c, &rule, since, err);
        if (backoff_sleep(c, delay < left ? delay : (int)left, 1))
            return rb_error__set(err, RB_ECANCELED, "interrupted");
        delay = next_delay(delay, rb_deadline__backoff_cap(&rule, now));
    }
}

int rb_conn_connect(rb_conn *c, long long until_ms, rb_error *err)
{
    rb_error local;
    rb_deadline d = rb_conn__reach(c, until_ms);

    if (err == NULL)
        err = &local;
    return rb_conn__connect(c, &d, err);
}

void rb_random_hex(char *buf, size_t bytes)
{
    static const char digits[] = "0123456789abcdef";
    unsigned char raw[32];
    size_t i;
    ssize_t got;

    if (bytes > sizeof(raw))
        bytes = sizeof(raw);
    /* getrandom(2), not /dev/urandom: one syscall instead of three on every
     * wait, which the benchmarks showed as a fifth of a round's CPU. */
    got = getrandom(raw, bytes, 0);
    if (got != (ssize_t)bytes) {
        unsigned long long x = (unsigned long long)rb_now_ms() * 6364136223846793005ULL
                               ^ (unsigned long long)getpid() << 32;

        for (i = 0; i < bytes; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            raw[i] = (unsigned char)(x >> 56);
        }
    }
    for (i = 0; i < bytes; i++) {
        buf[2 * i] = digits[raw[i] >> 4];
        buf[2 * i + 1] = digits[raw[i] & 15];
    }
    buf[2 * bytes] = '\0';
}
