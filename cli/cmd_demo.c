/*
 * rbarrier demo: the seed's launcher. N worker processes run the loop of
 * `rbarrier worker` against one Redis; the demo reads every line they
 * print and checks the property the seed's own output broke (demo_line.c).
 * Without --url or $RBARRIER_URL it runs a private redis-server
 * (demo_server.c). `demo --check FILE` checks lines printed elsewhere.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "demo.h"

static const char description[] =
    "Run the shared-counters experiment: N workers x I iterations of barrier,\n"
    "sync, barrier, train, each printing its local and global value, then a\n"
    "check line. Without --url (or $RBARRIER_URL) a private redis-server is\n"
    "started on a unix socket in a temporary directory and stopped after,\n"
    "also when the demo is killed. Each run uses fresh names, so no reset is\n"
    "needed between runs. Workers get the URL in their environment, never\n"
    "in argv. With --check FILE, check worker lines printed elsewhere (a\n"
    "compose log, examples/worker.sh) instead of running anything.";

#define WORKERS_MAX 1000
#define ITERS_MAX 100000

/* One worker line as a --json object. */
static void json_line(const char *run, long w, long iter, long local,
                      long global)
{
    cli_json j;
    char id[24];

    snprintf(id, sizeof(id), "%ld", w);
    cli_json_open(&j);
    cli_json_kstr(&j, "name", run);
    cli_json_kstr(&j, "id", id);
    cli_json_kint(&j, "iter", iter);
    cli_json_kint(&j, "local", local);
    cli_json_kint(&j, "value", global);
    cli_json_write(&j, STDOUT_FILENO);
}

/* --check FILE: the demo's checker over lines from a file ("-": stdin). */
static int check_file(const char *path, long workers, long iters)
{
    cli_demo_check k;
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    char *line = NULL;
    size_t cap = 0;
    const char *problem;
    int code;

    if (f == NULL)
        return cli_fail(CLI_EXIT_USAGE, "--check: cannot open '%s': %s",
                        path, strerror(errno));
    if (cli_demo_check_init(&k, workers, iters) != 0) {
        if (f != stdin)
            fclose(f);
        return cli_fail(CLI_EXIT_REDIS, "out of memory");
    }
    while (getline(&line, &cap, f) > 0)
        cli_demo_check_line(&k, line);
    free(line);
    if (f != stdin)
        fclose(f);
    cli_json_kint(cli_out_json(), "n", workers);
    cli_json_kint(cli_out_json(), "updates", k.lines);
    if ((problem = cli_demo_check_result(&k)) != NULL) {
        if (!cli_out_json())
            printf("%s\n", problem);
        code = cli_done(CLI_EXIT_REDIS, problem);
    } else {
        if (!cli_out_json())
            printf("ok\n");
        code = cli_done(CLI_EXIT_OK, NULL);
    }
    cli_demo_check_free(&k);
    return code;
}

/* Start the workers with their stdout on out_fd; pids[i] > 0 each. */
static int start_workers(cli_proc *procs, long workers, const char *self,
                         const char *url, const char *run, const char *prefix,
                         long iters, int out_fd)
{
    cli_proc_opts o = CLI_PROC_OPTS_INIT;
    char index[24], workers_text[24], iters_text[24];
    char *env_url = NULL;
    const char *env[2] = { NULL, NULL };
    size_t need = strlen("RBARRIER_URL=") + strlen(url) + 1;
    long i;
    int code = -1;

    o.stdout_fd = out_fd;
    o.parent_death_signal = SIGTERM;  /* a killed demo takes them along */
    o.exec_error_fails = 1;
    /* The password stays out of argv, where ps shows it to everyone. */
    if ((env_url = malloc(need)) == NULL)
        return cli_fail(CLI_EXIT_REDIS, "out of memory");
    snprintf(env_url, need, "RBARRIER_URL=%s", url);
    env[0] = env_url;
    o.env = env;
    snprintf(workers_text, sizeof(workers_text), "%ld", workers);
    snprintf(iters_text, sizeof(iters_text), "%ld", iters);
    for (i = 0; i < workers; i++) {
        const char *wargv[] = {
            self, "worker", "--worker", index, "--workers", workers_text,
            "--iters", iters_text, "--run", run, "--prefix", prefix, NULL
        };

        snprintf(index, sizeof(index), "%ld", i);
        o.argv = wargv;
        if (cli_proc_start(&procs[i], &o) != 0) {
            code = cli_fail(CLI_EXIT_REDIS, "cannot start worker %ld: %s", i,
                            strerror(errno));
            break;
        }
    }
    free(env_url);
    return code;
}

/* Read the workers' lines until they all closed their end: print (or turn
 * into JSON) and check each. */
static void collect(FILE *in, cli_demo_check *k, const char *run)
{
    char *line = NULL;
    size_t cap = 0;
    long w, local, global;

    while (getline(&line, &cap, in) > 0) {
        cli_demo_check_line(k, line);
        if (cli_out_json() &&
            cli_demo_line_parse(line, &w, &local, &global) == 0 && w >= 0 &&
            w < k->workers) {
            json_line(run, w, k->lines_of[w], local, global);
        } else if (!cli_out_json()) {
            fputs(line, stdout);
            fflush(stdout);
        }
    }
    free(line);
}

/* Collect the workers (after the demo was interrupted, or gave up, stop
 * them first); count those that did not exit 0. */
static void stop_workers(cli_proc *procs, long workers, int stop,
                         int *failed)
{
    long i;

    for (i = 0; i < workers; i++) {
        if (procs[i].pid <= 0)
            continue;
        if (stop || cli_signal())
            cli_proc_stop(&procs[i], SIGTERM);
        else
            while (cli_proc_wait(&procs[i], -1) == 0)
                if (cli_signal())
                    cli_proc_stop(&procs[i], SIGTERM);
        if (procs[i].status != 0)
            (*failed)++;
    }
}

int cmd_demo(int argc, char **argv)
{
    cli_common common;
    struct arg_str *workers_opt, *iters_opt, *check_opt;
    struct arg_end *end;
    cli_demo_server server = CLI_DEMO_SERVER_INIT;
    cli_demo_check k;
    rb_error err;
    cli_config cfg = CLI_CONFIG_INIT;
    rb_conn *conn = NULL;
    char self[PATH_MAX], run[32], nonce[9];
    const char *url_text, *problem;
    char *global_v = NULL;
    cli_proc *procs = NULL;
    int pipefd[2] = { -1, -1 }, code, failed = 0;
    long workers = 4, iters = 10;
    ssize_t len;
    FILE *in = NULL;

    memset(&k, 0, sizeof(k));
    cli_common_init(&common);
    workers_opt = arg_str0(NULL, "workers", "N", "worker processes, 1..1000 "
                           "(default 4)");
    iters_opt = arg_str0(NULL, "iters", "I", "iterations each, 1..100000 "
                         "(default 10)");
    check_opt = arg_str0(NULL, "check", "FILE", "check the worker lines in "
                         "FILE (- for stdin) for N workers x I iterations; "
                         "prints ok or the first problem (exit 1)");
    end = arg_end(10);
    /* Defaults go in before parsing, as argtable's own examples do. */
    workers_opt->sval[0] = "4";
    iters_opt->sval[0] = "10";
    {
        void *table[3 + CLI_COMMON_COUNT + 1] = { workers_opt, iters_opt,
                                                  check_opt };

        table[3 + cli_common_table(&common, table + 3)] = end;

        code = cli_parse(argc, argv, table, end, &common, argv[0],
                         description);
        if (code >= 0)
            goto out_table;
        code = CLI_EXIT_USAGE;
        if (cli_parse_long(workers_opt->sval[0], "--workers", 1, WORKERS_MAX,
                           &workers, &err) ||
            cli_parse_long(iters_opt->sval[0], "--iters", 1, ITERS_MAX,
                           &iters, &err) ||
            (!check_opt->count && cli_config_build(&cfg, &common, &err))) {
            cli_fail(code, "%s", err.msg);
            goto out_table;
        }
        if (check_opt->count) {
            code = check_file(check_opt->sval[0], workers, iters);
            goto out_table;
        }
        len = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (len <= 0) {
            code = cli_fail(CLI_EXIT_REDIS, "cannot find my own binary: %s",
                            strerror(errno));
            goto out_table;
        }
        self[len] = '\0';

        url_text = common.url->count ? common.url->sval[0]
                                     : getenv("RBARRIER_URL");
        if (url_text == NULL || url_text[0] == '\0') {
            if (cli_demo_server_start(&server, &err) != RB_OK) {
                code = cli_fail(cli_exit_code(err.code, 0), "%s", err.msg);
                goto out_table;
            }
            url_text = server.url;
            if (cli_config_use_url(&cfg, url_text, &err) != RB_OK) {
                code = cli_fail(CLI_EXIT_USAGE, "%s", err.msg);
                goto out;
            }
            if (!cli_out_json())
                printf("# private redis-server (pid %ld) on %s\n",
                       (long)server.pid, url_text + strlen("unix://"));
        }
        /* Fresh names per run: no reset needed, and concurrent demos on
         * one server stay apart. */
        cli_random_hex(nonce, (sizeof(nonce) - 1) / 2);
        snprintf(run, sizeof(run), "demo-%s", nonce);
        cli_json_kstr(cli_out_json(), "name", run);
        cli_json_kint(cli_out_json(), "n", workers);
        cli_json_kint(cli_out_json(), "iters", iters);

        procs = calloc((size_t)workers, sizeof(cli_proc));
        if (procs == NULL || cli_demo_check_init(&k, workers, iters) != 0 ||
            cli_pipe_cloexec(pipefd) != 0) {
            code = cli_fail(CLI_EXIT_REDIS, "out of memory");
            goto out;
        }
        /* Ctrl-C reaches the workers too (same process group); the demo
         * itself lives on to collect them and stop its server. */
        cli_install_signals();
        fflush(stdout);
        if ((code = start_workers(procs, workers, self, url_text, run, cfg.prefix,
                                  iters, pipefd[1])) >= 0)
            goto out;
        close(pipefd[1]);
        pipefd[1] = -1;
        if ((in = fdopen(pipefd[0], "r")) == NULL) {
            code = cli_fail(CLI_EXIT_REDIS, "out of memory");
            goto out;
        }
        pipefd[0] = -1;
        collect(in, &k, run);
        stop_workers(procs, workers, 0, &failed);

        if (cli_config_open(&cfg, &conn) < 0)
            rb_param_get(&global_v, conn, cfg.prefix, run, &err);
        cli_json_kint(cli_out_json(), "updates", k.lines);
        cli_json_knum(cli_out_json(), "value", global_v ? global_v : "0");
        problem = cli_demo_check_result(&k);
        if (cli_signal()) {
            code = cli_fail(128 + cli_signal(), "demo interrupted after %ld "
                            "updates", k.lines);
        } else if (failed == 0 && problem == NULL && global_v &&
                   strtol(global_v, NULL, 10) == workers * iters) {
            if (!cli_out_json())
                printf("%ld updates, global_param %s, no update lost\n",
                       k.lines, global_v);
            code = cli_done(CLI_EXIT_OK, NULL);
        } else {
            if (!cli_out_json())
                printf("%ld updates, global_param %s, CHECK FAILED: %s, %d "
                       "workers failed\n", k.lines,
                       global_v ? global_v : "?",
                       problem ? problem : "lines ok", failed);
            code = cli_done(CLI_EXIT_REDIS, problem ? problem
                                                    : "workers failed");
        }
out:
        if (in)
            fclose(in);
        if (pipefd[0] >= 0)
            close(pipefd[0]);
        if (pipefd[1] >= 0)
            close(pipefd[1]);
        if (procs)
            stop_workers(procs, workers, 1, &failed);
        rb_conn_free(conn);
        free(global_v);
        cli_demo_server_stop(&server);
        free(procs);
        cli_demo_check_free(&k);
out_table:
        cli_config_free(&cfg);
        arg_freetable(table, sizeof(table) / sizeof(table[0]));
    }
    return code;
}
