#ifndef RB_INTERNAL_H
#define RB_INTERNAL_H

/* Private to lib/: shared by the modules, never installed. */

#include <hiredis/hiredis.h>

#include "include/rbarrier.h"
#include "rb_support.h"

#if defined(__GNUC__)
#define RB_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define RB_PRINTF(f, a)
#endif

/* Fill err (may be NULL) and return code, so a failure site reads
 * `return rb_error__set(err, RB_EINVAL, "...", ...);`. */
int rb_error__set(rb_error *err, int code, const char *fmt, ...)
    RB_PRINTF(3, 4);

/* ---- URLs (rb_url.c) ---------------------------------------------------
 *
 * The limits of a URL's parts: input beyond one is refused with RB_EINVAL,
 * never cut short. */
#define RB_URL_NODES_MAX 16
#define RB_URL_HOST_MAX 255   /* a DNS name is at most 253 bytes */
#define RB_URL_PATH_MAX 107   /* sun_path, less its NUL */
#define RB_URL_USER_MAX 255
#define RB_URL_PASSWORD_MAX 1023

/* Overwrite n bytes at p with zeros in a way the compiler may not drop
 * (memory about to be freed that held a password). */
void rb_secret__wipe(void *p, size_t n);

/* ---- deadlines --------------------------------------------------------
 *
 * When a call stops trying: one value, built once by the caller of an
 * operation and interpreted only by the rules in rb_deadline.c (each with
 * a unit test). There is no retry window on a connection handle.
 *
 *   ONCE   one attempt: a failed connect, a dropped connection or a "not
 *          now" reply is not retried. The reply is awaited for the
 *          command's block time plus a short grace.
 *   UNTIL  reconnect and resend with capped backoff until until_ms (0: no
 *          limit; a party without --timeout). A reply is awaited at most
 *          until max(until_ms, end of the block time) plus a grace.
 *   EXACT  one attempt that ends at until_ms exactly, by the client's
 *          clock: when no reply has come by then the connection is dropped
 *          (its command is in flight) and the call fails with
 *          RB_ETIMEOUT. This is how a wait ends within milliseconds of its
 *          --timeout although Redis' blocking timeouts tick at 100 ms: the
 *          last slice blocks a little longer than the time left, with
 *          rb_deadline__exact(party deadline).
 *
 * Redirects (MOVED, ASK) are followed under every kind: the command did
 * not run, so following one is not a resend. */
typedef enum rb_deadline_kind {
    RB_DEADLINE_ONCE = 0,
    RB_DEADLINE_UNTIL,
    RB_DEADLINE_EXACT
} rb_deadline_kind;

typedef struct rb_deadline {
    rb_deadline_kind kind;
    long long until_ms;   /* rb_now_ms clock */
} rb_deadline;

rb_deadline rb_deadline__once(void);
/* Until until_ms; 0: no limit. */
rb_deadline rb_deadline__until(long long until_ms);
/* Until now + ms. */
rb_deadline rb_deadline__within(long long now, long long ms);
rb_deadline rb_deadline__exact(long long until_ms);
/* d, but ending no later than until_ms (0: d unchanged). ONCE stays ONCE. */
rb_deadline rb_deadline__sooner(rb_deadline d, long long until_ms);
/* How long to try reaching Redis on a handle that never connected: for
 * retry_ms (the CLI's --connect-timeout) when set, but not past the
 * operation's own deadline (party_until, 0: none); else until that
 * deadline; else once, so that a wrong URL fails at once. */
rb_deadline rb_deadline__reach(long long now, long long party_until,
                               long long retry_ms);
/* Milliseconds a failed attempt may still be retried in (0: give up). */
long long rb_deadline__left(const rb_deadline *d, long long now);
/* Whether d allows no more attempts. */
int rb_deadline__over(const rb_deadline *d, long long now);
/* Longest backoff step between attempts. */
int rb_deadline__backoff_cap(const rb_deadline *d, long long now);
/* Absolute time at which one connect attempt gives up. */
long long rb_deadline__attempt_until(const rb_deadline *d, long long now,
                                     long long attempt_ms);
/* Absolute time at which the wait for a reply gives up. */
long long rb_deadline__reply_by(const rb_deadline *d, long long now,
                                long long block_ms,
                                long long command_timeout_ms);
#define RB_BACKOFF_MIN_MS 20
#define RB_BACKOFF_MAX_MS 1000
#define RB_BACKOFF_FLOOR_MS 100
#define RB_REPLY_GRACE_MS 500
/* How long a call of an operation without a deadline of its own (status,
 * reset, sync, train, get, set) resends after a dropped connection; with
 * --replicas longer, since a Sentinel failover leaves the new master
 * without an acknowledging replica until the old one is turned into one
 * (about 11 s: the sentinels' INFO period), and never shorter than
 * --connect-timeout. rb_conn__op_deadline applies it. */
#define RB_RESEND_WINDOW_MS 10000
#define RB_RESEND_WINDOW_REPLICAS_MS 30000

/* What an error reply is, decided once where the reply is read
 * (rb_reply__classify in rb_reply.c, the one place that knows Redis'
 * prefixes): the resend loop and the modules act on this, never on the
 * text. */
typedef enum rb_reply_err {
    RB_REPLY_NONE = 0,        /* no error reply */
    RB_REPLY_OTHER,           /* an error no rule names */
    RB_REPLY_NOSCRIPT,
    RB_REPLY_WRONGTYPE,
    RB_REPLY_MOVED,
    RB_REPLY_ASK,
    RB_REPLY_LOADING,
    RB_REPLY_BUSY,
    RB_REPLY_TRYAGAIN,
    RB_REPLY_MASTERDOWN,
    RB_REPLY_READONLY,
    RB_REPLY_UNBLOCKED,       /* a blocked call cut by CLIENT UNBLOCK or a
                                 role change */
    RB_REPLY_CLUSTERDOWN,
    RB_REPLY_NOPERM_COMMAND,  /* ACL: a command sent directly */
    RB_REPLY_NOPERM_SCRIPT,   /* ACL: a command a script called */
    RB_REPLY_NOPERM_KEYS,     /* ACL: a key */
    RB_REPLY_NOPERM,          /* ACL: anything else */
    RB_REPLY_UNKNOWN_COMMAND, /* e.g. BLMOVE before Redis 6.2 */
    RB_REPLY_DAMAGED          /* a script's own "ERR damaged ..." */
} rb_reply_err;

/* How one command is sent. Write it with designated initializers:
 *   rb_call call = { .deadline = rb_deadline__within(rb_now_ms(), 2000) }; */
/* One command: its words and their lengths. */
typedef struct rb_cmd {
    int argc;
    const char **argv;
    const size_t *lens;
} rb_cmd;

typedef struct rb_call {
    rb_deadline deadline;  /* see above; the zero value is ONCE */
    int block_ms;          /* server-side blocking time the command may use */
    int cancellable;       /* return RB_ECANCELED when the cancel fd fires */
    rb_fault_point fault;  /* test builds: where this call may be cut */
    rb_reply_err reply_err;  /* out: set by rb_conn__call, the class of
                                the error reply it ended with (NONE when
                                it ended otherwise) */
    /* A command sent in the same write right after this one, to the same
     * node: Redis runs it once this one is done, a blocking one included,
     * so it costs no round trip of its own (a job's rendezvous values,
     * read as 'go' comes; a keeper's class marker, loaded after its base
     * marker). Safe to repeat, as every command sent. Not sent after an
     * ASK redirect: then_reply stays NULL, and the caller sends it on its
     * own. NULL: none. */
    const rb_cmd *then;
    redisReply *then_reply;  /* out: its reply when the command was
                                answered and this is no error reply, else
                                NULL; the caller frees it */
} rb_call;

/* Send one command and read its reply, reconnecting and resending after a
 * dropped connection or a "not now" reply (LOADING, BUSY, TRYAGAIN,
 * MASTERDOWN) as call->deadline allows; every command rbarrier sends is
 * safe to repeat (the rules: rb_router.c). A handle that never connected
 * first reaches Redis by rb_deadline__reach(now, 0,
 * opts.connect_timeout_ms). A Redis error reply becomes RB_EREDIS with the
 * server's text as message, and its class in call->reply_err.
 * @param[out] out  the reply, freed by the caller with freeReplyObject
 * @return RB_OK, RB_EREDIS, RB_EUNREACHABLE, RB_ECANCELED, RB_EPROTO,
 *         RB_ETIMEOUT (an EXACT deadline passed) */
int rb_conn__call(rb_conn *c, int argc, const char **argv,
                  const size_t *lens, rb_call *call, redisReply **out,
                  rb_error *err);

/* The deadline for reaching Redis at the start of an operation whose own
 * deadline is party_until (0: none): rb_deadline__reach with the handle's
 * --connect-timeout. */
rb_deadline rb_conn__reach(const rb_conn *c, long long party_until);

/* The deadline of an operation without one of its own, from now. */
rb_deadline rb_conn__op_deadline(const rb_conn *c);
/* How long a call resends when its writes wait for --replicas
 * acknowledgements (RB_RESEND_WINDOW_REPLICAS_MS); 0 without --replicas. */
long long rb_conn__ack_window_ms(const rb_conn *c);

/* Connect now (no-op when connected) within reach (rb_conn__reach). */
int rb_conn__connect(rb_conn *c, const rb_deadline *reach, rb_error *err);

/* The local address of the connection that last answered a call (else of
 * any connected node): 0, or -1 when none is connected. */
int rb_conn__local_addr(const rb_conn *c, char *buf, size_t len);

/* Whether the server lacks BLMOVE (Redis < 6.2); learned on first use. */
int rb_conn__no_blmove(const rb_conn *c);
void rb_conn__set_no_blmove(rb_conn *c);

/* One slice of the blocking read on a list that is never consumed: a
 * rotating BLMOVE key key LEFT LEFT for call->block_ms (BRPOPLPUSH on
 * servers without BLMOVE, learnt on the first refusal). *out: the head
 * element, or nil when the slice ran out. *cmd (may be NULL): the command
 * name, for messages. (rb_block.c) */
int rb_conn__block_rotate(rb_conn *c, const char *key, rb_call *call,
                          redisReply **out, const char **cmd, rb_error *err);

/* 1 when the cancel fd is readable now. */
int rb_conn__cancelled(const rb_conn *c);
/* Sleep ms, or until the cancel fd is readable (then 1). */
int rb_conn__pause(rb_conn *c, int ms);

/* ---- the key layout (rb_keys.c; its Lua half: lua/includes/keys.lua) ---- */

#define RB_KEY_MAX 512

/* "<prefix>:b:{NAME}", the barrier's base key (prefix NULL: "rb").
 * @return RB_OK or RB_EINVAL (too long for len) */
int rb_key__barrier(char *buf, size_t len, const char *prefix,
                    const char *name, rb_error *err);
/* "<base>:<gen>:<part>", part "in" or "out". */
int rb_key__round(char *buf, size_t len, const char *base, long long gen,
                  const char *part, rb_error *err);
/* "<base>:nonce", the barrier's (id -> nonce gen count) hash. */
int rb_key__nonces(char *buf, size_t len, const char *base, rb_error *err);
/* A parameter's keys, each len bytes: "<prefix>:p:{P}", and when worker
 * is not NULL its ":local:<worker>" and ":local:<worker>:train" keys. */
int rb_key__param(char *global, char *localk, char *traink, size_t len,
                  const char *prefix, const char *param, const char *worker,
                  rb_error *err);
/* "<prefix>:p:{PARAM}:set", the list set-1.lua keeps the last value in
 * for the waiters of rb_param_get_until. */
int rb_key__param_wake(char *buf, size_t len, const char *prefix,
                       const char *param, rb_error *err);
/* "<prefix>:j:{JOB}", a job's base key (rb_keys.c; the rest of a job's
 * keys: lua/includes/job.lua). */
int rb_key__job(char *buf, size_t len, const char *prefix, const char *name,
                rb_error *err);
/* "<prefix>:l:{NAME}", a lock's base key, and "<base>:<part>" its other
 * keys (part "token", "holders", "queue", "wait", "info", "wake:<id>"). */
int rb_key__lock(char *buf, size_t len, const char *prefix, const char *name,
                 rb_error *err);
int rb_key__lock_part(char *buf, size_t len, const char *base,
                      const char *part, rb_error *err);
/* Inside a job: a barrier's base key "<prefix>:b:{JOB}:<epoch>:<att>:NAME",
 * and an attempt's key "<prefix>:j:{JOB}:<epoch>:<att>:<part>". */
int rb_key__job_barrier(char *buf, size_t len, const char *prefix,
                        const char *job, long long epoch, long att,
                        const char *name, rb_error *err);
int rb_key__job_attempt(char *buf, size_t len, const char *prefix,
                        const char *job, long long epoch, long att,
                        const char *part, rb_error *err);
/* "<prefix>:h:{NAME}<suffix>", a name's history ("") or counters (":n"). */
int rb_key__history(char *buf, size_t len, const char *prefix,
                    const char *name, const char *suffix, rb_error *err);
/* The Redis Cluster slot of a key: CRC16 of its {tag} (of the whole key
 * when it has no non-empty tag) mod 16384, as redis' keyHashSlot. */
unsigned rb_key__slot(const char *key, size_t len);
/* The keeper of key's slot: "<prefix>:k:{T}" (rb_keys.c). */
int rb_key__keeper(char *buf, size_t len, const char *prefix,
                   const char *key, rb_error *err);
/* 1 when all count keys hash to one slot (a script may touch only one). */
int rb_key__same_slot(const char *const *keys, int count);
/* The scripts' ttl in whole seconds from a ttl in ms, rounded up (0 or
 * less: one day). */
long long rb_key__ttl_s(long long ttl_ms);

/* ---- reply decoders of rb_param.c (pure; unit-tested with hostile
 * replies) ---- */

/* A value reply (string, integer, nil = "0") into a malloc'd string.
 * @return RB_OK, RB_EPROTO (what names the command), RB_ENOMEM */
int rb_param__decode_value(char **out, const redisReply *r, const char *what,
                           rb_error *err);
/* train's {local, global} reply. */
int rb_param__decode_train(char **local_out, char **global_out,
                           const redisReply *r, rb_error *err);

/* Test builds: whether `point` is armed, consuming one firing. */
int rb_fault__fire(rb_fault_point point);

#endif
