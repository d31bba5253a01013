/* The watchdog (supervise.h): the command's parent, a subreaper in a
 * process group of its own, holding the right's deadline outside the
 * runner. It speaks no Redis: it only counts time, signals and reaps, so
 * nothing the runner suffers (SIGSTOP, a partition, a kill -9) can delay
 * it. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "proctree.h"
#include "supervise.h"

/* After the runner died: SIGTERM, then SIGKILL this much later, so the
 * whole tree is gone within a second of the runner. */
#define RUNNER_GONE_GRACE_MS 500
/* Members of the tree that are not yet our children die unseen: look
 * again at least this often while waiting for the tree to empty. */
#define RECHECK_MS 50
#define NO_DEADLINE LLONG_MAX

/* SIGPIPE too: a report to a runner that died must not end us before
 * the tree does. */
static const int deaf_to[] = { SIGTSTP, SIGTTIN, SIGTTOU, SIGINT, SIGTERM,
                               SIGHUP, SIGQUIT, SIGPIPE };

typedef struct tree {
    char cgroup[512];   /* "" : no cgroup, the subreaper walk only */
    int frozen;
    int join;           /* the command joins the cgroup, not born there */
    int said_gone;      /* the runner has its 'E' (nothing can come back) */
    int cgroup_fd;      /* the cgroup, open for the command's birth; -1 */
} tree;

/* A cgroup of the command's own, unless RBARRIER_SUPERVISE=subreaper
 * asks for the walk alone; =join has the command join it before its
 * exec, as where the kernel cannot start a process in a cgroup (before
 * Linux 5.7, or clone3 refused by a seccomp filter), so tests reach that
 * path too. */
static void cgroup_make(tree *t)
{
    const char *force = getenv("RBARRIER_SUPERVISE");

    t->cgroup[0] = '\0';
    t->cgroup_fd = -1;
    if (force && strcmp(force, "subreaper") == 0)
        return;
    t->join = force && strcmp(force, "join") == 0;
    cli_cgroup_make(t->cgroup, sizeof(t->cgroup));
}

/* How the command will enter the tree's cgroup, settled while the right
 * is awaited: born there (clone3 with CLONE_INTO_CGROUP), which costs
 * the cgroup's creation alone. A move into a cgroup waits for an RCU
 * grace period (birth.c): the three moves a start used to make (ours in
 * and back, as a proof, and the command's) cost a `lock -- true` up to
 * 15 ms when commands came apart. Where the kernel cannot start a process
 * in a cgroup, or a filter refuses clone3, the command moves before its
 * exec, once we have proved (moving ourselves) that it may; where the
 * cgroup takes no process, the command runs without one, under the
 * walk. */
static void cgroup_settle(cli_watchdog_args *w, tree *t)
{
    if (t->cgroup[0] == '\0')
        return;
    if (!t->join && cli_proc_cgroup_births() &&
        (t->cgroup_fd = open(t->cgroup, O_RDONLY | O_DIRECTORY |
                                        O_CLOEXEC)) >= 0)
        return;
    if (cli_cgroup_prove(t->cgroup) == 0) {
        w->cmd.join_cgroup = t->cgroup;
    } else {
        rmdir(t->cgroup);
        t->cgroup[0] = '\0';
    }
}

/* Start the command as settled, once the go came (by kill_at). A kernel
 * of 5.3 to 5.6 refuses the birth in a cgroup only now: then the settling
 * moves come after the go, and the kill point is looked at again after
 * them (ETIMEDOUT: it passed meanwhile). */
static int start_cmd(cli_watchdog_args *w, tree *t, cli_proc *cmd,
                     long long kill_at)
{
    int rc, e;

    if (t->cgroup_fd < 0)
        return cli_proc_start(cmd, &w->cmd);
    w->cmd.cgroup_fd = t->cgroup_fd;
    rc = cli_proc_start(cmd, &w->cmd);
    e = errno;
    w->cmd.cgroup_fd = -1;
    close(t->cgroup_fd);
    t->cgroup_fd = -1;
    if (rc == 0)
        return 0;
    if (e != E2BIG && e != EINVAL && e != ENOSYS) {
        rmdir(t->cgroup);
        t->cgroup[0] = '\0';
    } else {
        t->join = 1;
        cgroup_settle(w, t);
    }
    if (cli_now_ms() >= kill_at) {
        errno = ETIMEDOUT;
        return -1;
    }
    return cli_proc_start(cmd, &w->cmd);
}

/* ---- the tree ---- */

/* Freeze or thaw the tree; a freeze is awaited no later than by
 * (the right's kill point: the deadline is never put off for it). */
static void tree_freeze(tree *t, int on, long long by)
{
    if (t->frozen == on)
        return;
    t->frozen = on;
    if (t->cgroup[0] &&
        cli_cgroup_write(t->cgroup, "cgroup.freeze", on ? "1" : "0") == 0) {
        /* The kernel freezes asynchronously: the runner is told "frozen"
         * only once nothing of the tree runs (bounded: a process in an
         * uninterruptible sleep freezes when it wakes). */
        long long until = cli_now_ms() + 1000;

        if (until > by)
            until = by;

        while (on && !cli_cgroup_frozen(t->cgroup) && cli_now_ms() < until) {
            struct timespec ts = { 0, 5 * 1000000L };

            nanosleep(&ts, NULL);
        }
        return;
    }
    cli_ptree_signal(NULL, on ? SIGSTOP : SIGCONT, 0);
}

static void tree_kill(tree *t)
{
    /* cgroup.kill takes a forking tree at once; the walk is the fallback
     * and costs nothing when the cgroup already did it. A frozen tree
     * dies too: SIGKILL needs no thaw. */
    if (t->cgroup[0])
        cli_cgroup_write(t->cgroup, "cgroup.kill", "1");
    cli_ptree_signal(NULL, SIGKILL, 0);
}

/* Ask the tree to end with sig. What we froze thaws first; a process
 * stopped by someone else acts on sig only once continued, so it gets
 * SIGCONT, but only it: a SIGCONT to a running process would discard a
 * SIGSTOP on its way (a debugger's or a sanitizer's attach) and leave its
 * tracer waiting for a stop that never comes. */
static void tree_ask_to_end(tree *t, int sig, long long kill_at)
{
    tree_freeze(t, 0, kill_at);
    cli_ptree_signal(t->cgroup, sig, 1);
}

/* Reap; 1 when we have no child left (the whole tree is gone). */
static int tree_empty(void)
{
    int st;
    pid_t r;

    cli_reap();
    r = waitpid(-1, &st, WNOHANG);
    if (r > 0)
        return 0;   /* a stranger, now collected: look again */
    return r < 0 && errno == ECHILD;
}

/* Wait until the tree is gone or until; with kill, SIGKILL whatever the
 * last look did not see (a child forked between the walk of /proc and
 * its parent's death) at each look. */
static int tree_gone_by(tree *t, long long until, int kill)
{
    while (!tree_empty()) {
        long long left = until - cli_now_ms();
        struct pollfd pf = { .fd = cli_child_fd(), .events = POLLIN };
        char buf[64];

        if (left <= 0)
            return 0;
        if (kill)
            tree_kill(t);
        if (poll(&pf, 1, left < RECHECK_MS ? (int)left : RECHECK_MS) > 0)
            while (read(pf.fd, buf, sizeof(buf)) > 0)
                ;
    }
    return 1;
}

static void report_all(int fd, const cli_sup_msg *m, size_t n)
{
    if (cli_sup_send_all(fd, m, n) != 0) {
        /* the runner is gone: its pipe's EOF tells us too */
    }
}

static void report(int fd, char op, long long a, long long b)
{
    cli_sup_msg m;

    cli_sup_msg_set(&m, op, a, b);
    report_all(fd, &m, 1);
}

/* End what is left: sig first with grace_ms to act on it (never past
 * kill_at, the right's kill point), then SIGKILL, then leave. */
static void finish(const cli_watchdog_args *w, tree *t, int sig,
                   long long grace_ms, long long kill_at)
{
    long long until = cli_now_ms() + grace_ms;
    int gone = 1;

    if (until > kill_at)
        until = kill_at;
    if (!tree_empty()) {
        tree_ask_to_end(t, sig, kill_at);
        if (!tree_gone_by(t, until, 0)) {
            tree_kill(t);
            /* Bounded: a process stuck in the kernel (D state) may take
             * its time to die, but we do not wait for ever. */
            gone = tree_gone_by(t, cli_now_ms() + 5000, 1);
        }
    }
    /* The right may pass on now; the cleanup is ours alone. Not said of
     * a tree that outlived our wait: the runner takes up what is left. */
    if (gone && !t->said_gone)
        report(w->news, 'E', 0, 0);
    if (t->cgroup[0])
        cli_cgroup_remove(t->cgroup, 8);
    if (w->progress_path && w->progress_path[0])
        unlink(w->progress_path);
    _exit(0);
}


/* The right's points: SIGTERM to the tree, then SIGKILL (the runner's
 * 'D'). */
typedef struct deadline {
    long long term_at, kill_at;
} deadline;

/* The command's environment, from the go: "NAME=value" strings, each
 * with its NUL, in block. */
typedef struct go {
    long long kill_at;   /* the right's kill point: no start after it */
    char *block;
    const char **env;    /* NULL-terminated, into block */
} go;

/* Before the right is held: wait for the runner's go ('G', after its
 * first 'D'), taking its orders as they come. The go carries the right's
 * kill point (b) and the length of the command's environment (a), which
 * follows. Only then is the command born: it shares our memory until its
 * exec, so it cannot wait anywhere itself. The runner's giving up ('Q')
 * or death (EOF) before that leaves nothing to end. */
static void wait_for_go(cli_watchdog_args *w, tree *t, deadline *d, go *g)
{
    cli_sup_msg m;
    size_t n, i, at;

    for (;;) {
        if (cli_read_all(w->ctl, &m, sizeof(m)) != 0 || m.op == 'Q')
            finish(w, t, SIGKILL, 0, d->kill_at);
        if (m.op == 'G')
            break;
        if (m.op == 'D') {
            d->kill_at = m.a;
            d->term_at = m.b;
        }
        /* other orders need a command */
    }
    if (m.a < 0 || m.a > CLI_SUP_ENV_MAX)
        finish(w, t, SIGKILL, 0, d->kill_at);
    n = (size_t)m.a;
    g->kill_at = m.b;
    if ((g->block = malloc(n + 1)) == NULL ||
        cli_read_all(w->ctl, g->block, n) != 0)
        finish(w, t, SIGKILL, 0, d->kill_at);
    g->block[n] = '\0';
    for (i = 0, at = 0; at < n; at += strlen(g->block + at) + 1)
        i++;
    if ((g->env = calloc(i + 1, sizeof(*g->env))) == NULL)
        finish(w, t, SIGKILL, 0, d->kill_at);
    for (i = 0, at = 0; at < n; at += strlen(g->block + at) + 1)
        g->env[i++] = g->block + at;
}

/* Carry out every order the runner has sent so far; 1 with its 'Q' in
 * quit when it asked us to end (carried out by the caller once the
 * command's end, if it came meanwhile, is told). Its end (kill -9, a
 * crash) means nobody holds the right any more. */
static int take_orders(cli_watchdog_args *w, tree *t, deadline *d,
                       cli_sup_msg *quit)
{
    cli_sup_msg m;
    ssize_t got;

    for (;;) {
        do
            got = read(w->ctl, &m, sizeof(m));
        while (got < 0 && errno == EINTR);
        if (got < 0 && errno == EAGAIN)
            return 0;
        if (got != (ssize_t)sizeof(m))
            finish(w, t, SIGTERM, RUNNER_GONE_GRACE_MS, d->kill_at);
        switch (m.op) {
        case 'D':
            d->kill_at = m.a;
            d->term_at = m.b;
            break;
        case 'S':
            tree_ask_to_end(t, (int)m.a, d->kill_at);
            break;
        case 'K':
            tree_kill(t);
            break;
        case 'F':
            tree_freeze(t, 1, d->kill_at);
            report(w->news, 'Z', 0, 0);
            break;
        case 'T':
            tree_freeze(t, 0, d->kill_at);
            break;
        case 'Q':
            *quit = m;
            return 1;
        default:
            break;
        }
    }
}

void cli_watchdog_main(void *arg)
{
    cli_watchdog_args *w = arg;
    cli_proc cmd = CLI_PROC_INIT;
    /* No deadline before the runner's first 'D', which comes before its
     * 'G': till then there is no command. */
    deadline d = { NO_DEADLINE, NO_DEADLINE };
    int termed = 0, killed = 0, said_exit = 0;
    tree t;
    go g;
    size_t i;

    close(w->ctl_peer);
    close(w->news_peer);
    /* In top and ps -o comm an operator tells us from our runner. */
    prctl(PR_SET_NAME, "rbarrier-wd");
    setpgid(0, 0);
    for (i = 0; i < sizeof(deaf_to) / sizeof(deaf_to[0]); i++)
        signal(deaf_to[i], SIG_IGN);
    memset(&t, 0, sizeof(t));
    cgroup_make(&t);
    cgroup_settle(w, &t);
    wait_for_go(w, &t, &d, &g);
    /* The right's kill point passed before the go came (the runner was
     * stopped between its check and its write): the command never
     * starts. */
    if (cli_now_ms() >= g.kill_at) {
        report(w->news, 'P', -ETIMEDOUT, 0);
        finish(w, &t, SIGKILL, 0, 0);
    }
    /* If we die (kill -9 of the watchdog alone) the command's leader goes
     * with us; the runner ends the rest of its group. */
    w->cmd.parent_death_signal = SIGKILL;
    w->cmd.own_group = 1;
    w->cmd.env = g.env;
    if (start_cmd(w, &t, &cmd, g.kill_at) != 0) {
        report(w->news, 'P', -errno, 0);
        finish(w, &t, SIGKILL, 0, 0);
    }
    w->cmd.env = NULL;
    free(g.env);
    free(g.block);
    report(w->news, 'P', cmd.pid, t.cgroup[0] != '\0');
    fcntl(w->ctl, F_SETFL, O_NONBLOCK);
    for (;;) {
        struct pollfd pf[2];
        long long now, wake = -1;
        cli_sup_msg quit;
        /* Orders first: a 'D' sent before the command's 'G' is known
         * before its end is told. */
        int quitting = take_orders(w, &t, &d, &quit);

        cli_reap();
        now = cli_now_ms();
        if (!said_exit && cmd.pid == 0) {
            /* Past the kill point it ended as we would have ended it. */
            cli_sup_msg said[2];
            size_t n = 0;

            cli_sup_msg_set(&said[n++], 'X', cmd.status,
                            termed || killed || now >= d.kill_at);
            /* Nothing of the tree left (every orphan comes to us): the
             * right may pass on now, not after the runner's 'Q' and our
             * cleanup. A lock hand-off waits for this word, sent with the
             * end so that the runner wakes once. */
            t.said_gone = tree_empty();
            if (t.said_gone)
                cli_sup_msg_set(&said[n++], 'E', 0, 0);
            report_all(w->news, said, n);
            said_exit = 1;
        }
        if (quitting)
            finish(w, &t, (int)quit.a, quit.b, d.kill_at);
        /* The runner has not confirmed the right: the tree must be dead
         * before it can pass on, whatever --kill-after says. */
        if (!termed && now >= d.term_at) {
            tree_ask_to_end(&t, SIGTERM, d.kill_at);
            termed = 1;
        }
        if (!killed && now >= d.kill_at) {
            tree_kill(&t);
            killed = 1;
        }
        if (!termed)
            wake = d.term_at;
        else if (!killed)
            wake = d.kill_at;
        if (wake == NO_DEADLINE)
            wake = -1;
        if (killed && !tree_empty()) {
            /* What the last walk missed (forked meanwhile) dies too. */
            tree_kill(&t);
            wake = now + RECHECK_MS;
        }
        pf[0].fd = w->ctl;
        pf[0].events = POLLIN;
        pf[1].fd = cli_child_fd();
        pf[1].events = POLLIN;
        if (poll(pf, 2, wake < 0 ? -1 : (int)(wake > now ? wake - now : 0))
            > 0 && (pf[1].revents & POLLIN)) {
            char buf[64];

            while (read(pf[1].fd, buf, sizeof(buf)) > 0)
                ;
        }
    }
}
