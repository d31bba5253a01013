/* Signals as data (spawn.h): handlers only record the signal and write a
 * byte to a pipe that a poll can wait on (the cancel pipe for SIGINT,
 * SIGTERM and SIGHUP, one for SIGCHLD, one for the terminal's stop
 * signals); the dispositions found at start are kept for the children. */
/* pipe2(2): a pipe's flags in the call that makes it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "signals.h"
#include "spawn.h"

/* The signals rbarrier takes as "stop now", and the others whose
 * disposition a child gets back as it was at start. */
static const int cancel_signals[] = { SIGINT, SIGTERM, SIGHUP };
static const int restored_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE,
                                        SIGQUIT, SIGUSR1, SIGUSR2, SIGTSTP,
                                        SIGTTIN, SIGTTOU };
/* A terminal's stop signals: while a supervised command runs, the runner
 * freezes the command's tree before it stops itself (supervise.c). */
static const int jobctl_signals[] = { SIGTSTP, SIGTTIN, SIGTTOU };
#define NSIG_RESTORED (sizeof(restored_signals) / sizeof(restored_signals[0]))

static int ignored_at_start[NSIG_RESTORED];
static sigset_t mask_at_start;
static int signals_saved;

static int cancel_pipe[2] = { -1, -1 };
static int chld_pipe[2] = { -1, -1 };
static int jobctl_pipe[2] = { -1, -1 };
static volatile sig_atomic_t caught_signal, caught_stop;
/* Counts SIGCONTs while a supervised command runs: a stop that a continue
 * already followed is not acted on, and a stop the kernel discarded (an
 * orphaned process group) is told apart from one that stopped us. */
static volatile sig_atomic_t conts, conts_at_stop;

static int was_ignored(int sig)
{
    size_t i;

    for (i = 0; i < NSIG_RESTORED; i++)
        if (restored_signals[i] == sig)
            return ignored_at_start[i];
    return 0;
}

void cli_signals_init(void)
{
    struct sigaction old;
    size_t i;

    if (signals_saved)
        return;
    signals_saved = 1;
    for (i = 0; i < NSIG_RESTORED; i++)
        ignored_at_start[i] =
            sigaction(restored_signals[i], NULL, &old) == 0 &&
            old.sa_handler == SIG_IGN;
    sigprocmask(SIG_SETMASK, NULL, &mask_at_start);
    /* A write to a closed pipe or socket must be an error we report (exit
     * 1, one line), not a silent death. */
    signal(SIGPIPE, SIG_IGN);
}

int cli_pipe_cloexec(int fds[2])
{
    return pipe2(fds, O_CLOEXEC);
}

/* One loop for both directions: out, write from buf; else read into it. */
static int io_all(int fd, char *at, size_t len, int out)
{
    while (len > 0) {
        ssize_t n = out ? write(fd, at, len) : read(fd, at, len);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        at += n;
        len -= (size_t)n;
    }
    return 0;
}

int cli_write_all(int fd, const void *buf, size_t len)
{
    /* io_all does not write through it when out is set. */
    union { const void *c; char *m; } u;

    u.c = buf;
    return io_all(fd, u.m, len, 1);
}

int cli_read_all(int fd, void *buf, size_t len)
{
    return io_all(fd, buf, len, 0);
}

static int nonblocking_pipe(int fds[2])
{
    return pipe2(fds, O_CLOEXEC | O_NONBLOCK);
}

/* Handlers only record and write one byte: the logic runs outside. */
static void on_cancel(int sig)
{
    int saved = errno;
    char byte = (char)sig;

    if (caught_signal == 0)
        caught_signal = sig;
    if (write(cancel_pipe[1], &byte, 1) < 0) {
        /* the pipe already holds a byte: enough */
    }
    errno = saved;
}

static void on_child(int sig)
{
    int saved = errno;
    char byte = (char)sig;

    if (write(chld_pipe[1], &byte, 1) < 0) {
        /* full: a wake-up is already pending */
    }
    errno = saved;
}

static void on_stop(int sig)
{
    int saved = errno;
    char byte = (char)sig;

    caught_stop = sig;
    conts_at_stop = conts;
    if (write(jobctl_pipe[1], &byte, 1) < 0) {
        /* a stop is already pending */
    }
    errno = saved;
}

/* The stop signals not ignored at start get handler (SIG_DFL: back to
 * stopping rbarrier). */
static void jobctl_dispositions(void (*handler)(int))
{
    struct sigaction sa;
    size_t i;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < sizeof(jobctl_signals) / sizeof(jobctl_signals[0]); i++)
        if (!was_ignored(jobctl_signals[i]))
            sigaction(jobctl_signals[i], &sa, NULL);
}

static void on_cont(int sig)
{
    (void)sig;
    conts++;
}

int cli_jobctl_install(void)
{
    struct sigaction sa;

    cli_signals_init();
    if (jobctl_pipe[0] < 0 && nonblocking_pipe(jobctl_pipe) != 0)
        return -1;
    jobctl_dispositions(on_stop);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_cont;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCONT, &sa, NULL);
    return 0;
}

void cli_jobctl_stop_self(int sig)
{
    sig_atomic_t before = conts;

    jobctl_dispositions(SIG_DFL);
    raise(sig);
    /* Not stopped: the kernel drops a terminal stop signal in a process
     * group that no shell controls (orphaned). The stop was asked for all
     * the same, and the command's tree is frozen: stop for good. */
    if (conts == before)
        raise(SIGSTOP);
    jobctl_dispositions(on_stop);
}

void cli_jobctl_default(void)
{
    jobctl_dispositions(SIG_DFL);
    signal(SIGCONT, SIG_DFL);
}

int cli_jobctl_fd(void)
{
    return jobctl_pipe[0];
}

int cli_jobctl_take(void)
{
    int sig = (int)caught_stop;

    /* A continue came after the stop and before we acted on it: the stop
     * is over already. */
    if (conts != conts_at_stop)
        sig = 0;
    caught_stop = 0;
    if (jobctl_pipe[0] >= 0)
        cli_signals__drain(jobctl_pipe[0]);
    return sig;
}

int cli_install_signals(void)
{
    struct sigaction sa;
    size_t i;

    cli_signals_init();
    if (cancel_pipe[0] >= 0)
        return 0;
    if (nonblocking_pipe(cancel_pipe) != 0)
        return -1;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_cancel;
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < sizeof(cancel_signals) / sizeof(cancel_signals[0]); i++)
        /* Started under nohup (or `trap '' INT`): the caller chose that
         * this signal must not stop us, as POSIX shells keep it. */
        if (!was_ignored(cancel_signals[i]))
            sigaction(cancel_signals[i], &sa, NULL);
    return 0;
}

int cli_signal(void)
{
    return (int)caught_signal;
}

int cli_signal_fd(void)
{
    return cancel_pipe[0];
}

void cli_signal_ack(void)
{
    if (cancel_pipe[0] >= 0)
        cli_signals__drain(cancel_pipe[0]);
}

int cli_signal_pending(void)
{
    struct pollfd p = { .fd = cancel_pipe[0], .events = POLLIN };

    return cancel_pipe[0] >= 0 && poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

int cli_child_fd(void)
{
    return chld_pipe[0];
}

/* SIGCHLD is taken only once rbarrier starts a child: before that no
 * process of ours can end, and the library's calls see no extra EINTR. */
int cli_signals__watch_children(void)
{
    struct sigaction sa;

    if (chld_pipe[0] >= 0)
        return 0;
    if (nonblocking_pipe(chld_pipe) != 0)
        return -1;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_child;
    sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&sa.sa_mask);
    /* Also when SIGCHLD was ignored at start: then the kernel would reap
     * by itself and no exit status would reach us. */
    return sigaction(SIGCHLD, &sa, NULL);
}

void cli_signals__restore(void)
{
    struct sigaction sa;
    size_t i;

    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    for (i = 0; i < NSIG_RESTORED; i++) {
        sa.sa_handler = ignored_at_start[i] ? SIG_IGN : SIG_DFL;
        sigaction(restored_signals[i], &sa, NULL);
    }
    /* And the others we catch: a child born sharing our memory must run
     * no handler of ours once its mask is back. (Every signal we catch,
     * here or in nproc.c, is reset above or here.) */
    sa.sa_handler = SIG_DFL;
    sigaction(SIGCHLD, &sa, NULL);
    sigaction(SIGCONT, &sa, NULL);
    sigprocmask(SIG_SETMASK, &mask_at_start, NULL);
}

void cli_signals__drain(int fd)
{
    char buf[64];

    while (read(fd, buf, sizeof(buf)) > 0)
        ;
}

void cli_signals__forget(void)
{
    int *pipes[3] = { chld_pipe, cancel_pipe, jobctl_pipe };
    size_t i;

    for (i = 0; i < 3; i++)
        if (pipes[i][0] >= 0) {
            close(pipes[i][0]);
            close(pipes[i][1]);
            pipes[i][0] = pipes[i][1] = -1;
        }
    caught_signal = caught_stop = 0;
}
