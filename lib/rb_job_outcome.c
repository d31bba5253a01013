/*
 * What an outcome read from the job (its :out list, or a script's reply)
 * means for this member: the phase it moves to and the error its caller
 * sees. rb_job.c (entering, keeping) and rb_job_end.c (leaving, failing,
 * stopping) both read outcomes; this file is the one place that says.
 */
#include "fmacros.h"

#include <stdio.h>
#include <string.h>

#include "rb_job.h"
#include "rb_reply.h"

int rb_job__broken(rb_job *j, const char *outcome, rb_error *err)
{
    const char *reason = "";

    rb_reply__outcome(outcome, &reason);
    j->phase = PHASE_BROKEN;
    return rb_error__set(err, RB_EBROKEN, "%s: job broken: %s", j->name,
                         reason ? reason : outcome);
}

int rb_job__lost(rb_job *j, const char *text, rb_error *err)
{
    j->phase = PHASE_NONE;
    if (text && strcmp(text, "replaced") == 0)
        return rb_error__set(err, RB_ELOST, "%s: another runner took the "
                             "place of id '%s' (this one's lease had "
                             "passed)", j->name, j->id);
    return rb_error__set(err, RB_ELOST, "%s: job state lost (this member "
                         "is gone from attempt %ld of epoch %lld: was Redis "
                         "restarted without persistence?)", j->name, j->att,
                         j->epoch);
}

int rb_job__stopping(rb_job *j, const char *outcome, int *done,
                     rb_error *err)
{
    if (j->phase != PHASE_STOPPING)
        snprintf(j->stop_reason, sizeof(j->stop_reason), "%s",
                 outcome + 9);
    if (j->phase == PHASE_LEAVE) {
        /* Its command was done before the stop: nothing to save. */
        j->phase = PHASE_NONE;
        *done = 1;
        return rb_error__set(err, RB_EBROKEN, "%s: job stopped: %s",
                             j->name, j->stop_reason);
    }
    j->phase = PHASE_STOPPING;
    return RB_OK;
}

int rb_job__ended(rb_job *j, const char *outcome, int *done, rb_error *err)
{
    if (strcmp(outcome, "ok") == 0) {
        j->phase = PHASE_NONE;
        *done = 1;
        return RB_OK;
    }
    if (strncmp(outcome, "stopping ", 9) == 0)
        return rb_job__stopping(j, outcome, done, err);
    return rb_job__broken(j, outcome, err);
}
