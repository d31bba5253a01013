/* The process runner (spawn.h). One list of running children; one reaper
 * (waitpid(-1) until nothing is left to collect, so one SIGCHLD standing
 * for many exits loses none, and orphans handed to rbarrier as PID 1 or as
 * subreaper are collected too); one way to stop a child: a signal, a
 * deadline on the monotonic clock, SIGKILL, reap. Waiting sleeps in
 * poll(2) on the SIGCHLD pipe and the cancel pipe: no polling loop. How
 * a child is born, and what it does until its exec, is birth.c's. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "birth.h"
#include "signals.h"
#include "spawn.h"

#define DEFAULT_KILL_AFTER_MS 10000LL
/* Members of a group that are not our children die unseen (their parent
 * reaps them): re-check the group at least this often meanwhile. */
#define GROUP_RECHECK_MS 100

static cli_proc *running;

static int wait_until(cli_proc *p, long long until, int watch_cancel);


static long long mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void track(cli_proc *p)
{
    p->next = running;
    running = p;
}

static void untrack(cli_proc *p)
{
    cli_proc **q;

    for (q = &running; *q; q = &(*q)->next)
        if (*q == p) {
            *q = p->next;
            break;
        }
    p->next = NULL;
}

static int status_code(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return 127;
}

/* "rbarrier: cannot run 'what': why", in one write: the line must not
 * interleave with other processes'. */
static void say_cannot_run(const char *what, int e)
{
    char msg[512];
    int len = snprintf(msg, sizeof(msg), "rbarrier: cannot run '%.200s': "
                       "%s\n", what, strerror(e));

    if (len > 0 && write(STDERR_FILENO, msg, (size_t)len) < 0) {
        /* nowhere left to say it */
    }
}

int cli_proc_start(cli_proc *p, const cli_proc_opts *o)
{
    int report[2] = { -1, -1 }, child_errno = 0;
    cli_birth b = { o, NULL, getpid(), -1 };
    pid_t pid;
    ssize_t got;

    cli_signals_init();
    if (cli_signals__watch_children() != 0)
        return -1;
    if (o->own_group && b.parent != 1)
        /* Orphaned grandchildren come back to us, so a group's leftovers
         * are reaped and their ends wake us. */
        prctl(PR_SET_CHILD_SUBREAPER, 1);
    if ((o->env || o->fn == NULL) && (b.envp = cli_birth__env(o->env)) == NULL)
        return -1;
    if (o->fn == NULL && cli_pipe_cloexec(report) != 0) {
        free(b.envp);
        return -1;
    }
    b.report = report[1];
    fflush(stdout);
    fflush(stderr);
    pid = cli_birth__start(&b);
    if (pid == 0) {
        /* A forked child. The parent's children, and its wake-up pipes,
         * are not ours: a child that runs code of ours (the watchdog, the
         * demo's guard) must not read its parent's SIGCHLD bytes, nor
         * write to its cancel pipe. */
        running = NULL;
        cli_signals__forget();
        cli_birth__child(&b);
    }
    child_errno = errno;
    free(b.envp);
    if (report[1] >= 0)
        close(report[1]);
    if (pid < 0) {
        if (report[0] >= 0)
            close(report[0]);
        errno = child_errno;
        return -1;
    }
    /* Both sides set the group, so a signal sent right after fork already
     * reaches it (EACCES once the child has exec'd is fine). */
    if (o->own_group)
        setpgid(pid, pid);
    p->pid = pid;
    p->status = 0;
    p->pgid = o->own_group ? pid : 0;
    p->kill_after_ms = o->kill_after_ms > 0 ? o->kill_after_ms
                                            : DEFAULT_KILL_AFTER_MS;
    track(p);
    if (report[0] < 0)
        return 0;
    /* Born sharing our memory, it has exec'd or failed by now; a forked
     * one is waited for until its exec. */
    do
        got = read(report[0], &child_errno, sizeof(child_errno));
    while (got < 0 && errno == EINTR);
    close(report[0]);
    if (got != (ssize_t)sizeof(child_errno))
        return 0;
    if (!o->exec_error_fails) {
        /* It exits 126 or 127, as sh does; its stderr is ours. */
        if (!o->null_stdio)
            say_cannot_run(o->shell_cmd ? "/bin/sh" : o->argv[0],
                           child_errno);
        return 0;
    }
    /* It failed exec and is exiting: collect it, whatever signal came
     * meanwhile. */
    wait_until(p, -1, 0);
    errno = child_errno;
    return -1;
}

void cli_reap(void)
{
    int st;
    pid_t pid;

    for (;;) {
        cli_proc *p;

        pid = waitpid(-1, &st, WNOHANG);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid <= 0)
            return;
        for (p = running; p; p = p->next)
            if (p->pid == pid)
                break;
        if (p) {
            p->status = status_code(st);
            p->pid = 0;
            untrack(p);
        }
        /* else a stranger (an orphan given to us): collected, forgotten */
    }
}

/* Sleep until woken by SIGCHLD, a cancel signal (when watched) or
 * until (monotonic ms; < 0: never), at most cap_ms (< 0: no cap). */
static void sleep_for_event(long long until, int watch_cancel, int cap_ms)
{
    struct pollfd fds[2];
    nfds_t n = 0;
    long long left = -1;

    fds[n].fd = cli_child_fd();
    fds[n++].events = POLLIN;
    if (watch_cancel && cli_signal_fd() >= 0) {
        fds[n].fd = cli_signal_fd();
        fds[n++].events = POLLIN;
    }
    if (until >= 0) {
        left = until - mono_ms();
        if (left < 0)
            left = 0;
    }
    if (cap_ms >= 0 && (left < 0 || left > cap_ms))
        left = cap_ms;
    if (poll(fds, n, (int)(left > 86400000LL ? 86400000LL : left)) > 0 &&
        (fds[0].revents & POLLIN))
        cli_signals__drain(cli_child_fd());
}

/* 1 when p ended by until (< 0: no limit), else 0. */
static int wait_until(cli_proc *p, long long until, int watch_cancel)
{
    for (;;) {
        cli_reap();
        if (p->pid <= 0)
            return 1;
        if (watch_cancel && cli_signal())
            return 0;
        if (until >= 0 && mono_ms() >= until)
            return 0;
        sleep_for_event(until, watch_cancel, -1);
    }
}

int cli_proc_wait(cli_proc *p, long long timeout_ms)
{
    return wait_until(p, timeout_ms < 0 ? -1 : mono_ms() + timeout_ms, 1);
}

int cli_proc_wait_for(cli_proc *p, long long timeout_ms)
{
    return wait_until(p, timeout_ms < 0 ? -1 : mono_ms() + timeout_ms, 0);
}

static void send_sig(pid_t pid, int group, int sig)
{
    if (pid > 0 && kill(group ? -pid : pid, sig) != 0 && errno != ESRCH) {
        /* EPERM: a member changed its credentials; nothing more we can do */
    }
}

void cli_proc_signal(cli_proc *p, int sig)
{
    if (p->pgid > 0)
        send_sig(p->pgid, 1, sig);
    else
        send_sig(p->pid, 0, sig);
}

static int group_alive(pid_t pgid)
{
    return pgid > 0 && (kill(-pgid, 0) == 0 || errno == EPERM);
}

/* Wait until the group has no member left, or until. 1: gone. */
static int group_gone_by(pid_t pgid, long long until)
{
    for (;;) {
        cli_reap();
        if (!group_alive(pgid))
            return 1;
        if (mono_ms() >= until)
            return 0;
        sleep_for_event(until, 0, GROUP_RECHECK_MS);
    }
}

int cli_proc_stop(cli_proc *p, int sig)
{
    long long until = mono_ms() + p->kill_after_ms;

    if (sig == 0)
        sig = SIGTERM;
    if (p->pid > 0) {
        cli_proc_signal(p, sig);
        /* A stopped process acts on nothing but SIGCONT, as timeout(1)
         * knows. */
        cli_proc_signal(p, SIGCONT);
        if (!wait_until(p, until, 0)) {
            cli_proc_signal(p, SIGKILL);
            wait_until(p, -1, 0);
        }
    }
    if (p->pgid > 0 && group_alive(p->pgid)) {
        /* What the command left behind in its group (`sleep 1000 &`) goes
         * with it: no process of a command outlives rbarrier. */
        send_sig(p->pgid, 1, sig);
        send_sig(p->pgid, 1, SIGCONT);
        if (!group_gone_by(p->pgid, until)) {
            send_sig(p->pgid, 1, SIGKILL);
            group_gone_by(p->pgid, mono_ms() + p->kill_after_ms);
        }
    }
    return p->status;
}
