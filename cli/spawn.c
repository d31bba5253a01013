/* Starting child processes for the demo: exec errors reported back, and
 * children that do not outlive whoever started them. */
#include "../lib/fmacros.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

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
