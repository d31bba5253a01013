/*
 * One server. The socket is non-blocking and every wait is a poll(2) with
 * a deadline and the caller's cancel fd: no socket timeout, so a blocking
 * command can block as long as it likes, a signal cuts any wait at once,
 * and a wait can end exactly at a deadline. hiredis is used for the
 * protocol only (redisFormatCommandArgv, redisReader), which works the same
 * on hiredis 0.14 and 1.x and on any byte stream.
 */
#include "fmacros.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "rb_node.h"

/* TCP keepalive as hiredis sets it (idle 15 s, 3 probes 5 s apart): a
 * blocked client whose network went away notices in about 30 s. */
#define RB_KEEPALIVE_S 15

struct rb_node {
    char host[256];
    int port;
    char path[108];
    int is_unix;
    char name[300];
    rb_stream *s;
    redisReader *reader;
    int reached;          /* a connect(2) to it succeeded once */
    int served;           /* a byte came back on this connection */
    /* CLIENT SETNAME and the cluster probe, when they wait for the first
     * exchange (rb_node_hello). */
    const char *pending_name;
    int pending_probe;
    int probe_answered;
    redisReply *probe;    /* CLUSTER SLOTS' array, for the router */
};

rb_node *rb_node__new(const char *host, int port, const char *path)
{
    rb_node *n = calloc(1, sizeof(*n));

    if (n == NULL)
        return NULL;
    if (path) {
        n->is_unix = 1;
        snprintf(n->path, sizeof(n->path), "%s", path);
        snprintf(n->name, sizeof(n->name), "unix://%s", n->path);
    } else {
        snprintf(n->host, sizeof(n->host), "%s", host);
        n->port = port;
        if (strchr(n->host, ':'))
            snprintf(n->name, sizeof(n->name), "[%s]:%d", n->host, port);
        else
            snprintf(n->name, sizeof(n->name), "%s:%d", n->host, port);
    }
    return n;
}

void rb_node__drop(rb_node *n)
{
    n->pending_name = NULL;
    n->pending_probe = 0;
    if (n->s) {
        n->s->ops->close(n->s);
        n->s = NULL;
    }
    if (n->reader) {
        redisReaderFree(n->reader);
        n->reader = NULL;
    }
}

void rb_node__free(rb_node *n)
{
    if (n == NULL)
        return;
    rb_node__drop(n);
    if (n->probe)
        freeReplyObject(n->probe);
    free(n);
}

int rb_node__take_probe(rb_node *n, redisReply **slots)
{
    *slots = NULL;
    if (!n->probe_answered)
        return 0;
    n->probe_answered = 0;
    *slots = n->probe;
    n->probe = NULL;
    return 1;
}

const char *rb_node__name(const rb_node *n) { return n->name; }
int rb_node__reached(const rb_node *n) { return n->reached; }
int rb_node__connected(const rb_node *n) { return n->s != NULL; }

int rb_node__fd(const rb_node *n) { return n->s ? n->s->fd : -1; }
int rb_node__is_unix(const rb_node *n) { return n->is_unix; }
int rb_node__is(const rb_node *n, const char *host, int port)
{
    return !n->is_unix && n->port == port && strcmp(n->host, host) == 0;
}

/* Wait until fd is ready for `events`, the cancel fd fires or until_ms. */
static rb_node_io await_fd(int fd, short events, long long until_ms,
                      int cancel_fd)
{
    for (;;) {
        struct pollfd p[2];
        nfds_t nfds = 1;
        long long left = until_ms - rb_now_ms();
        int rc;

        if (left <= 0)
            return RB_NODE_EXPIRED;
        p[0].fd = fd;
        p[0].events = events;
        p[0].revents = 0;
        if (cancel_fd >= 0) {
            p[1].fd = cancel_fd;
            p[1].events = POLLIN;
            p[1].revents = 0;
            nfds = 2;
        }
        rc = poll(p, nfds, left > 1000000 ? 1000000 : (int)left);
        if (rc < 0 && errno != EINTR)
            return RB_NODE_FAILED;
        if (rc <= 0)
            continue;
        if (nfds == 2 && p[1].revents)
            return RB_NODE_CANCELED;
        if (p[0].revents)
            return RB_NODE_OK;   /* errors show in the next read or write */
    }
}

static void tune_tcp(int fd)
{
    int on = 1, idle = RB_KEEPALIVE_S, intvl = RB_KEEPALIVE_S / 3, cnt = 3;

    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
#ifdef TCP_KEEPIDLE
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
#else
    (void)idle;
    (void)intvl;
    (void)cnt;
#endif
}

/* connect(2) on a non-blocking socket, finished by poll. Returns 0 or an
 * errno value. */
static int dial_one(int fd, const struct sockaddr *sa, socklen_t salen,
                    long long until_ms, int cancel_fd, rb_node_io *io)
{
    int soerr = 0;
    socklen_t len = sizeof(soerr);

    *io = RB_NODE_OK;
    if (connect(fd, sa, salen) == 0)
        return 0;
    if (errno != EINPROGRESS && errno != EAGAIN && errno != EINTR)
        return errno;
    *io = await_fd(fd, POLLOUT, until_ms, cancel_fd);
    if (*io == RB_NODE_EXPIRED)
        return ETIMEDOUT;
    if (*io != RB_NODE_OK)
        return errno ? errno : EIO;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0)
        return errno;
    return soerr;
}

/* A connected socket in *fd, or a reason in err. */
static rb_node_io dial(rb_node *n, long long until_ms, int cancel_fd, int *fd,
                  rb_error *err)
{
    int e = 0;
    rb_node_io io = RB_NODE_OK;

    *fd = -1;
    if (n->is_unix) {
        struct sockaddr_un sun;

        memset(&sun, 0, sizeof(sun));
        sun.sun_family = AF_UNIX;
        memcpy(sun.sun_path, n->path, strlen(n->path) + 1);
        *fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (*fd < 0)
            e = errno;
        else
            e = dial_one(*fd, (struct sockaddr *)&sun, sizeof(sun), until_ms,
                         cancel_fd, &io);
    } else {
        struct addrinfo hints, *res = NULL, *ai;
        char port[8];
        int rc;

        memset(&hints, 0, sizeof(hints));
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        snprintf(port, sizeof(port), "%d", n->port);
        rc = getaddrinfo(n->host, port, &hints, &res);
        if (rc != 0) {
            rb_error__set(err, RB_EUNREACHABLE,
                          "cannot reach Redis at %s: %s", n->name,
                          rc == EAI_SYSTEM ? strerror(errno)
                                           : gai_strerror(rc));
            return RB_NODE_FAILED;
        }
        e = EADDRNOTAVAIL;
        for (ai = res; ai; ai = ai->ai_next) {
            *fd = socket(ai->ai_family,
                         SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
            if (*fd < 0) {
                e = errno;
                continue;
            }
            e = dial_one(*fd, ai->ai_addr, ai->ai_addrlen, until_ms,
                         cancel_fd, &io);
            if (e == 0 || io == RB_NODE_CANCELED)
                break;
            close(*fd);
            *fd = -1;
        }
        freeaddrinfo(res);
        if (e == 0)
            tune_tcp(*fd);
    }
    if (io == RB_NODE_CANCELED) {
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
        rb_error__set(err, RB_ECANCELED, "interrupted");
        return RB_NODE_CANCELED;
    }
    if (e != 0) {
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
        rb_error__set(err, RB_EUNREACHABLE, "cannot reach Redis at %s: %s",
                      n->name, strerror(e));
        return RB_NODE_FAILED;
    }
    return RB_NODE_OK;
}

static rb_node_io fail_io(rb_node *n, rb_node_io io, long long waited,
                          rb_error *err)
{
    if (io == RB_NODE_EXPIRED)
        rb_error__set(err, RB_EUNREACHABLE,
                      "no reply from Redis at %s within %lld ms", n->name,
                      waited);
    else if (io == RB_NODE_CANCELED)
        rb_error__set(err, RB_ECANCELED, "interrupted");
    rb_node__drop(n);
    return io;
}

/* A read or write that ended the connection: RB_IO_REFUSED (the peer
 * refused us for good) or anything else (it went away). */
static rb_node_io lost(rb_node *n, ssize_t how, const char *why,
                       rb_error *err)
{
    rb_error__set(err, RB_EUNREACHABLE, "lost connection to Redis at %s: %s",
                  n->name, why);
    rb_node__drop(n);
    return how == RB_IO_REFUSED ? RB_NODE_REFUSED : RB_NODE_FAILED;
}


/* The cluster probe's answer: an array on a cluster node, an error
 * elsewhere. */
static void keep_probe(rb_node *n, redisReply *r)
{
    if (n->probe)
        freeReplyObject(n->probe);
    n->probe = NULL;
    n->probe_answered = 1;
    if (r->type == REDIS_REPLY_ARRAY)
        n->probe = r;
    else
        freeReplyObject(r);
}

/* A plain TCP connection that the server cut before answering anything:
 * a TLS port does exactly that to a plain client (Redis resets it without a
 * word), so ask once with a TLS ClientHello on a fresh connection. A TLS
 * server answers with a record (a handshake or an alert); Redis speaking
 * plain text answers with an error line. Only on this failure path. */
static int speaks_tls(rb_node *n, long long until_ms)
{
    /* TLS 1.2 ClientHello: no extensions, two suites; enough for any TLS
     * server to answer with a record of its own. */
    static const unsigned char hello[] = {
        0x16, 0x03, 0x01, 0x00, 0x2f,                 /* record */
        0x01, 0x00, 0x00, 0x2b, 0x03, 0x03,           /* ClientHello */
        1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
        17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32,
        0x00,                                         /* no session id */
        0x00, 0x04, 0xc0, 0x2b, 0xc0, 0x2f,           /* ECDHE-*-AES128-GCM */
        0x01, 0x00                                    /* no compression */
    };
    unsigned char first = 0;
    rb_error ignored;
    long long until = rb_now_ms() + 1000;
    int fd, tls = 0;

    if (until > until_ms)
        until = until_ms;
    if (dial(n, until, -1, &fd, &ignored) != RB_NODE_OK)
        return 0;
    if (send(fd, hello, sizeof(hello), MSG_NOSIGNAL) ==
            (ssize_t)sizeof(hello) &&
        await_fd(fd, POLLIN, until, -1) == RB_NODE_OK &&
        read(fd, &first, 1) == 1)
        tls = first == 0x15 || first == 0x16;
    close(fd);
    return tls;
}

/* lost(), but a first exchange cut by a TLS port says so, for good. */
static rb_node_io lost_first(rb_node *n, ssize_t how, const char *why,
                             long long reply_by, rb_error *err)
{
    int plain_tcp = !n->is_unix && n->s && n->s->tls == NULL;

    if (!n->served && plain_tcp && speaks_tls(n, reply_by)) {
        rb_error__set(err, RB_EUNREACHABLE, "cannot talk to Redis at %s: "
                      "the server speaks TLS: use rediss://", n->name);
        rb_node__drop(n);
        return RB_NODE_REFUSED;
    }
    return lost(n, how, why, err);
}

static rb_node_io exchange_raw(rb_node *n, const rb_cmd *cmds, int ncmds,
                               long long reply_by, int cancel_fd,
                               redisReply **replies, rb_error *err)
{
    char *buf = NULL, chunk[16384];
    size_t len = 0, off = 0;
    long long started = rb_now_ms();
    int i, got = 0, streaming = 0;
    rb_node_io io;

    for (i = 0; i < ncmds; i++)
        replies[i] = NULL;
    if (n->s == NULL)
        return lost(n, RB_IO_ERROR, "not connected", err);
    for (i = 0; i < ncmds; i++) {
        char *one = NULL, *grown;
        int l = redisFormatCommandArgv(&one, cmds[i].argc, cmds[i].argv,
                                       cmds[i].lens);

        if (l < 0 || (grown = realloc(buf, len + (size_t)l)) == NULL) {
            if (l >= 0)
                redisFreeCommand(one);
            free(buf);
            rb_error__set(err, RB_ENOMEM, "out of memory");
            return RB_NODE_FAILED;
        }
        buf = grown;
        memcpy(buf + len, one, (size_t)l);
        len += (size_t)l;
        redisFreeCommand(one);
    }

    while (off < len) {
        rb_error werr;
        ssize_t w = n->s->ops->write(n->s, buf + off, len - off, &werr);

        if (w > 0) {
            off += (size_t)w;
            continue;
        }
        if (w == RB_IO_WANT_WRITE || w == RB_IO_WANT_READ) {
            io = await_fd(n->s->fd,
                          w == RB_IO_WANT_WRITE ? POLLOUT : POLLIN,
                          reply_by, cancel_fd);
            if (io != RB_NODE_OK) {
                free(buf);
                return fail_io(n, io, rb_now_ms() - started, err);
            }
            continue;
        }
        free(buf);
        return lost_first(n, w, w == 0 ? "connection closed" : werr.msg,
                          reply_by, err);
    }
    free(buf);

    while (got < ncmds) {
        void *reply = NULL;
        rb_error rerr;
        ssize_t r;

        if (redisReaderGetReply(n->reader, &reply) != REDIS_OK) {
            rb_error__set(err, RB_EPROTO, "bad reply from Redis at %s: %s",
                          n->name, n->reader->errstr);
            io = RB_NODE_FAILED;
            goto undo;
        }
        if (reply) {
            replies[got++] = reply;
            continue;
        }
        /* A server that never stops sending (an endless line) must not
         * hold the call past its deadline: data that keeps coming never
         * waits in poll, where the deadline is checked. (Only then: a
         * whole reply that was waiting when we looked is still taken.) */
        if (streaming && rb_now_ms() >= reply_by) {
            io = fail_io(n, RB_NODE_EXPIRED, rb_now_ms() - started, err);
            goto undo;
        }
        r = n->s->ops->read(n->s, chunk, sizeof(chunk), &rerr);
        if (r > 0) {
            n->served = 1;
            redisReaderFeed(n->reader, chunk, (size_t)r);
            streaming = 1;
            continue;
        }
        streaming = 0;
        if (r == RB_IO_WANT_READ || r == RB_IO_WANT_WRITE) {
            io = await_fd(n->s->fd,
                          r == RB_IO_WANT_READ ? POLLIN : POLLOUT,
                          reply_by, cancel_fd);
            if (io == RB_NODE_OK)
                continue;
            fail_io(n, io, rb_now_ms() - started, err);
            goto undo;
        }
        io = lost_first(n, r, r == 0 ? "connection closed" : rerr.msg,
                        reply_by, err);
        goto undo;
    }
    return RB_NODE_OK;

undo:
    for (i = 0; i < got; i++) {
        freeReplyObject(replies[i]);
        replies[i] = NULL;
    }
    rb_node__drop(n);
    return io;
}

rb_node_io rb_node__exchange(rb_node *n, const rb_cmd *cmds, int ncmds,
                             long long reply_by, int cancel_fd,
                             redisReply **replies, rb_error *err)
{
    const char *name_argv[3] = { "CLIENT", "SETNAME", n->pending_name };
    const char *probe_argv[2] = { "CLUSTER", "SLOTS" };
    size_t name_lens[3] = { 6, 7, 0 }, probe_lens[2] = { 7, 5 };
    rb_cmd all[RB_NODE_CMDS_MAX + 2];
    redisReply *got[RB_NODE_CMDS_MAX + 2];
    int extra = 0, name_at = -1, probe_at = -1, i;
    rb_node_io io;

    if (!n->pending_name && !n->pending_probe)
        return exchange_raw(n, cmds, ncmds, reply_by, cancel_fd, replies,
                            err);
    /* After the caller's commands: AUTH, when there is one, comes first. */
    for (i = 0; i < ncmds; i++)
        all[i] = cmds[i];
    extra = ncmds;
    if (n->pending_name) {
        name_lens[2] = strlen(n->pending_name);
        all[extra].argc = 3;
        all[extra].argv = name_argv;
        all[extra].lens = name_lens;
        name_at = extra++;
    }
    if (n->pending_probe) {
        all[extra].argc = 2;
        all[extra].argv = probe_argv;
        all[extra].lens = probe_lens;
        probe_at = extra++;
    }
    n->pending_name = NULL;
    n->pending_probe = 0;
    io = exchange_raw(n, all, extra, reply_by, cancel_fd, got, err);
    for (i = 0; i < ncmds; i++)
        replies[i] = io == RB_NODE_OK ? got[i] : NULL;
    if (io != RB_NODE_OK)
        return io;
    /* A refused CLIENT SETNAME (an ACL without it) costs only the name. */
    if (name_at >= 0)
        freeReplyObject(got[name_at]);
    if (probe_at >= 0)
        keep_probe(n, got[probe_at]);
    return RB_NODE_OK;
}

rb_node_io rb_node__connect(rb_node *n, const rb_stream_cfg *cfg,
                            const rb_node_hello *hello, long long until_ms,
                            int cancel_fd, rb_error *err)
{
    const char *argv[4][4];
    size_t lens[4][4];
    rb_cmd cmds[4];
    redisReply *replies[4];
    char db[16];
    int fd, ncmds = 0, auth = -1, sel = -1, i, j, rc;
    int permanent = 0;
    rb_node_io io;

    if (n->s)
        return RB_NODE_OK;
    io = dial(n, until_ms, cancel_fd, &fd, err);
    if (io != RB_NODE_OK)
        return io;
    n->reached = 1;
    n->served = 0;
    rc = rb_stream__open(&n->s, fd, cfg, n->host, n->name, until_ms,
                         cancel_fd, &permanent, err);
    if (rc != RB_OK) {
        n->s = NULL;
        return rc == RB_ECANCELED ? RB_NODE_CANCELED
               : permanent        ? RB_NODE_REFUSED
                                  : RB_NODE_FAILED;
    }
    n->reader = redisReaderCreate();
    if (n->reader == NULL) {
        rb_node__drop(n);
        rb_error__set(err, RB_ENOMEM, "out of memory");
        return RB_NODE_FAILED;
    }
    n->pending_name = hello->client_name && hello->client_name[0]
                          ? hello->client_name : NULL;
    n->pending_probe = hello->probe_cluster;
    n->probe_answered = 0;

    /* AUTH and SELECT gate every command: their own write, first (the
     * rest of the hello rides along after them). */
    if (hello->password) {
        i = 0;
        argv[ncmds][i++] = "AUTH";
        if (hello->user && hello->user[0])
            argv[ncmds][i++] = hello->user;
        argv[ncmds][i++] = hello->password;
        cmds[ncmds].argc = i;
        auth = ncmds++;
    }
    if (hello->db != 0) {
        snprintf(db, sizeof(db), "%d", hello->db);
        argv[ncmds][0] = "SELECT";
        argv[ncmds][1] = db;
        cmds[ncmds].argc = 2;
        sel = ncmds++;
    }
    if (ncmds == 0)
        return RB_NODE_OK;
    for (i = 0; i < ncmds; i++) {
        for (j = 0; j < cmds[i].argc; j++)
            lens[i][j] = strlen(argv[i][j]);
        cmds[i].argv = argv[i];
        cmds[i].lens = lens[i];
    }
    io = rb_node__exchange(n, cmds, ncmds, until_ms, cancel_fd, replies, err);
    if (io != RB_NODE_OK)
        return io;
    for (i = 0; i < ncmds; i++) {
        const redisReply *rep = replies[i];

        if (io == RB_NODE_OK && rep->type == REDIS_REPLY_ERROR &&
            (i == auth || i == sel)) {
            /* A wrong password does not get better by retrying. */
            if (i == auth)
                rb_error__set(err, RB_EREDIS, "Redis refused AUTH: %s",
                              rep->str);
            else
                rb_error__set(err, RB_EREDIS,
                              "Redis refused SELECT %d: %s", hello->db,
                              rep->str);
            io = RB_NODE_REFUSED;
        }
        freeReplyObject(replies[i]);
    }
    if (io != RB_NODE_OK)
        rb_node__drop(n);
    return io;
}
