/*
 * Connections. Every command goes out through rb_conn__call, which waits for
 * the reply with poll(2) rather than a socket timeout: hiredis 0.14 leaves a
 * context unusable after a read times out, and a poll also watches the
 * caller's cancel fd, so a signal can cut a blocking wait at once.
 *
 * A dropped connection is reconnected with capped exponential backoff until
 * the call's deadline, and the command is sent again. That is safe only
 * because every command rbarrier sends is idempotent or carries a nonce
 * (arrive, train): the scripts make a repeat harmless.
 */
#include "fmacros.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "rb_acl.h"
#include "rb_internal.h"

/* One connect attempt waits this long at most. */
#define RB_CONNECT_ATTEMPT_MS 2000
/* The unreachable notice is for long retries: one that ends (or succeeds)
 * within moments is not worth a line on stderr. */
#define RB_NOTICE_LEFT_MS 15000
#define RB_NOTICE_AFTER_MS 5000

struct rb_conn {
    rb_url url;
    rb_conn_opts opts;
    char password[RB_URL_PASSWORD_MAX + 1];
    int has_password;
    redisContext *ctx;
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

int rb_conn_new(rb_conn **out, const rb_url *url, const rb_conn_opts *opts,
                rb_error *err)
{
    rb_conn *c = calloc(1, sizeof(*c));
    rb_conn_opts defaults = RB_CONN_OPTS_INIT;

    *out = NULL;
    if (c == NULL)
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    if (url->tls || url->kind == RB_URL_SENTINEL || url->nodes_count > 1) {
        free(c);
        return rb_error__set(err, RB_EINVAL,
                             "%s URLs are not supported yet",
                             url->tls ? "TLS"
                             : url->kind == RB_URL_SENTINEL ? "sentinel"
                                                            : "seed-list");
    }
    c->url = *url;
    c->opts = opts ? *opts : defaults;
    if (c->opts.connect_timeout_ms < 0)
        c->opts.connect_timeout_ms = 0;
    if (c->opts.command_timeout_ms <= 0)
        c->opts.command_timeout_ms = 5000;
    if (c->opts.password) {
        if (strlen(c->opts.password) >= sizeof(c->password)) {
            free(c);
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
    *out = c;
    return RB_OK;
}

void rb_conn_free(rb_conn *c)
{
    if (c == NULL)
        return;
    if (c->ctx)
        redisFree(c->ctx);
    memset(c->password, 0, sizeof(c->password));
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

static void drop(rb_conn *c)
{
    if (c->ctx) {
        redisFree(c->ctx);
        c->ctx = NULL;
    }
}

static const char *target(const rb_conn *c, char *buf, size_t len)
{
    if (c->url.kind == RB_URL_UNIX)
        snprintf(buf, len, "unix://%s", c->url.path);
    else if (strchr(c->url.nodes[0].host, ':'))
        snprintf(buf, len, "[%s]:%d", c->url.nodes[0].host,
                 c->url.nodes[0].port);
    else
        snprintf(buf, len, "%s:%d", c->url.nodes[0].host,
                 c->url.nodes[0].port);
    return buf;
}

typedef enum { IO_OK, IO_FAILED, IO_REDIS, IO_CANCELED } io_status;

/* One command on the live context: write it, then poll until the reply is
 * complete, the wait runs out, or the cancel fd fires. Anything but a reply
 * leaves the context with a command in flight, so the caller drops it. */
static io_status roundtrip(rb_conn *c, int argc, const char **argv,
                           const size_t *lens, int wait_ms, int cancellable,
                           redisReply **out, rb_error *err)
{
    redisContext *ctx = c->ctx;
    long long until = rb_now_ms() + wait_ms;
    int done = 0;
    char where[300];

    *out = NULL;
    if (redisAppendCommandArgv(ctx, argc, argv, lens) != REDIS_OK)
        goto io_error;
    do {
        if (redisBufferWrite(ctx, &done) != REDIS_OK)
            goto io_error;
    } while (!done);

    for (;;) {
        void *reply = NULL;
        struct pollfd p[2];
        int nfds = 1, rc;
        long long left;

        if (redisReaderGetReply(ctx->reader, &reply) != REDIS_OK) {
            rb_error__set(err, RB_EPROTO, "bad reply from Redis at %s: %s",
                          target(c, where, sizeof(where)),
                          ctx->reader->errstr);
            return IO_FAILED;
        }
        if (reply) {
            *out = reply;
            return IO_OK;
        }
        left = until - rb_now_ms();
        if (left <= 0) {
            rb_error__set(err, RB_EUNREACHABLE,
                          "no reply from Redis at %s within %d ms",
                          target(c, where, sizeof(where)), wait_ms);
            return IO_FAILED;
        }
        p[0].fd = ctx->fd;
        p[0].events = POLLIN;
        p[0].revents = 0;
        if (cancellable && c->opts.cancel_fd >= 0) {
            p[1].fd = c->opts.cancel_fd;
            p[1].events = POLLIN;
            p[1].revents = 0;
            nfds = 2;
        }
        rc = poll(p, (nfds_t)nfds, left > 1000000 ? 1000000 : (int)left);
        if (rc < 0 && errno != EINTR) {
            rb_error__set(err, RB_EUNREACHABLE, "poll: %s", strerror(errno));
            return IO_FAILED;
        }
        if (rc <= 0)
            continue;
        if (nfds == 2 && p[1].revents)
            return IO_CANCELED;
        if (p[0].revents && redisBufferRead(ctx) != REDIS_OK)
            goto io_error;
    }

io_error:
    rb_error__set(err, RB_EUNREACHABLE, "lost connection to Redis at %s: %s",
                  target(c, where, sizeof(where)),
                  ctx->errstr[0] ? ctx->errstr : "connection closed");
    return IO_FAILED;
}

/* AUTH and SELECT on a fresh context; an error reply here is final (a
 * wrong password does not get better by retrying). */
static io_status handshake(rb_conn *c, rb_error *err)
{
    const char *argv[3];
    size_t lens[3];
    char db[16];
    redisReply *r = NULL;
    io_status st;
    int argc = 0, i;

    if (c->has_password) {
        argv[argc++] = "AUTH";
        if (c->url.user[0])
            argv[argc++] = c->url.user;
        argv[argc++] = c->password;
        for (i = 0; i < argc; i++)
            lens[i] = strlen(argv[i]);
        st = roundtrip(c, argc, argv, lens, c->opts.command_timeout_ms, 0, &r,
                       err);
        if (st != IO_OK)
            return st;
        if (r->type == REDIS_REPLY_ERROR) {
            rb_error__set(err, RB_EREDIS, "Redis refused AUTH: %s", r->str);
            freeReplyObject(r);
            return IO_REDIS;
        }
        freeReplyObject(r);
    }
    if (c->url.db != 0) {
        snprintf(db, sizeof(db), "%d", c->url.db);
        argv[0] = "SELECT";
        argv[1] = db;
        lens[0] = 6;
        lens[1] = strlen(db);
        st = roundtrip(c, 2, argv, lens, c->opts.command_timeout_ms, 0, &r,
                       err);
        if (st != IO_OK)
            return st;
        if (r->type == REDIS_REPLY_ERROR) {
            rb_error__set(err, RB_EREDIS, "Redis refused SELECT %d: %s",
                          c->url.db, r->str);
            freeReplyObject(r);
            return IO_REDIS;
        }
        freeReplyObject(r);
    }
    return IO_OK;
}

static io_status connect_once(rb_conn *c, const rb_deadline *d,
                              rb_error *err)
{
    struct timeval tv;
    char where[300];
    io_status st;
    long long ms = RB_CONNECT_ATTEMPT_MS, left = rb_deadline__left(d,
                                                                  rb_now_ms());

    if (d->kind == RB_DEADLINE_EXACT)
        left = d->until_ms - rb_now_ms();
    if (d->kind != RB_DEADLINE_ONCE && left < ms)
        ms = left > 10 ? left : 10;
    tv.tv_sec = ms / 1000;
    tv.tv_usec = (ms % 1000) * 1000;
    if (c->url.kind == RB_URL_UNIX)
        c->ctx = redisConnectUnixWithTimeout(c->url.path, tv);
    else
        c->ctx = redisConnectWithTimeout(c->url.nodes[0].host,
                                         c->url.nodes[0].port, tv);
    if (c->ctx == NULL) {
        rb_error__set(err, RB_ENOMEM, "out of memory");
        return IO_FAILED;
    }
    if (c->ctx->err) {
        rb_error__set(err, RB_EUNREACHABLE, "cannot reach Redis at %s: %s",
                      target(c, where, sizeof(where)), c->ctx->errstr);
        drop(c);
        return IO_FAILED;
    }
    if (c->url.kind != RB_URL_UNIX)
        redisEnableKeepAlive(c->ctx);
    st = handshake(c, err);
    if (st != IO_OK) {
        drop(c);
        return st;
    }
    c->connected_once = 1;
    return IO_OK;
}

/* Sleep up to ms, waking early on the cancel fd. */
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

/* Tell the caller once that Redis cannot be reached, when the retrying is
 * long enough to be worth a line: the last attempt leaves a long time to
 * go, or the retrying has already lasted a while. */
static void notice(rb_conn *c, const rb_deadline *d, long long failing_since,
                   const rb_error *err)
{
    long long now = rb_now_ms(), left = rb_deadline__left(d, now);

    if (c->noticed || c->opts.on_unreachable == NULL || left == 0 ||
        err->code != RB_EUNREACHABLE)
        return;
    if (left < RB_NOTICE_LEFT_MS && now - failing_since < RB_NOTICE_AFTER_MS)
        return;
    c->noticed = 1;
    c->opts.on_unreachable(c->opts.payload, err->msg,
                           d->until_ms ? left : 0);
}

/* Connect, retrying with backoff as d allows. */
static int ensure_connected(rb_conn *c, const rb_deadline *d, int cancellable,
                            rb_error *err)
{
    int delay = RB_BACKOFF_MIN_MS;
    int cap = rb_deadline__backoff_cap(d, rb_now_ms());
    long long since = rb_now_ms();

    while (c->ctx == NULL) {
        long long left;
        io_status st = connect_once(c, d, err);

        if (st == IO_OK)
            break;
        if (st == IO_REDIS || err->code == RB_ENOMEM)
            return err->code;
        left = rb_deadline__left(d, rb_now_ms());
        if (left == 0)
            return err->code;
        notice(c, d, since, err);
        if (backoff_sleep(c, delay < left ? delay : (int)left, cancellable))
            return rb_error__set(err, RB_ECANCELED, "interrupted");
        delay = next_delay(delay, cap);
    }
    return RB_OK;
}

rb_deadline rb_conn__reach(const rb_conn *c, long long party_until)
{
    return rb_deadline__reach(rb_now_ms(), party_until,
                              c->opts.connect_timeout_ms);
}

int rb_conn__connect(rb_conn *c, const rb_deadline *d, rb_error *err)
{
    return ensure_connected(c, d, 1, err);
}

int rb_conn_connect(rb_conn *c, long long until_ms, rb_error *err)
{
    rb_error local;
    rb_deadline d = rb_conn__reach(c, until_ms);

    if (err == NULL)
        err = &local;
    return ensure_connected(c, &d, 1, err);
}

/* Error replies that say "not now" rather than "no". */
static int transient_error(const char *msg)
{
    return strncmp(msg, "LOADING", 7) == 0 || strncmp(msg, "BUSY", 4) == 0 ||
           strncmp(msg, "TRYAGAIN", 8) == 0 ||
           strncmp(msg, "MASTERDOWN", 10) == 0;
}

int rb_conn__call(rb_conn *c, int argc, const char **argv,
                  const size_t *lens, const rb_call *call, redisReply **out,
                  rb_error *err)
{
    const rb_deadline *d = &call->deadline;
    int delay = RB_BACKOFF_MIN_MS;
    int cap = rb_deadline__backoff_cap(d, rb_now_ms());
    long long since = 0;

    *out = NULL;

    for (;;) {
        redisReply *r = NULL;
        io_status st;
        long long left, now, reply_by;
        int rc;

        if (call->cancellable && rb_conn__cancelled(c))
            return rb_error__set(err, RB_ECANCELED, "interrupted");
        if (!c->connected_once) {
            /* A handle that never connected reaches Redis by its own rule:
             * one attempt (a wrong URL fails at once) unless the caller
             * asked to retry for a while. */
            rb_deadline reach = rb_conn__reach(c, 0);

            rc = ensure_connected(c, &reach, call->cancellable, err);
        } else {
            rc = ensure_connected(c, d, call->cancellable, err);
        }
        if (rc != RB_OK)
            return rc;

        now = rb_now_ms();
        reply_by = rb_deadline__reply_by(d, now, call->block_ms,
                                         c->opts.command_timeout_ms);
        if (reply_by <= now) {
            drop(c);
            return rb_error__set(err, RB_ETIMEOUT, "deadline reached");
        }
        st = roundtrip(c, argc, argv, lens, (int)(reply_by - now),
                       call->cancellable, &r, err);
        if (st == IO_FAILED && d->kind == RB_DEADLINE_EXACT &&
            rb_now_ms() >= reply_by) {
            drop(c);
            return rb_error__set(err, RB_ETIMEOUT, "deadline reached");
        }
        if (st == IO_OK && call->fault != RB_FAULT_NONE &&
            rb_fault__fire(call->fault)) {
            /* The script ran; pretend its reply was lost on the wire. */
            freeReplyObject(r);
            r = NULL;
            rb_error__set(err, RB_EUNREACHABLE, "injected fault: reply lost");
            st = IO_FAILED;
        }
        if (st == IO_OK && r->type == REDIS_REPLY_ERROR &&
            transient_error(r->str)) {
            /* A server that restarted answers LOADING while it reads its
             * AOF: the state is coming back, so wait for it like for a
             * reconnect instead of failing the call. */
            rb_error__set(err, RB_EUNREACHABLE, "Redis is not ready: %s",
                          r->str);
            freeReplyObject(r);
            r = NULL;
            st = IO_FAILED;
        } else if (st == IO_OK) {
            if (r->type == REDIS_REPLY_ERROR) {
                rb_error__set(err, RB_EREDIS, "%s", r->str);
                rb_acl__explain(err, r->str, argc, argv, lens);
                freeReplyObject(r);
                return RB_EREDIS;
            }
            *out = r;
            return RB_OK;
        } else {
            drop(c);
        }
        if (st == IO_CANCELED)
            return rb_error__set(err, RB_ECANCELED, "interrupted");
        now = rb_now_ms();
        left = rb_deadline__left(d, now);
        if (left == 0)
            return err->code;
        if (since == 0)
            since = now;
        notice(c, d, since, err);
        if (backoff_sleep(c, delay < left ? delay : (int)left,
                          call->cancellable))
            return rb_error__set(err, RB_ECANCELED, "interrupted");
        delay = next_delay(delay, cap);
    }
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
