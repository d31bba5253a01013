#ifndef RB_CLI_PROGRESS_H
#define RB_CLI_PROGRESS_H

/* The one-line progress of a long wait on a terminal's stderr
 * ("ckpt: 3/4 arrived, waiting 12s (missing w3)"), erased when done. */

#include "rbarrier.h"

typedef struct cli_progress {
    const char *name;
    const char *expect;     /* --expect's ids, to name the missing; NULL */
    int shown;
    int touch;              /* a wait inside a job: cli_progress_touch on
                               each call (name NULL: no line drawn) */
} cli_progress;

/* An rb_progress_fn; payload is a cli_progress. */
void cli_progress_show(const rb_progress *p, void *payload);
/* Inside a job (rbarrier run), an rbarrier call is progress of the
 * member's command (--stall-after): touch $RBARRIER_PROGRESS, the file
 * its runner watches. Nothing outside a job or when it is not set. */
void cli_progress_touch(void);
/* Erase the line if it is shown. */
void cli_progress_erase(cli_progress *line);

#endif
