/*
 * rbarrier demo: the seed's launcher. N worker processes run the loop of
 * `rbarrier worker` against one Redis; the demo reads every line they
 * print and checks the property the seed's own output broke: the global
 * values are exactly 1..N*I, each once, and local values are N*iteration.
 *
 * Without --url or $RBARRIER_URL it runs a private redis-server on a unix
 * socket in a temporary directory, and stops it however the demo ends.
 */
#include "../lib/fmacros.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../lib/rb_support.h" /* rb_now_ms, rb_random_hex */
#include "cli.h"

static const char description[] =
    "Run the shared-counters experiment: N workers x I iterations of barrier,\n"
    "sync, barrier, train, each printing its local and global value, then a\n"
    "check line. Without --url (or $RBARRIER_URL) a private redis-server is\n"
    "started on a unix socket in a temporary directory and stopped after.\n"
    "Each run uses fresh names, so no reset is needed between runs.";

typedef struct private_server {
    pid_t pid;
    char dir[64];
    char sock[128];
} private_server;

/* exec argv with stdout to out_fd (-1: inherit); returns the pid, or -1
 * with errno set from the child's failed exec. */
static pid_t spawn(const char *const *argv, int out_fd, int null_out)
{
    int report[2], child_errno = 0;
    pid_t pid;
    ssize_t got;

    if (pipe(report) != 0)
        return -1;
    fcntl(report[1], F_SETFD, FD_CLOEXEC);
    pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        close(report[0]);
        if (null_out) {
            int fd = open("/dev/null", O_WRONLY);

            if (fd >= 0) {
                dup2(fd, STDOUT_FILENO);
                close(fd);
            }
        } else if (out_fd >= 0) {
            dup2(out_fd, STDOUT_FILENO);
        }
        execvp(argv[0], (char *const *)argv);
        child_errno = errno;
        if (write(report[1], &child_errno, sizeof(child_errno)) < 0) {
            /* the parent sees EOF and a 127 exit instead */
        }
        _exit(127);
    }
    close(report[1]);
    got = read(report[0], &child_errno, sizeof(child_errno));
    close(report[0]);
    if (got == (ssize_t)sizeof(child_errno)) {
        waitpid(pid, NULL, 0);
        errno = child_errno;
        return -1;
    }
    return pid;
}

static void stop_server(private_server *s)
{
    char path[192];

    if (s->pid > 0) {
        kill(s->pid, SIGTERM);
        waitpid(s->pid, NULL, 0);
        s->pid = 0;
    }
    if (s->dir[0]) {
        snprintf(path, sizeof(path), "%s/redis.sock", s->dir);
        unlink(path);
        snprintf(path, sizeof(path), "%s/redis.log", s->dir);
        unlink(path);
        rmdir(s->dir);
        s->dir[0] = '\0';
    }
}

static int start_server(private_server *s, rb_url *url, rb_error *err)
{
    const char *tmp = getenv("TMPDIR");
    char logfile[192];
    const char *argv[16];
    rb_conn *conn = NULL;
    int rc;

    snprintf(s->dir, sizeof(s->dir), "%s/rbarrier-demo.XXXXXX",
             tmp && strlen(tmp) < 32 ? tmp : "/tmp");
    if (mkdtemp(s->dir) == NULL) {
        snprintf(err->msg, sizeof(err->msg), "mkdtemp %s: %s", s->dir,
                 strerror(errno));
        s->dir[0] = '\0';
        return err->code = RB_EREDIS;
    }
    snprintf(s->sock, sizeof(s->sock), "%s/redis.sock", s->dir);
    snprintf(logfile, sizeof(logfile), "%s/redis.log", s->dir);
    argv[0] = "redis-server";
    argv[1] = "--port";      argv[2] = "0";
    argv[3] = "--unixsocket"; argv[4] = s->sock;
    argv[5] = "--save";      argv[6] = "";
    argv[7] = "--appendonly"; argv[8] = "no";
    argv[9] = "--dir";       argv[10] = s->dir;
    argv[11] = "--logfile";  argv[12] = logfile;
    argv[13] = NULL;
    s->pid = spawn(argv, -1, 1);
    if (s->pid < 0) {
        snprintf(err->msg, sizeof(err->msg),
                 "cannot start redis-server (%s): install redis-server, or "
                 "pass --url", strerror(errno));
        s->pid = 0;
        stop_server(s);
        return err->code = RB_EUNREACHABLE;
    }
    snprintf(logfile, sizeof(logfile), "unix://%s", s->sock);
    if ((rc = rb_url_parse(url, logfile, err)) != RB_OK)
        return rc;
    /* Wait for it to answer, as any client would: connect with retries. */
    if ((rc = rb_conn_new(&conn, url, NULL, err)) == RB_OK)
        rc = rb_conn_connect(conn, rb_now_ms() + 10000, err);
    rb_conn_free(conn);
    return rc;
}

typedef struct checker {
    long workers, iters;
    long *lines_of;       /* lines seen per worker */
    unsigned char *seen;  /* global values seen, 1..workers*iters */
    long bad;
    long max_global;
} checker;

static void check_line(checker *k, const char *line)
{
    long w, local, global;

    if (sscanf(line, "worker %ld, local_param %ld global_param %ld", &w,
               &local, &global) != 3 || w < 0 || w >= k->workers) {
        k->bad++;
        return;
    }
    if (local != k->workers * k->lines_of[w])
        k->bad++;
    k->lines_of[w]++;
    if (global < 1 || global > k->workers * k->iters || k->seen[global])
        k->bad++;
    else
        k->seen[global] = 1;
    if (global > k->max_global)
        k->max_global = global;
}

int cmd_demo(int argc, char **argv)
{
    cli_common common;
    struct arg_str *workers, *iters;
    struct arg_end *end;
    void *table[2 + CLI_COMMON_COUNT + 1];
    private_server server = { 0, "", "" };
    checker k = { 0, 10, NULL, NULL, 0, 0 };
    rb_error err;
    rb_url url;
    char self[PATH_MAX], url_text[192], run[32], nonce[9], index[24];
    char workers_text[24], iters_text[24], prefix_arg[256];
    const char *prefix;
    pid_t *pids = NULL;
    int pipefd[2] = { -1, -1 }, code, failed = 0;
    long i, lines = 0, total;
    ssize_t len;
    FILE *in = NULL;
    char line[256];

    cli_common_init(&common);
    workers = arg_str0(NULL, "workers", "N", "worker processes (default 4)");
    iters = arg_str0(NULL, "iters", "I", "iterations each (default 10)");
    end = arg_end(10);
    table[0] = workers; table[1] = iters;
    table[2 + cli_common_table(&common, table + 2)] = end;
    code = cli_parse(argc, argv, table, end, &common, argv[0], description);
    if (code >= 0)
        goto out;

    code = CLI_EXIT_USAGE;
    k.workers = 4;
    if ((workers->count &&
         cli_parse_long(workers->sval[0], "--workers", 1, 1000, &k.workers,
                        &err)) ||
        (iters->count &&
         cli_parse_long(iters->sval[0], "--iters", 1, 100000, &k.iters,
                        &err)) ||
        cli_prefix(&common, &prefix, &err) || cli_url(&common, &url, &err)) {
        cli_fail(code, "%s", err.msg);
        goto out;
    }
    len = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (len <= 0) {
        code = cli_fail(CLI_EXIT_REDIS, "cannot find my own binary: %s",
                        strerror(errno));
        goto out;
    }
    self[len] = '\0';

    if (common.url->count == 0 &&
        (getenv("RBARRIER_URL") == NULL || !getenv("RBARRIER_URL")[0])) {
        if (start_server(&server, &url, &err) != RB_OK) {
            code = cli_fail(cli_exit_code(err.code, 0), "%s", err.msg);
            goto out;
        }
        snprintf(url_text, sizeof(url_text), "unix://%s", server.sock);
        printf("# private redis-server (pid %ld) on %s\n", (long)server.pid,
               server.sock);
    } else {
        snprintf(url_text, sizeof(url_text), "%s",
                 common.url->count ? common.url->sval[0]
                                   : getenv("RBARRIER_URL"));
    }
    /* Fresh names per run: no reset needed, and concurrent demos on one
     * server stay apart. */
    rb_random_hex(nonce, (sizeof(nonce) - 1) / 2);
    snprintf(run, sizeof(run), "demo-%s", nonce);
    snprintf(workers_text, sizeof(workers_text), "%ld", k.workers);
    snprintf(iters_text, sizeof(iters_text), "%ld", k.iters);
    snprintf(prefix_arg, sizeof(prefix_arg), "%s", prefix);

    total = k.workers * k.iters;
    k.lines_of = calloc((size_t)k.workers, sizeof(long));
    k.seen = calloc((size_t)total + 1, 1);
    pids = calloc((size_t)k.workers, sizeof(pid_t));
    if (!k.lines_of || !k.seen || !pids || pipe(pipefd) != 0) {
        code = cli_fail(CLI_EXIT_REDIS, "out of memory");
        goto out;
    }
    /* Ctrl-C reaches the workers too (same process group); the demo itself
     * lives on to collect them and stop its server. */
    cli_install_signals();
    fflush(stdout);
    for (i = 0; i < k.workers; i++) {
        const char *wargv[16];

        snprintf(index, sizeof(index), "%ld", i);
        wargv[0] = self;
        wargv[1] = "worker";
        wargv[2] = "--worker";   wargv[3] = index;
        wargv[4] = "--workers";  wargv[5] = workers_text;
        wargv[6] = "--iters";    wargv[7] = iters_text;
        wargv[8] = "--run";      wargv[9] = run;
        wargv[10] = "--url";     wargv[11] = url_text;
        wargv[12] = "--prefix";  wargv[13] = prefix_arg;
        wargv[14] = NULL;
        pids[i] = spawn(wargv, pipefd[1], 0);
        if (pids[i] < 0) {
            code = cli_fail(CLI_EXIT_REDIS, "cannot start worker %ld: %s", i,
                            strerror(errno));
            goto out;
        }
    }
    close(pipefd[1]);
    pipefd[1] = -1;
    in = fdopen(pipefd[0], "r");
    pipefd[0] = -1;
    while (in && fgets(line, sizeof(line), in)) {
        fputs(line, stdout);
        fflush(stdout);
        check_line(&k, line);
        lines++;
    }
    if (cli_signal())
        for (i = 0; i < k.workers; i++)
            kill(pids[i], SIGTERM);
    for (i = 0; i < k.workers; i++) {
        int status = 0;

        if (waitpid(pids[i], &status, 0) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            failed++;
        pids[i] = 0;
    }

    {
        char global_v[64] = "?";
        rb_conn *conn = NULL;
        long global = -1;

        if (cli_open(&url, &conn) < 0 &&
            rb_param_get(conn, prefix, run, global_v, sizeof(global_v),
                         &err) == RB_OK)
            global = strtol(global_v, NULL, 10);
        rb_conn_free(conn);
        if (cli_signal()) {
            code = 128 + cli_signal();
            fprintf(stderr, "rbarrier: demo interrupted after %ld updates\n",
                    lines);
        } else if (failed == 0 && k.bad == 0 && lines == total && global == total) {
            printf("%ld updates, global_param %ld, no update lost\n", lines,
                   global);
            code = CLI_EXIT_OK;
        } else {
            printf("%ld updates, global_param %s, CHECK FAILED: %ld bad "
                   "lines, %d workers failed, %ld of %ld lines\n", lines,
                   global_v, k.bad, failed, lines, total);
            code = CLI_EXIT_REDIS;
        }
    }
out:
    if (in)
        fclose(in);
    if (pipefd[0] >= 0)
        close(pipefd[0]);
    if (pipefd[1] >= 0)
        close(pipefd[1]);
    if (pids)
        for (i = 0; i < k.workers; i++)
            if (pids[i] > 0) {
                kill(pids[i], SIGTERM);
                waitpid(pids[i], NULL, 0);
            }
    stop_server(&server);
    free(pids);
    free(k.lines_of);
    free(k.seen);
    arg_freetable(table, sizeof(table) / sizeof(table[0]));
    return code;
}
