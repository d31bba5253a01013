/*
 * How a member's part of a job ends: it leaves (its work is done), fails,
 * is stuck or is stopped (DESIGN.md "Jobs": stuck members, preemption).
 * The runner judges its own command (its progress, its
 * processes) and tells the library; the library carries the progress on
 * the renewals it sends anyway, and one script (job-stop) either breaks
 * the job for a stall, naming the member most likely stuck, or puts it
 * into the stopping phase, which every member learns from the same
 * blocking read that brings a break.
 */
#include "fmacros.h"

#include <stdio.h>
#include <string.h>

#include "rb_job.h"
#include "rb_reply.h"
#include "rb_script.h"

#define RB_JOB_STOP_CALL_MS 2000
#define RB_JOB_GRACE_MS 2000

void rb_job_progress(rb_job *j, long long progress_ms, int halted)
{
    j->progress_at = progress_ms;
    j->halt = halted != 0;
}

const char *rb_job_stopping(const rb_job *j)
{
    return j->phase == PHASE_STOPPING ? j->stop_reason : NULL;
}

static int stop_call(rb_job *j, const char *mode, const char *what,
                     long long age, rb_error *err)
{
    char age_t[24];
    const char *args[9] = { j->epoch_t, j->att_t, j->id, mode, what, age_t,
                            j->halt ? "halt" : "", j->ttl_t, j->linger_t };
    rb_call call = { .deadline = rb_deadline__within(
                         rb_now_ms(), j->lease_ms > RB_JOB_STOP_CALL_MS
                                          ? j->lease_ms
                                          : RB_JOB_STOP_CALL_MS) };
    redisReply *r = NULL;
    rb_job_reply jr;
    int rc, done = 0;

    if (j->phase != PHASE_RUN && j->phase != PHASE_STOPPING)
        return rb_error__set(err, RB_EINVAL, "%s: not in a running job",
                             j->name);
    snprintf(age_t, sizeof(age_t), "%lld", age);
    if ((rc = rb_job__run(j, RB_SCRIPT_JOB_STOP, args, 9, &call, &r, &jr,
                          err)) != RB_OK)
        return rc;
    if (jr.kind == RB_JOB_STOP)
        rc = rb_job__stopping(j, jr.text, &done, err);
    else if (jr.kind == RB_JOB_LOST)
        rc = rb_job__lost(j, jr.text, err);
    else if (jr.kind == RB_JOB_BROKEN ||
             (jr.kind == RB_JOB_OUT && rb_reply__outcome(jr.text, NULL) == 0))
        rc = rb_job__broken(j, jr.text, err);
    else if (jr.kind == RB_JOB_OUT)
        rc = RB_OK;   /* it had ended well: nothing left to stop */
    else
        rc = rb_error__set(err, RB_EPROTO, "%s: bad job-stop reply",
                           j->name);
    freeReplyObject(r);
    return rc;
}

int rb_job_stall(rb_job *j, rb_error *err)
{
    rb_error local;
    long long now = rb_now_ms();

    if (err == NULL)
        err = &local;
    return stop_call(j, "stall", "-",
                     j->progress_at > 0 && now >= j->progress_at
                         ? now - j->progress_at : 0, err);
}

int rb_job_stop(rb_job *j, const char *what, rb_error *err)
{
    rb_error local;

    if (err == NULL)
        err = &local;
    if (what == NULL || what[0] == '\0' || strlen(what) > 300 ||
        strpbrk(what, "\r\n\t"))
        return rb_error__set(err, RB_EINVAL, "%s: a stop needs a one-line "
                             "reason of 1..300 bytes", j->name);
    return stop_call(j, "stop", what, -1, err);
}

/* ---- leaving, failing ---- */

static int end_call(rb_job *j, const char *mode, const char *what,
                    int status, int *done, rb_error *err)
{
    const char *args[8];
    char st[16];
    rb_call call = { .deadline = rb_deadline__within(
                         rb_now_ms(), j->lease_ms > RB_JOB_GRACE_MS
                                          ? j->lease_ms : RB_JOB_GRACE_MS) };
    redisReply *r = NULL;
    rb_job_reply jr;
    int rc;

    *done = 0;
    if (j->phase != PHASE_RUN && j->phase != PHASE_LEAVE &&
        j->phase != PHASE_ENTER && j->phase != PHASE_STOPPING)
        return rb_error__set(err, RB_EINVAL, "%s: not in a job", j->name);
    snprintf(st, sizeof(st), "%d", status);
    args[0] = j->epoch_t;
    args[1] = j->att_t;
    args[2] = j->id;
    args[3] = mode;
    args[4] = what;
    args[5] = st;
    args[6] = j->ttl_t;
    args[7] = j->linger_t;
    if ((rc = rb_job__run(j, RB_SCRIPT_JOB_END, args, 8, &call, &r, &jr, err)))
        return rc;
    if (jr.kind == RB_JOB_OUT && strncmp(jr.text, "stopping ", 9) == 0) {
        /* Departed from the stopping job: done, and not by a pass. */
        if (j->phase != PHASE_STOPPING)
            snprintf(j->stop_reason, sizeof(j->stop_reason), "%s",
                     jr.text + 9);
        j->phase = PHASE_NONE;
        *done = 1;
        rc = rb_error__set(err, RB_EBROKEN, "%s: job stopped: %s", j->name,
                           j->stop_reason);
    } else if (jr.kind == RB_JOB_OUT || jr.kind == RB_JOB_BROKEN)
        rc = rb_job__ended(j, jr.text, done, err);
    else if (jr.kind == RB_JOB_LOST)
        rc = rb_job__lost(j, jr.text, err);
    else if (jr.kind == RB_JOB_WAIT)
        j->phase = PHASE_LEAVE;
    else
        rc = rb_error__set(err, RB_EPROTO, "%s: bad job-end reply",
                           j->name);
    freeReplyObject(r);
    return rc;
}

int rb_job_fail(rb_job *j, const char *what, int status, rb_error *err)
{
    rb_error local;
    int done;

    if (err == NULL)
        err = &local;
    if (what == NULL || what[0] == '\0' || strlen(what) > 300 ||
        strpbrk(what, "\r\n\t"))
        return rb_error__set(err, RB_EINVAL, "%s: a failure needs a "
                             "one-line reason of 1..300 bytes", j->name);
    if (status < -1 || status > 255)
        status = -1;
    return end_call(j, "fail", what, status, &done, err);
}

int rb_job_leave(rb_job *j, int *done, rb_error *err)
{
    rb_error local;

    if (err == NULL)
        err = &local;
    return end_call(j, "leave", "-", 0, done, err);
}
