#ifndef RB_CLI_RUN_CMD_H
#define RB_CLI_RUN_CMD_H

/* `rbarrier run`'s runner (cmd_run.c) and its command (run_cmd.c): the
 * command's environment, and its start and stop under the supervisor,
 * whose watchdog is armed while the job is entered. */

#include "cli.h"
#include "config.h"
#include "supervise.h"
#include "torch_env.h"

typedef struct cli_runner {
    rb_job *job;
    rb_job_opts o;
    char *const *argv;
    cli_config cfg;
    long long kill_after_ms;
    long long stall_after_ms; /* 0: no stall check */
    const char *progress_file;
    int quiet;
    int wake;                 /* epoll over the signal pipe, and while CMD
                                 runs the supervisor's and job control's */
    int running;              /* CMD is under the supervisor */
    cli_sup sup;
    char last_break[512];
    char env_text[10][CLI_PASSWORD_MAX + 512];
    const char *env[11 + CLI_TORCH_VARS];
    cli_torch_env torch;
    char host[256];
    long nproc;               /* --nproc-per-node; 0: not given */
} cli_runner;

/* Arm the supervisor before the job is entered (cli_sup_arm). */
int cli_run_cmd_arm(cli_runner *r, rb_error *err);

/* The entry failed: the armed watchdog leaves (no command). */
void cli_run_cmd_disarm(cli_runner *r);

/* Entered: CMD starts under the armed watchdog; its news and job control
 * join the runner's wake set. RB_OK, or an rb_code with err filled. */
int cli_run_cmd_start(cli_runner *r, rb_error *err);

/* CMD's whole tree gets sig (0: SIGTERM), SIGKILL --kill-after later (or
 * sooner: before the lease can pass). Returns CMD's status. */
int cli_run_cmd_stop(cli_runner *r, int sig);

/* Add fd to (on) or take it from the runner's wake set. */
void cli_run_watch(cli_runner *r, int fd, int on);

#endif
