/* rbarrier trace: the name's history as Chrome trace-event JSON (the
 * format Perfetto and chrome://tracing open): one process for the name,
 * one track (thread) per party, a complete slice ("X") per wait from the
 * arrival to the round's end, and an instant ("i") per break. Times are
 * microseconds from the first round kept; the Redis time of that moment is
 * in the metadata. Read only. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "history.h"

static void meta(cli_json *j, const char *what, long long tid,
                 const char *value)
{
    cli_json_begin_obj(j);
    cli_json_kstr(j, "name", what);
    cli_json_kstr(j, "ph", "M");
    cli_json_kint(j, "pid", 1);
    cli_json_kint(j, "tid", tid);
    cli_json_key(j, "args");
    cli_json_begin_obj(j);
    cli_json_kstr(j, "name", value);
    cli_json_end_obj(j);
    cli_json_end_obj(j);
}

static void trace(cli_json *j, const char *name, const hist_view *v)
{
    char label[64];
    size_t i, k;

    cli_json_kstr(j, "displayTimeUnit", "ms");
    cli_json_key(j, "otherData");
    cli_json_begin_obj(j);
    cli_json_kstr(j, "name", name);
    cli_json_kint(j, "start_ms", v->t0);
    cli_json_end_obj(j);
    cli_json_key(j, "traceEvents");
    cli_json_begin_arr(j);
    meta(j, "process_name", 0, name);
    for (i = 0; i < v->nparties; i++)
        meta(j, "thread_name", (long long)i + 1, v->parties[i].id);
    for (i = 0; i < v->nrounds; i++) {
        const hist_round *r = &v->rounds[i];

        snprintf(label, sizeof(label), "round %lld%s", r->g,
                 r->passed ? "" : " (broken)");
        for (k = r->a0; k < r->a0 + r->na; k++) {
            cli_json_begin_obj(j);
            cli_json_kstr(j, "name", label);
            cli_json_kstr(j, "cat", r->passed ? "wait" : "wait,broken");
            cli_json_kstr(j, "ph", "X");
            cli_json_kint(j, "pid", 1);
            cli_json_kint(j, "tid", (long long)v->arr[k].party + 1);
            cli_json_kint(j, "ts", (v->arr[k].ms - v->t0) * 1000);
            cli_json_kint(j, "dur", (r->end - v->arr[k].ms) * 1000);
            cli_json_key(j, "args");
            cli_json_begin_obj(j);
            cli_json_kint(j, "gen", r->g);
            cli_json_kint(j, "late_ms", v->arr[k].ms - r->start);
            cli_json_kbool(j, "last", k == r->a0 + r->na - 1);
            cli_json_end_obj(j);
            cli_json_end_obj(j);
        }
        if (r->passed)
            continue;
        cli_json_begin_obj(j);
        cli_json_kstr(j, "name", "break");
        cli_json_kstr(j, "cat", "break");
        cli_json_kstr(j, "ph", "i");
        cli_json_kstr(j, "s", "p");
        cli_json_kint(j, "pid", 1);
        cli_json_kint(j, "tid", 0);
        cli_json_kint(j, "ts", (r->end - v->t0) * 1000);
        cli_json_key(j, "args");
        cli_json_begin_obj(j);
        cli_json_kint(j, "gen", r->g);
        cli_json_kstr(j, "cause", r->cause);
        cli_json_kstr(j, "reason", r->reason);
        cli_json_end_obj(j);
        cli_json_end_obj(j);
    }
    cli_json_end_arr(j);
}

int cmd_trace(int argc, char **argv)
{
    cli_common common;
    struct arg_str *name, *last;
    struct arg_end *end;
    void *table[2 + CLI_COMMON_COUNT + 1];
    cli_config cfg = CLI_CONFIG_INIT;
    hist_view v;
    cli_json j;
    rb_error err;
    long k = 0;
    int code;

    memset(&v, 0, sizeof(v));
    cli_common_init(&common);
    name = arg_str1(NULL, "name", "NAME", "the barrier's name");
    last = arg_str0(NULL, "last", "K", "only its last K ended rounds");
    end = arg_end(10);
    table[0] = name;
    table[1] = last;
    table[2 + cli_common_table(&common, table + 2)] = end;
    code = cli_parse(argc, argv, table, end, &common, argv[0],
                     "Write the name's history as Chrome trace-event JSON "
                     "on stdout (open it in\nPerfetto or chrome://tracing): "
                     "a track per party, a slice per wait from its\narrival "
                     "to the round's end, an instant per break. Changes "
                     "nothing.\nThe output is the trace itself, with or "
                     "without --json.");
    if (code >= 0)
        goto out;
    if (last->count && cli_parse_long(last->sval[0], "--last", 1, 1000000,
                                      &k, &err) != RB_OK) {
        code = cli_fail(CLI_EXIT_USAGE, "%s", err.msg);
        goto out;
    }
    if ((code = hist_load(&v, &common, name->sval[0], k, &cfg)) >= 0)
        goto out;
    cli_json_open(&j);   /* the trace's top-level object */
    trace(&j, name->sval[0], &v);
    fflush(stdout);
    code = CLI_EXIT_OK;
    if (j.oom)
        code = cli_fail(CLI_EXIT_REDIS, "out of memory");
    else if (cli_json_write(&j, 1) != 0)
        cli_stdout_failed(errno);
    cli_json_free(&j);
out:
    hist_free(&v);
    cli_config_free(&cfg);
    arg_freetable(table, sizeof(table) / sizeof(table[0]));
    return code;
}
