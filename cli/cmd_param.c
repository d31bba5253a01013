/* rbarrier sync / train / get / set: the seed's global and local params.
 * Each command has its own option table; what they share is opening the
 * connection (param_open) and ending the command (param_done). */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "progress.h"

#define PARAM_HELP "parameter name (no braces, spaces or control " \
                   "characters; up to 200 bytes)"
#define WORKER_HELP "worker id (owns a local copy; inside a job, default " \
                    "$RBARRIER_RANK)"

/* Inside a job (RBARRIER_JOB set) the worker defaults to this member's
 * rank; elsewhere --worker is required. */
static const char *default_worker(void)
{
    const char *rank = getenv("RBARRIER_RANK");

    return getenv("RBARRIER_JOB") && rank && rank[0] ? rank : "";
}

static int worker_missing(const struct arg_str *worker)
{
    if (worker->sval[0][0] != '\0')
        return 0;
    cli_fail(CLI_EXIT_USAGE, "missing option --worker=W (inside a job it "
             "defaults to $RBARRIER_RANK)");
    return 1;
}

/* Check the names, put them in the --json object, connect. Returns -1 to
 * go on, or the exit code after saying why not. */
static int param_open(const cli_common *common, const char *param,
                      const char *worker, const char *number,
                      const char *number_what, cli_config *cfg,
                      rb_conn **conn)
{
    rb_error err;

    cli_json_kstr(cli_out_json(), "param", param);
    if (worker)
        cli_json_kstr(cli_out_json(), "id", worker);
    if (rb_check_name(param, "param", &err) != RB_OK ||
        (worker && rb_check_id(worker, "--worker", &err) != RB_OK) ||
        (number && rb_check_number(NULL, number, number_what, &err) !=
                       RB_OK) ||
        cli_config_build(cfg, common, &err) != RB_OK)
        return cli_fail(CLI_EXIT_USAGE, "%s", err.msg);
    return cli_config_open(cfg, conn);
}

/* The library's answer as the exit code, with its message. */
static int param_done(int rc, const rb_error *err)
{
    int code = cli_exit_code(rc, cli_signal());

    cli_progress_touch();

    if (rc != RB_OK)
        return cli_fail(code, "%s", err->msg);
    return cli_done(code, NULL);
}

int cmd_sync(int argc, char **argv)
{
    cli_common common;
    struct arg_str *param, *worker;
    struct arg_end *end;
    rb_conn *conn = NULL;
    rb_error err;
    cli_config cfg = CLI_CONFIG_INIT;
    char *value = NULL;
    int code, rc;

    cli_common_init(&common);
    param = arg_str1(NULL, "param", "P", PARAM_HELP);
    worker = arg_str0(NULL, "worker", "W", WORKER_HELP);
    end = arg_end(10);
    worker->sval[0] = default_worker();
    {
        void *table[2 + CLI_COMMON_COUNT + 1] = { param, worker };

        table[2 + cli_common_table(&common, table + 2)] = end;

        code = cli_parse(argc, argv, table, end, &common, argv[0],
            "Copy parameter P's global value into worker W's local copy, "
            "in one\natomic step, and print the value (0 for a parameter "
            "never set).");
        if (code < 0 && worker_missing(worker))
            code = CLI_EXIT_USAGE;
        if (code < 0 &&
            (code = param_open(&common, param->sval[0], worker->sval[0],
                               NULL, NULL, &cfg, &conn)) < 0) {
            rc = rb_param_sync(&value, conn, cfg.prefix, param->sval[0],
                               worker->sval[0], 0, &err);
            if (rc == RB_OK && cli_out_json())
                cli_json_knum(cli_out_json(), "value", value);
            else if (rc == RB_OK)
                printf("%s\n", value);
            code = param_done(rc, &err);
        }
        free(value);
        rb_conn_free(conn);
        cli_config_free(&cfg);
        arg_freetable(table, sizeof(table) / sizeof(table[0]));
    }
    return code;
}

int cmd_train(int argc, char **argv)
{
    cli_common common;
    struct arg_str *param, *worker, *by;
    struct arg_end *end;
    rb_conn *conn = NULL;
    rb_error err;
    cli_config cfg = CLI_CONFIG_INIT;
    char *local_v = NULL, *global_v = NULL;
    int code, rc;

    cli_common_init(&common);
    param = arg_str1(NULL, "param", "P", PARAM_HELP);
    worker = arg_str0(NULL, "worker", "W", WORKER_HELP);
    worker->sval[0] = default_worker();
    by = arg_str0(NULL, "by", "D", "increment, e.g. 1, -2 or 0.5 "
                  "(default 1)");
    end = arg_end(10);
    by->sval[0] = "1";
    {
        void *table[3 + CLI_COMMON_COUNT + 1] = { param, worker, by };

        table[3 + cli_common_table(&common, table + 3)] = end;

        code = cli_parse(argc, argv, table, end, &common, argv[0],
            "Add D (default 1) to parameter P's global value, reading "
            "worker W's\nlocal copy in the same atomic step; prints 'local "
            "L global G'. An integer\nstep on an integer value is exact "
            "64-bit arithmetic and an overflow is an\nerror (exit 1, "
            "nothing changed); a step or value with a fraction adds as\n"
            "a float. A call retried after a lost reply adds exactly once.");
        if (code < 0 && worker_missing(worker))
            code = CLI_EXIT_USAGE;
        if (code < 0 &&
            (code = param_open(&common, param->sval[0], worker->sval[0],
                               by->sval[0], "--by", &cfg, &conn)) < 0) {
            rc = rb_param_train(&local_v, &global_v, conn, cfg.prefix,
                                param->sval[0], worker->sval[0], by->sval[0],
                                0, &err);
            if (rc == RB_OK && cli_out_json()) {
                cli_json_knum(cli_out_json(), "local", local_v);
                cli_json_knum(cli_out_json(), "value", global_v);
            } else if (rc == RB_OK) {
                printf("local %s global %s\n", local_v, global_v);
            }
            code = param_done(rc, &err);
        }
        free(local_v);
        free(global_v);
        rb_conn_free(conn);
        cli_config_free(&cfg);
        arg_freetable(table, sizeof(table) / sizeof(table[0]));
    }
    return code;
}

int cmd_get(int argc, char **argv)
{
    cli_common common;
    struct arg_str *param, *timeout;
    struct arg_lit *until_set;
    struct arg_end *end;
    rb_conn *conn = NULL;
    rb_error err;
    cli_config cfg = CLI_CONFIG_INIT;
    char *value = NULL;
    long long timeout_ms = 0;
    int code, rc;

    cli_common_init(&common);
    param = arg_str1(NULL, "param", "P", PARAM_HELP);
    until_set = arg_lit0(NULL, "until-set", "if P was never set, wait until "
                         "a set gives it a value (no polling)");
    timeout = arg_str0(NULL, "timeout", "DUR", "with --until-set: give up "
                       "after DUR (exit 124); 0: no limit (default)");
    end = arg_end(10);
    {
        void *table[3 + CLI_COMMON_COUNT + 1] = { param, until_set, timeout };

        table[3 + cli_common_table(&common, table + 3)] = end;

        code = cli_parse(argc, argv, table, end, &common, argv[0],
            "Print parameter P's global value (0 when never set), whole, "
            "whatever its\nlength. With --until-set a parameter never set "
            "is waited for: every\nwaiter wakes at once when 'rbarrier set' "
            "gives it a value, and prints\nit (exit 0), or exits 124 after "
            "--timeout.");
        if (code < 0 && timeout->count && !until_set->count)
            code = cli_fail(CLI_EXIT_USAGE, "--timeout needs --until-set");
        if (code < 0 && timeout->count &&
            cli_parse_duration(timeout->sval[0], "--timeout", 0,
                               CLI_TIMEOUT_MAX_MS, &timeout_ms, &err) != RB_OK)
            code = cli_fail(CLI_EXIT_USAGE, "%s", err.msg);
        if (code < 0 &&
            (code = param_open(&common, param->sval[0], NULL, NULL, NULL,
                               &cfg, &conn)) < 0) {
            if (until_set->count)
                rc = rb_param_get_until(&value, conn, cfg.prefix,
                                        param->sval[0], timeout_ms, &err);
            else
                rc = rb_param_get(&value, conn, cfg.prefix, param->sval[0],
                                  &err);
            if (rc == RB_OK && cli_out_json())
                cli_json_knum(cli_out_json(), "value", value);
            else if (rc == RB_OK)
                printf("%s\n", value);
            code = param_done(rc, &err);
        }
        free(value);
        rb_conn_free(conn);
        cli_config_free(&cfg);
        arg_freetable(table, sizeof(table) / sizeof(table[0]));
    }
    return code;
}

int cmd_set(int argc, char **argv)
{
    cli_common common;
    struct arg_str *param, *value;
    struct arg_end *end;
    rb_conn *conn = NULL;
    rb_error err;
    cli_config cfg = CLI_CONFIG_INIT;
    int code, rc;

    cli_common_init(&common);
    param = arg_str1(NULL, "param", "P", PARAM_HELP);
    value = arg_str1(NULL, "value", "V", "new global value, a decimal "
                     "number (e.g. 0, -3, 2.5)");
    end = arg_end(10);
    {
        void *table[2 + CLI_COMMON_COUNT + 1] = { param, value };

        table[2 + cli_common_table(&common, table + 2)] = end;

        code = cli_parse(argc, argv, table, end, &common, argv[0],
            "Set parameter P's global value to V (a decimal number).");
        if (code < 0 &&
            (code = param_open(&common, param->sval[0], NULL, value->sval[0],
                               "--value", &cfg, &conn)) < 0) {
            rc = rb_param_set(conn, cfg.prefix, param->sval[0], value->sval[0],
                              0, &err);
            cli_json_knum(cli_out_json(), "value", value->sval[0]);
            code = param_done(rc, &err);
        }
        rb_conn_free(conn);
        cli_config_free(&cfg);
        arg_freetable(table, sizeof(table) / sizeof(table[0]));
    }
    return code;
}
