/* A child's birth (birth.h): the parent's choice of how (sharing our
 * memory until its exec, or a fork), and the child's way to its exec,
 * which makes system calls only: a child born sharing our memory may not
 * allocate, nor write anything of ours, and we are suspended until its
 * exec. */
/* execvpe(3) and environ: a command's environment is made before its
 * birth, not put in place by the child. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/sched.h>

#include "birth.h"
#include "signals.h"

/* ---- the child's side: system calls only, then exec ---- */

/* execve and execvpe take non-const pointers they do not write through. */
static char *const *unconst_v(const char *const *v)
{
    union { const char *const *c; char *const *m; } u;

    u.c = v;
    return u.m;
}

void cli_birth__child(const cli_birth *b)
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

char **cli_birth__env(const char *const *add)
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
#if defined(SYS_clone3) && defined(CLONE_INTO_CGROUP)
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
    return clone3_usable();
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
    cli_birth__child(arg);
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

static pid_t birth_sharing_memory(cli_birth *b)
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
static pid_t birth_sharing_memory(cli_birth *b)
{
    (void)b;
    errno = ENOSYS;
    return -1;
}
#endif

pid_t cli_birth__start(cli_birth *b)
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
        if (pid == 0)
            return 0;   /* its mask comes back in cli_birth__child */
    }
    e = errno;
    sigprocmask(SIG_SETMASK, &old, NULL);
    errno = e;
    return pid;
}
