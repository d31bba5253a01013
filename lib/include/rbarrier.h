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

/* ---- barriers ----------------------------------------------------------- */

typedef struct rb_progress {
    long long gen;
    long count;           /* parties in the round at the last look */
    long n;
    long long waited_ms;
    const char *const *members;  /* ids in the round, when opts.expect is
                                    set (else NULL); valid during the call */
    size_t members_count;
} rb_progress;

typedef void (*rb_progress_fn)(const rb_progress *p, void *payload);

/* What a --once command's runner is told (its environment, in the CLI). */
typedef struct rb_once_info {
    const char *name;
    long long gen;
    long n;
    const char *id;
    long index;
} rb_once_info;

/* How the library runs a --once command without running anything itself
 * (it never forks, execs or waits for a process): the caller starts the
 * command, and the library asks whether it ended while it keeps this
 * party's lease alive between questions.
 *   start  begin the command; RB_OK, or an rb_code with err filled
 *   wait   wait up to timeout_ms for it to end: 1 with *status (its exit
 *          status, 128+N for signal N) when it ended, 0 while it runs,
 *          < 0 on error; should return early when the cancel fd fires
 *   kill   end it now (the round broke or this party was interrupted) and
 *          reap it */
typedef struct rb_once_ops {
    int (*start)(const rb_once_info *info, void *payload, rb_error *err);
    int (*wait)(void *payload, int timeout_ms, int *status);
    void (*kill)(void *payload);
} rb_once_ops;

/* Options of rb_barrier_wait. Start from RB_WAIT_OPTS_INIT, which sets
 * version (fields are only ever added, at the end, and a zero field keeps
 * its old meaning); a call given a version it does not know refuses it with
 * RB_EINVAL. All times are milliseconds. */
#define RB_WAIT_OPTS_VERSION 2

typedef struct rb_wait_opts {
    unsigned int version; /* RB_WAIT_OPTS_VERSION */
    const char *prefix;   /* key prefix; NULL: "rb" */
    const char *name;     /* barrier name (rb_check_name) */
    long n;               /* parties per round, 1..RB_N_MAX */
    const char *id;       /* this party's id (rb_check_id) */
    long long timeout_ms; /* <= 0: no timeout */
    long long lease_ms;   /* 0: 10000; at least 30 */
    long long ttl_ms;     /* idle state's lifetime, whole seconds are kept
                             (rounded up); 0: one day */
    rb_progress_fn progress;  /* called after each look at the round (about
                                 once per progress_ms); may be NULL */
    void *payload;
    long long progress_ms;    /* how often progress is called; 0: each slice
                                 (a third of the lease) */
    const rb_once_ops *once;  /* when this party's arrival completes the
                                 round, run a command before anyone is
                                 released; NULL: none */
    void *once_payload;
    const char *value;    /* appended to the round's value list (1..200
                             bytes, no control characters); NULL: none */
    const char *expect;   /* the expected ids, comma-separated; fixed by
                             the round's first arrival, as n is: a party
                             with another list (or none against one) is
                             refused with RB_EINVAL; NULL: none */
    const char *reduce;   /* the round's reduction of the values (a word,
                             e.g. "sum"); fixed by the round's first
                             arrival, a party with another is refused with
                             RB_EINVAL; NULL: none */
    const char *job;      /* inside a job (rbarrier run): the job's name;
                             the barrier's keys live under the job's tag,
                             per epoch and attempt, and the job's break
                             breaks the wait; NULL: not in a job */
    long long job_epoch;  /* the job's epoch (with job only) */
    long job_attempt;     /* the job's attempt, 0 first (with job only) */
    /* Version 2. While this party's --once command runs: called after each
     * renewal of its lease that Redis took (the claim, then heartbeats),
     * with the time (rb_now_ms clock: the renewal's send time plus the
     * lease) until which the round surely waits for it, so the caller can
     * hold the command to that deadline. NULL: not told. */
    void (*once_held)(void *once_payload, long long until_ms);
} rb_wait_opts;

#define RB_N_MAX 100000
/* Every other field's default is zero; a field added later is zero too. */
#define RB_WAIT_OPTS_INIT { .version = RB_WAIT_OPTS_VERSION }

typedef struct rb_wait_result {
    long long gen;        /* the round this party was in */
    long count;           /* parties counted when this party arrived */
    long n;
    int completed;        /* 1 if this party's arrival completed the round */
    long index;           /* place of this arrival in its round, 0 first */
    int duplicate;        /* 1: the id was already waiting in the round */
    int ran_once;         /* 1: this party ran the --once command ... */
    int once_status;      /* ... which ended with this status (0 when it
                             was stopped because the round broke) */
    long long waited_ms;
    char **values;        /* opts.value: the round's values in arrival
                             order, once it passed (rb_wait_result_clear) */
    size_t values_count;
} rb_wait_result;

/* Arrive at the barrier and block until the round ends. A round that is
 * reset, broken by another party, or whose state is deleted or lost never
 * passes; a --once command starts only in a round without an outcome, and
 * is stopped (once_ops->kill) when the round breaks while it runs. An
 * arrival whose own call failed is withdrawn (its round broken) so that it
 * counts for nobody.
 * @param[out] out  may be NULL; else release with rb_wait_result_clear
 * @return RB_OK (the round passed), RB_EBROKEN (msg is the reason; with
 *         out->ran_once and out->once_status != 0, this party's --once
 *         command failed with that status), RB_ETIMEOUT (this party's
 *         timeout; the round was broken for the others), RB_ECANCELED
 *         (likewise, on the cancel fd), RB_EINVAL (bad options, an unknown
 *         opts->version, or the open round has another n, --expect list or
 *         --reduce op: nothing written), RB_ELOST, RB_EUNREACHABLE,
 *         RB_EREDIS (a key of the wrong type is named in msg; nothing
 *         written) */
int rb_barrier_wait(rb_wait_result *out, rb_conn *c, const rb_wait_opts *opts,
                    rb_error *err);
void rb_wait_result_clear(rb_wait_result *res);

typedef struct rb_member {
    char *id;             /* owned; freed by rb_status_clear */
    long long lease_left_ms;  /* negative once expired */
} rb_member;

typedef struct rb_status {
    int exists;           /* 0: the name was never used, or its state has
                             expired (everything below is zero) */
    long long gen;        /* open generation */
    long n;               /* 0 when nobody is in the open round */
    char *last_outcome;   /* owned; "" when none is kept */
    size_t members_count;
    rb_member *members;   /* owned; freed by rb_status_clear */
} rb_status;

/* Read a barrier's state in one consistent snapshot.
 * @param[out] out  release with rb_status_clear (also after a failure)
 * @return RB_OK, RB_EINVAL, RB_EREDIS, RB_EPROTO, RB_ENOMEM, ... */
int rb_barrier_status(rb_status *out, rb_conn *c, const char *prefix,
                      const char *name, rb_error *err);
/* Free what st owns and zero it; st may be NULL. */
void rb_status_clear(rb_status *st);

typedef struct rb_reset_result {
    long long gen;        /* the generation broken (0: nothing was open) */
    long members;         /* parties that were in it */
    char **removed;       /* owned: keys (or "KEY field") of the wrong type
                             or content deleted as damaged */
    size_t removed_count;
} rb_reset_result;

/* Break the open round (and a round whose --once command runs) with
 * "broken reset" and forget its n; delete any key of the barrier that
 * holds the wrong type of value, so that the barrier is usable again
 * whatever happened to it.
 * @param[out] out  may be NULL; else release with rb_reset_result_clear
 * @param ttl_ms    idle state's lifetime; 0: one day */
int rb_barrier_reset(rb_reset_result *out, rb_conn *c, const char *prefix,
                     const char *name, long long ttl_ms, rb_error *err);
/* Free what res owns and zero it; res may be NULL. */
void rb_reset_result_clear(rb_reset_result *res);

/* ---- parameters (the seed's global and local values) -------------------- */

/* Check a decimal number for train --by / set --value: an optional '-',
 * digits, at most one '.' with digits on both sides, at most 40 bytes, in
 * canonical form (no leading zero, no -0); an integer must fit in 64 bits.
 * *is_float is set to 1 when it has a fraction part.
 * @return RB_OK or RB_EINVAL */
int rb_check_number(int *is_float, const char *text, const char *what,
                    rb_error *err);

/* Values come back whole, of any length, in memory the caller frees with
 * free(): a value is never cut to fit a buffer. A value holding a NUL byte
 * (stored by another client) is refused with RB_EPROTO. ttl_ms is the
 * lifetime of what a call writes (whole seconds kept, rounded up); 0: one
 * day. A key of the wrong type is refused with RB_EREDIS naming it, and
 * nothing is written. */

/* local copy := global; *out is the value copied ("0" when never set). */
int rb_param_sync(char **out, rb_conn *c, const char *prefix,
                  const char *param, const char *worker, long long ttl_ms,
                  rb_error *err);

/* global += by, exactly once even when retried after a lost reply; returns
 * the local copy as read and the global value after the increment. An
 * integer step on an integer value is exact int64 arithmetic (INCRBY) and
 * overflow is an error (RB_EREDIS, nothing changed); floats (INCRBYFLOAT)
 * only when the step or the value has a fraction. */
int rb_param_train(char **local_out, char **global_out, rb_conn *c,
                   const char *prefix, const char *param, const char *worker,
                   const char *by, long long ttl_ms, rb_error *err);

/* The global value ("0" when never set). */
int rb_param_get(char **out, rb_conn *c, const char *prefix,
                 const char *param, rb_error *err);
/* Sets the value and wakes every rb_param_get_until waiting for it. */
int rb_param_set(rb_conn *c, const char *prefix, const char *param,
                 const char *value, long long ttl_ms, rb_error *err);

/* The global value once it is set: at once when it exists (set or made by
 * train), else blocked (no polling) until rb_param_set gives it one, which
 * wakes every waiter at once; *out is the value set. timeout_ms 0: no
 * limit. A value train makes while this waits does not wake it.
 * @return RB_OK, RB_ETIMEOUT (timeout_ms passed), RB_ECANCELED (the cancel
 *         fd), RB_EREDIS, RB_EUNREACHABLE, RB_EPROTO, RB_EINVAL */
int rb_param_get_until(char **out, rb_conn *c, const char *prefix,
                       const char *param, long long timeout_ms,
                       rb_error *err);

/* ---- locks -------------------------------------------------------------
 *
 * A lock NAME has max slots (1: a mutex; more: a counting semaphore)
 * shared by every client of the server. A mutex also takes shared (read)
 * requests: any number of shared holders at once, never beside an
 * exclusive one (a read-write lock). Waiters queue first come, first
 * served, shared and exclusive alike (a shared request behind a waiting
 * exclusive one waits; a run of shared ones at the head is granted
 * together), and block on a list of their own (no polling); a release or
 * an expiry wakes exactly the waiters it admits. Every grant takes a
 * fencing token that grows strictly per name, a reset included; a counter
 * that is lost (the key expired 30 times the ttl after the last use, or
 * the state was lost) starts again at the server's time in microseconds,
 * above every earlier token and below 2^53, so a store can refuse a stale
 * holder's write. A holder keeps its slot by calling
 * rb_lock_renew about every lease/3; a holder that stops (killed, cut
 * off) loses it lease ms after its last renewal, and the next waiter gets
 * it within a second more. A handle is used by one thread at a time. */

typedef struct rb_lock rb_lock;

typedef struct rb_lock_opts {
    unsigned int version;     /* RB_LOCK_OPTS_VERSION */
    const char *prefix;       /* key prefix; NULL: "rb" */
    const char *name;         /* the lock (rb_check_name) */
    const char *id;           /* this holder's id (rb_check_id); shown by
                                 status; one process per id at a time */
    long max;                 /* slots, 1..RB_LOCK_MAX; 0: 1. Everyone
                                 holding or waiting must agree */
    long long timeout_ms;     /* give up waiting after this; 0: never */
    long long lease_ms;       /* 0: 10000 */
    long long ttl_ms;         /* idle state expires; 0: one day */
    /* version 2: */
    int shared;               /* 1: a shared (read) request; needs max 1 */
    int nonblock;             /* 1: one attempt; not had: RB_ETIMEOUT */
    /* called between blocking slices while waiting (ms waited so far); it
     * may use the connection (rb_lock_status) but not the handle. NULL:
     * none */
    void (*progress)(long long waited_ms, void *payload);
    void *payload;
} rb_lock_opts;

#define RB_LOCK_OPTS_VERSION 2
#define RB_LOCK_OPTS_INIT { .version = RB_LOCK_OPTS_VERSION }
#define RB_LOCK_MAX 100000

/* Queue for a slot of opts->name and block until it is granted, the
 * timeout passes or the connection's cancel fd fires. Giving up leaves
 * the queue (a slot granted at that moment is passed on).
 * @param[out] out  the held lock: rb_lock_release, then rb_lock_free
 * @return RB_OK (held), RB_ETIMEOUT (the timeout passed, or with
 *         nonblock the lock could not be had at once), RB_ECANCELED,
 *         RB_EINVAL (bad options; the lock is in use with another max or
 *         mode, or the id holds or waits in another process: nothing
 *         written), RB_EBROKEN (the lock was reset while waiting, this
 *         waiter was presumed dead, or its grant was read after its
 *         lease: the slot was given back), RB_EUNREACHABLE, RB_EREDIS,
 *         RB_ELOST (the lock's state vanished while waiting) */
int rb_lock_acquire(rb_lock **out, rb_conn *c, const rb_lock_opts *opts,
                    rb_error *err);

/* The fencing token of the grant this handle holds (>= 1). */
long long rb_lock_token(const rb_lock *l);

/* Milliseconds until the next renewal is due (0: now). */
long long rb_lock_renew_in_ms(const rb_lock *l);

/* Milliseconds left of the lease by this process' clock, counted from the
 * sending of the last call that answered the slot is held: a renewal, the
 * acquire call that was granted or found the grant, or for a grant read
 * from the wake list the acquire call before that wait. The server counts
 * the lease from a moment after that sending (the call running, or a grant
 * made later while this process waited), so this count never ends later
 * than the server's (clock rates aside). <= 0: the slot must be presumed
 * lost. */
long long rb_lock_lease_left_ms(const rb_lock *l);

/* Renew the lease; resent after a dropped connection until the lease, by
 * this process' clock, is about to run out.
 * @return RB_OK, RB_EBROKEN (the slot is lost: the lease ran out or a
 *         reset revoked it; stop using what the lock guards), RB_ELOST
 *         (the lock's state vanished from Redis: FLUSHALL, eviction, a
 *         restart without persistence; stop as for RB_EBROKEN),
 *         RB_ECANCELED, RB_EUNREACHABLE (not renewed, and the lease is
 *         over or nearly by this process' clock: presume the slot lost),
 *         RB_EREDIS */
int rb_lock_renew(rb_lock *l, rb_error *err);

/* Give the slot back; the queue's next waiter gets it at once. After
 * rb_lock_renew said RB_EBROKEN (a reset revoked it), call it once what
 * the lock guards has stopped: nothing is granted after a reset until
 * every revoked holder has confirmed so or its lease has passed.
 * @return RB_OK, RB_EBROKEN (it was no longer held: lost earlier, or a
 *         second release), RB_EUNREACHABLE, RB_EREDIS */
int rb_lock_release(rb_lock *l, rb_error *err);

/* Free the handle (takes NULL). It sends nothing: a slot still held runs
 * out with its lease. */
void rb_lock_free(rb_lock *l);

typedef struct rb_lock_holder {
    char *id;                 /* owned by the rb_lock_state */
    long long token;
    long long lease_left_ms;  /* negative once expired */
    long long held_ms;        /* since the grant */
    int shared;               /* 1: holds shared (read) */
} rb_lock_holder;

typedef struct rb_lock_waiter {
    char *id;                 /* owned by the rb_lock_state */
    long long lease_left_ms;
    int shared;               /* 1: asks for a shared (read) hold */
} rb_lock_waiter;

typedef struct rb_lock_state {
    long max;                 /* 0: nobody holds or waits */
    long long token;          /* the last token granted; 0: never */
    size_t holders_count;
    rb_lock_holder *holders;  /* by lease deadline */
    size_t waiters_count;
    rb_lock_waiter *waiters;  /* first in line first */
} rb_lock_state;

/* Read a lock's holders and waiters in one snapshot.
 * @param[out] out  release with rb_lock_state_clear */
int rb_lock_status(rb_lock_state *out, rb_conn *c, const char *prefix,
                   const char *name, rb_error *err);
void rb_lock_state_clear(rb_lock_state *st);

/* Revoke every holder (each learns at its next renewal) and wake every
 * waiter (RB_EBROKEN); the token counter is kept. No grant follows until
 * each revoked holder has released (confirming its stop) or its lease
 * has passed.
 * @param[out] holders, waiters  how many; either may be NULL */
int rb_lock_reset(long *holders, long *waiters, rb_conn *c,
                  const char *prefix, const char *name, rb_error *err);

#ifdef __cplusplus
}
#endif


/* ---- jobs: a member that fails or vanishes stops the whole job ---------- */

/* A job's N members meet (the entering round), each runs its work while
 * its lease is renewed, then all leave together (the leaving round). A
 * member that fails (rb_job_fail) or goes silent past its lease breaks the
 * job for every member: each learns it from a blocked read that the break
 * wakes. With restarts the members meet again (rb_job_enter) and rerun.
 * The library never runs the work itself: the caller does, and calls
 * rb_job_keep while it runs. A handle is used by one thread at a time. */

#define RB_JOB_OPTS_VERSION 2

typedef struct rb_job_opts {
    unsigned int version;     /* RB_JOB_OPTS_VERSION */
    const char *prefix;       /* key prefix; NULL: "rb" */
    const char *name;         /* the job (rb_check_name) */
    const char *id;           /* this member (rb_check_id) */
    long n;                   /* members, 1..RB_N_MAX */
    const char *expect;       /* the members' ids, comma-separated: ranks
                                 follow it; NULL: ranks follow entry order */
    long long lease_ms;       /* 0: 10000 */
    long long timeout_ms;     /* bounds each entering round; 0: the first
                                 has none, a re-entering one ends after
                                 RB_JOB_REENTER_MS */
    long restarts;            /* meet again this many times after a break */
    long long ttl_ms;         /* idle state expires; 0: 1 day */
    /* Version 2: the rendezvous data handed round in the entering round
     * (what torchrun's agents exchange; rb_job_local_rank ...). */
    const char *host;         /* this member's host (rb_check_id): members
                                 of one host share LOCAL_* numbers; NULL:
                                 a host of its own */
    const char *master_addr;  /* rank 0 hands it to every member; NULL:
                                 the local address of rank 0's connection
                                 to Redis (127.0.0.1 over a unix socket) */
    int master_port;          /* rank 0 hands it round; 0: a port free on
                                 rank 0's host, picked at each entering */
} rb_job_opts;

#define RB_JOB_OPTS_INIT { .version = RB_JOB_OPTS_VERSION }
#define RB_JOB_REENTER_MS 300000LL

typedef struct rb_job rb_job;

/* A member's handle; nothing is sent yet. c must outlive it.
 * @return RB_OK, RB_EINVAL, RB_ENOMEM */
int rb_job_new(rb_job **out, rb_conn *c, const rb_job_opts *opts,
               rb_error *err);
void rb_job_free(rb_job *j);

/* Enter (or, after a break with restarts left, re-enter) and block until
 * every member has entered.
 * @return RB_OK (run now: rb_job_rank, rb_job_attempt), RB_EBROKEN (the
 *         job broke: no restarts left, or reset), RB_ETIMEOUT (this
 *         member's timeout; the job is broken for the others),
 *         RB_ECANCELED (the cancel fd; call rb_job_fail to tell the
 *         others), RB_EINVAL (another n, restarts or expected ids: nothing
 *         written), RB_ELOST, RB_EUNREACHABLE, RB_EREDIS */
int rb_job_enter(rb_job *j, rb_error *err);

/* While this member runs (or after rb_job_leave): renew the lease when it
 * is due and return at once (rb_job_lease_left_ms has the new deadline),
 * else block up to max_ms (< 0: until the next renewal is due) for the
 * job's end, waking early to look at the earliest other member's lease
 * deadline. *ended is set to 1 when everyone has left (the job is done).
 * @return RB_OK (go on, or done when *ended), RB_EBROKEN (msg: the
 *         reason; rb_job_can_restart says whether to enter again),
 *         RB_ECANCELED (the cancel fd), RB_ELOST, RB_EUNREACHABLE (the
 *         lease could not be renewed before it ran out: stop the work),
 *         RB_EREDIS */
int rb_job_keep(rb_job *j, long long max_ms, int *ended, rb_error *err);

/* This member failed: what is the reason as the others will read it
 * ("w2's command exited 7"), status the work's exit status (-1: none).
 * Breaks the job at once unless it already ended (that outcome wins).
 * @return RB_EBROKEN (msg: the job's reason), RB_OK (it had ended well
 *         before), RB_ELOST, RB_EUNREACHABLE, RB_EREDIS */
int rb_job_fail(rb_job *j, const char *what, int status, rb_error *err);

/* This member's work is done: leave, then call rb_job_keep until *ended.
 * @return RB_OK, RB_EBROKEN, RB_ELOST, RB_EUNREACHABLE, RB_EREDIS */
int rb_job_leave(rb_job *j, int *ended, rb_error *err);

/* What the next renewal publishes: progress_ms, the rb_now_ms() time of
 * the work's last progress (0: none yet), and halted, 1 when the work's
 * processes are all stopped (state T). Costs no call: the renewals that
 * rb_job_keep sends anyway carry it, for the blame of a stall and for
 * status. */
void rb_job_progress(rb_job *j, long long progress_ms, int halted);

/* This member's work made no progress for the caller's stall time: break
 * the job (restartable, as a failure). The reason names the member most
 * likely stuck: one whose processes are all stopped, else the one whose
 * progress is oldest ("m1 made no progress for 3s"), which need not be
 * this one. Stop the work first or after; this member's runner fails.
 * @return RB_EBROKEN (msg: the job's reason; rb_job_can_restart),
 *         RB_ELOST, RB_EUNREACHABLE, RB_EREDIS */
int rb_job_stall(rb_job *j, rb_error *err);

/* This member was told to stop (preemption: "m0 was terminated
 * (SIGTERM)"): the job enters its stopping phase, which every member
 * learns at once from rb_job_keep (rb_job_stopping turns non-NULL): each
 * stops its work once, keeps calling rb_job_keep while the work ends (the
 * job's barriers keep passing, so the work can agree on a step to save),
 * then calls rb_job_leave or rb_job_fail, which answer RB_EBROKEN with
 * "job stopped: <reason>". A member that departs breaks the job's open
 * barrier rounds for the others; a stopped job is never restarted.
 * @return RB_OK (the job stops, by this call or an earlier one),
 *         RB_EBROKEN (it had broken before: that outcome wins), RB_EINVAL,
 *         RB_ELOST, RB_EUNREACHABLE, RB_EREDIS */
int rb_job_stop(rb_job *j, const char *what, rb_error *err);

/* While the job stops: the reason (owned by j), else NULL. */
const char *rb_job_stopping(const rb_job *j);

/* After RB_EBROKEN: 1 when the job opened another attempt this member may
 * enter (restarts left), else 0. */
int rb_job_can_restart(const rb_job *j);
/* How long this member's lease surely holds (ms, from the send time of
 * the last renewal Redis took; <= 0: it may have run out). */
long long rb_job_lease_left_ms(const rb_job *j);
long rb_job_rank(const rb_job *j);      /* 0..n-1, stable across restarts */
long rb_job_attempt(const rb_job *j);   /* 0, then 1, 2, ... per restart */
long long rb_job_epoch(const rb_job *j);
/* After rb_job_enter returned RB_OK, the attempt's rendezvous data: this
 * member's place among the members of its host (0.., by rank) and their
 * count; its host's place among the hosts (ordered by their lowest rank)
 * and their count; rank 0's address and port as it handed them round
 * (fresh at each attempt). Borrowed; valid until the next rb_job_enter. */
long rb_job_local_rank(const rb_job *j);
long rb_job_local_world(const rb_job *j);
long rb_job_group_rank(const rb_job *j);
long rb_job_group_world(const rb_job *j);
const char *rb_job_master_addr(const rb_job *j);
int rb_job_master_port(const rb_job *j);

typedef struct rb_job_member {
    char *id;                 /* owned */
    long rank;
    char *state;              /* entering, running, left, failed, gone,
                                 stuck (owned) */
    long long lease_left_ms;  /* -1: not in the current attempt */
    int exit_status;          /* -1: none */
    long long progress_age_ms;  /* since its work's last progress, as its
                                   renewals carried it; -1: none known */
} rb_job_member;

typedef struct rb_job_status {
    long long epoch;          /* 0: no job of that name is kept */
    char *state;              /* enter, run, done, over, stop (stopping),
                                 stopped (owned) */
    long attempt;
    long n;
    long restarts;
    char *reason;             /* of the last break; "" none (owned) */
    char *expect;             /* "" none (owned) */
    size_t members_count;
    rb_job_member *members;   /* owned, in rank order */
} rb_job_status;

/* @param[out] out  release with rb_job_status_clear */
int rb_job_status_get(rb_job_status *out, rb_conn *c, const char *prefix,
                      const char *name, rb_error *err);
void rb_job_status_clear(rb_job_status *st);

/* Break the open job with "reset" and use up its restarts.
 * @param[out] epoch  the epoch broken, 0: none open (may be NULL) */
int rb_job_reset(long long *epoch, rb_conn *c, const char *prefix,
                 const char *name, rb_error *err);

/* ---- history: what each name's scripts recorded (doc/SEEING.md) ---------- */

/* One event of a name's history, as a script appended it. */
typedef struct rb_event {
    long long ms;         /* when, on Redis' clock (the stream id's time) */
    long long seq;        /* the stream id's sequence within ms */
    char kind;            /* 'b' barrier, 'j' job, 'l' lock, '?' other */
    char *event;          /* "arrive", "pass", "break", ... (owned) */
    char *id;             /* the party, member or holder; NULL none (owned) */
    long long g;          /* the round, attempt or token; 0 none */
    long long n;          /* the party count; 0 none */
    long long epoch;      /* a job's run; 0 none */
    int passed;           /* an arrival that completed and passed its round */
    char *outcome;        /* what the event ended: "ok" (a round passed),
                             "go" (a job attempt began), "done" (a job
                             ended well); NULL none (owned) */
    int restart;          /* a job's break that restarts it */
    char *cause;          /* of a break: one word; NULL none (owned) */
    char *reason;         /* of a break, in full; NULL none (owned) */
    char *in;             /* a barrier inside a job: "<epoch>:<att>:NAME";
                             NULL otherwise (owned) */
} rb_event;

/* One counter of a name: counts that never go back ("passed",
 * "broken:<cause>", ...). */
typedef struct rb_counter {
    char *field;          /* owned */
    long long value;
} rb_counter;

typedef struct rb_history {
    rb_event *events;     /* owned, oldest first */
    size_t events_count;
    rb_counter *counters; /* owned, in no particular order */
    size_t counters_count;
    int off;              /* the name's history is turned off */
} rb_history;

/* Read the newest max events of a name's history (0: all it keeps, a few
 * thousand) and its counters; never writes. Reads in pages, so no call
 * holds Redis long, whatever the history's size.
 * @param[out] out  release with rb_history_clear (also after a failure) */
int rb_history_read(rb_history *out, rb_conn *c, const char *prefix,
                    const char *name, size_t max, rb_error *err);
void rb_history_clear(rb_history *h);

/* Turn the name's history off for ttl_ms (0: one day) from now: the
 * scripts append nothing and count nothing for it. The switch takes the
 * stream's place, so what the history held is dropped; the counters stay. */
int rb_history_off(rb_conn *c, const char *prefix, const char *name,
                   long long ttl_ms, rb_error *err);

#endif
