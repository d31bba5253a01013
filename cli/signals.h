#ifndef RB_CLI_SIGNALS_H
#define RB_CLI_SIGNALS_H

/* Between the signal half (signals.c) and the process half (spawn.c,
 * birth.c) of the process runner; the public side of both is spawn.h. */

/* Take SIGCHLD (once, before the first child): its pipe is cli_child_fd. */
int cli_signals__watch_children(void);

/* In a child before exec: the dispositions and mask found at start.
 * System calls only: safe in a child that shares our memory. */
void cli_signals__restore(void);

/* In a forked child: the parent's pipes and caught signals are not ours. */
void cli_signals__forget(void);

/* Read a non-blocking pipe empty. */
void cli_signals__drain(int fd);

#endif
