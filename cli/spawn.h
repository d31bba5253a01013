#ifndef RB_CLI_SPAWN_H
#define RB_CLI_SPAWN_H

/* The one process runner (spawn.c, birth.c, signals.c): every process
 * rbarrier starts (a supervised command and its watchdog, the demo's
 * workers, the demo's private server and its guard) starts, is signalled
 * and is reaped here. Outside it only --nproc-per-node's parent
 * (nproc.c) forks its runners, and the supervisor's tree (watchdog.c,
 * proctree.c, supervise.c) signals and reaps what it finds below it.
 *
 * Signals are data: SIGINT, SIGTERM and SIGHUP are recorded by a handler
 * that only writes a byte to a pipe (the library polls that pipe as its
 * cancel fd); SIGCHLD writes to a second pipe that only means "reap". A
 * signal that was ignored when rbarrier started stays ignored (nohup), for
 * rbarrier and for its commands. */

#include <sys/types.h>

/* Record the dispositions found at start and ignore SIGPIPE (a write to a
 * closed pipe or socket is an error we report). main calls it first. */
void cli_signals_init(void);

/* Route SIGINT/SIGTERM/SIGHUP (those not ignored at start) to the cancel
 * pipe. 0, or -1 with errno. Idempotent. */
int cli_install_signals(void);

/* The first of those signals that arrived (0: none). */
int cli_signal(void);

/* The read end of the cancel pipe (-1 before cli_install_signals). */
int cli_signal_fd(void);

/* A signal was taken in hand (cli_signal still names it): empty the
 * cancel pipe, so the library's calls are no longer cancelled by it and a
 * runner can go on renewing while its command stops; a further signal
 * fills the pipe again (cli_signal_pending). */
void cli_signal_ack(void);
int cli_signal_pending(void);

/* The read end of the SIGCHLD pipe (-1 before the first child started):
 * readable while an exit is not yet drained, so a caller that must wake on
 * either a signal or a child's end can poll both (run does, through one
 * epoll fd given to the library as its cancel fd). */
int cli_child_fd(void);

/* Job control while a supervised command runs: SIGTSTP, SIGTTIN and
 * SIGTTOU (those not ignored at start) are recorded and written to a pipe
 * instead of stopping rbarrier at once; the supervisor freezes the
 * command's tree, restores the default (cli_jobctl_default) and stops
 * rbarrier with the same signal. */
int cli_jobctl_install(void);
void cli_jobctl_default(void);
int cli_jobctl_fd(void);       /* readable while a stop is pending */
int cli_jobctl_take(void);     /* the stop signal that came (0: none, or
                                  a SIGCONT came after it) */
/* Stop rbarrier with sig as a shell expects (SIGSTOP when the kernel
 * drops sig, in a process group no shell controls); returns once
 * continued. */
void cli_jobctl_stop_self(int sig);

/* pipe(2) with both ends close-on-exec: a child holds only the end it is
 * given (a worker that held the read end of its own output pipe would
 * block forever once the reader died). */
int cli_pipe_cloexec(int fds[2]);

/* All of len bytes to or from fd, through short counts and EINTR: 0, or
 * -1 (an error, or the other end closed before the last byte). */
int cli_write_all(int fd, const void *buf, size_t len);
int cli_read_all(int fd, void *buf, size_t len);

typedef struct cli_proc_opts {
    const char *shell_cmd;  /* run /bin/sh -c -- shell_cmd; or */
    const char *const *argv;/* execvpe(argv[0], argv, ...); or */
    void (*fn)(void *arg);  /* call fn(arg) in the child (must not return) */
    void *arg;
    int stdout_fd;          /* -1: inherit */
    int null_stdio;         /* stdout and stderr to /dev/null */
    int parent_death_signal;/* 0, or the signal the child gets when
                               rbarrier dies (even by SIGKILL) */
    int own_group;          /* the child leads a process group of its own,
                               and every signal goes to that group */
    int exec_error_fails;   /* 1: an exec failure fails cli_proc_start
                               with its errno; 0: the child exits 126 or
                               127, as sh does, and why is said on
                               stderr */
    const char *const *env; /* "NAME=value" strings to set in the child
                               (putenv's rule), NULL-terminated; NULL:
                               none. The command is looked for on our
                               own PATH, not on one set here */
    long long kill_after_ms;/* cli_proc_stop: SIGKILL this long after the
                               first signal; 0: 10s */
    const char *join_cgroup;/* a cgroup v2 directory the child joins
                               before exec; NULL: none */
    int cgroup_fd;          /* an open cgroup v2 directory the child is
                               born in (clone3); the start fails, errno
                               ENOSYS, E2BIG or EINVAL where the kernel
                               cannot do that; -1: none */
} cli_proc_opts;

#define CLI_PROC_OPTS_INIT { .stdout_fd = -1, .cgroup_fd = -1 }

typedef struct cli_proc {
    pid_t pid;              /* > 0 while it runs, 0 once reaped */
    int status;             /* once reaped: exit status, or 128+signal */
    pid_t pgid;             /* its group (own_group), 0: none; a group
                               outlives its leader while members remain */
    long long kill_after_ms;
    struct cli_proc *next;  /* the list of running children */
} cli_proc;

#define CLI_PROC_INIT { 0, 0, 0, 0, NULL }

/* Start a child as o says: a child that only execs shares our memory
 * until its exec (as posix_spawn's does), one that calls fn is forked.
 * 0, or -1 with errno (the birth failed, or exec failed with
 * exec_error_fails). p must stay where it is until reaped. */
int cli_proc_start(cli_proc *p, const cli_proc_opts *o);

/* Sleep until p ends (1, p->status set), timeout_ms passes (0; < 0:
 * never) or a signal from the cancel set arrives (0). Reaps every child
 * that ended meanwhile, strangers included (orphans given to rbarrier as
 * PID 1 or subreaper). No busy loop: it sleeps in poll(2). */
int cli_proc_wait(cli_proc *p, long long timeout_ms);

/* The same, deaf to the cancel set: for a child that must be collected
 * whatever signal came (the supervisor's watchdog). */
int cli_proc_wait_for(cli_proc *p, long long timeout_ms);

/* Send sig to p (its whole group with own_group). ESRCH is fine. */
void cli_proc_signal(cli_proc *p, int sig);

/* End p for good: sig (0: SIGTERM) to it, SIGKILL after its kill-after,
 * and reap it. With own_group, also ends what is left of its group (a
 * background grandchild) the same way. Returns p->status. Takes a p
 * already reaped (then only its group is cleaned up). */
int cli_proc_stop(cli_proc *p, int sig);

/* 1 when a child can be born in a cgroup here (cgroup_fd): clone3 is
 * neither missing nor refused by a filter. A kernel of 5.3 to 5.6 has
 * clone3 but still refuses the cgroup, at the birth. */
int cli_proc_cgroup_births(void);

/* Reap every child that has ended, without waiting. */
void cli_reap(void);

#endif
