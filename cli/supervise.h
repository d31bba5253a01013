#ifndef RB_CLI_SUPERVISE_H
#define RB_CLI_SUPERVISE_H

/* The one supervisor (supervise.c, watchdog.c): every command rbarrier
 * runs while it holds a right (a --once round's claim, a lock slot, a
 * job's membership) starts, is held, is stopped and is judged here.
 *
 *   runner ── pipe ──> watchdog ──> command (own group; own cgroup v2
 *          <── pipe ──                         where one can be made)
 *
 * The runner holds the right (it speaks to Redis); the watchdog holds the
 * deadline. After each acknowledged renewal the runner tells the watchdog
 * "the right holds until T + lease" (cli_sup_held); the watchdog, in a
 * process group of its own and deaf to the terminal's signals, ends the
 * command's whole tree on its own when that deadline comes near without a
 * new word (runner stopped, swapped out, cut off), and at once when the
 * runner dies (its pipe closes). It is the command's parent and a
 * subreaper, so descendants that leave the process group (setsid, double
 * fork) stay in its tree and are ended too; with a cgroup they are ended
 * by cgroup.kill. RBARRIER_SUPERVISE=subreaper forces the fallback,
 * =join a cgroup the command joins before its exec (a kernel that cannot
 * start a process in a cgroup: before 5.7, or clone3 filtered). The
 * runner is a subreaper too: should the watchdog alone die, the tree's
 * orphans come to it, and it ends them (those that carry the command's
 * RBARRIER_PROGRESS: not its own older children) and the cgroup itself. */

#include <sys/types.h>

#include "rbarrier.h"
#include "spawn.h"

typedef struct cli_sup_opts {
    const char *const *argv;  /* execvpe(argv[0], argv, ...); or */
    const char *shell_cmd;    /* /bin/sh -c -- shell_cmd */
    const char *const *env;   /* "NAME=value", NULL-terminated; may be NULL */
    int stdout_fd;            /* -1: inherit */
    long long kill_after_ms;  /* grace after SIGTERM while the right holds;
                                 0: 10s */
    long long lease_ms;       /* the right's lease: bounds a stop once the
                                 runner stops confirming it */
    long long held_until_ms;  /* the right holds until (cli_now_ms clock):
                                 the first deadline the watchdog keeps */
    long long stall_after_ms; /* no progress for this long is a stall;
                                 0: never */
    const char *progress_file;/* a file whose change is progress; NULL */
    const char *what;         /* "lock L", "job J": for messages */
} cli_sup_opts;

#define CLI_SUP_OPTS_INIT { .stdout_fd = -1 }

enum {
    CLI_SUP_RUNNING = 0,
    CLI_SUP_ENDED,     /* the command ended: cli_sup.status */
    CLI_SUP_EXPIRED,   /* the command was ended by the watchdog when the
                          right's deadline came without a renewal (the
                          runner was stopped or cut off): cli_sup.status */
    CLI_SUP_STALLED,   /* no progress for stall_after_ms */
    CLI_SUP_LOST       /* the watchdog is gone: the command is being
                          ended without it, stop now */
};

typedef struct cli_sup {
    cli_proc watchdog;
    int ctl;                  /* orders to the watchdog (write end) */
    int news;                 /* the watchdog's reports (read end) */
    pid_t cmd_pid;
    int started, ended, lost, expired, frozen;
    int gone;                 /* the watchdog said the tree is gone */
    int closing;              /* stopped, the watchdog not yet awaited */
    int quit;                 /* 'Q' sent */
    int status;               /* the command's, once ended */
    char cgroup[520];         /* the tree's own cgroup v2; "": none */
    long long lease_ms, kill_after_ms, held_until_ms;
    long long stall_after_ms, progress_ms;
    long long kill_at_ms;     /* after cli_sup_signal: SIGKILL then; 0 */
    const char *progress_file;
    long long progress_mtime_ns, file_mtime_ns, file_size;
    char progress_path[256];
    char progress_env[300];
} cli_sup;

/* Start the watchdog and, under it, the command: cli_sup_arm, then
 * cli_sup_go. RB_OK, or an rb_code with err filled (nothing is left
 * running). */
int cli_sup_start(cli_sup *s, const cli_sup_opts *o, rb_error *err);

/* Start the watchdog, before the right is asked for (o's argv,
 * shell_cmd, stdout_fd, kill_after_ms, lease_ms, stall_after_ms and
 * progress_file count): it makes the command's cgroup and waits for the
 * go, so that once the right is held the command starts with one message
 * from the runner, the watchdog's fork and the cgroup already paid while
 * the right was awaited; the command is born sharing the watchdog's
 * memory until its exec (spawn.h), which costs no copy of it (the
 * watchdog is suspended meanwhile, even by an exec that hangs on a dead
 * file system: nothing of the command runs until then, and the deadline
 * is acted on once it is done). An armed
 * supervisor that never goes is ended by cli_sup_stop (or by the
 * runner's exit). RB_OK, or an rb_code with err filled. */
int cli_sup_arm(cli_sup *s, const cli_sup_opts *o, rb_error *err);

/* The right is held: start the command under the armed watchdog (o's
 * env and held_until_ms count). Sets RBARRIER_PROGRESS in its
 * environment (a file it may touch to show progress). RB_OK, or an
 * rb_code with err filled (the watchdog is gone then). */
int cli_sup_go(cli_sup *s, const cli_sup_opts *o, rb_error *err);

/* The right was confirmed: it holds until until_ms (cli_now_ms clock, the
 * send time of the acknowledged renewal plus the lease). */
void cli_sup_held(cli_sup *s, long long until_ms);

/* Readable when the watchdog has news (the command ended, or the watchdog
 * is gone): for a caller's wait set. */
int cli_sup_fd(const cli_sup *s);

/* What the command is doing now: one of CLI_SUP_*. Reads the watchdog's
 * news and the progress files; never blocks. */
int cli_sup_check(cli_sup *s);

/* Sleep until the command ends, timeout_ms passes (< 0: none), a
 * terminating signal arrives, or the next stall check is due; handles a
 * Ctrl-Z meanwhile. Returns cli_sup_check's answer. */
int cli_sup_wait(cli_sup *s, long long timeout_ms);

/* A terminal's stop signal (SIGTSTP, SIGTTIN, SIGTTOU) reached the
 * runner: freeze the command's tree, stop the runner as the signal asks,
 * and thaw the tree when the runner is continued. No-op without one. The
 * library's callers run it when their wait returns early. */
void cli_sup_job_control(cli_sup *s);

/* cli_now_ms time of the command's last progress. */
long long cli_sup_progress_ms(const cli_sup *s);

/* Begin a stop and return at once: sig (0: SIGTERM) to the whole tree
 * now (SIGCONT to its stopped processes), SIGKILL --kill-after later
 * (sent by cli_sup_check). For a runner that goes on renewing meanwhile,
 * so the command gets its whole grace; the watchdog's deadline still
 * holds. Once only. */
void cli_sup_signal(cli_sup *s, int sig);

/* Stop the whole tree: sig (0: SIGTERM; SIGCONT to its stopped
 * processes), SIGKILL after the grace (kill-after, cut short so the tree
 * is dead before the right can pass on), then what is left of the tree.
 * Returns the command's status; the watchdog is gone when it returns.
 * Safe to call twice. */
int cli_sup_stop(cli_sup *s, int sig);

/* cli_sup_stop in two: the tree is gone when cli_sup_stop_tree returns
 * (so the right may pass on), and the watchdog, which then removes the
 * cgroup and leaves, is awaited by cli_sup_close (a no-op unless a stop
 * came first): a lock is released between the two. */
int cli_sup_stop_tree(cli_sup *s, int sig);
void cli_sup_close(cli_sup *s);

/* "cgroup" or "subreaper": how the tree is held (for --verbose). */
const char *cli_sup_how(const cli_sup *s);

/* The watchdog's side (watchdog.c). */
typedef struct cli_watchdog_args {
    int ctl, news;            /* its ends */
    int ctl_peer, news_peer;  /* the runner's ends, closed in it */
    cli_proc_opts cmd;
    const char *progress_path;  /* removed when the tree is gone, also
                                   after a runner killed with -9 */
} cli_watchdog_args;

void cli_watchdog_main(void *arg);

/* The most the environment handed with a 'G' may hold, in bytes. */
#define CLI_SUP_ENV_MAX (1 << 20)

/* One order or report between runner and watchdog: written in one
 * write(2), so never torn. */
typedef struct cli_sup_msg {
    char op;
    long long a, b;
} cli_sup_msg;

/* Fill m, its padding zeroed: no stack bytes go down a pipe. */
void cli_sup_msg_set(cli_sup_msg *m, char op, long long a, long long b);
/* Send n in one write(2), so that their reader wakes once: 0, or -1 (its
 * reader is gone). cli_sup_send sends one. */
int cli_sup_send_all(int fd, const cli_sup_msg *m, size_t n);
int cli_sup_send(int fd, char op, long long a, long long b);

/* Orders: 'D' the right's kill point a and SIGTERM point b; 'G' (once
 * the right is held, after the first 'D') start the command, a = the
 * length of its environment, which follows ("NAME=value" strings with
 * their NULs), b = the right's kill point, after which it does not
 * start; 'S' send signal a to the tree (SIGCONT to the stopped); 'F'
 * freeze, 'T' thaw; 'Q' end what is left and exit. Reports: 'P' the
 * command's pid a, once born, cgroup b (1) or not, or -errno (-ETIMEDOUT:
 * the go came after its kill point); 'X' the command's status a, b = 1
 * when the deadline ended it; 'Z' the tree is frozen; 'E' the tree is
 * gone (with the 'X' when the command left nothing behind, else as the
 * watchdog leaves). */

#endif
