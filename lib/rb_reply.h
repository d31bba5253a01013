#ifndef RB_REPLY_H
#define RB_REPLY_H

/*
 * Decoders of the barrier scripts' replies: pure functions from a hiredis
 * reply to a struct, so each can be unit-tested with hostile replies (wrong
 * types, short arrays, huge integers, NULs) built by redisReader, without a
 * server. A reply of any shape the protocol never sends gives RB_EPROTO;
 * strings in the results point into the reply and live as long as it.
 */

#include <stddef.h>

#include "rb_internal.h"

/* A whole number in [lo, hi] from an integer reply or a decimal string
 * reply (what Lua numbers become). @return RB_OK or RB_EPROTO */
int rb_reply__int(const redisReply *r, long long lo, long long hi,
                  long long *out);

typedef enum rb_arrive_kind {
    RB_ARRIVE_WAIT = 0,   /* block on the round's out list */
    RB_ARRIVE_DONE,       /* this arrival completed the round */
    RB_ARRIVE_RUN,        /* ... and must run its --once command */
    RB_ARRIVE_BADN,       /* the open round has another n: open_n */
    RB_ARRIVE_BADEXPECT,  /* ... another --expect list: open_text */
    RB_ARRIVE_BADREDUCE,  /* ... another --reduce op: open_text */
    RB_ARRIVE_JOBBROKEN,  /* the job is broken: open_text, its outcome */
    RB_ARRIVE_NEEDLIST    /* send the --expect list itself */
} rb_arrive_kind;

typedef struct rb_arrive_reply {
    rb_arrive_kind kind;
    long long gen;
    long count;
    long n;
    long index;
    int dup;
    long open_n;          /* RB_ARRIVE_BADN only */
    const char *open_text;    /* RB_ARRIVE_BAD{EXPECT,REDUCE}: the open
                                 round's ("" none); RB_ARRIVE_JOBBROKEN:
                                 "broken <reason>"; points into the reply */
} rb_arrive_reply;

int rb_reply__arrive(const redisReply *r, rb_arrive_reply *out);

/* expect-store: {'stored'} (*next_part = 0: the list is whole) or
 * {'part', j} (*next_part = j, 1..parts: the first part still missing). */
int rb_reply__expect_store(const redisReply *r, long parts, long *next_part);

typedef enum rb_round_kind {
    RB_ROUND_OUT = 0,     /* the round has an outcome (text) */
    RB_ROUND_WAIT,        /* still open: count, n, members */
    RB_ROUND_LOST,        /* this party is not in the round */
    RB_ROUND_BROKEN,      /* this call broke it (text; previous) */
    RB_ROUND_RUN,         /* claim: the --once run is this party's */
    RB_ROUND_NONE         /* withdraw: the arrival never ran */
} rb_round_kind;

typedef struct rb_round_reply {
    rb_round_kind kind;
    const char *text;     /* outcome: "ok" or "broken <reason>" */
    const char *previous; /* RB_ROUND_BROKEN: the broken outcome of the
                             round before, or NULL */
    long count;
    long n;
    redisReply **members; /* RB_ROUND_WAIT: ids, when listed */
    size_t members_count;
} rb_round_reply;

/* Replies of heartbeat, abandon, claim, release and withdraw (one
 * vocabulary). */
int rb_reply__round(const redisReply *r, rb_round_reply *out);

/* An outcome's text: 1 for "ok"; 0 for "broken <reason>" (*reason set);
 * -1 for anything else. */
int rb_reply__outcome(const char *text, const char **reason);

/* The reply of a blocking move on the out list: 0 and *text NULL when the
 * slice ran out (nil), 0 and *text the outcome, or RB_EPROTO. */
int rb_reply__block(const redisReply *r, const char **text);

/* status: fills out (strings and members allocated; rb_status_clear frees
 * them, also after a failure).
 * @return RB_OK, RB_EPROTO or RB_ENOMEM */
int rb_reply__status(const redisReply *r, rb_status *out);

/* reset: {gen, members, removed...}; removed lists keys of a wrong type
 * the script deleted (pointers into r). */
typedef struct rb_reset_reply {
    long long gen;
    long members;
    redisReply **removed;
    size_t removed_count;
} rb_reset_reply;

int rb_reply__reset(const redisReply *r, rb_reset_reply *out);

/* A list of strings (the round's --value list). */
int rb_reply__strings(const redisReply *r, redisReply ***items,
                      size_t *count);

/* ---- error replies ---------------------------------------------------- */

/* The class of an error reply's text (msg as Redis sent it). Every Redis
 * error prefix rbarrier acts on is named here and nowhere else. */
rb_reply_err rb_reply__classify(const char *msg);

/* A WRONGTYPE error a script raised names the key: its text from the key
 * on; NULL for Redis' own, which names none. */
const char *rb_reply__wrongtype_key(const char *msg);

/* A script's "ERR damaged ..." without the "ERR ": what is damaged. */
const char *rb_reply__damaged_text(const char *msg);

/* How much of an error reply's text (len bytes) to show: all of it, less
 * the location Redis appends to an error a script raised. */
size_t rb_reply__error_text(const char *msg, size_t len);

/* ACL refusal of a command sent directly ("... to run the 'zadd'
 * command"): the command's name into out (lower case); 0 when msg does
 * not name one. */
int rb_reply__noperm_command(const char *msg, char *out, size_t len);

#endif
