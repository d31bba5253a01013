/* rbarrier worker: one worker of the seed's experiment. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "demo.h"

static const char description[] =
    "Run worker I of N through the seed's loop, I iterations of: barrier,\n"
    "sync, barrier, train, then print\n"
    "  worker %2d, local_param %2d global_param %2d\n"
    "All workers of one run (--run R, default 'demo') meet at barrier R and\n"
    "share parameter R. Each printed global value appears exactly once in a\n"
    "run, and each local value is N times the iteration index. With --json\n"
    "each line is an object (name, id, iter, local, value) and a last object\n"
    "gives the outcome.";

/* One iteration's line, text or JSON, with one write. Returns 0, or -1
 * when stdout is gone (the reader died: stop rather than block or spin). */
static int print_line(const char *run, const char *id, long index, long iter,
                      const char *local_v, const char *global_v)
{
    char line[128];
    ssize_t n;
    cli_json j;

    if (cli_out_json()) {
        cli_json_open(&j);
        cli_json_kstr(&j, "name", run);
        cli_json_kstr(&j, "id", id);
        cli_json_kint(&j, "iter", iter);
        cli_json_knum(&j, "local", local_v);
        cli_json_knum(&j, "value", global_v);
        return cli_json_write(&j, STDOUT_FILENO);
    }
    n = cli_demo_line_format(line, sizeof(line) - 1, index,
                             strtol(local_v, NULL, 10),
                             strtol(global_v, NULL, 10));
    line[n++] = '\n';
    while (write(STDOUT_FILENO, line, (size_t)n) != n)
        if (errno != EINTR)
            return -1;
    return 0;
}

int cmd_worker(int argc, char **argv)
{
    cli_common common;
    struct arg_str *worker, *workers, *iters, *run, *timeout, *lease;
    struct arg_end *end;
    rb_wait_opts o;
    rb_conn *conn = NULL;
    rb_error err;
    cli_config cfg = CLI_CONFIG_INIT;
    char id[32], *local_v = NULL, *global_v = NULL;
    long index = 0, count = 0, niters = 10, i;
    long long timeout_ms = 0, lease_ms = 10000;
    int code, rc = RB_OK;

    o = (rb_wait_opts)RB_WAIT_OPTS_INIT;
    cli_common_init(&common);
    worker = arg_str1(NULL, "worker", "I", "this worker's index, 0..N-1");
    workers = arg_str1(NULL, "workers", "N", "number of workers, 1..100000");
    iters = arg_str0(NULL, "iters", "I", "iterations (default 10)");
    run = arg_str0(NULL, "run", "R", "run name: barrier and parameter name "
                   "(default demo)");
    timeout = arg_str0(NULL, "timeout", "DUR", "give up on a barrier "
                       "after DUR (e.g. 90, 30s, 5m; default 0: wait; "
                       "a dead worker still breaks the round within its "
                       "lease)");
    lease = arg_str0(NULL, "lease", "DUR", "barrier lease, 0.1s..1d "
                     "(default 10s)");
    end = arg_end(10);
    /* Defaults go in before parsing, as argtable's own examples do. */
    iters->sval[0] = "10";
    run->sval[0] = "demo";
    timeout->sval[0] = "0";
    lease->sval[0] = "10";
    {
        void *table[6 + CLI_COMMON_COUNT + 1] = { worker, workers, iters,
                                                  run, timeout, lease };

        table[6 + cli_common_table(&common, table + 6)] = end;

        code = cli_parse(argc, argv, table, end, &common, argv[0],
                         description);
        if (code >= 0)
            goto out;

        code = CLI_EXIT_USAGE;
        o.name = run->sval[0];
        cli_json_kstr(cli_out_json(), "name", o.name);
        cli_json_kstr(cli_out_json(), "id", worker->sval[0]);
        if (cli_parse_count(workers->sval[0], "--workers", &count, &err) ||
            cli_parse_long(worker->sval[0], "--worker", 0, count - 1, &index,
                           &err) ||
            cli_parse_long(iters->sval[0], "--iters", 1, 100000000, &niters,
                           &err) ||
            cli_parse_duration(timeout->sval[0], "--timeout", 0,
                               CLI_TIMEOUT_MAX_MS, &timeout_ms, &err) ||
            cli_parse_duration(lease->sval[0], "--lease", CLI_LEASE_MIN_MS,
                               CLI_LEASE_MAX_MS, &lease_ms, &err) ||
            rb_check_name(o.name, "--run", &err) ||
            cli_config_build(&cfg, &common, &err)) {
            cli_fail(code, "%s", err.msg);
            goto out;
        }
        if ((code = cli_config_open(&cfg, &conn)) >= 0)
            goto out;
        snprintf(id, sizeof(id), "%ld", index);
        o.prefix = cfg.prefix;
        o.n = count;
        o.id = id;
        o.timeout_ms = timeout_ms;
        o.lease_ms = lease_ms;

        for (i = 0; i < niters && rc == RB_OK; i++) {
            free(local_v);
            free(global_v);
            local_v = global_v = NULL;
            rc = rb_barrier_wait(NULL, conn, &o, &err);
            if (rc == RB_OK)
                rc = rb_param_sync(&local_v, conn, cfg.prefix, o.name, id, 0,
                                   &err);
            if (rc == RB_OK)
                rc = rb_barrier_wait(NULL, conn, &o, &err);
            if (rc == RB_OK) {
                free(local_v);
                local_v = NULL;
                rc = rb_param_train(&local_v, &global_v, conn, cfg.prefix, o.name,
                                    id, "1", 0, &err);
            }
            if (rc == RB_OK &&
                print_line(o.name, id, index, i + 1, local_v, global_v) != 0) {
                code = cli_fail(CLI_EXIT_REDIS, "worker %ld: cannot write "
                                "its line: %s", index, strerror(errno));
                goto out;
            }
        }
        code = cli_exit_code(rc, cli_signal());
        if (rc != RB_OK) {
            char who[40];

            snprintf(who, sizeof(who), "worker %ld", index);
            cli_fail_as(code, who, err.msg, o.name);
        } else
            cli_done(code, NULL);
out:
        free(local_v);
        free(global_v);
        rb_conn_free(conn);
        cli_config_free(&cfg);
        arg_freetable(table, sizeof(table) / sizeof(table[0]));
    }
    return code;
}
