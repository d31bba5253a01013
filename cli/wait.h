#ifndef RB_CLI_WAIT_H
#define RB_CLI_WAIT_H

#include "rbarrier.h"

/* A wait as the CLI decided it, in the CLI's units; wait_opts.c turns it
 * into the library's rb_wait_opts (the one place that fills them, for
 * wait, run and the demo worker). */
typedef struct cli_wait_spec {
    const char *prefix, *name, *id;
    long n;
    const char *expect;       /* NULL: none */
    const char *value;        /* NULL: none */
    const char *reduce;       /* the --reduce word; NULL: none */
    long long timeout_ms;     /* 0: no limit */
    long long lease_ms;       /* 0: the library's default */
    long long ttl_ms;         /* 0: the library's default */
    const rb_once_ops *once;  /* NULL: no --once */
    void *once_payload;
    void (*once_held)(void *once_payload, long long until_ms);
    rb_progress_fn progress;  /* NULL: none */
    void *progress_payload;
    long progress_ms;
    const char *job;          /* inside a job ($RBARRIER_JOB): its name */
    long long job_epoch;      /* $RBARRIER_GEN */
    long job_attempt;         /* $RBARRIER_RESTART */
} cli_wait_spec;

void cli_wait_opts_fill(rb_wait_opts *o, const cli_wait_spec *w);

#endif
