#ifndef RB_NODE_H
#define RB_NODE_H

/*
 * A node is one server: its address, its stream (rb_stream.h) and a
 * hiredis reader for the protocol. It connects with poll and a deadline,
 * sends its handshake (AUTH, SELECT, CLIENT SETNAME) in one write, and
 * makes one exchange at a time: some commands in one write, their replies
 * read by poll until a time given by the caller. It never retries; what a
 * failure means is the router's decision (rb_conn.c).
 */

#include "rb_stream.h"

typedef struct rb_node rb_node;

typedef enum rb_node_io {
    RB_NODE_OK,         /* replies read (some may be error replies) */
    RB_NODE_FAILED,     /* no connection, or it broke: the node dropped it */
    RB_NODE_REFUSED,    /* refused for good (AUTH, SELECT, a certificate
                           that does not verify): retrying cannot help */
    RB_NODE_CANCELED,   /* the cancel fd fired: the node dropped it */
    RB_NODE_EXPIRED     /* no reply by the time given: the node dropped it */
} rb_node_io;

/* What a connection says before its first command. AUTH and SELECT go
 * out at connect, in one write, before anything else: a command must
 * never run as another user or in database 0 because they were refused.
 * CLIENT SETNAME and the cluster probe change nothing a command depends
 * on, so without AUTH or SELECT they ride in the first exchange's write
 * (no round trip of their own). The strings must outlive the connection. */
typedef struct rb_node_hello {
    const char *user;          /* NULL or "": none */
    const char *password;      /* NULL: no AUTH */
    int db;                    /* 0: no SELECT */
    const char *client_name;   /* NULL or "": no CLIENT SETNAME */
    int probe_cluster;         /* also ask CLUSTER SLOTS; the answer is
                                  kept for rb_node__take_probe */
} rb_node_hello;

/* rb_cmd (one command of an exchange): rb_internal.h */

#define RB_NODE_CMDS_MAX 5   /* ASKING, the call, its `then`, the
                                replicated write and WAIT */

/* A node for host:port, or for a unix socket when path is not NULL.
 * @return NULL when out of memory */
rb_node *rb_node__new(const char *host, int port, const char *path);
void rb_node__free(rb_node *n);

/* "host:port", "[v6]:port" or "unix:///path": for messages. */
const char *rb_node__name(const rb_node *n);
int rb_node__is(const rb_node *n, const char *host, int port);
int rb_node__connected(const rb_node *n);
/* The connection's socket (-1: unconnected) and whether it is a unix
 * socket, for its local address (rb_addr.c). */
int rb_node__fd(const rb_node *n);
int rb_node__is_unix(const rb_node *n);
/* 1 once a connect(2) to it succeeded: something listens there, whatever
 * became of the connection after. */
int rb_node__reached(const rb_node *n);
void rb_node__drop(rb_node *n);

/* Connect (one attempt, until until_ms) and run the part of the handshake
 * that must come first (rb_node_hello). RB_NODE_FAILED and RB_NODE_REFUSED
 * set err (RB_EUNREACHABLE, RB_EREDIS); RB_NODE_REFUSED also for a plain
 * connection to a TLS port. */
rb_node_io rb_node__connect(rb_node *n, const rb_stream_cfg *cfg,
                       const rb_node_hello *hello, long long until_ms,
                       int cancel_fd, rb_error *err);

/* Send ncmds (<= RB_NODE_CMDS_MAX) commands in one write and read their
 * replies, until reply_by (rb_now_ms clock). On RB_NODE_OK every replies[i]
 * is set, for the caller to free; on anything else none is, the connection
 * is dropped, and err says why (RB_EUNREACHABLE, RB_EPROTO). RB_NODE_REFUSED:
 * the server refused us for good (a TLS alert). */
rb_node_io rb_node__exchange(rb_node *n, const rb_cmd *cmds, int ncmds,
                        long long reply_by, int cancel_fd,
                        redisReply **replies, rb_error *err);

/* Whether the cluster probe of this connection was answered: 1 with
 * *slots the CLUSTER SLOTS array (the server is a cluster node; the caller
 * frees it) or NULL (it is not), once; 0 while no answer came. */
int rb_node__take_probe(rb_node *n, redisReply **slots);

#endif
