#ifndef RB_JOB_H
#define RB_JOB_H

/* Private to lib/: the job scripts' one reply shape, decoded by a pure
 * function (unit-tested with hostile replies). */

#include "rb_internal.h"
#include "rb_keeper.h"
#include "rb_script.h"

typedef enum rb_job_kind {
    RB_JOB_WAIT = 0,      /* entered / kept / left: go on */
    RB_JOB_GO,            /* everyone entered */
    RB_JOB_OUT,           /* the attempt ended: text is its outcome */
    RB_JOB_BROKEN,        /* this call broke it: text is the outcome */
    RB_JOB_LOST,          /* this member is not in the attempt */
    RB_JOB_BUSY,          /* a job of this name runs without this id */
    RB_JOB_BADN,          /* the open job differs: text says how */
    RB_JOB_OVER,          /* the attempt to re-enter is gone: text why */
    RB_JOB_STOP,          /* the job stops: text 'stopping <reason>' */
    RB_JOB_DUP,           /* a live runner holds this id: next_ms its
                             lease's time left */
    RB_JOB_KEEPER,        /* load the keeper's marker of class rank first
                             (text "missing": look for markers too) */
    RB_JOB_QUARANTINE     /* a lost run's members may still run: no new
                             run for next_ms */
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
    const redisReply *rdv[3];  /* job-enter's 'go': the rendezvous values
                                  (rb_job__rdv_take); NULL: none came */
} rb_job_reply;

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
    int taken;              /* the attempt's values are in (rb_job__rdv_take) */
    /* The read of this member's values in the attempt (rb_job__rdv_read) */
    char key[RB_KEY_MAX];
    const char *argv[5];
    size_t lens[5];
    rb_cmd read;
} rb_job_rdv;

/* Where a member is. PHASE_STOPPING: the job stops; its command runs
 * until it ends (its runner sent it SIGTERM once). */
enum { PHASE_NONE = 0, PHASE_ENTER, PHASE_RUN, PHASE_LEAVE, PHASE_BROKEN,
       PHASE_STOPPING };

#define RB_JOB_STOP_MAX 320

/* A member's handle (rb_job.c: entering, running, leaving; rb_job_stop.c:
 * stalls and stops). */
struct rb_job {
    rb_conn *c;
    char *prefix, *name, *id, *expect;
    long n, restarts;
    long long lease_ms, timeout_ms, slice_ms;
    char base[RB_KEY_MAX];
    rb_keeper keeper;             /* of base's slot; job-enter's KEYS[2]
                                     and ARGV[13] */
    char list_key[RB_KEY_MAX];    /* the list this member blocks on */
    char lease_t[24], ttl_t[24], linger_t[24], n_t[24], k_t[24];
    char epoch_t[24], att_t[24];
    char nonce[33];               /* this runner's, for every entry */
    long long epoch;
    long att, rank;
    int phase;
    long long renewed_at;         /* last renewal that Redis took */
    long long next_keep;          /* when the next renewal is due */
    long long peer_at;            /* just after the earliest other
                                     member's deadline; 0: none */
    long long progress_at;        /* rb_now_ms of the command's last
                                     progress; 0: none to publish */
    int halt, halt_sent;          /* its processes all stopped: now, and
                                     as the last renewal said */
    int prog_sent;                /* the last renewal published an age */
    char stop_reason[RB_JOB_STOP_MAX];  /* while stopping: why */
    rb_job_rdv rdv;
};

/* Run a job script on the job's key; decodes the reply into jr (whose
 * text points into *r: free it). @return an rb_code */
int rb_job__run(rb_job *j, rb_script_id sid, const char *const *args, int nargs,
                rb_call *call, redisReply **r, rb_job_reply *jr,
                rb_error *err);

/* This member's attempt broke (outcome 'broken <reason>'), or its state
 * is gone (text: a 'lost' reply's; "replaced": another runner took its
 * id). @return RB_EBROKEN, RB_ELOST */
int rb_job__broken(rb_job *j, const char *outcome, rb_error *err);
int rb_job__lost(rb_job *j, const char *text, rb_error *err);

/* The end of an attempt as the lists or a script said it: 'ok' (*done),
 * a break, or a stop (rb_job__stopping). */
int rb_job__ended(rb_job *j, const char *outcome, int *done, rb_error *err);

/* The job stops ('stopping <reason>'): a running member keeps holding
 * (RB_OK), one that had left is done (RB_EBROKEN: "job stopped"). */
int rb_job__stopping(rb_job *j, const char *outcome, int *done,
                     rb_error *err);

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


/* Copy the version 2 options (none for version 1).
 * @return RB_OK, RB_ENOMEM */
int rb_job__rdv_init(rb_job_rdv *v, const rb_job_opts *o, rb_error *err);
void rb_job__rdv_free(rb_job_rdv *v);
/* This member's offer for the next entering: its address as the
 * connection shows it (or the override) and a port free here now.
 * @return RB_OK, RB_EUNREACHABLE (no address, no free port) */
int rb_job__rdv_offer(rb_job_rdv *v, rb_conn *c, rb_error *err);
/* The read of this member's values in the attempt (an HMGET of its :rdv
 * hash: this member's field, groups, master), to send as a call's `then`
 * (the wait for 'go') or by rb_job__rdv_fetch. */
const rb_cmd *rb_job__rdv_read(rb_job_rdv *v, const char *base,
                               long long epoch, long att, const char *id);
/* Take the values from that read's three answers, as that read's reply
 * or job-enter's 'go' hands them (NULL or nil: none). A job whose
 * completing entry kept no data (a member of an older build) reads as one
 * host; values that do not parse, likewise. */
void rb_job__rdv_take(rb_job_rdv *v, const redisReply *mine,
                     const redisReply *groups, const redisReply *master,
                     long rank, long n);
/* Once the attempt's entering round is complete and the values did not
 * come with it: read them (one call).
 * @return RB_OK or the call's rb_code */
int rb_job__rdv_fetch(rb_job_rdv *v, rb_conn *c, const char *base,
                      long long epoch, long att, const char *id, long rank,
                      long n, long long lease_ms, rb_error *err);

#endif
