/* A job that stops (DESIGN.md "Jobs": preemption). A runner signalled
 * while its command runs stops the job instead of breaking it, so the
 * members' commands can agree on a step and save it before the machines
 * go: every command gets SIGTERM once (a second would kill the save), the
 * job's barriers keep passing while everyone is there, and each member
 * departs when its command exits or its grace ends. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "proctree.h"
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

/* While the job stops, the command still runs under this member's lease:
 * the watchdog learns each renewal, and a stall is no news. */
static int gone(const cli_run_stop *s)
{
    int st;

    cli_sup_held(s->sup, cli_now_ms() + rb_job_lease_left_ms(s->job));
    cli_reap();
    cli_sup_job_control(s->sup);
    st = cli_sup_check(s->sup);
    return st != CLI_SUP_RUNNING && st != CLI_SUP_STALLED;
}

int cli_run_hold_stop(const cli_run_stop *s, rb_error *err)
{
    long long until = cli_now_ms() + (s->grace_ms ? s->grace_ms : 10000);
    char what[RB_NAME_MAX + 64];
    int rc = RB_OK, done = 0, status, sig;

    /* A runner signalled itself has forwarded nothing yet: the command
     * runs in a process group of its own. */
    cli_sup_signal(s->sup, SIGTERM);
    while (!gone(s) && cli_now_ms() < until) {
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

/* ---- stuck members ---- */

int cli_run_stall_flags(const char *stall_after, const char *progress_file,
                        long long *stall_after_ms, const char **path,
                        rb_error *err)
{
    if (stall_after &&
        cli_parse_duration(stall_after, "--stall-after", CLI_LEASE_MIN_MS,
                           CLI_LEASE_MAX_MS, stall_after_ms, err) != RB_OK)
        return RB_EINVAL;
    if (progress_file && !stall_after)
        return cli_error(err, "--progress-file needs --stall-after");
    if (progress_file && (progress_file[0] == '\0' ||
                          strlen(progress_file) > 4000))
        return cli_error(err, "--progress-file needs a path");
    *path = progress_file;
    return RB_OK;
}

/* Every process of the command stopped: the strongest sign that this
 * command, not another member's, is stuck. */
static int all_stopped(const cli_sup *sup)
{
    return cli_ptree_group_halted(sup->cgroup, sup->cmd_pid);
}

long long cli_run_progress(rb_job *job, cli_sup *sup)
{
    long long left;

    if (sup->stall_after_ms <= 0)
        return -1;
    rb_job_progress(job, cli_sup_progress_ms(sup), all_stopped(sup));
    left = cli_sup_progress_ms(sup) + sup->stall_after_ms - cli_now_ms();
    return left > 10 ? left : 10;
}

int cli_run_stall(rb_job *job, cli_sup *sup, rb_error *err)
{
    rb_job_progress(job, cli_sup_progress_ms(sup), all_stopped(sup));
    return rb_job_stall(job, err);
}
