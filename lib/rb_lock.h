#ifndef RB_LOCK_H
#define RB_LOCK_H

/*
 * Decoders of the lock scripts' replies (lua/lock-*.lua): pure functions
 * from a hiredis reply to a struct, unit-tested with hostile replies built
 * by redisReader. A reply of a shape the scripts never send gives
 * RB_EPROTO; strings point into the reply.
 */

#include <stddef.h>

#include "rb_internal.h"

typedef enum rb_lock_kind {
    RB_LOCK_HELD = 0,     /* token */
    RB_LOCK_WAIT,         /* next_ms */
    RB_LOCK_BADMAX,       /* max: the lock's own */
    RB_LOCK_BUSY,         /* the id is in use under another nonce;
                             next_ms: its lease left (-1: not said) */
    RB_LOCK_LOST,         /* no entry (any script) */
    RB_LOCK_GONE,         /* no entry and no counter: the state was lost */
    RB_LOCK_RELEASED,     /* token */
    RB_LOCK_LEFT,         /* left the queue */
    RB_LOCK_NONE,         /* release found nothing */
    RB_LOCK_KEEPER        /* load the marker of lease class klass first
                             (keeper_missing: and look for the others) */
} rb_lock_kind;

typedef struct rb_lock_reply {
    rb_lock_kind kind;
    long long token;
    long long next_ms;    /* -1: no holder */
    long max;
    int klass;            /* RB_LOCK_KEEPER: 10..60 */
    int keeper_missing;
} rb_lock_reply;

/* Replies of lock-acquire, lock-renew and lock-release (one vocabulary). */
int rb_lock__decode(const redisReply *r, rb_lock_reply *out);

/* A wake-up read by the blocking move (a string reply, the element): 1
 * and *token for a grant to `nonce`, 2 for "reset", 0 for a grant to
 * another nonce (stale, from an earlier acquire of this id), RB_EPROTO
 * otherwise. */
int rb_lock__decode_wake(const redisReply *r, const char *nonce,
                         long long *token);

/* lock-status: fills out (allocated; rb_lock_state_clear frees it).
 * @return RB_OK, RB_EPROTO or RB_ENOMEM */
int rb_lock__decode_status(const redisReply *r, rb_lock_state *out);

/* A lock request's options (rb_lock_opts.c): RB_OK or RB_EINVAL. */
int rb_lock__check_opts(const rb_lock_opts *o, rb_error *err);

#endif
