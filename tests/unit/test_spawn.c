/* The process runner (cli/spawn.c) on real processes, no network: exit
 * statuses as sh and timeout(1) give them, exec failures, signals to the
 * whole group, kill-after, and ignored-at-start signals kept ignored. */
#include "fmacros.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spawn_statuses),
        cmocka_unit_test(test_spawn_exec_failures),
        cmocka_unit_test(test_spawn_wait_times_out),
        cmocka_unit_test(test_spawn_kill_after_group),
        cmocka_unit_test(test_spawn_ignored_signal_kept),
    };

    /* Ignored before the runner records the start state, as nohup does. */
    signal(SIGHUP, SIG_IGN);
    cli_signals_init();
    return cmocka_run_group_tests(tests, NULL, NULL);
}
