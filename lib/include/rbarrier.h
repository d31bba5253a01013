#ifndef RBARRIER_H
#define RBARRIER_H

/*
 * rbarrier: barriers and shared counters for jobs on many machines, kept in
 * Redis. All state is changed by Lua scripts and INCR-family commands only,
 * so a process that dies never leaves half an update behind.
 *
 * Errors: every call returns 0 (RB_OK) or a negative rb_code, and fills the
 * caller's rb_error with the same code and a one-line message. Nothing here
 * prints, exits, or reads the environment.
 *
 * Options: every options struct starts with `unsigned int version`, set by
 * its _INIT macro; declare one with the macro and set the fields you need,
 * so a program built against this header keeps working when later versions
 * add fields. A call given a version it does not know returns RB_EINVAL.
 *
 * Threads: an rb_conn handle, and every call made with it, belongs to one
 * thread at a time (use one handle per thread). Everything else (checks,
 * URL parsing, rb_version, rb_strerror) is reentrant and keeps no global
 * state. OpenSSL is loaded (dlopen of libssl) by the first handle of a
 * rediss:// URL, once, thread-safely; a program that uses only plain URLs
 * never loads it.
 *
 * SIGPIPE: the library never raises it. Plain connections write with
 * send(2) and MSG_NOSIGNAL, and TLS connections through a socket that does
 * the same, so a server that went away is a dropped connection (resent as
 * the call's deadline allows), not a signal: a program need not ignore
 * SIGPIPE for the library's sake.
 */

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define RB_VERSION_MAJOR 2
#define RB_VERSION_MINOR 0
#define RB_VERSION_PATCH 0
#define RB_VERSION "2.0.0"

/* The version of the library in use, "MAJOR.MINOR.PATCH": RB_VERSION of
 * the header it was built from, which may be newer than the one a program
 * was compiled with. */
const char *rb_version(void);

typedef enum rb_code {
    RB_OK = 0,
    RB_EREDIS = -1,       /* Redis answered with an error */
    RB_EINVAL = -2,       /* bad input; nothing was written */
    RB_EBROKEN = -3,      /* the round was broken; message says why */
    RB_EUNREACHABLE = -4, /* Redis could not be reached before the deadline */
    RB_ETIMEOUT = -5,     /* this party's own timeout expired */
    RB_ECANCELED = -6,    /* the caller's cancel fd became readable */
    RB_ELOST = -7,        /* barrier state lost (Redis restarted empty) */
    RB_ENOMEM = -8,
    RB_EPROTO = -9        /* a reply of a shape the protocol never sends */
} rb_code;

/* What a code means, in a few words ("Redis could not be reached"); a
 * static string, never NULL ("unknown error code" for a value not above). */
const char *rb_strerror(int code);

typedef struct rb_error {
    int code;             /* an rb_code */
    char msg[512];        /* one line, no trailing newline */
} rb_error;

/* ---- checks on user input (pure, no I/O) ------------------------------ */

#define RB_NAME_MAX 200

/* Check a barrier or parameter name: 1..RB_NAME_MAX bytes, none of them a
 * brace (the key's cluster hash tag is the name), whitespace or a control
 * byte. `what` names the thing in the message ("name", "param").
 * @return RB_OK or RB_EINVAL */
int rb_check_name(const char *name, const char *what, rb_error *err);

/* Check a party or worker id: as rb_check_name, and no comma (ids are
 * listed comma-separated in outcomes). */
int rb_check_id(const char *id, const char *what, rb_error *err);

/* ---- URLs --------------------------------------------------------------- */

/* Which kind of server a URL names. */
typedef enum rb_url_kind {
    RB_URL_TCP = 0,       /* redis:// or rediss://: one server, or seed nodes
                             of a cluster (fallbacks), tried in turn */
    RB_URL_UNIX,          /* unix:///path: a local socket */
    RB_URL_SENTINEL       /* redis-sentinel:// or rediss-sentinel://: nodes
                             are sentinels, asked for the master named by
                             rb_url_get_master */
} rb_url_kind;

/* A parsed URL: opaque, made by rb_url_parse and released with
 * rb_url_free, read and changed through the calls below. rb_conn_new
 * copies what it needs, so a URL may be freed once a handle is made.
 * Strings returned by the getters belong to the URL and stay valid until
 * it is changed or freed. */
typedef struct rb_url rb_url;

/* Parse one of
 *   redis://[[user]:password@]host[:port][,host[:port]...][/db]
 *   rediss://...                        (the same over TLS)
 *   unix:///path/redis.sock[?db=N]
 *   redis-sentinel://[[user]:password@]host[:port][,...][/db]#MASTER
 *   rediss-sentinel://...               (the same over TLS)
 * Hosts may be IPv6 addresses in brackets ([::1]:6379); ports default to
 * 6379 (26379 for sentinels). A lone userinfo (`redis://secret@host`) is a
 * password, as in redis-cli. The userinfo ends at the last '@', so a
 * password may hold '/', '#' or '@' unescaped; %XX escapes are decoded in
 * user, password and master. Every part has a length limit (16 hosts of
 * 255 bytes, a 107-byte socket path, a 255-byte user or master name, a
 * 1023-byte password) and input beyond one is refused, never cut short. Error
 * messages never quote the URL or any part of it, since any part may be a
 * mistyped password.
 * @param[out] out  freed with rb_url_free; NULL on failure
 * @return RB_OK, RB_EINVAL, RB_ENOMEM */
int rb_url_parse(rb_url **out, const char *text, rb_error *err);

/* Free a URL, overwriting its password first. Takes NULL. */
void rb_url_free(rb_url *url);

rb_url_kind rb_url_get_kind(const rb_url *url);
/* 1 for rediss:// and rediss-sentinel://, else 0. */
int rb_url_is_tls(const rb_url *url);
/* TCP and SENTINEL: the hosts listed, 1 or more; UNIX: 0. */
size_t rb_url_nodes_count(const rb_url *url);
/* The i-th host (an IPv6 address without brackets) and its port; NULL and
 * 0 when i >= rb_url_nodes_count. */
const char *rb_url_get_host(const rb_url *url, size_t i);
int rb_url_get_port(const rb_url *url, size_t i);
/* UNIX: the socket's path; else NULL. */
const char *rb_url_get_path(const rb_url *url);
/* SENTINEL: the master's name; else NULL. */
const char *rb_url_get_master(const rb_url *url);
/* The database number (0 unless given). */
int rb_url_get_db(const rb_url *url);
/* The ACL user name; "" for the default user. */
const char *rb_url_get_user(const rb_url *url);
/* 1 when the URL holds a password. An empty one (`user:@host`) is none,
 * so a program may take one from elsewhere (the CLI: $REDISCLI_AUTH). */
int rb_url_has_password(const rb_url *url);
/* The password in clear, for a program's own connections to the same
 * server; NULL when none. Never print it: rb_url_format masks it. */
const char *rb_url_get_password(const rb_url *url);

/* Set the ACL user name (NULL or "": the default user), or the password
 * (NULL or "": none; the old one is overwritten). Beyond the parser's
 * limits: RB_EINVAL, and the URL is unchanged.
 * @return RB_OK or RB_EINVAL */
int rb_url_set_user(rb_url *url, const char *user, rb_error *err);
int rb_url_set_password(rb_url *url, const char *password, rb_error *err);

/* Write url back as text into out (always NUL-terminated). The password
 * is written as `***` unless with_password is set (percent-encoded then),
 * so messages can show a URL safely.
 * @return RB_OK, or RB_EINVAL when out is too small */
int rb_url_format(char *out, size_t outlen, const rb_url *url,
                  int with_password, rb_error *err);

/* ---- connections -------------------------------------------------------- */

/* TLS settings for rediss:// URLs (redis-cli's --cacert, --cacertdir,
 * --cert, --key, --sni, --insecure). The server's certificate and host
 * name are verified against cacert/cacertdir, or the system's trust store
 * when neither is given; only `insecure` skips that. Files are read when
 * the connection handle is made. */
typedef struct rb_tls_opts {
    unsigned int version;   /* RB_TLS_OPTS_VERSION */
    const char *cacert;     /* PEM file of trusted CA certificates */
    const char *cacertdir;  /* directory of hashed CA certificates */
    const char *cert;       /* client certificate (tls-auth-clients yes) */
    const char *key;        /* its private key */
    const char *sni;        /* server name to send and to verify instead of
                               the URL's host */
    int insecure;           /* 1: accept any certificate (tests, never
                               production) */
} rb_tls_opts;

#define RB_TLS_OPTS_VERSION 1
#define RB_TLS_OPTS_INIT { .version = RB_TLS_OPTS_VERSION }


typedef struct rb_conn rb_conn;

/* Called once per handle, when a call has failed to reach Redis for about
 * 5 seconds and goes on retrying (a restart or a pause of a few seconds
 * stays silent): `what` is the one-line reason
 * ("cannot reach Redis at host:port: Connection refused", never a
 * password) and left_ms how much longer it retries (0: no limit). */
typedef void (*rb_unreachable_fn)(void *payload, const char *what,
                                  long long left_ms);

typedef struct rb_conn_opts {
    unsigned int version;          /* RB_CONN_OPTS_VERSION */
    long long connect_timeout_ms;  /* how long a handle that never connected
                                retries reaching Redis; 0: until the
                                operation's own deadline (wait --timeout),
                                or one attempt when it has none */
    int command_timeout_ms;  /* reply wait beyond a blocking slice; 0: 5000
                                (a call with a deadline waits at most until
                                it, plus 500 ms) */
    const char *password;    /* overrides the URL's password; NULL: URL's */
    int cancel_fd;           /* -1, or an fd whose readability cancels any
                                call in progress (a signal handler writes
                                to a pipe) */
    rb_unreachable_fn on_unreachable;  /* may be NULL */
    void *payload;           /* passed to on_unreachable */
    const char *client_name; /* CLIENT SETNAME on every connection; NULL:
                                none (a server that refuses it is used
                                unnamed) */
    const rb_tls_opts *tls;  /* for rediss:// URLs; NULL: defaults */
    int replicas;            /* > 0: follow every call with a write of its
                                own and WAIT replicas; a call not
                                acknowledged by that many replicas is resent
                                until its deadline, then fails (RB_EREDIS,
                                naming the shortfall) */
} rb_conn_opts;

/* Designated, so a field added later is zero (its default) here too. */
#define RB_CONN_OPTS_VERSION 1
#define RB_CONN_OPTS_INIT { .version = RB_CONN_OPTS_VERSION, .cancel_fd = -1 }

/* Create a connection handle. Connecting is lazy and retried: every call
 * (re)connects as needed, with capped exponential backoff, until its own
 * deadline. The handle copies what it needs of `url` and `opts` (and the
 * strings opts points to, but not the TLS files: they are read here), so
 * both may be freed once it returns.
 * @param[out] out  freed with rb_conn_free
 * @return RB_OK, RB_EINVAL (an opts version this library does not know, a
 *         TLS file that cannot be read, a rediss:// URL where libssl
 *         cannot be loaded), RB_ENOMEM */
int rb_conn_new(rb_conn **out, const rb_url *url, const rb_conn_opts *opts,
                rb_error *err);

/* Connect now (nothing to do when connected), retrying until `until_ms`
 * (milliseconds on CLOCK_MONOTONIC; 0: for opts.connect_timeout_ms, or
 * one attempt).
 * @return RB_OK, RB_EUNREACHABLE, RB_EREDIS (AUTH or SELECT refused),
 *         RB_ECANCELED */
int rb_conn_connect(rb_conn *c, long long until_ms, rb_error *err);

/* Free the handle and close its connection. Takes NULL. */
void rb_conn_free(rb_conn *c);

#ifdef __cplusplus
}
#endif

/* The primitives, one header each (installed beside this one). */
#include "rbarrier/barrier.h"
#include "rbarrier/lock.h"
#include "rbarrier/job.h"

#endif
