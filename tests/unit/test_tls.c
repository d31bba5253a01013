/* The TLS byte stream against an OpenSSL server in a child process, over a
 * socketpair: verification (CA, expiry, host name, SNI), --insecure, client
 * certificates, a silent server bounded by the deadline, and a server that
 * does not speak TLS. Certificates are made by tests/tls/make-certs.sh in a
 * temporary directory for this run. */
#include "fmacros.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/ssl.h>

#include "rb_internal.h"
#include "rb_tls.h"

static char certs[256];

static const char *cert(const char *name)
{
    static char buf[4][320];
    static int k;

    k = (k + 1) % 4;
    snprintf(buf[k], sizeof(buf[k]), "%s/%s", certs, name);
    return buf[k];
}

typedef enum { SERVE_TLS, SERVE_SILENT, SERVE_PLAIN } serve_mode;

typedef struct server {
    pid_t pid;
    int fd;       /* the client's end */
} server;

/* Fork a server on one end of a socketpair: TLS with leaf.crt/leaf.key
 * (asking for a client certificate when require_client is set) echoing
 * one message; or silent; or a plain Redis-like error and close. */
static server serve(serve_mode mode, const char *leaf, int require_client)
{
    int sv[2];
    server s;

    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    s.pid = fork();
    assert_true(s.pid >= 0);
    if (s.pid == 0) {
        char buf[256], crt[300], key[300];
        SSL_CTX *ctx;
        SSL *ssl;
        int n;

        close(sv[0]);
        if (mode == SERVE_SILENT) {
            pause();
            _exit(0);
        }
        if (mode == SERVE_PLAIN) {
            n = (int)read(sv[1], buf, sizeof(buf));
            (void)n;
            if (write(sv[1], "-ERR Protocol error\r\n", 21) < 0)
                _exit(1);
            _exit(0);
        }
        snprintf(crt, sizeof(crt), "%s/%s.crt", certs, leaf);
        snprintf(key, sizeof(key), "%s/%s.key", certs, leaf);
        ctx = SSL_CTX_new(TLS_server_method());
        if (!SSL_CTX_use_certificate_file(ctx, crt, SSL_FILETYPE_PEM) ||
            !SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM))
            _exit(2);
        if (require_client) {
            SSL_CTX_load_verify_locations(ctx, cert("ca.crt"), NULL);
            SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER |
                               SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
        }
        ssl = SSL_new(ctx);
        SSL_set_fd(ssl, sv[1]);
        if (SSL_accept(ssl) != 1) {
            /* Close our side only: leaving the client's bytes unread
             * would make the kernel reset the connection, and a reset
             * may discard the alert before the client reads it. */
            shutdown(sv[1], SHUT_WR);
            while (read(sv[1], buf, sizeof(buf)) > 0)
                ;
            _exit(3);
        }
        n = SSL_read(ssl, buf, sizeof(buf));
        if (n > 0)
            SSL_write(ssl, buf, n);
        SSL_shutdown(ssl);
        _exit(0);
    }
    close(sv[1]);
    fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK);
    s.fd = sv[0];
    return s;
}

static void reap(server *s)
{
    close(s->fd);
    kill(s->pid, SIGKILL);
    waitpid(s->pid, NULL, 0);
}

/* Handshake against leaf as host; on success, one echo through the
 * stream. Returns the handshake's code; msg gets its message. */
static int try_tls(const rb_tls_opts *o, serve_mode mode, const char *leaf,
                   int require_client, const char *host, int deadline_ms,
                   int *permanent, char *msg, size_t msglen)
{
    server s = serve(mode, leaf, require_client);
    rb_tls_ctx *ctx = NULL;
    rb_tls *t = NULL;
    rb_error err = { 0, "" };
    int rc;

    assert_int_equal(rb_tls__ctx_new(&ctx, o, &err), RB_OK);
    rc = rb_tls__handshake(&t, ctx, s.fd, host, "test:1",
                           rb_now_ms() + deadline_ms, -1, permanent, &err);
    snprintf(msg, msglen, "%s", rc == RB_OK ? "" : err.msg);
    if (rc == RB_OK) {
        char buf[16];
        ssize_t n;
        long long until = rb_now_ms() + 30000;
        size_t got = 0;

        do {
            n = rb_tls__write(t, "hello", 5, &err);
        } while (n == RB_IO_WANT_WRITE);
        if (n != 5) {
            snprintf(msg, msglen, "%s", err.msg);
            rc = RB_EUNREACHABLE;
        }
        while (rc == RB_OK && got < 5 && rb_now_ms() < until) {
            struct pollfd p = { s.fd, POLLIN, 0 };

            n = rb_tls__read(t, buf + got, sizeof(buf) - got, &err);
            if (n == RB_IO_WANT_READ) {
                poll(&p, 1, 100);
                continue;
            }
            if (n <= 0) {
                /* A refused client certificate shows here in TLS 1.3. */
                snprintf(msg, msglen, "%s", n == 0 ? "closed" : err.msg);
                rc = RB_EUNREACHABLE;
                break;
            }
            got += (size_t)n;
        }
        if (rc == RB_OK) {
            assert_int_equal(got, 5);
            assert_memory_equal(buf, "hello", 5);
        }
    }
    rb_tls__free(t);
    rb_tls__ctx_free(ctx);
    reap(&s);
    return rc;
}

static void expect_ok(const rb_tls_opts *o, const char *leaf, const char *host)
{
    char msg[512];
    int permanent;

    if (try_tls(o, SERVE_TLS, leaf, 0, host, 30000, &permanent, msg,
                sizeof(msg)) != RB_OK)
        fail_msg("%s as %s: %s", leaf, host, msg);
}

static void expect_verify_fail(const rb_tls_opts *o, const char *leaf,
                               const char *host, const char *reason)
{
    char msg[512];
    int permanent = 0;

    /* The message proves the verification ended the handshake, not its
     * deadline (that says "no handshake"), under valgrind too. */
    assert_int_equal(try_tls(o, SERVE_TLS, leaf, 0, host, 30000, &permanent,
                             msg, sizeof(msg)), RB_EUNREACHABLE);
    if (strncmp(msg, "TLS: certificate verify failed: ", 32) != 0 ||
        strstr(msg, reason) == NULL)
        fail_msg("%s as %s: '%s' lacks '%s'", leaf, host, msg, reason);
    assert_true(permanent);
    assert_null(strchr(msg, '\n'));
}

static void test_tls_verified(void **state)
{
    rb_tls_opts o = RB_TLS_OPTS_INIT;

    (void)state;
    o.cacert = cert("ca.crt");
    expect_ok(&o, "server", "127.0.0.1");
    expect_ok(&o, "server", "localhost");
}

static void test_tls_cacertdir(void **state)
{
    rb_tls_opts o = RB_TLS_OPTS_INIT;
    char cmd[1400];

    (void)state;
    snprintf(cmd, sizeof(cmd), "mkdir -p %s/cadir && cp %s %s/cadir/ && "
             "openssl rehash %s/cadir", certs, cert("ca.crt"), certs, certs);
    assert_int_equal(system(cmd), 0);
    o.cacertdir = cert("cadir");
    expect_ok(&o, "server", "127.0.0.1");
}

static void test_tls_bad_certificates(void **state)
{
    rb_tls_opts o = RB_TLS_OPTS_INIT;

    (void)state;
    o.cacert = cert("ca.crt");
    expect_verify_fail(&o, "expired", "127.0.0.1", "expired");
    expect_verify_fail(&o, "wrongca", "127.0.0.1", "issuer");
    expect_verify_fail(&o, "wronghost", "127.0.0.1", "IP address mismatch");
    expect_verify_fail(&o, "wronghost", "localhost", "hostname mismatch");
    /* No --cacert: the system store does not know the test CA. */
    o.cacert = NULL;
    expect_verify_fail(&o, "server", "127.0.0.1", "issuer");
}

static void test_tls_sni(void **state)
{
    rb_tls_opts o = RB_TLS_OPTS_INIT;

    (void)state;
    o.cacert = cert("ca.crt");
    o.sni = "example.invalid";
    expect_ok(&o, "wronghost", "127.0.0.1");
    expect_verify_fail(&o, "server", "127.0.0.1", "hostname mismatch");
}

static void test_tls_insecure(void **state)
{
    rb_tls_opts o = RB_TLS_OPTS_INIT;

    (void)state;
    o.insecure = 1;
    expect_ok(&o, "wrongca", "127.0.0.1");
    expect_ok(&o, "expired", "localhost");
    expect_ok(&o, "wronghost", "127.0.0.1");
}

static void test_tls_client_certificate(void **state)
{
    rb_tls_opts o = RB_TLS_OPTS_INIT;
    char msg[512];
    int permanent;

    (void)state;
    o.cacert = cert("ca.crt");
    o.cert = cert("client.crt");
    o.key = cert("client.key");
    assert_int_equal(try_tls(&o, SERVE_TLS, "server", 1, "127.0.0.1", 30000,
                             &permanent, msg, sizeof(msg)), RB_OK);
    o.cert = o.key = NULL;
    assert_int_equal(try_tls(&o, SERVE_TLS, "server", 1, "127.0.0.1", 30000,
                             &permanent, msg, sizeof(msg)), RB_EUNREACHABLE);
    if (strstr(msg, "--cert and --key") == NULL)
        fail_msg("no certificate: %s", msg);
}

static void test_tls_silent_server(void **state)
{
    rb_tls_opts o = RB_TLS_OPTS_INIT;
    char msg[512];
    int permanent = 1;
    long long t0 = rb_now_ms(), took;

    (void)state;
    o.cacert = cert("ca.crt");
    assert_int_equal(try_tls(&o, SERVE_SILENT, NULL, 0, "127.0.0.1", 300,
                             &permanent, msg, sizeof(msg)), RB_EUNREACHABLE);
    took = rb_now_ms() - t0;
    assert_true(took >= 290 && took < 2000);
    assert_false(permanent);
    assert_non_null(strstr(msg, "no handshake"));
}

static void test_tls_plain_server(void **state)
{
    rb_tls_opts o = RB_TLS_OPTS_INIT;
    char msg[512];
    int permanent = 0;

    (void)state;
    o.cacert = cert("ca.crt");
    assert_int_equal(try_tls(&o, SERVE_PLAIN, NULL, 0, "127.0.0.1", 3000,
                             &permanent, msg, sizeof(msg)), RB_EUNREACHABLE);
    assert_true(permanent);
    if (strstr(msg, "TLS port") == NULL)
        fail_msg("'%s' does not hint at the port", msg);
}

static void test_tls_bad_files(void **state)
{
    rb_tls_opts o = RB_TLS_OPTS_INIT;
    rb_tls_ctx *ctx = NULL;
    rb_error err;

    (void)state;
    o.cacert = "/nonexistent/ca.crt";
    assert_int_equal(rb_tls__ctx_new(&ctx, &o, &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "/nonexistent/ca.crt"));
    assert_null(ctx);
    o.cacert = cert("ca.crt");
    o.cert = cert("client.crt");
    assert_int_equal(rb_tls__ctx_new(&ctx, &o, &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "needs its key"));
    o.key = cert("server.key");
    assert_int_equal(rb_tls__ctx_new(&ctx, &o, &err), RB_EINVAL);
    if (strstr(err.msg, "mismatch") == NULL &&
        strstr(err.msg, "does not match") == NULL)
        fail_msg("'%s'", err.msg);
    o.key = cert("nonexistent.key");
    assert_int_equal(rb_tls__ctx_new(&ctx, &o, &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "client key"));
}

static int make_certs(void **state)
{
    char cmd[512];
    const char *tmp = getenv("TMPDIR");

    (void)state;
    snprintf(certs, sizeof(certs), "%s/rb-tls-unit.XXXXXX",
             tmp ? tmp : "/tmp");
    if (mkdtemp(certs) == NULL)
        return -1;
    snprintf(cmd, sizeof(cmd), "sh tests/tls/make-certs.sh %s", certs);
    return system(cmd) == 0 ? 0 : -1;
}

static int remove_certs(void **state)
{
    char cmd[512];

    (void)state;
    snprintf(cmd, sizeof(cmd), "rm -rf %s", certs);
    return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tls_verified),
        cmocka_unit_test(test_tls_cacertdir),
        cmocka_unit_test(test_tls_bad_certificates),
        cmocka_unit_test(test_tls_sni),
        cmocka_unit_test(test_tls_insecure),
        cmocka_unit_test(test_tls_client_certificate),
        cmocka_unit_test(test_tls_silent_server),
        cmocka_unit_test(test_tls_plain_server),
        cmocka_unit_test(test_tls_bad_files),
    };

    signal(SIGPIPE, SIG_IGN);
    return cmocka_run_group_tests(tests, make_certs, remove_certs);
}
