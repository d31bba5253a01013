#ifndef RB_STREAM_H
#define RB_STREAM_H

/*
 * A byte stream to one server, behind a small table of operations so that
 * a transport is a file of its own: rb_stream.c holds the plain one (a TCP
 * or unix socket) and the TLS one (rb_tls.c's session over a TCP socket).
 * Neither the node (rb_node.c: handshake, one call with a deadline) nor the
 * router (rb_conn.c: which node serves a call) knows which it talks to.
 *
 * Every stream is non-blocking. A read or write that cannot go on now
 * returns RB_IO_WANT_READ or RB_IO_WANT_WRITE (rb_tls.h), and the node polls
 * the fd for that before calling again: TLS may want to read during a
 * write, and may hold decrypted bytes poll cannot see, so the node reads
 * until it is told to wait rather than polling first.
 */

#include <stddef.h>
#include <sys/types.h>

#include "rb_internal.h"
#include "rb_tls.h"

typedef struct rb_stream rb_stream;

typedef struct rb_stream_ops {
    const char *name;     /* "tcp", "unix", "tls": for messages */
    /* > 0: bytes moved; 0: (read) the server closed; RB_IO_WANT_READ or
     * RB_IO_WANT_WRITE; RB_IO_ERROR or RB_IO_REFUSED (rb_tls.h) with err
     * set (RB_EUNREACHABLE). */
    ssize_t (*read)(rb_stream *s, void *buf, size_t len, rb_error *err);
    ssize_t (*write)(rb_stream *s, const void *buf, size_t len,
                     rb_error *err);
    /* Close the socket and free the stream. */
    void (*close)(rb_stream *s);
} rb_stream_ops;

struct rb_stream {
    const rb_stream_ops *ops;
    int fd;
    rb_tls *tls;          /* the TLS kind's session; NULL for plain */
};

/* What a stream needs to know besides its socket. */
typedef struct rb_stream_cfg {
    int is_unix;
    rb_tls_ctx *tls;      /* NULL: plain; else TLS with these settings */
} rb_stream_cfg;

/* Open a stream on a connected non-blocking socket fd, which it owns from
 * then on (closed on failure too). TLS runs its handshake here, by poll,
 * until deadline_ms or the cancel fd; host is the name the certificate
 * must carry and `where` host:port for messages. *permanent says that
 * trying again cannot help (a certificate that does not verify).
 * @return RB_OK, RB_EUNREACHABLE, RB_ECANCELED, RB_ENOMEM */
int rb_stream__open(rb_stream **out, int fd, const rb_stream_cfg *cfg,
                    const char *host, const char *where,
                    long long deadline_ms, int cancel_fd, int *permanent,
                    rb_error *err);

#endif
