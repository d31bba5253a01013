#ifndef RB_CLI_RUN_STOP_H
#define RB_CLI_RUN_STOP_H

/* A job that stops or is stuck (DESIGN.md "Jobs"), as run's runner plays
 * its part: run_stop.c, over the command's supervisor. */

#include "cli.h"
#include "supervise.h"

typedef struct cli_run_stop {
    rb_job *job;
    cli_sup *sup;               /* the command's supervisor */
    const char *name, *id;      /* the job, this member */
    long long grace_ms;         /* --kill-after; 0: 10 s */
    int (*end)(void *payload);  /* end what is left (SIGKILL); its status */
    void *payload;
} cli_run_stop;

/* This runner got a signal (cli_signal()) while its command runs: put the
 * job into stopping, with the reason "ID was terminated (SIGTERM)".
 * RB_OK, or an rb_code (e.g. RB_EBROKEN: the job had broken before). */
int cli_run_stop_job(rb_job *job, const char *id, rb_error *err);

/* The job stops: the command gets SIGTERM once and the grace, this member
 * holds its membership while the command runs, then departs. The caller
 * has taken the signals out of the job's cancel fd (a second signal is no
 * news: a second SIGTERM to the command would kill its save). Returns the
 * exit code: 128+sig for a signalled runner, else 3 (or 1/4 when the state
 * was lost or Redis could not be reached). */
int cli_run_hold_stop(const cli_run_stop *s, rb_error *err);

/* --stall-after DUR and --progress-file PATH (either may be NULL): 0, or
 * RB_EINVAL with err filled. */
int cli_run_stall_flags(const char *stall_after, const char *progress_file,
                        long long *stall_after_ms, const char **path,
                        rb_error *err);

/* Before each wait of the job: hand the command's last progress (and
 * whether its processes are all stopped) to the renewals, and say how long
 * the wait may last before the stall check is due (-1: no limit). */
long long cli_run_progress(rb_job *job, cli_sup *sup);

/* The command is stuck: break the job, naming the member most likely
 * stuck. RB_EBROKEN (err: the reason), or an rb_code. */
int cli_run_stall(rb_job *job, cli_sup *sup, rb_error *err);

#endif
