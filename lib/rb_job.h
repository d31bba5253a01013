#ifndef RB_JOB_H
#define RB_JOB_H

/* Private to lib/: the job scripts' one reply shape, decoded by a pure
 * function (unit-tested with hostile replies). */

#include "rb_internal.h"

typedef enum rb_job_kind {
    RB_JOB_WAIT = 0,      /* entered / kept / left: go on */
    RB_JOB_GO,            /* everyone entered */
    RB_JOB_OUT,           /* the attempt ended: text is its outcome */
    RB_JOB_BROKEN,        /* this call broke it: text is the outcome */
    RB_JOB_LOST,          /* this member is not in the attempt */
    RB_JOB_BUSY,          /* a job of this name runs without this id */
    RB_JOB_BADN,          /* the open job differs: text says how */
    RB_JOB_OVER           /* the attempt to re-enter is gone: text why */
} rb_job_kind;

typedef struct rb_job_reply {
    rb_job_kind kind;
    long long epoch;
    long att;
    long rank;
    long count;
    long n;
    const char *text;     /* points into the reply */
    long long next_ms;    /* -1: no other member's deadline */
} rb_job_reply;

/* Check a job's options before anything is sent.
 * @return RB_OK or RB_EINVAL */
int rb_job__check_opts(const rb_job_opts *o, rb_error *err);

/* A reply's text (a string or status without NUL bytes), pointing into r.
 * @return RB_OK or RB_EPROTO */
int rb_job__str_at(const redisReply *r, const char **out);

/* {kind, epoch, att, rank, count, n, text, next_ms}.
 * @return RB_OK or RB_EPROTO */
int rb_job__decode(const redisReply *r, rb_job_reply *out);

/* job-status's reply into out (owned strings; rb_job_status_clear).
 * @return RB_OK, RB_EPROTO, RB_ENOMEM */
int rb_job__decode_status(const redisReply *r, rb_job_status *out);

/* The rendezvous data (rb_job_rdv.c): what this member offers with each
 * entering, and what it reads of the attempt once everyone entered. */
typedef struct rb_job_rdv {
    char *host;             /* owned; NULL: this member's id */
    char *master_addr;      /* owned override; NULL: the connection's */
    int master_port;        /* override; 0: a free port per entering */
    char endpoint[96];      /* this entering's '<addr> <port>' */
    long local_rank, local_world, group_rank, group_world;
    char addr[64];          /* rank 0's, as handed round */
    int port;
} rb_job_rdv;

/* Copy the version 2 options (none for version 1).
 * @return RB_OK, RB_ENOMEM */
int rb_job__rdv_init(rb_job_rdv *v, const rb_job_opts *o, rb_error *err);
void rb_job__rdv_free(rb_job_rdv *v);
/* This member's offer for the next entering: its address as the
 * connection shows it (or the override) and a port free here now.
 * @return RB_OK, RB_EUNREACHABLE (no address, no free port) */
int rb_job__rdv_offer(rb_job_rdv *v, rb_conn *c, rb_error *err);
/* Once the attempt's entering round is complete: this member's values (one
 * HMGET of the attempt's :rdv hash). A job whose completing entry kept no
 * data (a member of an older build) reads as one host.
 * @return RB_OK or the call's rb_code */
int rb_job__rdv_fetch(rb_job_rdv *v, rb_conn *c, const char *base,
                      long long epoch, long att, const char *id, long rank,
                      long n, long long lease_ms, rb_error *err);
const rb_job_rdv *rb_job__rdv(const rb_job *j);

#endif
