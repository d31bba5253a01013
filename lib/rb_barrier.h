#ifndef RB_BARRIER_H
#define RB_BARRIER_H

/*
 * Private to the barrier module: rb_barrier.c (arrival and the wait loop),
 * rb_barrier_once.c (a --once round's run) and rb_barrier_status.c
 * (status and reset). The pure functions here are unit-tested without a
 * server (tests/unit/test_barrier.c).
 */

#include "rb_internal.h"
#include "rb_reply.h"

#define RB_LINGER_MAX_S 300   /* ended rounds stay readable this long */
#define RB_LEASE_DEFAULT_MS 10000
#define RB_LEASE_MIN_MS 30

typedef struct rb_waiter {
    rb_conn *c;
    const rb_wait_opts *o;
    rb_wait_result *res;
    char base[RB_KEY_MAX];
    char nonce_key[RB_KEY_MAX];
    char in_key[RB_KEY_MAX];
    char out_key[RB_KEY_MAX];
    char job_out[RB_KEY_MAX]; /* in a job: the attempt's out list */
    char job_bar[RB_KEY_MAX]; /* ... and its set of the rounds' out keys */
    char gen[24];
    char lease_text[24];
    char linger[24];
    char ttl[24];
    char expect_sha[41];      /* the digest of o->expect, "" none */
    long long gen_n;
    long n;
    long count;               /* parties in the round at arrival */
    long long lease_ms;
    long long slice_ms;
    rb_deadline party;        /* this party's --timeout (until 0: none) */
    long long started;
    long long progress_at;    /* when progress is next due */
    int cut;                  /* the last slice was cut at the deadline */
} rb_waiter;

/* ---- pure parts ---- */

/* Check opts (version included) before anything is sent.
 * @return RB_OK or RB_EINVAL */
int rb_barrier__check_opts(const rb_wait_opts *o, rb_error *err);

/* The lease a party uses (0: the default; never under RB_LEASE_MIN_MS)
 * and its wait slice: a third of the lease, shorter when progress is
 * wanted more often. */
long long rb_barrier__lease_ms(long long lease_ms);
long long rb_barrier__slice_ms(long long lease_ms, int progress,
                               long long progress_ms);

/* How long a slice may block so that it ends when the next renewal is
 * due (at least 1 ms). */
long long rb_barrier__beat_in(long long next_beat_ms, long long now_ms);

/* The next blocking slice, given the party's time left (< 0: no deadline):
 * the slice, and *last = 1 when it is the one that ends at the deadline. */
long long rb_barrier__next_slice(long long slice_ms, long long left_ms,
                                 int *last);

/* How long ended rounds linger, in seconds, for a ttl in seconds. */
long long rb_barrier__linger_s(long long ttl_s);

/* lua/includes/expect.lua's EXPECT_PART_IDS, EXPECT_PART_BYTES and
 * EXPECT_PARTS_MAX: an --expect list is stored in parts, a part ending
 * after its 1,024th id or before an id that would take it past 64 KiB. */
#define RB_EXPECT_PART_IDS 1024
#define RB_EXPECT_PART_BYTES 65536
#define RB_EXPECT_PARTS_MAX 405

typedef struct rb_expect_parts {
    int count;
    const char *start[RB_EXPECT_PARTS_MAX + 1]; /* [count]: past the end,
                                                   as if a comma followed */
    char sums[RB_EXPECT_PARTS_MAX * 40 + 1];    /* each part's SHA1 */
} rb_expect_parts;

/* Cut list into parts and take their SHA1s (rb_expect.c): 0, or -1 when
 * it has more parts than a list of RB_N_MAX ids can, or an id of over
 * 64 KiB (checked before: n <= RB_N_MAX, ids of at most RB_NAME_MAX). */
int rb_expect__cut(const char *list, rb_expect_parts *p);

/* The digest of an --expect list that the rounds' terms hold: the SHA1 of
 * its parts' SHA1s ("" when it cannot be cut). */
void rb_barrier__expect_digest(const char *list, char hex[41]);

/* The arrive script's call (args: its 10 ARGV): with --expect, the list's
 * digest goes as ARGV[9] (filled here), and the list itself is stored,
 * in parts, only when the server answers that it does not hold it. */
int rb_barrier__arrive_call(rb_waiter *w, const char **keys, int nkeys,
                            const char **args, rb_call *call,
                            redisReply **r, rb_error *err);

/* The message for an arrival refused by the round's terms (badn,
 * badexpect, badreduce); RB_EINVAL. */
int rb_barrier__refused(const char *name, const rb_arrive_reply *a,
                        const rb_wait_opts *o, rb_error *err);

/* An outcome's text as a result: RB_OK for "ok", RB_EBROKEN with the
 * reason for "broken <reason>", RB_EPROTO for anything else. */
int rb_barrier__outcome(const char *name, const char *gen, const char *text,
                        rb_error *err);

/* What a Redis error reply says, read from its text in one place each: a
 * key of the wrong type, damaged barrier state, a command the server does
 * not have (BLMOVE before 6.2). */
int rb_barrier__is_wrongtype(const rb_call *call);
int rb_barrier__is_damaged(const rb_call *call);
int rb_barrier__is_unknown_command(const rb_call *call);

/* A Redis error of a script: a key of the wrong type (named by the
 * script) or damaged state, said with what repairs it. */
int rb_barrier__script_failed(const char *name, const rb_call *call, int rc,
                              rb_error *err);

/* reset's reply into res (owned strings); RB_OK, RB_EPROTO, RB_ENOMEM. */
int rb_barrier__reset_from_reply(rb_reset_result *res, const redisReply *r);

/* ---- steps shared by the wait loop and the --once run ----
 * (rb_barrier_round.c) */

/* How each call may try: until a lease (or the acknowledgement window of
 * --replicas) from now. */
long long rb_barrier__resend_until(const rb_waiter *w);
rb_call rb_barrier__call_beat(const rb_waiter *w);
rb_call rb_barrier__call_grace(const rb_waiter *w);

/* A reply that is none of the script's answers: RB_EPROTO. */
int rb_barrier__bad_reply(const rb_waiter *w, const char *script,
                          rb_error *err);
/* Tell the caller's progress function about the round (rr NULL: what the
 * arrival said), at most once per progress_ms unless force. */
void rb_barrier__report_progress(rb_waiter *w, const rb_round_reply *rr,
                                 int force);

/* Leave the round early; an outcome already there wins. code is what this
 * party reports when it broke the round; form "arrivals" or "plain". */
int rb_barrier__abandon(rb_waiter *w, const char *what, const char *form,
                        int code, rb_error *err);
int rb_barrier__timed_out(rb_waiter *w, rb_error *err);
/* One heartbeat: 1 when the round ended (*rc says how), 0 to go on. */
int rb_barrier__heartbeat(rb_waiter *w, int *rc, rb_error *err);

/* This party completed a --once round: claim the run, run the command
 * while heartbeating, then pass or break the round (rb_barrier_once.c). */
int rb_barrier__run_once(rb_waiter *w, const rb_arrive_reply *a,
                         rb_error *err);

#endif
