/* The process runner (cli/spawn.c, cli/birth.c) on real processes, no
 * network: exit statuses as sh and timeout(1) give them, exec failures,
 * signals to the whole group, kill-after, ignored-at-start signals kept
 * ignored, the command's environment, and a start where a filter refuses
 * clone3. */
#include "fmacros.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#include <cmocka.h>

#include "spawn.h"

static long long now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int run_shell(const char *cmd)
{
    cli_proc_opts o = CLI_PROC_OPTS_INIT;
    cli_proc p = CLI_PROC_INIT;

    o.shell_cmd = cmd;
    o.own_group = 1;
    assert_int_equal(cli_proc_start(&p, &o), 0);
    assert_int_equal(cli_proc_wait(&p, 20000), 1);
    return cli_proc_stop(&p, 0);
}

static void test_spawn_statuses(void **state)
{
    (void)state;
    assert_int_equal(run_shell("exit 0"), 0);
    assert_int_equal(run_shell("exit 7"), 7);
    assert_int_equal(run_shell("exit 255"), 255);
    assert_int_equal(run_shell("kill -TERM $$"), 128 + SIGTERM);
    assert_int_equal(run_shell("kill -KILL $$"), 128 + SIGKILL);
    /* "--": a command string starting with '-' is no option of sh. */
    assert_int_equal(run_shell("-x"), 127);
}

static void test_spawn_exec_failures(void **state)
{
    char path[] = "/tmp/test_spawn.XXXXXX";
    const char *missing[] = { "/nonexistent/cmd", NULL };
    const char *notexec[] = { path, NULL };
    cli_proc_opts o = CLI_PROC_OPTS_INIT;
    cli_proc p = CLI_PROC_INIT;
    int fd;

    (void)state;
    /* A file without an execute bit (mkstemp makes it 0600). */
    fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    o.argv = missing;
    assert_int_equal(cli_proc_start(&p, &o), 0);
    assert_int_equal(cli_proc_wait(&p, 20000), 1);
    assert_int_equal(p.status, 127);
    o.argv = notexec;
    assert_int_equal(cli_proc_start(&p, &o), 0);
    assert_int_equal(cli_proc_wait(&p, 20000), 1);
    assert_int_equal(p.status, 126);
    unlink(path);
    /* exec_error_fails: the caller gets the errno instead. */
    o.argv = missing;
    o.exec_error_fails = 1;
    errno = 0;
    assert_int_equal(cli_proc_start(&p, &o), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(p.pid, 0);
}

static void test_spawn_wait_times_out(void **state)
{
    cli_proc_opts o = CLI_PROC_OPTS_INIT;
    cli_proc p = CLI_PROC_INIT;
    long long t0;

    (void)state;
    o.shell_cmd = "exec sleep 1000";
    o.own_group = 1;
    assert_int_equal(cli_proc_start(&p, &o), 0);
    t0 = now_ms();
    assert_int_equal(cli_proc_wait(&p, 200), 0);
    assert_true(now_ms() - t0 >= 190);
    assert_true(p.pid > 0);
    assert_int_equal(cli_proc_stop(&p, SIGTERM), 128 + SIGTERM);
    assert_int_equal(p.pid, 0);
}

/* A group that ignores SIGTERM (its leader and a background member) is
 * SIGKILLed kill_after_ms later, not before; nothing of it is left. */
static void test_spawn_kill_after_group(void **state)
{
    char path[] = "/tmp/test_spawn.XXXXXX", cmd[256];
    cli_proc_opts o = CLI_PROC_OPTS_INIT;
    cli_proc p = CLI_PROC_INIT;
    long long t0, el;
    FILE *f;
    long gc = 0;
    int fd;

    (void)state;
    fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    snprintf(cmd, sizeof(cmd), "trap '' TERM; sleep 1000 & echo $! > %s; "
             "wait", path);
    o.shell_cmd = cmd;
    o.own_group = 1;
    o.kill_after_ms = 600;
    assert_int_equal(cli_proc_start(&p, &o), 0);
    /* Await the grandchild's pid (the file is written once it runs). */
    for (t0 = now_ms(); now_ms() - t0 < 20000; ) {
        if ((f = fopen(path, "r")) != NULL) {
            int got = fscanf(f, "%ld", &gc);

            fclose(f);
            if (got == 1 && gc > 0)
                break;
        }
        cli_proc_wait(&p, 20);
    }
    assert_true(gc > 0);
    t0 = now_ms();
    assert_int_equal(cli_proc_stop(&p, SIGTERM), 128 + SIGKILL);
    el = now_ms() - t0;
    assert_true(el >= 550);
    assert_true(el < 15000);
    /* The grandchild was reaped by us (subreaper) or is gone. */
    assert_true(kill((pid_t)gc, 0) != 0 && errno == ESRCH);
    unlink(path);
}

/* What was ignored at start stays ignored for the commands too (nohup). */
static void test_spawn_ignored_signal_kept(void **state)
{
    (void)state;
    /* SIGHUP is bit 0 of the shell's SigIgn mask. */
    assert_int_equal(run_shell("case $(awk '/^SigIgn/ { print $2 }' "
                               "/proc/$$/status) in *[13579bdf]) exit 0;; "
                               "esac; exit 1"), 0);
}

/* The command's environment is ours with env's entries in place, as
 * putenv would leave it (the last of a name wins, "NAME" alone removes
 * it), made for the child alone: ours is as it was. */
static void test_spawn_environment(void **state)
{
    const char *env[] = { "RB_T_A=1", "RB_T_GONE", "RB_T_A=2", "RB_T_NEW=x",
                          NULL };
    cli_proc_opts o = CLI_PROC_OPTS_INIT;
    cli_proc p = CLI_PROC_INIT;

    (void)state;
    setenv("RB_T_GONE", "y", 1);
    unsetenv("RB_T_A");
    /* What the shell was given, not what it made of it. */
    o.shell_cmd = "[ \"$(tr '\\0' '\\n' < /proc/$$/environ | "
                  "grep -c '^RB_T_A=')\" = 1 ] && "
                  "[ \"$RB_T_A\" = 2 ] && [ -z \"${RB_T_GONE+x}\" ] && "
                  "[ \"$RB_T_NEW\" = x ] && [ -n \"$PATH\" ]";
    o.env = env;
    assert_int_equal(cli_proc_start(&p, &o), 0);
    assert_int_equal(cli_proc_wait(&p, 20000), 1);
    assert_int_equal(p.status, 0);
    assert_null(getenv("RB_T_A"));
    assert_string_equal(getenv("RB_T_GONE"), "y");
    unsetenv("RB_T_GONE");
}

/* Run as `test_spawn --clone3-refused ERRNO`: clone3 answers ERRNO (as a
 * container's seccomp profile makes it), and a command starts all the
 * same. A process of its own, since the runner asks once per process
 * whether clone3 may be used. Exits 0 when the command ran and ended 3,
 * 77 when no filter could be put in place. */
static int clone3_refused(int refusal)
{
#ifdef __NR_clone3
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned)refusal),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };
    cli_proc_opts o = CLI_PROC_OPTS_INIT;
    cli_proc p = CLI_PROC_INIT;

    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0 ||
        syscall(__NR_clone3, NULL, (size_t)0) != -1 || errno != refusal)
        return 77;
    cli_signals_init();
    o.shell_cmd = "exit 3";
    o.own_group = 1;
    if (cli_proc_start(&p, &o) != 0 || cli_proc_wait(&p, 20000) != 1)
        return 1;
    return p.status == 3 ? 0 : 1;
#else
    (void)refusal;
    return 0;
#endif
}

static void test_spawn_clone3_refused(void **state)
{
    int refusals[] = { ENOSYS, EPERM }, i, st;
    char arg[16], self[4096];
    ssize_t n;
    pid_t pid;

    (void)state;
    /* This program's own path, not /proc/self/exe in the child: under
     * valgrind that is valgrind's. */
    n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    assert_true(n > 0);
    self[n] = '\0';
    for (i = 0; i < 2; i++) {
        snprintf(arg, sizeof(arg), "%d", refusals[i]);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            execl(self, "test_spawn", "--clone3-refused", arg, (char *)NULL);
            _exit(2);
        }
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFEXITED(st));
        if (WEXITSTATUS(st) == 77)
            skip();
        assert_int_equal(WEXITSTATUS(st), 0);
    }
}

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spawn_statuses),
        cmocka_unit_test(test_spawn_exec_failures),
        cmocka_unit_test(test_spawn_wait_times_out),
        cmocka_unit_test(test_spawn_kill_after_group),
        cmocka_unit_test(test_spawn_ignored_signal_kept),
        cmocka_unit_test(test_spawn_environment),
        cmocka_unit_test(test_spawn_clone3_refused),
    };

    if (argc == 3 && strcmp(argv[1], "--clone3-refused") == 0)
        return clone3_refused(atoi(argv[2]));

    /* Ignored before the runner records the start state, as nohup does. */
    signal(SIGHUP, SIG_IGN);
    cli_signals_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
