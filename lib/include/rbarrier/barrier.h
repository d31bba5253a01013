#ifndef RBARRIER_BARRIER_H
#define RBARRIER_BARRIER_H

/* Barriers and parameters. Part of the public API: include rbarrier.h, which includes
 * this file (the connection, URL and error types come from there). */

#include "../rbarrier.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- barriers ----------------------------------------------------------- */

typedef struct rb_progress {
    long long gen;
    long count;           /* parties in the round at the last look */
    long n;
    long long waited_ms;
    const char *const *members;  /* ids in the round, when opts.expect is
                                    set (else NULL); valid during the call */
    size_t members_count;
} rb_progress;

typedef void (*rb_progress_fn)(const rb_progress *p, void *payload);

/* What a --once command's runner is told (its environment, in the CLI). */
typedef struct rb_once_info {
    const char *name;
    long long gen;
    long n;
    const char *id;
    long index;
} rb_once_info;

/* How the library runs a --once command without running anything itself
 * (it never forks, execs or waits for a process): the caller starts the
 * command, and the library asks whether it ended while it keeps this
 * party's lease alive between questions.
 *   start  begin the command; RB_OK, or an rb_code with err filled
 *   wait   wait up to timeout_ms for it to end: 1 with *status (its exit
 *          status, 128+N for signal N) when it ended, 0 while it runs,
 *          < 0 on error; should return early when the cancel fd fires
 *   kill   end it now (the round broke or this party was interrupted) and
 *          reap it */
typedef struct rb_once_ops {
    int (*start)(const rb_once_info *info, void *payload, rb_error *err);
    int (*wait)(void *payload, int timeout_ms, int *status);
    void (*kill)(void *payload);
} rb_once_ops;

/* Options of rb_barrier_wait. Start from RB_WAIT_OPTS_INIT, which sets
 * version (fields are only ever added, at the end, and a zero field keeps
 * its old meaning); a call given a version it does not know refuses it with
 * RB_EINVAL. All times are milliseconds. */
#define RB_WAIT_OPTS_VERSION 2

typedef struct rb_wait_opts {
    unsigned int version; /* RB_WAIT_OPTS_VERSION */
    const char *prefix;   /* key prefix; NULL: "rb" */
    const char *name;     /* barrier name (rb_check_name) */
    long n;               /* parties per round, 1..RB_N_MAX */
    const char *id;       /* this party's id (rb_check_id) */
    long long timeout_ms; /* <= 0: no timeout */
    long long lease_ms;   /* 0: 10000; at least 30 */
    long long ttl_ms;     /* idle state's lifetime, whole seconds are kept
                             (rounded up); 0: one day */
    rb_progress_fn progress;  /* called after each look at the round (about
                                 once per progress_ms); may be NULL */
    void *payload;
    long long progress_ms;    /* how often progress is called; 0: each slice
                                 (a third of the lease) */
    const rb_once_ops *once;  /* when this party's arrival completes the
                                 round, run a command before anyone is
                                 released; NULL: none */
    void *once_payload;
    const char *value;    /* appended to the round's value list (1..200
                             bytes, no control characters); NULL: none */
    const char *expect;   /* the expected ids, comma-separated; fixed by
                             the round's first arrival, as n is: a party
                             with another list (or none against one) is
                             refused with RB_EINVAL; NULL: none */
    const char *reduce;   /* the round's reduction of the values (a word,
                             e.g. "sum"); fixed by the round's first
                             arrival, a party with another is refused with
                             RB_EINVAL; NULL: none */
    const char *job;      /* inside a job (rbarrier run): the job's name;
                             the barrier's keys live under the job's tag,
                             per epoch and attempt, and the job's break
                             breaks the wait; NULL: not in a job */
    long long job_epoch;  /* the job's epoch (with job only) */
    long job_attempt;     /* the job's attempt, 0 first (with job only) */
    /* Version 2. While this party's --once command runs: called after each
     * renewal of its lease that Redis took (the claim, then heartbeats),
     * with the time (rb_now_ms clock: the renewal's send time plus the
     * lease) until which the round surely waits for it, so the caller can
     * hold the command to that deadline. NULL: not told. */
    void (*once_held)(void *once_payload, long long until_ms);
} rb_wait_opts;

#define RB_N_MAX 100000
/* Every other field's default is zero; a field added later is zero too. */
#define RB_WAIT_OPTS_INIT { .version = RB_WAIT_OPTS_VERSION }

typedef struct rb_wait_result {
    long long gen;        /* the round this party was in */
    long count;           /* parties counted when this party arrived */
    long n;
    int completed;        /* 1 if this party's arrival completed the round */
    long index;           /* place of this arrival in its round, 0 first */
    int duplicate;        /* 1: the id was already waiting in the round */
    int ran_once;         /* 1: this party ran the --once command ... */
    int once_status;      /* ... which ended with this status (0 when it
                             was stopped because the round broke) */
    long long waited_ms;
    char **values;        /* opts.value: the round's values in arrival
                             order, once it passed (rb_wait_result_clear) */
    size_t values_count;
} rb_wait_result;

/* Arrive at the barrier and block until the round ends. A round that is
 * reset, broken by another party, or whose state is deleted or lost never
 * passes; a --once command starts only in a round without an outcome, and
 * is stopped (once_ops->kill) when the round breaks while it runs. An
 * arrival whose own call failed is withdrawn (its round broken) so that it
 * counts for nobody.
 * @param[out] out  may be NULL; else release with rb_wait_result_clear
 * @return RB_OK (the round passed), RB_EBROKEN (msg is the reason; with
 *         out->ran_once and out->once_status != 0, this party's --once
 *         command failed with that status), RB_ETIMEOUT (this party's
 *         timeout; the round was broken for the others), RB_ECANCELED
 *         (likewise, on the cancel fd), RB_EINVAL (bad options, an unknown
 *         opts->version, or the open round has another n, --expect list or
 *         --reduce op: nothing written), RB_ELOST, RB_EUNREACHABLE,
 *         RB_EREDIS (a key of the wrong type is named in msg; nothing
 *         written) */
int rb_barrier_wait(rb_wait_result *out, rb_conn *c, const rb_wait_opts *opts,
                    rb_error *err);
void rb_wait_result_clear(rb_wait_result *res);

typedef struct rb_member {
    char *id;             /* owned; freed by rb_status_clear */
    long long lease_left_ms;  /* negative once expired */
} rb_member;

typedef struct rb_status {
    int exists;           /* 0: the name was never used, or its state has
                             expired (everything below is zero) */
    long long gen;        /* open generation */
    long n;               /* 0 when nobody is in the open round */
    char *last_outcome;   /* owned; "" when none is kept */
    size_t members_count;
    rb_member *members;   /* owned; freed by rb_status_clear */
} rb_status;

/* Read a barrier's state in one consistent snapshot.
 * @param[out] out  release with rb_status_clear (also after a failure)
 * @return RB_OK, RB_EINVAL, RB_EREDIS, RB_EPROTO, RB_ENOMEM, ... */
int rb_barrier_status(rb_status *out, rb_conn *c, const char *prefix,
                      const char *name, rb_error *err);
/* Free what st owns and zero it; st may be NULL. */
void rb_status_clear(rb_status *st);

typedef struct rb_reset_result {
    long long gen;        /* the generation broken (0: nothing was open) */
    long members;         /* parties that were in it */
    char **removed;       /* owned: keys (or "KEY field") of the wrong type
                             or content deleted as damaged */
    size_t removed_count;
} rb_reset_result;

/* Break the open round (and a round whose --once command runs) with
 * "broken reset" and forget its n; delete any key of the barrier that
 * holds the wrong type of value, so that the barrier is usable again
 * whatever happened to it.
 * @param[out] out  may be NULL; else release with rb_reset_result_clear
 * @param ttl_ms    idle state's lifetime; 0: one day */
int rb_barrier_reset(rb_reset_result *out, rb_conn *c, const char *prefix,
                     const char *name, long long ttl_ms, rb_error *err);
/* Free what res owns and zero it; res may be NULL. */
void rb_reset_result_clear(rb_reset_result *res);

/* ---- parameters (the seed's global and local values) -------------------- */

/* Check a decimal number for train --by / set --value: an optional '-',
 * digits, at most one '.' with digits on both sides, at most 40 bytes, in
 * canonical form (no leading zero, no -0); an integer must fit in 64 bits.
 * *is_float is set to 1 when it has a fraction part.
 * @return RB_OK or RB_EINVAL */
int rb_check_number(int *is_float, const char *text, const char *what,
                    rb_error *err);

/* Values come back whole, of any length, in memory the caller frees with
 * free(): a value is never cut to fit a buffer. A value holding a NUL byte
 * (stored by another client) is refused with RB_EPROTO. ttl_ms is the
 * lifetime of what a call writes (whole seconds kept, rounded up); 0: one
 * day. A key of the wrong type is refused with RB_EREDIS naming it, and
 * nothing is written. */

/* local copy := global; *out is the value copied ("0" when never set). */
int rb_param_sync(char **out, rb_conn *c, const char *prefix,
                  const char *param, const char *worker, long long ttl_ms,
                  rb_error *err);

/* global += by, exactly once even when retried after a lost reply; returns
 * the local copy as read and the global value after the increment. An
 * integer step on an integer value is exact int64 arithmetic (INCRBY) and
 * overflow is an error (RB_EREDIS, nothing changed); floats (INCRBYFLOAT)
 * only when the step or the value has a fraction. */
int rb_param_train(char **local_out, char **global_out, rb_conn *c,
                   const char *prefix, const char *param, const char *worker,
                   const char *by, long long ttl_ms, rb_error *err);

/* The global value ("0" when never set). */
int rb_param_get(char **out, rb_conn *c, const char *prefix,
                 const char *param, rb_error *err);
/* Sets the value and wakes every rb_param_get_until waiting for it. */
int rb_param_set(rb_conn *c, const char *prefix, const char *param,
                 const char *value, long long ttl_ms, rb_error *err);

/* The global value once it is set: at once when it exists (set or made by
 * train), else blocked (no polling) until rb_param_set gives it one, which
 * wakes every waiter at once; *out is the value set. timeout_ms 0: no
 * limit. A value train makes while this waits does not wake it.
 * @return RB_OK, RB_ETIMEOUT (timeout_ms passed), RB_ECANCELED (the cancel
 *         fd), RB_EREDIS, RB_EUNREACHABLE, RB_EPROTO, RB_EINVAL */
int rb_param_get_until(char **out, rb_conn *c, const char *prefix,
                       const char *param, long long timeout_ms,
                       rb_error *err);

#ifdef __cplusplus
}
#endif

#endif
