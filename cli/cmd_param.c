/* rbarrier sync / train / get / set: the seed's global and local params. */
#include "../lib/fmacros.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef enum { OP_SYNC, OP_TRAIN, OP_GET, OP_SET } param_op;

static const char *const descriptions[] = {
    "Copy parameter P's global value into worker W's local copy, in one\n"
    "atomic step, and print the value (0 for a parameter never set).",
    "Add D (default 1) to parameter P's global value, reading worker W's\n"
    "local copy in the same atomic step; prints 'local L global G'. Integer\n"
    "steps use INCRBY, steps with a fraction INCRBYFLOAT. A call retried\n"
    "after a lost reply adds exactly once.",
    "Print parameter P's global value (0 when never set).",
    "Set parameter P's global value to V (a decimal number).",
};

static int run(param_op op, int argc, char **argv)
{
    cli_common common;
    struct arg_str *param, *worker = NULL, *by = NULL, *value = NULL;
    struct arg_end *end;
    void *table[3 + CLI_COMMON_COUNT + 1];
    int k = 0, code, rc = RB_OK;
    rb_conn *conn = NULL;
    rb_error err;
    rb_url url;
    const char *prefix;
    char local_v[64], global_v[64];

    cli_common_init(&common);
    param = arg_str1(NULL, "param", "P", "parameter name");
    table[k++] = param;
    if (op == OP_SYNC || op == OP_TRAIN) {
        worker = arg_str1(NULL, "worker", "W", "worker id (owns a local copy)");
        table[k++] = worker;
    }
    if (op == OP_TRAIN) {
        by = arg_str0(NULL, "by", "D", "increment, e.g. 1, -2 or 0.5 "
                      "(default 1)");
        table[k++] = by;
    }
    if (op == OP_SET) {
        value = arg_str1(NULL, "value", "V", "new global value");
        table[k++] = value;
    }
    k += (int)cli_common_table(&common, table + k);
    table[k++] = end = arg_end(10);

    code = cli_parse(argc, argv, table, end, &common, argv[0],
                     descriptions[op]);
    if (code >= 0)
        goto out;

    code = CLI_EXIT_USAGE;
    cli_json_kstr(cli_out_json(), "param", param->sval[0]);
    if (worker)
        cli_json_kstr(cli_out_json(), "id", worker->sval[0]);
    if (rb_check_name(param->sval[0], "param", &err) != RB_OK ||
        (worker && rb_check_id(worker->sval[0], "--worker", &err) != RB_OK) ||
        (by && by->count &&
         rb_check_number(by->sval[0], "--by", NULL, &err) != RB_OK) ||
        (value && rb_check_number(value->sval[0], "--value", NULL, &err) !=
                      RB_OK) ||
        cli_prefix(&common, &prefix, &err) != RB_OK ||
        cli_url(&common, &url, &err) != RB_OK) {
        cli_fail(code, "%s", err.msg);
        goto out;
    }
    if ((code = cli_open(&url, &conn)) >= 0)
        goto out;

    switch (op) {
    case OP_SYNC:
        rc = rb_param_sync(conn, prefix, param->sval[0], worker->sval[0], 0,
                           local_v, sizeof(local_v), &err);
        if (rc == RB_OK && cli_out_json())
            cli_json_knum(cli_out_json(), "value", local_v);
        else if (rc == RB_OK)
            printf("%s\n", local_v);
        break;
    case OP_TRAIN:
        rc = rb_param_train(conn, prefix, param->sval[0], worker->sval[0],
                            by->count ? by->sval[0] : "1", 0, local_v,
                            global_v, sizeof(local_v), &err);
        if (rc == RB_OK && cli_out_json()) {
            cli_json_knum(cli_out_json(), "local", local_v);
            cli_json_knum(cli_out_json(), "value", global_v);
        } else if (rc == RB_OK)
            printf("local %s global %s\n", local_v, global_v);
        break;
    case OP_GET:
        rc = rb_param_get(conn, prefix, param->sval[0], global_v,
                          sizeof(global_v), &err);
        if (rc == RB_OK && cli_out_json())
            cli_json_knum(cli_out_json(), "value", global_v);
        else if (rc == RB_OK)
            printf("%s\n", global_v);
        break;
    case OP_SET:
        rc = rb_param_set(conn, prefix, param->sval[0], value->sval[0], 0,
                          &err);
        cli_json_knum(cli_out_json(), "value", value->sval[0]);
        break;
    }
    code = cli_exit_code(rc, cli_signal());
    if (rc != RB_OK)
        cli_fail(code, "%s", err.msg);
    else
        cli_done(code, NULL);
out:
    rb_conn_free(conn);
    arg_freetable(table, (size_t)k);
    return code;
}

int cmd_sync(int argc, char **argv) { return run(OP_SYNC, argc, argv); }
int cmd_train(int argc, char **argv) { return run(OP_TRAIN, argc, argv); }
int cmd_get(int argc, char **argv) { return run(OP_GET, argc, argv); }
int cmd_set(int argc, char **argv) { return run(OP_SET, argc, argv); }
