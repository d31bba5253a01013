#ifndef RB_LOCK_H
#define RB_LOCK_H

/*
 * The lock's private header. First the decoders of the lock scripts'
 * replies (lua/lock-*.lua): pure functions from a hiredis reply to a
 * struct, unit-tested with hostile replies built by redisReader. A reply
 * of a shape the scripts never send gives RB_EPROTO; strings point into
 * the reply. Then the lock object and the calls that rb_lock.c and
 * rb_lock_acquire.c share.
 */

#include <stddef.h>

#include "rb_internal.h"
#include "rb_keeper.h"

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

/* ---- the lock object: rb_lock.c makes the calls and holds,
 * rb_lock_acquire.c makes a request and waits for its grant ---- */

/* Leaving the queue after a timeout or a signal gets this long: the slot
 * granted meanwhile must be passed on, not held until its lease ends. */
#define RB_LOCK_LEAVE_MS 2000

struct rb_lock {
    rb_conn *c;
    char name[RB_NAME_MAX + 1];
    char id[RB_NAME_MAX + 1];
    char nonce[33];
    char base[RB_KEY_MAX];
    rb_keeper keeper;         /* of base's slot; lock-acquire's KEYS[2]
                                 and ARGV[8] */
    char wake[RB_KEY_MAX];
    char lease_text[24];
    char ttl_text[24];
    long long lease_ms;
    long long token;
    long long renewed_at;     /* rb_now_ms when the last good renewal (or
                                 the call that was granted) was sent */
    long long right_ms;       /* the hold runs this long from renewed_at:
                                 the lease, or a pushed grant's short hold
                                 until its confirmation (early_grant) */
    int shared;               /* a shared (read) request */
    int nonblock;             /* one attempt */
    int early_grant;          /* a pushed grant is used before it is
                                 confirmed (rb_lock_opts) */
    int held;
    int released;
};

/* Held from a call sent at `sent`, for the full lease. */
void rb_lock__hold_from(rb_lock *l, long long sent);

/* The scripts' calls, their replies decoded and checked against what
 * each may answer (a WRONGTYPE error names the lock). */
int rb_lock__run_acquire(rb_lock *l, const char *max, int first,
                         rb_call *call, rb_lock_reply *out, rb_error *err);
int rb_lock__run_renew(rb_lock *l, rb_call *call, rb_lock_reply *out,
                       rb_error *err);

/* RB_EPROTO: "lock NAME: bad WHAT reply". */
int rb_lock__bad_reply(const rb_lock *l, const char *what, rb_error *err);

/* Leave the queue on the way out; returns code (see rb_lock.c). */
int rb_lock__leave(rb_lock *l, int code);

#endif
