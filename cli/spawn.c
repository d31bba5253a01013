/* The process runner (spawn.h). One list of running children; one reaper
 * (waitpid(-1) until nothing is left to collect, so one SIGCHLD standing
 * for many exits loses none, and orphans handed to rbarrier as PID 1 or as
 * subreaper are collected too); one way to stop a child: a signal, a
 * deadline on the monotonic clock, SIGKILL, reap. Waiting sleeps in
 * poll(2) on the SIGCHLD pipe and the cancel pipe: no polling loop. */
/* execvpe(3) and environ: a command's environment is made before its
 * birth, not put in place by the child. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/sched.h>

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

/* ---- the child's side: system calls only, then exec ---- */

/* What a child needs from its birth to its exec, made before the birth:
 * a child born sharing our memory (birth_sharing_memory) may not allocate,
 * nor write anything of ours, and we are suspended until its exec. */
typedef struct birth {
    const cli_proc_opts *o;
    char **envp;        /* the environment it runs with; NULL: ours */
    pid_t parent;
    int report;         /* its exec's errno goes here (-1: fn children) */
} birth;

/* execve and execvpe take non-const pointers they do not write through. */
static char *const *unconst_v(const char *const *v)
{
    union { const char *const *c; char *const *m; } u;

    u.c = v;
    return u.m;
}

static void child_main(const birth *b)
{
    const cli_proc_opts *o = b->o;
    int fd, err;

    /* Our handlers go before the mask the birth blocked comes back: no
     * handler of ours may run here. */
    cli_signals__restore();
    if (o->parent_death_signal) {
        prctl(PR_SET_PDEATHSIG, o->parent_death_signal);
        /* The parent may have died before prctl took effect. (Compared
         * with its pid, not with 1: rbarrier may itself be PID 1.) */
        if (getppid() != b->parent)
            _exit(127);
    }
    if (o->own_group)
        setpgid(0, 0);
    if (o->join_cgroup) {
        /* Before exec, so every process the command makes is born in its
         * cgroup. */
        char path[600];
        size_t n = strlen(o->join_cgroup);

        if (n + sizeof("/cgroup.procs") <= sizeof(path)) {
            memcpy(path, o->join_cgroup, n);
            memcpy(path + n, "/cgroup.procs", sizeof("/cgroup.procs"));
            if ((fd = open(path, O_WRONLY)) >= 0) {
                if (write(fd, "0", 1) < 0) {
                    /* the watchdog's walk still finds it */
                }
                close(fd);
            }
        }
    }
    if (o->null_stdio && (fd = open("/dev/null", O_WRONLY)) >= 0) {
        dup2(fd, STDOUT_FILENO);
        dup2(fd, STDERR_FILENO);
        if (fd > STDERR_FILENO)
            close(fd);
    } else if (o->stdout_fd >= 0 && o->stdout_fd != STDOUT_FILENO) {
        dup2(o->stdout_fd, STDOUT_FILENO);
    }
    if (o->fn) {
        /* Forked, never born sharing our memory: this is its own. */
        if (b->envp)
            environ = b->envp;
        o->fn(o->arg);
        _exit(1);
    }
    if (o->shell_cmd) {
        /* "--": a command string starting with '-' is a command, never an
         * option to the shell. */
        const char *const sh[] = { "sh", "-c", "--", o->shell_cmd, NULL };

        execve("/bin/sh", unconst_v(sh), b->envp);
    } else {
        execvpe(o->argv[0], unconst_v(o->argv), b->envp);
    }
    err = errno;
    if (write(b->report, &err, sizeof(err)) < 0) {
        /* the parent sees EOF and the exit status */
    }
    _exit(err == ENOENT ? 127 : 126);
}

/* The environment a command runs with, made before its birth: ours, with
 * each "NAME=value" of add in place of ours of that name (putenv's rule:
 * the last of a name wins; a "NAME" alone removes it). NULL with errno. */
static size_t name_len(const char *entry)
{
    return strcspn(entry, "=");
}

static int named_among(const char *entry, const char *const *list,
                       size_t from, size_t to)
{
    size_t n = name_len(entry), i;

    for (i = from; i < to; i++)
        if (name_len(list[i]) == n && strncmp(entry, list[i], n) == 0)
            return 1;
    return 0;
}

static char **env_with(const char *const *add)
{
    size_t n, m, i, k = 0;
    char **env;

    for (n = 0; environ && environ[n]; n++)
        ;
    for (m = 0; add && add[m]; m++)
        ;
    if ((env = malloc((n + m + 1) * sizeof(*env))) == NULL)
        return NULL;
    for (i = 0; i < n; i++)
        if (!named_among(environ[i], add, 0, m))
            env[k++] = environ[i];
    for (i = 0; i < m; i++)
        if (add[i][name_len(add[i])] == '=' &&
            !named_among(add[i], add, i + 1, m))
            env[k++] = unconst_v(add)[i];
    env[k] = NULL;
    return env;
}

/* ---- the parent's side ---- */

/* Whether clone3 may be called here: a seccomp filter (a container's
 * profile, systemd's SystemCallFilter) refuses it with ENOSYS or EPERM,
 * and valgrind knows it not. Asked once: a clone3 the kernel takes fails
 * with EINVAL on empty arguments, before anything is made. */
static int clone3_usable(void)
{
#if defined(SYS_clone3)
    static int usable = -1;

    if (usable < 0) {
        int e = errno;

        usable = syscall(SYS_clone3, NULL, (size_t)0) < 0 && errno == EINVAL;
        errno = e;
    }
    return usable;
#else
    return 0;
#endif
}

int cli_proc_cgroup_births(void)
{
#if defined(CLONE_INTO_CGROUP)
    return clone3_usable();
#else
    return 0;
#endif
}

/* fork(), the child born in the cgroup of the open directory cgroup_fd
 * (clone3 with CLONE_INTO_CGROUP, Linux 5.7): a move into a cgroup takes
 * the kernel's cgroup lock for writing, which waits for an RCU grace
 * period (about 10 ms on the test VM when moves are apart); a birth there
 * takes it for reading. -1 with errno
 * ENOSYS, E2BIG or EINVAL: this kernel cannot; others: this cgroup will
 * not take the child. */
static pid_t fork_into_cgroup(int cgroup_fd)
{
#if defined(SYS_clone3) && defined(CLONE_INTO_CGROUP)
    struct clone_args a;

    if (!clone3_usable()) {
        errno = ENOSYS;
        return -1;
    }
    memset(&a, 0, sizeof(a));
    a.flags = CLONE_INTO_CGROUP;
    a.exit_signal = SIGCHLD;
    a.cgroup = (unsigned long long)cgroup_fd;
    return (pid_t)syscall(SYS_clone3, &a, sizeof(a));
#else
    (void)cgroup_fd;
    errno = ENOSYS;
    return -1;
#endif
}

/* A child that shares our memory until its exec, as posix_spawn makes
 * one (CLONE_VM | CLONE_VFORK): no copy of our address space is made for
 * an exec to throw away, which costs more than the rest of a start on a
 * machine slow to make processes (doc/PERFORMANCE.md). clone3, so that
 * it can be born in a cgroup too, on a stack of its own: nothing of ours
 * is written while we wait, suspended, for its exec. Only where the
 * trampoline below exists, and not under a sanitizer (its runtime knows
 * neither the stack nor a second process in our memory); elsewhere, and
 * where clone3 is refused (clone3_usable), fork(). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer) || __has_feature(hwaddress_sanitizer)
#define RB_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || \
    defined(__SANITIZE_HWADDRESS__)
#define RB_SANITIZED 1
#endif

#if defined(__x86_64__) && defined(SYS_clone3) && \
    defined(CLONE_INTO_CGROUP) && !defined(RB_SANITIZED)
/* The child starts on a->stack's top and calls fn(arg), never coming back
 * here (no frame of ours is on its stack). The child's pid, or -errno. */
static long clone3_calling(struct clone_args *a, int (*fn)(void *),
                           void *arg)
{
    long ret;
    register long r8 __asm__("r8") = (long)fn;
    register long r9 __asm__("r9") = (long)arg;

    /* syscall keeps every register but rax, rcx and r11: the child finds
     * fn and arg where we put them. */
    __asm__ __volatile__(
        "syscall\n\t"
        "testq %%rax, %%rax\n\t"
        "jnz 1f\n\t"
        "xorl %%ebp, %%ebp\n\t"
        "movq %%r9, %%rdi\n\t"
        "callq *%%r8\n\t"
        "movl %%eax, %%edi\n\t"
        "movl %[sys_exit], %%eax\n\t"
        "syscall\n\t"
        "hlt\n"
        "1:"
        : "=a"(ret)
        : "0"((long)SYS_clone3), "D"(a), "S"(sizeof(*a)), "r"(r8), "r"(r9),
          [sys_exit] "i"(SYS_exit)
        : "rcx", "r11", "memory", "cc");
    return ret;
}

static int child_entry(void *arg)
{
    child_main(arg);
    return 127;
}

/* What the child's stack must hold: its own frames, the dynamic linker's
 * on a first call through the PLT, execvpe's copy of a path (PATH's
 * length and the name's) and of argv for a script without "#!"; and a
 * guard page below, so that an overflow faults instead of writing into
 * another mapping of ours. */
static size_t birth_stack_size(const cli_proc_opts *o, size_t page)
{
    const char *path = getenv("PATH");
    size_t n = 64 * 1024, argc = 0;

    while (o->argv && o->argv[argc])
        argc++;
    n += (argc + 3) * sizeof(char *) + (path ? strlen(path) : 0) +
         (o->argv ? strlen(o->argv[0]) : 0);
    return (n + page - 1) / page * page + page;
}

static pid_t birth_sharing_memory(birth *b)
{
    struct clone_args a;
    size_t page = (size_t)sysconf(_SC_PAGESIZE),
           size = birth_stack_size(b->o, page);
    void *stack;
    long pid;

    if (!clone3_usable()) {
        errno = ENOSYS;
        return -1;
    }
    stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack == MAP_FAILED)
        return -1;
    if (mprotect(stack, page, PROT_NONE) != 0) {
        munmap(stack, size);
        return -1;
    }
    memset(&a, 0, sizeof(a));
    a.flags = CLONE_VM | CLONE_VFORK;
    a.exit_signal = SIGCHLD;
    a.stack = (unsigned long long)(uintptr_t)stack;
    a.stack_size = size;
    if (b->o->cgroup_fd >= 0) {
        a.flags |= CLONE_INTO_CGROUP;
        a.cgroup = (unsigned long long)b->o->cgroup_fd;
    }
    pid = clone3_calling(&a, child_entry, b);
    munmap(stack, size);
    if (pid < 0) {
        errno = (int)-pid;
        return -1;
    }
    return (pid_t)pid;
}
#else
static pid_t birth_sharing_memory(birth *b)
{
    (void)b;
    errno = ENOSYS;
    return -1;
}
#endif

/* The child's birth: sharing our memory where it only execs, else a fork.
 * Every signal is blocked across it, so no handler of ours runs in the
 * child before it has put back the dispositions it starts with. */
static pid_t birth_of(birth *b)
{
    sigset_t all, old;
    pid_t pid = -1;
    int e;

    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    if (b->o->fn == NULL)
        pid = birth_sharing_memory(b);
    if (b->o->fn != NULL || (pid < 0 && errno == ENOSYS)) {
        pid = b->o->cgroup_fd >= 0 ? fork_into_cgroup(b->o->cgroup_fd)
                                   : fork();
        if (pid == 0) {
            /* The parent's children, and its wake-up pipes, are not
             * ours: a child that runs code of ours (the demo's guard)
             * must not read its parent's SIGCHLD bytes, nor write to its
             * cancel pipe. */
            running = NULL;
            cli_signals__forget();
            child_main(b);
        }
    }
    e = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return pid;
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
    birth b = { o, NULL, getpid(), -1 };
    pid_t pid;
    ssize_t got;

    cli_signals_init();
    if (cli_signals__watch_children() != 0)
        return -1;
    if (o->own_group && b.parent != 1)
        /* Orphaned grandchildren come back to us, so a group's leftovers
         * are reaped and their ends wake us. */
        prctl(PR_SET_CHILD_SUBREAPER, 1);
    if ((o->env || o->fn == NULL) && (b.envp = env_with(o->env)) == NULL)
        return -1;
    if (o->fn == NULL && cli_pipe_cloexec(report) != 0) {
        free(b.envp);
        return -1;
    }
    b.report = report[1];
    fflush(stdout);
    fflush(stderr);
    pid = birth_of(&b);
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
