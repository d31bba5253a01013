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

/* How one command is sent. */
typedef struct rb_call {
    int block_ms;         /* server-side blocking time the command may use */
    long long deadline_ms;/* reconnect until then (rb_now_ms clock);
                             0: one attempt when not yet connected, else
                             the connection's retry window; in the past:
                             send once. A reply is awaited at most until
                             max(deadline, end of block_ms) + 500 ms */
    int cancellable;      /* return RB_ECANCELED when the cancel fd fires */
    rb_fault_point fault; /* test builds: where this call may be cut */
} rb_call;

/* Send one command and read its reply, reconnecting and resending after a
 * dropped connection (every command rbarrier sends is safe to repeat).
 * A Redis error reply becomes RB_EREDIS with the server's text as message.
 * @param[out] out  the reply, freed by the caller with freeReplyObject */
int rb_conn__call(rb_conn *c, int argc, const char **argv,
                  const size_t *lens, const rb_call *call, redisReply **out,
                  rb_error *err);

/* Window for reconnecting after a drop when a call has no deadline. */
void rb_conn__set_retry_window(rb_conn *c, int ms);

/* Whether the server lacks BLMOVE (Redis < 6.2); learned on first use. */
int rb_conn__no_blmove(const rb_conn *c);
void rb_conn__set_no_blmove(rb_conn *c);

/* 1 when the cancel fd is readable now. */
int rb_conn__cancelled(const rb_conn *c);

/* ---- the key layout (rb_keys.c; its Lua half: lua/includes/keys.lua) ---- */

#define RB_KEY_MAX 512

/* "<prefix>:{NAME}", the barrier's base key (prefix NULL: "rb").
 * @return RB_OK or RB_EINVAL (too long for len) */
int rb_key__barrier(char *buf, size_t len, const char *prefix,
                    const char *name, rb_error *err);
/* "<base>:<gen>:<part>", part "in" or "out". */
int rb_key__round(char *buf, size_t len, const char *base, long long gen,
                  const char *part, rb_error *err);
/* "<base>:nonce", the barrier's (id -> nonce gen count) hash. */
int rb_key__nonces(char *buf, size_t len, const char *base, rb_error *err);
/* A parameter's keys, each len bytes: "<prefix>:{param:P}", and when worker
 * is not NULL its ":local:<worker>" and ":local:<worker>:train" keys. */
int rb_key__param(char *global, char *localk, char *traink, size_t len,
                  const char *prefix, const char *param, const char *worker,
                  rb_error *err);
/* The Redis Cluster slot of a key: CRC16 of its {tag} (of the whole key
 * when it has no non-empty tag) mod 16384, as redis' keyHashSlot. */
unsigned rb_key__slot(const char *key, size_t len);
/* 1 when all count keys hash to one slot (a script may touch only one). */
int rb_key__same_slot(const char *const *keys, int count);

/* Test builds: whether `point` is armed, consuming one firing. */
int rb_fault__fire(rb_fault_point point);

#endif
