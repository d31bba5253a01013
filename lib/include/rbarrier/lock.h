#ifndef RBARRIER_LOCK_H
#define RBARRIER_LOCK_H

/* Locks. Part of the public API: include rbarrier.h, which includes
 * this file (the connection, URL and error types come from there). */

#include "../rbarrier.h"

#ifdef __cplusplus
extern "C" {
#endif

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
    /* version 3: */
    /* 1: a grant pushed to this waiter (a release or an expiry let it in
     * while it waited) is returned without a call to confirm it, if read
     * within the first half of the short hold the server gives it until
     * confirmed (2 s, counted from the waiter's last call before it; a
     * lease that short or shorter is not affected). rb_lock_lease_left_ms is then what is left of that hold
     * and rb_lock_renew_in_ms 0: the first rb_lock_renew confirms it and
     * the full lease counts from its sending. For a caller that starts
     * its work at once and stops it by the deadline it is given, as
     * rbarrier's own supervisor does: a hand-off then takes one round
     * trip less. 0: a pushed grant is confirmed before rb_lock_acquire
     * returns. */
    int early_grant;
} rb_lock_opts;

#define RB_LOCK_OPTS_VERSION 3
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

#endif
