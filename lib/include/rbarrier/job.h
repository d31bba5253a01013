#ifndef RBARRIER_JOB_H
#define RBARRIER_JOB_H

/* Jobs, and each name's history. Part of the public API: include rbarrier.h, which includes
 * this file (the connection, URL and error types come from there). */

#include "../rbarrier.h"

#ifdef __cplusplus
extern "C" {
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

#ifdef __cplusplus
}
#endif

#endif
