/* rbarrier wait: meet N-1 other parties at a named barrier. */
#include "../lib/fmacros.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char description[] =
    "Arrive at barrier NAME and block until N parties (any machines) have\n"
    "arrived in the same round; then all are released. The same name serves\n"
    "round after round. A party that times out, dies (its lease runs out) or\n"
    "is interrupted breaks the round for everyone, with the reason on stderr.\n"
    "Silent on success. Example:\n"
    "  rbarrier wait --name ckpt --n 4 --timeout 60 && save_checkpoint";

typedef struct progress_line {
    const char *name;
    int shown;
} progress_line;

static void show_progress(const rb_progress *p, void *payload)
{
    progress_line *line = payload;

    fprintf(stderr, "\r\033[K%s: %ld/%ld arrived, %llds", line->name,
            p->count, p->n, p->waited_ms / 1000);
    line->shown = 1;
}

static void print_json(const rb_wait_opts *o, const rb_wait_result *res,
                       int rc, const rb_error *err, int code)
{
    cli_json *j = cli_out_json();

    cli_json_kstr(j, "name", o->name);
    cli_json_kstr(j, "id", o->id);
    cli_json_kint(j, "gen", res->gen);
    cli_json_kint(j, "n", o->n);
    if (rc == RB_OK)
        cli_json_kbool(j, "completed", res->completed);
    cli_done(code, rc == RB_OK ? NULL : err->msg);
}

int cmd_wait(int argc, char **argv)
{
    cli_common common;
    struct arg_str *name, *n, *id, *timeout, *lease, *ttl;
    struct arg_end *end;
    void *table[6 + CLI_COMMON_COUNT + 1];
    rb_wait_opts o = RB_WAIT_OPTS_INIT;
    rb_wait_result res;
    rb_error err;
    rb_url url;
    rb_conn *conn = NULL;
    progress_line line = { NULL, 0 };
    char default_id[192];
    int code, rc;
    long ttl_s = 0;

    cli_common_init(&common);
    name = arg_str1(NULL, "name", "NAME", "barrier name (no braces, spaces "
                    "or control characters; up to 200 bytes)");
    n = arg_str1(NULL, "n", "N", "parties per round, 1..100000");
    id = arg_str0(NULL, "id", "ID", "this party's id (default hostname:pid); "
                  "the same id twice in a round counts once");
    timeout = arg_str0(NULL, "timeout", "SEC", "give up after SEC seconds "
                       "(fractions allowed; exit 124, the round breaks)");
    lease = arg_str0(NULL, "lease", "SEC", "a party silent this long is "
                     "presumed dead and breaks the round (default 10)");
    ttl = arg_str0(NULL, "ttl", "SEC", "idle barrier state expires after "
                   "SEC seconds (default 86400)");
    end = arg_end(10);
    table[0] = name; table[1] = n; table[2] = id; table[3] = timeout;
    table[4] = lease; table[5] = ttl;
    table[6 + cli_common_table(&common, table + 6)] = end;

    code = cli_parse(argc, argv, table, end, &common, argv[0], description);
    if (code >= 0)
        goto out;

    code = CLI_EXIT_USAGE;
    o.name = name->sval[0];
    if (rb_check_name(o.name, "barrier name", &err) != RB_OK ||
        cli_parse_count(n->sval[0], "--n", &o.n, &err) != RB_OK ||
        (timeout->count &&
         cli_parse_seconds(timeout->sval[0], "--timeout", 1, &o.timeout_s,
                           &err) != RB_OK) ||
        (lease->count &&
         cli_parse_seconds(lease->sval[0], "--lease", 0, &o.lease_s,
                           &err) != RB_OK) ||
        (ttl->count &&
         cli_parse_long(ttl->sval[0], "--ttl", 1, 100000000, &ttl_s,
                        &err) != RB_OK) ||
        cli_prefix(&common, &o.prefix, &err) != RB_OK ||
        cli_url(&common, &url, &err) != RB_OK) {
        cli_fail(code, "%s", err.msg);
        goto out;
    }
    if (id->count) {
        o.id = id->sval[0];
    } else {
        cli_default_id(default_id, sizeof(default_id));
        o.id = default_id;
    }
    if (rb_check_id(o.id, "--id", &err) != RB_OK) {
        cli_fail(code, "%s", err.msg);
        goto out;
    }
    if (o.lease_s > 0 && o.lease_s < 0.1) {
        cli_fail(code, "--lease must be at least 0.1 seconds");
        goto out;
    }
    o.ttl_s = ttl_s;

    if (isatty(STDERR_FILENO) && !common.json->count) {
        line.name = o.name;
        o.progress = show_progress;
        o.payload = &line;
    }

    if ((code = cli_open(&url, &conn)) >= 0)
        goto out;
    memset(&res, 0, sizeof(res));
    rc = rb_barrier_wait(conn, &o, &res, &err);
    if (line.shown)
        fputs("\r\033[K", stderr);
    code = cli_exit_code(rc, cli_signal());
    if (common.json->count)
        print_json(&o, &res, rc, &err, code);
    if (rc != RB_OK)
        cli_fail(code, "%s", err.msg);

out:
    rb_conn_free(conn);
    arg_freetable(table, sizeof(table) / sizeof(table[0]));
    return code;
}
