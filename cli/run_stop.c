/* A job that stops (DESIGN.md "Jobs": preemption). A runner signalled
 * while its command runs stops the job instead of breaking it, so the
 * members' commands can agree on a step and save it before the machines
 * go: every command gets SIGTERM once (a second would kill the save), the
 * job's barriers keep passing while everyone is there, and each member
 * departs when its command exits or its grace ends. */
#include <signal.h>
#include <stdio.h>

#include "clock.h"
#include "run_stop.h"
#include "spawn.h"

static const char *signal_word(int sig)
{
    return sig == SIGINT ? "interrupted (SIGINT)"
         : sig == SIGHUP ? "hung up (SIGHUP)"
                         : "terminated (SIGTERM)";
}

int cli_run_stop_job(rb_job *job, const char *id, rb_error *err)
{
    char what[RB_NAME_MAX + 64];

    snprintf(what, sizeof(what), "%s was %s", id, signal_word(cli_signal()));
    return rb_job_stop(job, what, err);
}

int cli_run_hold_stop(const cli_run_stop *s, rb_error *err)
{
    long long until = cli_now_ms() + (s->grace_ms ? s->grace_ms : 10000);
    char what[RB_NAME_MAX + 64];
    int rc = RB_OK, done = 0, status, sig;

    /* A runner signalled itself has forwarded nothing yet: the command
     * runs in a process group of its own. */
    s->signal(s->payload, SIGTERM);
    while (!s->gone(s->payload) && cli_now_ms() < until) {
        rc = rb_job_keep(s->job, until - cli_now_ms(), &done, err);
        if (rc == RB_ECANCELED)
            rc = RB_OK;    /* a child's end: looked at above */
        if (rc != RB_OK || done)
            break;
    }
    status = s->end(s->payload);
    sig = cli_signal();
    if (rc == RB_OK && !done) {
        if (status > 128)
            snprintf(what, sizeof(what), "%s's command was killed by signal "
                     "%d", s->id, status - 128);
        else
            snprintf(what, sizeof(what), "%s's command exited %d", s->id,
                     status);
        rc = status == 0 ? rb_job_leave(s->job, &done, err)
                         : rb_job_fail(s->job, what, status, err);
    }
    if (sig)
        return cli_fail_as(cli_exit_code(RB_ECANCELED, sig), NULL, err->msg,
                           s->name);
    return cli_fail_as(cli_exit_code(rc == RB_OK ? RB_EBROKEN : rc, 0),
                       NULL, err->msg, s->name);
}
