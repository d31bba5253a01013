/* The runner's side of the supervisor (supervise.h). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "proctree.h"
#include "supervise.h"

#define DEFAULT_KILL_AFTER_MS 10000LL
/* How long the runner waits for an orphaned tree to die (as the watchdog
 * waits: a process in an uninterruptible sleep dies when it wakes). */
#define ORPHANS_GONE_MS 5000LL
/* How often a stall is looked for while nothing else wakes us. */
#define STALL_CHECK_MS 250LL

/* The tree must be dead this long before the lease ends: the time for
 * SIGKILL to land and for the server's clock to run a little fast. */
static long long margin_ms(long long lease_ms)
{
    long long m = lease_ms / 10;

    return m < 20 ? 20 : m > 1000 ? 1000 : m;
}

void cli_sup_msg_set(cli_sup_msg *m, char op, long long a, long long b)
{
    memset(m, 0, sizeof(*m));
    m->op = op;
    m->a = a;
    m->b = b;
}

int cli_sup_send_all(int fd, const cli_sup_msg *m, size_t n)
{
    return cli_write_all(fd, m, n * sizeof(*m));
}

int cli_sup_send(int fd, char op, long long a, long long b)
{
    cli_sup_msg m;

    cli_sup_msg_set(&m, op, a, b);
    return cli_sup_send_all(fd, &m, 1);
}

static void order(cli_sup *s, char op, long long a, long long b)
{
    if (s->ctl >= 0 && cli_sup_send(s->ctl, op, a, b) != 0) {
        /* the watchdog is gone: its news pipe's EOF says so */
    }
}

/* Kill point and SIGTERM point for a right that holds until until_ms.
 * A right shorter than the lease (a lock's grant not yet confirmed, held
 * 2 s) gets the margin of its own length, not the lease's (a tenth of
 * 2 s, not up to a second), and SIGTERM no sooner than halfway to the
 * kill point: the renewal that extends it has that long to come back. */
static void deadline_points(const cli_sup *s, long long until_ms,
                            long long *kill_at, long long *term_at)
{
    long long grace = s->kill_after_ms < s->lease_ms / 4 ? s->kill_after_ms
                                                         : s->lease_ms / 4;
    long long now = cli_now_ms(),
              span = until_ms - now < s->lease_ms ? until_ms - now
                                                  : s->lease_ms;

    *kill_at = until_ms - margin_ms(span);
    *term_at = *kill_at - grace;
    if (*kill_at > now && *term_at < now + (*kill_at - now) / 2)
        *term_at = now + (*kill_at - now) / 2;
}

static long long mtime_ns(const char *path, long long *size)
{
    struct stat st;

    if (path == NULL || stat(path, &st) != 0)
        return -1;
    if (size)
        *size = (long long)st.st_size;
    return (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec;
}

static int make_progress_file(cli_sup *s)
{
    const char *dir = getenv("TMPDIR");
    int fd;

    if (dir == NULL || *dir == '\0')
        dir = "/tmp";
    if (snprintf(s->progress_path, sizeof(s->progress_path),
                 "%s/rbarrier-progress.XXXXXX", dir) >=
        (int)sizeof(s->progress_path))
        return -1;
    if ((fd = mkstemp(s->progress_path)) < 0) {
        s->progress_path[0] = '\0';
        return -1;
    }
    close(fd);
    snprintf(s->progress_env, sizeof(s->progress_env),
             "RBARRIER_PROGRESS=%s", s->progress_path);
    s->progress_mtime_ns = mtime_ns(s->progress_path, NULL);
    return 0;
}

/* The watchdog's first deadline ('D') and the go ('G') for a command
 * that may start until kill_at, with its environment after them: each
 * "NAME=value" with its NUL, ours (RBARRIER_PROGRESS) last; one buffer,
 * one write, one wake-up of the watchdog. NULL when it is too big to
 * hand on (CLI_SUP_ENV_MAX). */
static char *go_message(const cli_sup *s, const char *const *env,
                        long long kill_at, long long term_at, size_t *len)
{
    size_t n = strlen(s->progress_env) + 1, i;
    cli_sup_msg head[2];
    char *block, *at;

    for (i = 0; env && env[i]; i++)
        n += strlen(env[i]) + 1;
    if (n > CLI_SUP_ENV_MAX || (block = malloc(sizeof(head) + n)) == NULL)
        return NULL;
    /* The deadline first: the watchdog holds it before the command can
     * run. */
    cli_sup_msg_set(&head[0], 'D', kill_at, term_at);
    cli_sup_msg_set(&head[1], 'G', (long long)n, kill_at);
    memcpy(block, head, sizeof(head));
    at = block + sizeof(head);
    for (i = 0; env && env[i]; i++) {
        size_t one = strlen(env[i]) + 1;

        memcpy(at, env[i], one);
        at += one;
    }
    memcpy(at, s->progress_env, strlen(s->progress_env) + 1);
    *len = sizeof(head) + n;
    return block;
}

/* The watchdog's orders and its reports. */
static void close_pipes(int pipes[2][2])
{
    int i;

    for (i = 0; i < 2; i++)
        if (pipes[i][0] >= 0) {
            close(pipes[i][0]);
            close(pipes[i][1]);
        }
}

static int open_pipes(int pipes[2][2])
{
    int i;

    for (i = 0; i < 2; i++)
        pipes[i][0] = pipes[i][1] = -1;
    for (i = 0; i < 2; i++)
        if (cli_pipe_cloexec(pipes[i]) != 0) {
            int e = errno;

            close_pipes(pipes);
            errno = e;
            return -1;
        }
    return 0;
}

int cli_sup_arm(cli_sup *s, const cli_sup_opts *o, rb_error *err)
{
    cli_watchdog_args w;
    cli_proc_opts wo = CLI_PROC_OPTS_INIT;
    int pipes[2][2];

    memset(s, 0, sizeof(*s));
    s->ctl = s->news = -1;
    s->lease_ms = o->lease_ms > 0 ? o->lease_ms : 10000;
    s->kill_after_ms = o->kill_after_ms > 0 ? o->kill_after_ms
                                            : DEFAULT_KILL_AFTER_MS;
    s->stall_after_ms = o->stall_after_ms;
    s->progress_file = o->progress_file;
    if (make_progress_file(s) != 0)
        return cli_error(err, "cannot make the progress file in %s: %s",
                         getenv("TMPDIR") ? "$TMPDIR" : "/tmp",
                         strerror(errno));
    memset(&w, 0, sizeof(w));
    w.cmd = (cli_proc_opts)CLI_PROC_OPTS_INIT;
    w.cmd.argv = o->argv;
    w.cmd.shell_cmd = o->shell_cmd;
    w.cmd.stdout_fd = o->stdout_fd;
    w.cmd.kill_after_ms = s->kill_after_ms;
    w.progress_path = s->progress_path;
    if (open_pipes(pipes) != 0) {
        unlink(s->progress_path);
        return cli_error(err, "pipe: %s", strerror(errno));
    }
    w.ctl = pipes[0][0];
    w.ctl_peer = pipes[0][1];
    w.news = pipes[1][1];
    w.news_peer = pipes[1][0];
    wo.fn = cli_watchdog_main;
    wo.arg = &w;
    /* Should the watchdog die first, the command's orphans (those that
     * left its group: setsid, daemons) come to us, not to init, so that
     * we can still end them. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    cli_cgroup_warm();
    if (cli_proc_start(&s->watchdog, &wo) != 0) {
        int e = errno;

        close_pipes(pipes);
        unlink(s->progress_path);
        return cli_error(err, "cannot start the watchdog: %s", strerror(e));
    }
    close(w.ctl);
    close(w.news);
    s->ctl = w.ctl_peer;
    s->news = w.news_peer;
    fcntl(s->news, F_SETFL, O_NONBLOCK);
    s->started = 1;
    return RB_OK;
}

int cli_sup_go(cli_sup *s, const cli_sup_opts *o, rb_error *err)
{
    long long kill_at, term_at;
    struct pollfd pf;
    cli_sup_msg m;
    size_t len = 0;
    ssize_t got;
    char *block;
    int sent;

    if (!s->started || s->cmd_pid > 0)
        return cli_error(err, "the supervisor is not armed");
    /* A caller that holds no deadline yet gives one lease from now. */
    s->held_until_ms = o->held_until_ms > 0 ? o->held_until_ms
                                            : cli_now_ms() + s->lease_ms;
    /* A right that ran out while this runner was stopped (between its
     * call and now) may be another's already: the command never starts
     * (the watchdog checks again when it gets the order). */
    if (s->held_until_ms - margin_ms(s->lease_ms) <= cli_now_ms()) {
        cli_sup_stop(s, SIGKILL);
        return cli_error(err, "the lease ran out before the command "
                         "could start (was this runner stopped?)");
    }
    /* The wait for the right was no stall of the command's. */
    s->progress_mtime_ns = mtime_ns(s->progress_path, NULL);
    s->file_mtime_ns = mtime_ns(s->progress_file, &s->file_size);
    s->progress_ms = cli_now_ms();
    deadline_points(s, s->held_until_ms, &kill_at, &term_at);
    if ((block = go_message(s, o->env, kill_at, term_at, &len)) == NULL) {
        cli_sup_stop(s, SIGKILL);
        return cli_error(err, "the command's environment is too big");
    }
    sent = cli_write_all(s->ctl, block, len) == 0;
    free(block);
    /* The watchdog's first word, once the command is born: its pid, or
     * why it could not be. */
    pf.fd = s->news;
    pf.events = POLLIN;
    do {
        int ready = poll(&pf, 1, 10000);

        if (ready == 0)
            errno = ETIMEDOUT;   /* a silent watchdog: not retried */
        got = ready > 0 ? read(s->news, &m, sizeof(m)) : -1;
    } while (got < 0 && errno == EINTR);
    if (got == (ssize_t)sizeof(m) && m.op == 'P' && m.a == -ETIMEDOUT) {
        cli_sup_stop(s, SIGKILL);
        return cli_error(err, "the lease ran out before the command "
                         "could start (was this runner stopped?)");
    }
    if (got == (ssize_t)sizeof(m) && m.op == 'P' && m.a < 0) {
        cli_sup_stop(s, SIGKILL);
        return cli_error(err, "cannot start the command: %s",
                         strerror((int)-m.a));
    }
    if (got != (ssize_t)sizeof(m) || m.op != 'P' || m.a == 0 || !sent) {
        /* Its end. */
        cli_sup_stop(s, SIGKILL);
        return cli_error(err, "cannot start the command: its watchdog is "
                         "gone");
    }
    s->cmd_pid = (pid_t)m.a;
    if (m.b == 0 ||
        cli_cgroup_path_of(s->watchdog.pid, s->cgroup, sizeof(s->cgroup)) != 0)
        s->cgroup[0] = '\0';
    cli_jobctl_install();
    return RB_OK;
}

int cli_sup_start(cli_sup *s, const cli_sup_opts *o, rb_error *err)
{
    int rc = cli_sup_arm(s, o, err);

    return rc == RB_OK ? cli_sup_go(s, o, err) : rc;
}

const char *cli_sup_how(const cli_sup *s)
{
    return s->cgroup[0] ? "cgroup" : "subreaper";
}

void cli_sup_held(cli_sup *s, long long until_ms)
{
    long long kill_at, term_at;

    if (until_ms <= s->held_until_ms)
        return;
    s->held_until_ms = until_ms;
    deadline_points(s, until_ms, &kill_at, &term_at);
    order(s, 'D', kill_at, term_at);
}

int cli_sup_fd(const cli_sup *s)
{
    return s->news;
}

long long cli_sup_progress_ms(const cli_sup *s)
{
    return s->progress_ms;
}

static void read_news(cli_sup *s)
{
    cli_sup_msg m;
    ssize_t got;

    while (s->news >= 0) {
        got = read(s->news, &m, sizeof(m));
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            return;   /* EAGAIN: nothing more now */
        if (got != (ssize_t)sizeof(m)) {
            /* EOF: the watchdog is gone (killed, or done after 'Q'). */
            close(s->news);
            s->news = -1;
            if (!s->ended)
                s->lost = 1;
            return;
        }
        if (m.op == 'Z')
            s->frozen = 1;
        if (m.op == 'E')
            s->gone = 1;
        if (m.op == 'X' && !s->ended) {
            s->ended = 1;
            s->status = (int)m.a;
            s->expired = m.b != 0;
        }
    }
}

static void look_for_progress(cli_sup *s)
{
    long long t = mtime_ns(s->progress_path, NULL), size = 0, f;

    if (t >= 0 && t != s->progress_mtime_ns) {
        s->progress_mtime_ns = t;
        s->progress_ms = cli_now_ms();
    }
    if (s->progress_file &&
        (f = mtime_ns(s->progress_file, &size)) >= 0 &&
        (f != s->file_mtime_ns || size != s->file_size)) {
        s->file_mtime_ns = f;
        s->file_size = size;
        s->progress_ms = cli_now_ms();
    }
}

void cli_sup_signal(cli_sup *s, int sig)
{
    if (s->kill_at_ms || s->ended)
        return;
    s->kill_at_ms = cli_now_ms() + s->kill_after_ms;
    order(s, 'S', sig ? sig : SIGTERM, 0);
}

int cli_sup_check(cli_sup *s)
{
    read_news(s);
    if (s->ended)
        return s->expired ? CLI_SUP_EXPIRED : CLI_SUP_ENDED;
    if (s->kill_at_ms && cli_now_ms() >= s->kill_at_ms) {
        order(s, 'K', 0, 0);
        s->kill_at_ms = -1;   /* sent */
    }
    if (s->lost)
        return CLI_SUP_LOST;
    look_for_progress(s);
    if (s->stall_after_ms > 0 &&
        cli_now_ms() - s->progress_ms >= s->stall_after_ms)
        return CLI_SUP_STALLED;
    return CLI_SUP_RUNNING;
}

void cli_sup_job_control(cli_sup *s)
{
    int sig = cli_jobctl_take();

    if (sig == 0)
        return;
    /* The tree first, and stopped before we are: once we are stopped we
     * can give no order, and the shell's "Stopped" must be true. */
    s->frozen = 0;
    order(s, 'F', 0, 0);
    while (!s->frozen && !s->ended && s->news >= 0) {
        struct pollfd pf = { .fd = s->news, .events = POLLIN };

        if (poll(&pf, 1, 2000) <= 0)
            break;
        read_news(s);
    }
    fflush(stdout);
    fflush(stderr);
    cli_jobctl_stop_self(sig);
    /* Continued (fg, bg, SIGCONT). If the lease ran out meanwhile the
     * watchdog has ended the tree, and the next renewal says so. */
    order(s, 'T', 0, 0);
}

int cli_sup_wait(cli_sup *s, long long timeout_ms)
{
    long long until = timeout_ms < 0 ? -1 : cli_now_ms() + timeout_ms;
    int st;

    for (;;) {
        struct pollfd pf[3];
        long long now, left;
        nfds_t n = 0;

        if ((st = cli_sup_check(s)) != CLI_SUP_RUNNING ||
            cli_signal_pending())
            return st;
        now = cli_now_ms();
        if (until >= 0 && now >= until)
            return st;
        left = until < 0 ? -1 : until - now;
        if (s->stall_after_ms > 0 && (left < 0 || left > STALL_CHECK_MS))
            left = STALL_CHECK_MS;
        if (s->kill_at_ms > 0 && (left < 0 || left > s->kill_at_ms - now))
            left = s->kill_at_ms - now;
        pf[n].fd = s->news;
        pf[n++].events = POLLIN;
        pf[n].fd = cli_jobctl_fd();
        pf[n++].events = POLLIN;
        if (cli_signal_fd() >= 0) {
            pf[n].fd = cli_signal_fd();
            pf[n++].events = POLLIN;
        }
        if (poll(pf, n, left < 0 ? -1 : (int)left) > 0 &&
            (pf[1].revents & POLLIN))
            cli_sup_job_control(s);
        if (until >= 0 && cli_now_ms() >= until)
            return cli_sup_check(s);
    }
}

/* The watchdog died first (its leader with it): end the rest of the tree
 * ourselves. Its cgroup takes the whole tree; the group and what came to
 * us as a subreaper take it without one. */
static void end_orphans(cli_sup *s)
{
    long long until = cli_now_ms() + ORPHANS_GONE_MS;

    /* Once: the group's leader is not reaped yet, so its pgid is not
     * anyone else's. */
    kill(-s->cmd_pid, SIGKILL);
    for (;;) {
        size_t left;

        if (s->cgroup[0])
            cli_cgroup_write(s->cgroup, "cgroup.kill", "1");
        /* Below us are also children the runner had before it ran the
         * command (`sleep 9 & exec rbarrier ...`) and their orphans: only
         * those that carry this command's RBARRIER_PROGRESS are its. */
        left = cli_ptree_kill_marked(getpid(), s->progress_env);
        cli_reap();
        if (left == 0 &&
            (!s->cgroup[0] || cli_cgroup_remove(s->cgroup, 8) == 0))
            return;
        if (cli_now_ms() >= until)
            return;
        poll(NULL, 0, 10);
    }
}

int cli_sup_stop_tree(cli_sup *s, int sig)
{
    long long until, cap;

    if (!s->started)
        return s->status;
    if (sig == 0)
        sig = SIGTERM;
    /* The grace ends with the right's deadline: past it another holder
     * may run. A command never started gets none. */
    until = cli_now_ms() + (s->cmd_pid > 0 ? s->kill_after_ms : 0);
    if (s->held_until_ms > 0) {
        cap = s->held_until_ms - margin_ms(s->lease_ms);
        if (cap < until)
            until = cap;
    }
    read_news(s);
    if (s->cmd_pid > 0 && !s->ended && s->news >= 0) {
        order(s, 'S', sig, 0);
        while (!s->ended && s->news >= 0 && cli_now_ms() < until) {
            struct pollfd pf = { .fd = s->news, .events = POLLIN };
            long long left = until - cli_now_ms();

            poll(&pf, 1, left > 0 ? (int)left : 0);
            read_news(s);
        }
    }
    /* What is left goes now (SIGKILL past the grace): the command's
     * leftovers, escaped daemons included, get what remains of it. A
     * tree already gone needs no order yet: woken now, the watchdog would
     * take the CPU for its cleanup before the caller passes the right on
     * (cli_sup_close sends it). */
    if (!s->gone) {
        long long left = until - cli_now_ms();

        order(s, 'Q', sig, left > 0 ? left : 0);
        s->quit = 1;
    }
    /* Its word that the tree is gone ('E', before it removes the cgroup
     * and leaves), or its end. */
    while (!s->gone && s->news >= 0) {
        struct pollfd pf = { .fd = s->news, .events = POLLIN };

        poll(&pf, 1, -1);
        read_news(s);
    }
    /* Its end without that word (killed before or in its stop, or a tree
     * it could not end): what is left may still run, and comes to us. */
    if (!s->gone && s->cmd_pid > 0)
        end_orphans(s);
    if (!s->ended) {
        /* Never heard its end: the watchdog ended it with the tree. */
        s->ended = 1;
        s->status = 128 + SIGKILL;
    }
    cli_jobctl_default();
    cli_jobctl_take();
    s->started = 0;
    s->closing = 1;
    return s->status;
}

void cli_sup_close(cli_sup *s)
{
    if (!s->closing)
        return;
    s->closing = 0;
    if (!s->quit)
        order(s, 'Q', SIGKILL, 0);
    if (s->ctl >= 0) {
        close(s->ctl);
        s->ctl = -1;
    }
    cli_proc_wait_for(&s->watchdog, -1);
    if (s->news >= 0) {
        close(s->news);
        s->news = -1;
    }
    if (s->progress_path[0]) {
        unlink(s->progress_path);
        s->progress_path[0] = '\0';
    }
}

int cli_sup_stop(cli_sup *s, int sig)
{
    int status = cli_sup_stop_tree(s, sig);

    cli_sup_close(s);
    return status;
}
