#ifndef RB_TLS_H
#define RB_TLS_H

/*
 * TLS as a byte stream (private to lib/). A node's transport is a socket,
 * or TLS over one: the node dials TCP as always, hands the connected,
 * non-blocking fd to rb_tls__handshake, and from then on reads and writes
 * through rb_tls__read/rb_tls__write instead of read(2)/write(2). The
 * protocol above (hiredis' reader and formatter) does not know.
 */

#include <sys/types.h>

#include "include/rbarrier.h"

typedef struct rb_tls_ctx rb_tls_ctx;   /* settings + trust store, shared */
typedef struct rb_tls rb_tls;           /* one session on one socket */

/* What a read or write returns besides a byte count (> 0) and 0 (the peer
 * closed the connection). Poll for the event named, then call again. */
#define RB_IO_ERROR (-1)
#define RB_IO_WANT_READ (-2)
#define RB_IO_WANT_WRITE (-3)
/* The peer refused us with a fatal TLS alert (a client certificate it
 * wants, a protocol it will not speak): reconnecting cannot help. */
#define RB_IO_REFUSED (-4)

/* Load the certificates and keys that opts names: done once per
 * connection handle, so a missing or unreadable file is bad input
 * (RB_EINVAL) before anything goes on the wire. */
int rb_tls__ctx_new(rb_tls_ctx **out, const rb_tls_opts *opts,
                    rb_error *err);
void rb_tls__ctx_free(rb_tls_ctx *ctx);

/* Run the client handshake on a connected non-blocking socket, until
 * deadline_ms (rb_now_ms clock) or until cancel_fd (-1: none) is readable.
 * host is what the certificate must name (an IP address or a DNS name;
 * --sni, when given, replaces it, and is also sent as SNI). `where` is
 * host:port for messages. On failure *permanent says whether trying again
 * could help: a certificate that does not verify, or a server that does
 * not speak TLS, will not change by reconnecting.
 * @return RB_OK, RB_EUNREACHABLE, RB_ECANCELED, RB_ENOMEM */
int rb_tls__handshake(rb_tls **out, rb_tls_ctx *ctx, int fd,
                      const char *host, const char *where,
                      long long deadline_ms, int cancel_fd, int *permanent,
                      rb_error *err);

/* Read up to len bytes. Data may sit decrypted inside the session where
 * poll(2) cannot see it: call until RB_IO_WANT_READ before polling.
 * @return bytes (> 0), 0 (closed), RB_IO_WANT_READ/WRITE, RB_IO_ERROR or
 *         RB_IO_REFUSED (err says why) */
ssize_t rb_tls__read(rb_tls *t, void *buf, size_t len, rb_error *err);

/* Write up to len bytes (a partial write is normal); the caller may pass
 * the rest from a moved buffer.
 * @return bytes (> 0), RB_IO_WANT_READ/WRITE, RB_IO_ERROR, RB_IO_REFUSED */
ssize_t rb_tls__write(rb_tls *t, const void *buf, size_t len,
                      rb_error *err);

/* Free the session (sending no close_notify: the socket is about to be
 * closed by its owner, and a dead peer must not block us). Takes NULL. */
void rb_tls__free(rb_tls *t);

#endif
