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

#endif
