/*
 * The two streams: plain (a TCP or unix socket, read and written as it is)
 * and TLS (rb_tls.c's session over the TCP socket). rb_stream__open is
 * the one place that picks.
 */
#include "fmacros.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rb_stream.h"

static ssize_t plain_read(rb_stream *s, void *buf, size_t len, rb_error *err)
{
    ssize_t n = read(s->fd, buf, len);

    if (n >= 0)
        return n;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        return RB_IO_WANT_READ;
    rb_error__set(err, RB_EUNREACHABLE, "%s", strerror(errno));
    return RB_IO_ERROR;
}

static ssize_t plain_write(rb_stream *s, const void *buf, size_t len,
                           rb_error *err)
{
    /* send(2) with MSG_NOSIGNAL: a server that went away is EPIPE here, a
     * dropped connection like any other, and never a SIGPIPE that kills
     * the program embedding the library. */
    ssize_t n = send(s->fd, buf, len, MSG_NOSIGNAL);

    if (n > 0)
        return n;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return RB_IO_WANT_WRITE;
    rb_error__set(err, RB_EUNREACHABLE, "%s",
                  n == 0 ? "connection closed" : strerror(errno));
    return RB_IO_ERROR;
}

static void plain_close(rb_stream *s)
{
    close(s->fd);
    free(s);
}

static ssize_t tls_read(rb_stream *s, void *buf, size_t len, rb_error *err)
{
    return rb_tls__read(s->tls, buf, len, err);
}

static ssize_t tls_write(rb_stream *s, const void *buf, size_t len,
                         rb_error *err)
{
    return rb_tls__write(s->tls, buf, len, err);
}

static void tls_close(rb_stream *s)
{
    rb_tls__free(s->tls);
    close(s->fd);
    free(s);
}

static const rb_stream_ops plain_tcp = {
    "tcp", plain_read, plain_write, plain_close
};
static const rb_stream_ops plain_unix = {
    "unix", plain_read, plain_write, plain_close
};
static const rb_stream_ops tls_tcp = {
    "tls", tls_read, tls_write, tls_close
};

int rb_stream__open(rb_stream **out, int fd, const rb_stream_cfg *cfg,
                    const char *host, const char *where,
                    long long deadline_ms, int cancel_fd, int *permanent,
                    rb_error *err)
{
    rb_stream *s = calloc(1, sizeof(*s));
    int rc;

    *out = NULL;
    *permanent = 0;
    if (s == NULL) {
        close(fd);
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    }
    s->fd = fd;
    if (cfg->tls == NULL) {
        s->ops = cfg->is_unix ? &plain_unix : &plain_tcp;
        *out = s;
        return RB_OK;
    }
    rc = rb_tls__handshake(&s->tls, cfg->tls, fd, host, where, deadline_ms,
                           cancel_fd, permanent, err);
    if (rc != RB_OK) {
        close(fd);
        free(s);
        return rc;
    }
    s->ops = &tls_tcp;
    *out = s;
    return RB_OK;
}
