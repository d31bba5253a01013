/* Loading a name's history for the readers, and --no-history for the
 * writers (history.h): the parts of the history view that talk to Redis. */

#include <string.h>

#include "history.h"

int hist_load(hist_view *v, const cli_common *common, const char *name,
              long last, cli_config *cfg)
{
    rb_conn *conn = NULL;
    rb_error err;
    int code, rc;

    memset(v, 0, sizeof(*v));
    if ((code = cli_open_barrier(common, name, cfg, &conn)) >= 0)
        return code;
    rc = rb_history_read(&v->h, conn, cfg->prefix, name, 0, &err);
    rb_conn_free(conn);
    if (rc != RB_OK)
        return cli_fail_as(cli_exit_code(rc, cli_signal()), NULL, err.msg,
                           name);
    if (hist_build(v, last) != 0)
        return cli_fail(CLI_EXIT_REDIS, "out of memory");
    return -1;
}

struct arg_lit *cli_no_history_flag(void)
{
    return arg_lit0(NULL, "no-history", "record nothing of this name in its "
                    "history (report, trace, plot, metrics)");
}

int cli_history_off(const struct arg_lit *flag, rb_conn *conn,
                    const char *prefix, const char *name, long long ttl_ms)
{
    rb_error err;
    int rc;

    if (flag == NULL || flag->count == 0)
        return -1;
    rc = rb_history_off(conn, prefix, name, ttl_ms, &err);
    if (rc != RB_OK)
        return cli_fail_as(cli_exit_code(rc, cli_signal()), NULL, err.msg,
                           name);
    return -1;
}

int hist_open_cmd(int argc, char **argv, const char *about,
                  const char *last_help, hist_view *v, cli_config *cfg,
                  const char **name)
{
    cli_common common;
    struct arg_str *name_flag, *last;
    struct arg_end *end;
    void *table[2 + CLI_COMMON_COUNT + 1];
    rb_error err;
    long k = 0;
    int code;

    memset(v, 0, sizeof(*v));
    cli_common_init(&common);
    name_flag = arg_str1(NULL, "name", "NAME",
                         "the barrier's, job's or lock's name");
    last = arg_str0(NULL, "last", "K", last_help);
    end = arg_end(10);
    table[0] = name_flag;
    table[1] = last;
    table[2 + cli_common_table(&common, table + 2)] = end;
    code = cli_parse(argc, argv, table, end, &common, argv[0], about);
    if (code < 0 && last->count &&
        cli_parse_long(last->sval[0], "--last", 1, 1000000, &k, &err) !=
            RB_OK)
        code = cli_fail(CLI_EXIT_USAGE, "%s", err.msg);
    if (code < 0) {
        /* argv's own string: it outlives the table */
        *name = name_flag->sval[0];
        cli_json_kstr(cli_out_json(), "name", *name);
        code = hist_load(v, &common, *name, k, cfg);
    }
    arg_freetable(table, sizeof(table) / sizeof(table[0]));
    return code;
}
