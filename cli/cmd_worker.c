/* rbarrier worker: one worker of the seed's experiment. */
#include "../lib/fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char description[] =
    "Run worker I of N through the seed's loop, I iterations of: barrier,\n"
    "sync, barrier, train, then print\n"
    "  worker %2d, local_param %2d global_param %2d\n"
    "All workers of one run (--run R, default 'demo') meet at barrier R and\n"
    "share parameter R. Each printed global value appears exactly once in a\n"
    "run, and each local value is N times the iteration index.";

int cmd_worker(int argc, char **argv)
{
    cli_common common;
    struct arg_str *worker, *workers, *iters, *run, *timeout, *lease;
    struct arg_end *end;
    void *table[6 + CLI_COMMON_COUNT + 1];
    rb_wait_opts o = RB_WAIT_OPTS_INIT;
    rb_conn *conn = NULL;
    rb_error err;
    rb_url url;
    const char *prefix;
    char id[32], local_v[64], global_v[64];
    long index = 0, count = 0, niters = 10, i;
    int code, rc = RB_OK;

    cli_common_init(&common);
    worker = arg_str1(NULL, "worker", "I", "this worker's index, 0..N-1");
    workers = arg_str1(NULL, "workers", "N", "number of workers, 1..100000");
    iters = arg_str0(NULL, "iters", "I", "iterations (default 10)");
    run = arg_str0(NULL, "run", "R", "run name: barrier and parameter name "
                   "(default demo)");
    timeout = arg_str0(NULL, "timeout", "SEC", "give up on a barrier after "
                       "SEC seconds (default: wait; a dead worker still "
                       "breaks the round within its lease)");
    lease = arg_str0(NULL, "lease", "SEC", "barrier lease (default 10)");
    end = arg_end(10);
    table[0] = worker; table[1] = workers; table[2] = iters; table[3] = run;
    table[4] = timeout; table[5] = lease;
    table[6 + cli_common_table(&common, table + 6)] = end;
    code = cli_parse(argc, argv, table, end, &common, argv[0], description);
    if (code >= 0)
        goto out;

    code = CLI_EXIT_USAGE;
    o.name = run->count ? run->sval[0] : "demo";
    if (cli_parse_count(workers->sval[0], "--workers", &count, &err) ||
        cli_parse_long(worker->sval[0], "--worker", 0, count - 1, &index,
                       &err) ||
        (iters->count &&
         cli_parse_long(iters->sval[0], "--iters", 1, 100000000, &niters,
                        &err)) ||
        (timeout->count &&
         cli_parse_seconds(timeout->sval[0], "--timeout", 1, &o.timeout_s,
                           &err)) ||
        (lease->count &&
         cli_parse_seconds(lease->sval[0], "--lease", 0, &o.lease_s, &err)) ||
        rb_check_name(o.name, "--run", &err) ||
        cli_prefix(&common, &prefix, &err) || cli_url(&common, &url, &err)) {
        cli_fail(code, "%s", err.msg);
        goto out;
    }
    if ((code = cli_open(&url, &conn)) >= 0)
        goto out;
    snprintf(id, sizeof(id), "%ld", index);
    o.prefix = prefix;
    o.n = count;
    o.id = id;

    for (i = 0; i < niters && rc == RB_OK; i++) {
        rc = rb_barrier_wait(conn, &o, NULL, &err);
        if (rc == RB_OK)
            rc = rb_param_sync(conn, prefix, o.name, id, 0, local_v,
                               sizeof(local_v), &err);
        if (rc == RB_OK)
            rc = rb_barrier_wait(conn, &o, NULL, &err);
        if (rc == RB_OK)
            rc = rb_param_train(conn, prefix, o.name, id, "1", 0, local_v,
                                global_v, sizeof(local_v), &err);
        if (rc == RB_OK) {
            printf("worker %2ld, local_param %2ld global_param %2ld\n", index,
                   strtol(local_v, NULL, 10), strtol(global_v, NULL, 10));
            fflush(stdout);
        }
    }
    code = cli_exit_code(rc, cli_signal());
    if (rc != RB_OK)
        cli_fail(code, "worker %ld: %s", index, err.msg);
out:
    rb_conn_free(conn);
    arg_freetable(table, sizeof(table) / sizeof(table[0]));
    return code;
}
