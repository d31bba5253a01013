/*
 * TLS over a connected socket, with OpenSSL: the maintained TLS library on
 * every distribution (Debian 12's hiredis 0.14 has no TLS of its own). The
 * socket stays non-blocking and every wait is a poll(2) with the caller's
 * deadline, as for plain TCP, so a server that accepts and then says
 * nothing costs no more than the connect timeout. OpenSSL itself is
 * loaded by the first context made (rb_openssl.h), so a program that never
 * uses rediss:// never loads it.
 */
#include "fmacros.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "rb_internal.h"
#include "rb_openssl.h"
#include "rb_tls.h"

struct rb_tls_ctx {
    SSL_CTX *ssl_ctx;
    BIO_METHOD *socket;   /* a socket BIO whose writes raise no SIGPIPE */
    char *sni;
    int insecure;
};

struct rb_tls {
    SSL *ssl;
};

/* The newest queued OpenSSL error as text; clears the queue so the next
 * operation starts clean. */
static const char *ssl_error_text(char *buf, size_t len)
{
    unsigned long e = ERR_peek_last_error();

    if (e == 0)
        snprintf(buf, len, "%s", "unknown error");
    else
        ERR_error_string_n(e, buf, len);
    ERR_clear_error();
    return buf;
}

/* OpenSSL's text is "error:0A000086:SSL routines::certificate verify
 * failed"; keep only the reason. */
static const char *reason_of(const char *text)
{
    const char *p = strrchr(text, ':');

    return p && p[1] ? p + 1 : text;
}

/* OpenSSL's socket BIO writes with write(2): a server gone away would
 * raise SIGPIPE in the program that embeds us. The same BIO, but writing
 * with send(2) and MSG_NOSIGNAL. */
static int nosig_write(BIO *b, const char *buf, int len)
{
    int fd = -1, n;

    BIO_get_fd(b, &fd);
    errno = 0;
    n = (int)send(fd, buf, (size_t)len, MSG_NOSIGNAL);
    BIO_clear_retry_flags(b);
    if (n <= 0 && BIO_sock_should_retry(n))
        BIO_set_retry_write(b);
    return n;
}

static BIO_METHOD *nosig_socket(void)
{
    const BIO_METHOD *sock = BIO_s_socket();
    BIO_METHOD *m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK |
                                     BIO_TYPE_DESCRIPTOR,
                                 "socket without SIGPIPE");

    if (m == NULL)
        return NULL;
    if (!BIO_meth_set_write(m, nosig_write) ||
        !BIO_meth_set_read(m, BIO_meth_get_read(sock)) ||
        !BIO_meth_set_puts(m, BIO_meth_get_puts(sock)) ||
        !BIO_meth_set_ctrl(m, BIO_meth_get_ctrl(sock)) ||
        !BIO_meth_set_create(m, BIO_meth_get_create(sock)) ||
        !BIO_meth_set_destroy(m, BIO_meth_get_destroy(sock))) {
        BIO_meth_free(m);
        return NULL;
    }
    return m;
}

static int load_fail(rb_error *err, const char *what, const char *file)
{
    char buf[256];

    return rb_error__set(err, RB_EINVAL, "TLS: cannot load %s '%s': %s",
                         what, file,
                         reason_of(ssl_error_text(buf, sizeof(buf))));
}

int rb_tls__ctx_new(rb_tls_ctx **out, const rb_tls_opts *opts,
                    rb_error *err)
{
    rb_tls_opts none = RB_TLS_OPTS_INIT;
    rb_tls_ctx *c;
    int rc;

    *out = NULL;
    if (opts == NULL)
        opts = &none;
    if (opts->version != RB_TLS_OPTS_VERSION)
        return rb_error__set(err, RB_EINVAL, "rb_tls_opts version %u is not "
                             "one this library knows (%d)", opts->version,
                             RB_TLS_OPTS_VERSION);
    if ((opts->cert == NULL) != (opts->key == NULL))
        return rb_error__set(err, RB_EINVAL,
                             "TLS: a client certificate needs its key, and "
                             "a key its certificate");
    if ((rc = rb_openssl__load(err)) != RB_OK)
        return rc;
    c = calloc(1, sizeof(*c));
    if (c == NULL)
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    ERR_clear_error();
    c->ssl_ctx = SSL_CTX_new(TLS_client_method());
    if (c->ssl_ctx == NULL || (c->socket = nosig_socket()) == NULL)
        goto nomem;
    SSL_CTX_set_min_proto_version(c->ssl_ctx, TLS1_2_VERSION);
    /* Redis closes a killed client's socket without close_notify; that is
     * an end of stream like any other, not a protocol error. */
    SSL_CTX_set_options(c->ssl_ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
    /* hiredis' output buffer may move between a partial write and its
     * retry. */
    SSL_CTX_set_mode(c->ssl_ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
                                 SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
    /* Read whole socket buffers rather than a 5-byte record header, then
     * its body: half the system calls per reply. (The node reads until
     * told to wait, so bytes buffered here are never missed by poll.) */
    SSL_CTX_set_read_ahead(c->ssl_ctx, 1);
    c->insecure = opts->insecure;
    SSL_CTX_set_verify(c->ssl_ctx,
                       c->insecure ? SSL_VERIFY_NONE : SSL_VERIFY_PEER, NULL);
    if (opts->cacert || opts->cacertdir) {
        if (!SSL_CTX_load_verify_locations(c->ssl_ctx, opts->cacert,
                                           opts->cacertdir)) {
            load_fail(err, opts->cacert ? "CA certificates"
                                        : "CA certificate directory",
                      opts->cacert ? opts->cacert : opts->cacertdir);
            goto fail;
        }
    } else if (!SSL_CTX_set_default_verify_paths(c->ssl_ctx)) {
        load_fail(err, "the system's CA certificates", "default");
        goto fail;
    }
    if (opts->cert) {
        if (!SSL_CTX_use_certificate_chain_file(c->ssl_ctx, opts->cert)) {
            load_fail(err, "client certificate", opts->cert);
            goto fail;
        }
        if (!SSL_CTX_use_PrivateKey_file(c->ssl_ctx, opts->key,
                                         SSL_FILETYPE_PEM)) {
            load_fail(err, "client key", opts->key);
            goto fail;
        }
        if (!SSL_CTX_check_private_key(c->ssl_ctx)) {
            rb_error__set(err, RB_EINVAL,
                          "TLS: key '%s' does not match certificate '%s'",
                          opts->key, opts->cert);
            ERR_clear_error();
            goto fail;
        }
    }
    if (opts->sni) {
        if (opts->sni[0] == '\0' || strlen(opts->sni) > RB_URL_HOST_MAX) {
            rb_error__set(err, RB_EINVAL,
                          "TLS: server name must be 1..%d bytes",
                          RB_URL_HOST_MAX);
            goto fail;
        }
        c->sni = strdup(opts->sni);
        if (c->sni == NULL)
            goto nomem;
    }
    *out = c;
    return RB_OK;

nomem:
    rb_error__set(err, RB_ENOMEM, "out of memory");
fail:
    rb_tls__ctx_free(c);
    return err->code;
}

void rb_tls__ctx_free(rb_tls_ctx *ctx)
{
    if (ctx == NULL)
        return;
    SSL_CTX_free(ctx->ssl_ctx);
    BIO_meth_free(ctx->socket);
    free(ctx->sni);
    free(ctx);
}

static int is_ip_literal(const char *host)
{
    unsigned char buf[sizeof(struct in6_addr)];

    return inet_pton(AF_INET, host, buf) == 1 ||
           inet_pton(AF_INET6, host, buf) == 1;
}

/* What the certificate must name, and the SNI to send (never an IP
 * address: RFC 6066). */
static int set_peer_name(SSL *ssl, const rb_tls_ctx *ctx, const char *host)
{
    const char *name = ctx->sni ? ctx->sni : host;

    if (!is_ip_literal(name) && !SSL_set_tlsext_host_name(ssl, name))
        return 0;
    if (ctx->insecure)
        return 1;
    if (is_ip_literal(name))
        return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), name);
    SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
    return SSL_set1_host(ssl, name);
}

static int handshake_failed(SSL *ssl, int rc, const char *where,
                            int *permanent, rb_error *err)
{
    char buf[256];
    long vr = SSL_get_verify_result(ssl);
    int e = SSL_get_error(ssl, rc);

    *permanent = 1;
    if (vr != X509_V_OK) {
        ERR_clear_error();
        return rb_error__set(err, RB_EUNREACHABLE,
                             "TLS: certificate verify failed: %s (%s)",
                             X509_verify_cert_error_string(vr), where);
    }
    if (e == SSL_ERROR_SYSCALL || e == SSL_ERROR_ZERO_RETURN ||
        (e == SSL_ERROR_SSL && ERR_peek_last_error() == 0)) {
        /* The peer went away mid-handshake: like a refused connection,
         * worth another try. */
        *permanent = 0;
        ERR_clear_error();
        return rb_error__set(err, RB_EUNREACHABLE,
                             "TLS: %s closed the connection during the "
                             "handshake%s%s", where,
                             e == SSL_ERROR_SYSCALL && errno ? ": " : "",
                             e == SSL_ERROR_SYSCALL && errno
                                 ? strerror(errno) : "");
    }
    ssl_error_text(buf, sizeof(buf));
    return rb_error__set(err, RB_EUNREACHABLE,
                         "TLS: handshake with %s failed: %s%s", where,
                         reason_of(buf),
                         strstr(buf, "wrong version number") ||
                                 strstr(buf, "packet length too long")
                             ? " (is that port a TLS port?)" : "");
}

int rb_tls__handshake(rb_tls **out, rb_tls_ctx *ctx, int fd,
                      const char *host, const char *where,
                      long long deadline_ms, int cancel_fd, int *permanent,
                      rb_error *err)
{
    rb_tls *t;
    BIO *bio = NULL;
    long long started = rb_now_ms();

    *out = NULL;
    *permanent = 0;
    t = calloc(1, sizeof(*t));
    if (t == NULL)
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    ERR_clear_error();
    t->ssl = SSL_new(ctx->ssl_ctx);
    if (t->ssl != NULL && (bio = BIO_new(ctx->socket)) != NULL) {
        BIO_set_fd(bio, fd, BIO_NOCLOSE);
        SSL_set_bio(t->ssl, bio, bio);
    }
    if (t->ssl == NULL || bio == NULL || !set_peer_name(t->ssl, ctx, host)) {
        rb_tls__free(t);
        ERR_clear_error();
        return rb_error__set(err, RB_ENOMEM, "TLS: cannot set up a session");
    }
    for (;;) {
        struct pollfd p[2];
        int rc = SSL_connect(t->ssl), e, n;
        long long left;

        if (rc == 1)
            break;
        e = SSL_get_error(t->ssl, rc);
        if (e != SSL_ERROR_WANT_READ && e != SSL_ERROR_WANT_WRITE) {
            handshake_failed(t->ssl, rc, where, permanent, err);
            rb_tls__free(t);
            return err->code;
        }
        left = deadline_ms - rb_now_ms();
        if (left <= 0) {
            rb_tls__free(t);
            return rb_error__set(err, RB_EUNREACHABLE,
                                 "TLS: no handshake with %s within %lld ms "
                                 "(is that port a TLS port?)",
                                 where, rb_now_ms() - started);
        }
        p[0].fd = fd;
        p[0].events = e == SSL_ERROR_WANT_READ ? POLLIN : POLLOUT;
        p[0].revents = 0;
        p[1].fd = cancel_fd;
        p[1].events = POLLIN;
        p[1].revents = 0;
        n = poll(p, cancel_fd >= 0 ? 2 : 1,
                 left > 1000000 ? 1000000 : (int)left);
        if (n < 0 && errno != EINTR) {
            rb_tls__free(t);
            return rb_error__set(err, RB_EUNREACHABLE, "poll: %s",
                                 strerror(errno));
        }
        if (n > 0 && cancel_fd >= 0 && p[1].revents) {
            rb_tls__free(t);
            return rb_error__set(err, RB_ECANCELED, "interrupted");
        }
    }
    *out = t;
    return RB_OK;
}

static ssize_t io_result(rb_tls *t, int rc, rb_error *err)
{
    char buf[256];
    unsigned long e;

    switch (SSL_get_error(t->ssl, rc)) {
    case SSL_ERROR_WANT_READ:
        return RB_IO_WANT_READ;
    case SSL_ERROR_WANT_WRITE:
        return RB_IO_WANT_WRITE;
    case SSL_ERROR_ZERO_RETURN:
        return 0;
    case SSL_ERROR_SYSCALL:
        ERR_clear_error();
        if (errno == 0)
            return 0;
        rb_error__set(err, RB_EUNREACHABLE, "%s", strerror(errno));
        return RB_IO_ERROR;
    default:
        /* OpenSSL files an alert from the peer under its alert number
         * plus SSL_AD_REASON_OFFSET. */
        e = ERR_peek_last_error();
        ssl_error_text(buf, sizeof(buf));
        rb_error__set(err, RB_EUNREACHABLE, "TLS: %s%s", reason_of(buf),
                      strstr(buf, "certificate required")
                          ? " (the server wants a client certificate: "
                            "--cert and --key)" : "");
        return ERR_GET_LIB(e) == ERR_LIB_SSL &&
                       ERR_GET_REASON(e) >= SSL_AD_REASON_OFFSET
                   ? RB_IO_REFUSED : RB_IO_ERROR;
    }
}

ssize_t rb_tls__read(rb_tls *t, void *buf, size_t len, rb_error *err)
{
    int rc;

    ERR_clear_error();
    errno = 0;
    rc = SSL_read(t->ssl, buf, len > 1 << 30 ? 1 << 30 : (int)len);
    return rc > 0 ? rc : io_result(t, rc, err);
}

ssize_t rb_tls__write(rb_tls *t, const void *buf, size_t len, rb_error *err)
{
    int rc;

    if (len == 0)
        return 0;
    ERR_clear_error();
    errno = 0;
    rc = SSL_write(t->ssl, buf, len > 1 << 30 ? 1 << 30 : (int)len);
    if (rc > 0)
        return rc;
    rc = (int)io_result(t, rc, err);
    if (rc == RB_IO_ERROR) {
        /* A server that refused us (TLS 1.3 reports a missing client
         * certificate after the handshake) sent an alert and closed: the
         * alert, still unread, says more than "Broken pipe". */
        char byte;
        rb_error alert;

        ERR_clear_error();
        if (SSL_read(t->ssl, &byte, 1) <= 0 &&
            io_result(t, -1, &alert) == RB_IO_REFUSED) {
            if (err)
                *err = alert;
            return RB_IO_REFUSED;
        }
        return RB_IO_ERROR;
    }
    if (rc == 0) {      /* a closed stream cannot take bytes */
        rb_error__set(err, RB_EUNREACHABLE, "connection closed");
        return RB_IO_ERROR;
    }
    return rc;
}

void rb_tls__free(rb_tls *t)
{
    if (t == NULL)
        return;
    SSL_free(t->ssl);
    free(t);
}
