/* Starting child processes (the demo's workers, a lock's command): exec
 * errors reported back or turned into the shell's 126/127, children that
 * do not outlive whoever started them, and ending a child's group. */
#include "../lib/fmacros.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "demo.h"

/* In the child, before exec: only async-signal-safe calls and setenv (the
 * CLI is single-threaded, so no lock can be held by another thread). */
static void child_setup(const cli_spawn_opts *o, pid_t parent)
{
    struct sigaction sa;
    sigset_t none;
    int fd;

    /* The signals the parent routes to its self-pipe go back to their
     * defaults: the child has no such pipe. */
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = SIG_DFL;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    sigaction(SIGPIPE, &sa, NULL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    if (o->parent_death_signal) {
        prctl(PR_SET_PDEATHSIG, o->parent_death_signal);
        /* The parent may have died before prctl took effect. */
        if (getppid() != parent)
            _exit(127);
    }
    if (o->own_group)
        setpgid(0, 0);
    if (o->null_stdio && (fd = open("/dev/null", O_WRONLY)) >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO)
            close(fd);
    } else if (o->stdout_fd >= 0 && o->stdout_fd != STDOUT_FILENO) {
        dup2(o->stdout_fd, STDOUT_FILENO);
    }
    if (o->env_name)
        setenv(o->env_name, o->env_value, 1);
    if (o->env) {
        const char *const *e;

        for (e = o->env; *e; e++)
            putenv((char *)*e);
    }
}

int cli_pipe_cloexec(int fds[2])
{
    /* Single-threaded: no exec can slip in between pipe and fcntl. */
    if (pipe(fds) != 0)
        return -1;
    fcntl(fds[0], F_SETFD, FD_CLOEXEC);
    fcntl(fds[1], F_SETFD, FD_CLOEXEC);
    return 0;
}

pid_t cli_spawn(const char *const *argv, const cli_spawn_opts *opts)
{
    cli_spawn_opts none = CLI_SPAWN_OPTS_INIT;
    const cli_spawn_opts *o = opts ? opts : &none;
    int report[2], child_errno = 0;
    pid_t pid, parent = getpid();
    ssize_t got;

    if (cli_pipe_cloexec(report) != 0)
        return -1;
    pid = fork();
    if (pid < 0) {
        child_errno = errno;
        close(report[0]);
        close(report[1]);
        errno = child_errno;
        return -1;
    }
    if (pid == 0) {
        close(report[0]);
        child_setup(o, parent);
        execvp(argv[0], (char *const *)argv);
        child_errno = errno;
        if (o->exec_status) {
            char msg[512];
            int len = snprintf(msg, sizeof(msg), "rbarrier: cannot run "
                               "'%.200s': %s\n", argv[0],
                               strerror(child_errno));

            if (write(STDERR_FILENO, msg, (size_t)len) < 0) {
                /* the exit status says it anyway */
            }
            _exit(child_errno == ENOENT ? 127 : 126);
        }
        if (write(report[1], &child_errno, sizeof(child_errno)) < 0) {
            /* the parent sees EOF and a 127 exit instead */
        }
        _exit(127);
    }
    close(report[1]);
    do
        got = read(report[0], &child_errno, sizeof(child_errno));
    while (got < 0 && errno == EINTR);
    close(report[0]);
    if (got == (ssize_t)sizeof(child_errno)) {
        waitpid(pid, NULL, 0);
        errno = child_errno;
        return -1;
    }
    return pid;
}

static int status_code(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return 127;
}

static long long mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cli_spawn_wait(pid_t pid, long long timeout_ms, int *status)
{
    long long until = mono_ms() + timeout_ms;

    for (;;) {
        struct timespec ts = { 0, 10 * 1000000L };
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);

        if (r == pid) {
            *status = status_code(st);
            return 1;
        }
        if (r < 0 && errno != EINTR)
            return -1;
        if (cli_signal() || (timeout_ms >= 0 && mono_ms() >= until))
            return 0;
        /* A short sleep, not a SIGCHLD handler: that would race with the
         * signal pipe the library polls. */
        nanosleep(&ts, NULL);
    }
}

int cli_spawn_stop(pid_t pid, int sig, long long kill_after_ms)
{
    long long until = mono_ms() + kill_after_ms;
    int status = 0, ended = 0;

    if (kill(-pid, sig) != 0 && errno == ESRCH)
        kill(pid, sig);
    while (!ended && mono_ms() < until) {
        struct timespec ts = { 0, 10 * 1000000L };
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);

        if (r == pid) {
            status = status_code(st);
            ended = 1;
        } else if (r < 0 && errno != EINTR) {
            break;
        } else {
            nanosleep(&ts, NULL);
        }
    }
    /* The group may outlive its leader (a background grandchild): it goes
     * too, and at once, since its leader's time is up. */
    kill(-pid, SIGKILL);
    if (!ended) {
        int st = 0;
        pid_t r;

        while ((r = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
            ;
        status = r == pid ? status_code(st) : 128 + SIGKILL;
    }
    return status;
}
