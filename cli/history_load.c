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
