#ifndef RB_CLI_WAIT_H
#define RB_CLI_WAIT_H

/* wait and run share one implementation (cmd_wait.c): run is a wait whose
 * pass runs run_argv and then waits once more. run_argv NULL: plain wait. */
int wait_command(int argc, char **argv, char *const *run_argv);

#endif
