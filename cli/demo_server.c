/* The demo's private redis-server: a unix socket in a temporary directory,
 * no persistence, and a guard process that stops it and removes the
 * directory when the demo ends, however it ends (kill -9 included). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "config.h"
#include "demo.h"

#define SOCK_NAME "/redis.sock"
#define LOG_NAME "/redis.log"
/* sun_path holds 108 bytes with its NUL. */
#define SUN_PATH_MAX 107

static void remove_dir(const char *dir)
{
    char path[sizeof(((cli_demo_server *)0)->dir) + 16];

    snprintf(path, sizeof(path), "%s" SOCK_NAME, dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s" LOG_NAME, dir);
    unlink(path);
    rmdir(dir);
}

typedef struct guard_args {
    const char *dir;
    int ctl, report;
    int demo_ends[2];       /* the demo's ends of both pipes */
} guard_args;

/* The guard: starts the server as its own child, reports its pid (or the
 * exec error) on `report`, then waits for EOF on `ctl` (the demo closed
 * it, or died) and cleans up. It ignores the terminal's signals so a
 * Ctrl-C cannot leave the directory behind. Never returns. */
static void guard(void *arg)
{
    const guard_args *g = arg;
    const char *argv[16];
    char sock[sizeof(((cli_demo_server *)0)->dir) + 16];
    char logfile[sizeof(sock)];
    cli_proc_opts o = CLI_PROC_OPTS_INIT;
    cli_proc server = CLI_PROC_INIT;
    int msg[2] = { 0, 0 }, fd;
    char byte;

    /* Holding the demo's end of ctl, the guard would never see EOF. */
    close(g->demo_ends[0]);
    close(g->demo_ends[1]);
    /* A group of its own: a kill of the demo's process group (a terminal's
     * Ctrl-C, kill -9 -PGID) leaves the guard to clean up. */
    setpgid(0, 0);
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    if ((fd = open("/dev/null", O_RDWR)) >= 0) {
        dup2(fd, STDIN_FILENO);
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO)
            close(fd);
    }
    snprintf(sock, sizeof(sock), "%s" SOCK_NAME, g->dir);
    snprintf(logfile, sizeof(logfile), "%s" LOG_NAME, g->dir);
    argv[0] = "redis-server";
    argv[1] = "--port";       argv[2] = "0";
    argv[3] = "--unixsocket"; argv[4] = sock;
    argv[5] = "--save";       argv[6] = "";
    argv[7] = "--appendonly"; argv[8] = "no";
    argv[9] = "--dir";        argv[10] = g->dir;
    argv[11] = "--logfile";   argv[12] = logfile;
    argv[13] = NULL;
    o.argv = argv;
    /* If the guard itself is killed, the server goes with it. */
    o.parent_death_signal = SIGKILL;
    o.own_group = 1;
    o.null_stdio = 1;
    o.exec_error_fails = 1;
    if (cli_proc_start(&server, &o) == 0)
        msg[0] = (int)server.pid;
    else
        msg[1] = errno;
    if (write(g->report, msg, sizeof(msg)) < 0) {
        /* the demo sees EOF: it is gone or going; clean up below */
    }
    close(g->report);
    for (;;) {
        ssize_t r = read(g->ctl, &byte, 1);

        if (r == 0 || (r < 0 && errno != EINTR))
            break;
    }
    if (server.pid > 0)
        cli_proc_stop(&server, SIGTERM);
    remove_dir(g->dir);
    _exit(0);
}

int cli_demo_server_start(cli_demo_server *s, rb_error *err)
{
    const char *tmp = getenv("TMPDIR");
    int ctl[2], report[2], msg[2] = { -1, 0 }, started;
    size_t need;
    ssize_t got;
    int rc;

    /* The socket path must fit sun_path; a long $TMPDIR falls back to
     * /tmp rather than failing. */
    if (tmp == NULL || tmp[0] != '/' ||
        strlen(tmp) + sizeof("/rbarrier-demo.XXXXXX" SOCK_NAME) - 1 >
            SUN_PATH_MAX)
        tmp = "/tmp";
    snprintf(s->dir, sizeof(s->dir), "%s/rbarrier-demo.XXXXXX", tmp);
    if (mkdtemp(s->dir) == NULL) {
        snprintf(err->msg, sizeof(err->msg), "mkdtemp %.400s: %s", s->dir,
                 strerror(errno));
        s->dir[0] = '\0';
        return err->code = RB_EREDIS;
    }
    need = strlen(s->dir) + sizeof("unix://" SOCK_NAME);
    if ((s->url = malloc(need)) == NULL) {
        rmdir(s->dir);
        s->dir[0] = '\0';
        return err->code = RB_ENOMEM;
    }
    snprintf(s->url, need, "unix://%s" SOCK_NAME, s->dir);
    if (cli_pipe_cloexec(ctl) != 0 || cli_pipe_cloexec(report) != 0) {
        snprintf(err->msg, sizeof(err->msg), "pipe: %s", strerror(errno));
        cli_demo_server_stop(s);
        return err->code = RB_EREDIS;
    }
    {
        cli_proc_opts o = CLI_PROC_OPTS_INIT;
        guard_args g;

        g.dir = s->dir;
        g.ctl = ctl[0];
        g.report = report[1];
        o.fn = guard;
        o.arg = &g;
        g.demo_ends[0] = ctl[1];
        g.demo_ends[1] = report[0];
        started = cli_proc_start(&s->guard, &o);
    }
    close(ctl[0]);
    close(report[1]);
    s->guard_fd = ctl[1];
    if (started != 0) {
        close(report[0]);
        snprintf(err->msg, sizeof(err->msg), "fork: %s", strerror(errno));
        cli_demo_server_stop(s);
        return err->code = RB_EREDIS;
    }
    do
        got = read(report[0], msg, sizeof(msg));
    while (got < 0 && errno == EINTR);
    close(report[0]);
    if (got != (ssize_t)sizeof(msg) || msg[0] <= 0) {
        snprintf(err->msg, sizeof(err->msg),
                 "cannot start redis-server (%s): install redis-server, or "
                 "pass --url", strerror(got == (ssize_t)sizeof(msg) ? msg[1]
                                                                   : EIO));
        cli_demo_server_stop(s);
        return err->code = RB_EUNREACHABLE;
    }
    s->pid = (pid_t)msg[0];
    /* Wait for it to answer, as any client would: connect with retries. */
    rc = cli_config_probe(s->url, cli_now_ms() + 10000, err);
    if (rc != RB_OK)
        cli_demo_server_stop(s);
    return rc;
}

void cli_demo_server_stop(cli_demo_server *s)
{
    if (s->guard_fd >= 0) {
        close(s->guard_fd);
        s->guard_fd = -1;
    }
    if (s->guard.pid > 0) {
        /* The guard stops the server and removes the directory; it ignores
         * SIGTERM, so only a guard stuck past kill-after gets SIGKILL. */
        cli_proc_stop(&s->guard, SIGTERM);
    } else if (s->dir[0]) {
        remove_dir(s->dir);
    }
    s->dir[0] = '\0';
    s->pid = 0;
    free(s->url);
    s->url = NULL;
}
