#ifndef RB_ROUTER_H
#define RB_ROUTER_H

/*
 * The inside of a connection handle, shared by the files of the connection
 * layer (private to them):
 *
 *   rb_conn.c      the handle, and the one resend loop (connecting too)
 *   rb_conn_exchange.c  one attempt: the commands of one write (ASKING,
 *                  the call, its then, the acknowledged write and WAIT)
 *                  and what their replies came to
 *   rb_cluster.c   the cluster router: the slot map, MOVED and ASK
 *   rb_sentinel.c  the sentinel router: the master the sentinels name
 *   rb_router.c    what the routers share: the handle's nodes, the single
 *                  server router, and the decision rules (pure)
 *
 * Calls go one way only: rb_conn.c -> rb_conn_exchange.c and the routers
 * -> rb_router.c -> rb_node.c -> rb_stream.c / rb_tls.c, and all of them
 * -> rb_deadline.c.
 */

#include "rb_internal.h"
#include "rb_node.h"

/* One connect attempt waits this long at most. */
#define RB_CONNECT_ATTEMPT_MS 2000
#define RB_NODES_MAX 64
#define RB_SLOTS 16384
#define RB_REDIRECTS_MAX 16

typedef enum rb_route_mode {
    RB_ROUTE_ONE = 0,     /* the URL's server, or its seeds in turn */
    RB_ROUTE_CLUSTER,     /* the slot map */
    RB_ROUTE_SENTINEL     /* the master the sentinels name */
} rb_route_mode;

struct rb_conn {
    /* What the handle needs of the caller's URL, copied by rb_conn_new
     * (the caller may free its rb_url then). */
    char *user;               /* NULL: the default user */
    int db;
    char *master;             /* SENTINEL: the master's name */
    char *seed_host;          /* TCP: the URL's first host, for a cluster
                                 node that names its own address "?" */
    rb_conn_opts opts;
    char *password;           /* NULL: no AUTH */
    char *client_name;        /* NULL: no CLIENT SETNAME */
    rb_tls_ctx *tls;
    rb_stream_cfg stream;
    rb_route_mode mode;
    rb_node *nodes[RB_NODES_MAX];     /* data nodes; the URL's seeds first */
    int nnodes;
    rb_node *sentinels[RB_NODES_MAX];
    int nsentinels;
    int current;              /* ONE, SENTINEL: the serving node; -1: none */
    short *slot_node;         /* CLUSTER: node index per slot; -1: unknown */
    int map_stale;            /* CLUSTER: ask CLUSTER SLOTS before routing */
    int probed;               /* ONE: the server said whether it is a
                                 cluster node */
    int connected_once;       /* a drop now is retried as the call says */
    int noticed;              /* on_unreachable was called */
    int no_blmove;
    int last;                 /* the node of the last answered call */
};

/* ---- rb_router.c: the handle's nodes --------------------------------- */

/* The index of the data node host:port (or the unix socket path), added
 * when new. -1: out of memory or too many nodes. */
int rb_router__add_node(rb_conn *c, const char *host, int port,
                        const char *path);
/* The end of one connect attempt within d. */
long long rb_router__attempt_until(const rb_deadline *d, long long now);
/* Connect a data node with the handle's hello, one attempt (a no-op when
 * connected). */
rb_node_io rb_router__open(rb_conn *c, rb_node *n, const rb_deadline *d,
                           int cancel_fd, rb_error *err);
/* One command on a connected node, its reply by `until`. */
rb_node_io rb_router__ask(rb_node *n, int argc, const char **argv,
                          long long until, int cancel_fd, redisReply **r,
                          rb_error *err);
/* The single server router: the URL's server, or its seeds in turn from
 * the one that served last; one attempt tries each seed once. */
rb_node_io rb_router__one(rb_conn *c, const rb_deadline *d, int cancel_fd,
                          int *out, rb_error *err);

/* ---- rb_router.c: what a failed attempt means (pure) ------------------ */

typedef enum rb_failure {
    RB_FAILED_REPLY = 0,  /* an error reply; rb_attempt.reply says which */
    RB_FAILED_DROPPED,    /* the connection broke, or no reply in time */
    RB_FAILED_CONNECT,    /* no connection could be made (refused, ...) */
    RB_FAILED_ACKS        /* --replicas: too few acknowledged the write */
} rb_failure;

typedef struct rb_attempt {
    rb_failure failure;
    rb_reply_err reply;   /* RB_FAILED_REPLY */
    rb_route_mode mode;   /* the router that chose the node */
    int redirects;        /* redirects this call followed already */
} rb_attempt;

typedef enum rb_next {
    RB_NEXT_STOP = 0,     /* final: the call fails with this error */
    RB_NEXT_SAME,         /* "not now": resend to the same node, after a
                             backoff, as the deadline allows */
    RB_NEXT_ROUTE,        /* ask for the route again, then resend after a
                             backoff, as the deadline allows */
    RB_NEXT_REDIRECT      /* send to the redirect's node now, whatever the
                             deadline: the command did not run */
} rb_next;

typedef struct rb_decision {
    rb_next next;
    int drop;             /* drop the connection to the node */
    int refresh_map;      /* cluster: CLUSTER SLOTS before routing again */
    int ask_sentinels;    /* sentinel: ask for the master again */
    int to_cluster;       /* a plain URL of a cluster node: cluster routing
                             from now on */
    int remember_slot;    /* MOVED: the slot lives at the target now */
    int asking;           /* ASK: ASKING ahead of the resend */
} rb_decision;

rb_decision rb_router__decide(const rb_attempt *a);

/* ---- rb_conn_exchange.c: one attempt --------------------------------- */

/* The key a command names, for routing: the first key of EVAL/EVALSHA,
 * else the first argument (NULL: none). */
const char *rb_conn__call_key(int argc, const char **argv,
                              const size_t *lens, size_t *len);

/* What one exchange came to when the node answered. */
typedef enum rb_answer {
    RB_ANSWER_DONE,       /* *out is the reply */
    RB_ANSWER_ERROR,      /* an error reply: err holds its text */
    RB_ANSWER_ACKS        /* too few replicas: err says so */
} rb_answer;

/* One exchange for the call on node idx: [ASKING] call [then]
 * [ack-write WAIT K], with the call's key (for the ack-write's slot). On
 * RB_NODE_OK sets *a (and *kind for an error reply); the call's then
 * reply, when sent and not an error, goes to call->then_reply. */
rb_node_io rb_conn__exchange(rb_conn *c, int idx, int asking, int argc,
                             const char **argv, const size_t *lens,
                             const char *key, size_t keylen, rb_call *call,
                             rb_answer *a, rb_reply_err *kind,
                             redisReply **out, rb_error *err);

/* ---- rb_cluster.c --------------------------------------------------- */

/* Fill the slot map from a CLUSTER SLOTS reply (masters only: rbarrier
 * writes). @return the slot ranges taken (0: none, or out of memory) */
int rb_cluster__load(rb_conn *c, const redisReply *slots);
/* The node for a call on key (NULL: any), connected; the map is refreshed
 * first when stale. */
rb_node_io rb_cluster__route(rb_conn *c, const char *key, size_t keylen,
                             const rb_deadline *d, int cancel_fd, int *out,
                             rb_error *err);
/* The node a redirect names ("MOVED 3999 host:port", "ASK ..."), added
 * when new; with remember, the slot is mapped there. -1 when the text is
 * not understood. */
int rb_cluster__redirect(rb_conn *c, const char *msg, int remember);

/* ---- rb_sentinel.c -------------------------------------------------- */

/* The master the sentinels name, connected and checked with ROLE; asked
 * again when the handle has none. */
rb_node_io rb_sentinel__route(rb_conn *c, const rb_deadline *d,
                              int cancel_fd, int *out, rb_error *err);

#endif
