/* rbarrier trace: the name's history as Chrome trace-event JSON (the
 * format Perfetto and chrome://tracing open): one process for the name,
 * one track (thread) per party, a complete slice ("X") per wait from the
 * arrival to the round's end, and an instant ("i") per break. Times are
 * microseconds from the first round kept; the Redis time of that moment is
 * in the metadata. Read only. */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
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

/* A lock holder's track: the party's of the same id, else one of its own
 * after the parties' (extra: the holder ids given tracks so far). */
static long long holder_tid(const hist_view *v, const char **extra,
                            size_t *nextra, const char *id)
{
    size_t i;

    for (i = 0; i < v->nparties; i++)
        if (strcmp(v->parties[i].id, id) == 0)
            return (long long)i + 1;
    for (i = 0; i < *nextra; i++)
        if (strcmp(extra[i], id) == 0)
            return (long long)(v->nparties + i) + 1;
    extra[(*nextra)++] = id;
    return (long long)(v->nparties + *nextra);
}

static void slice(cli_json *j, const char *name, const char *cat,
                  long long tid, long long ts_ms, long long dur_ms)
{
    cli_json_begin_obj(j);
    cli_json_kstr(j, "name", name);
    cli_json_kstr(j, "cat", cat);
    cli_json_kstr(j, "ph", "X");
    cli_json_kint(j, "pid", 1);
    cli_json_kint(j, "tid", tid);
    cli_json_kint(j, "ts", ts_ms * 1000);
    cli_json_kint(j, "dur", dur_ms * 1000);
}

/* Lock holds on their holders' tracks; job attempts on track 0, with an
 * instant per break. */

/* A break as a process-wide instant event at ts (µs), its "args" object
 * left open for the caller's fields. */
static void break_instant(cli_json *j, const char *name, long long ts)
{
    cli_json_begin_obj(j);
    cli_json_kstr(j, "name", name);
    cli_json_kstr(j, "cat", "break");
    cli_json_kstr(j, "ph", "i");
    cli_json_kstr(j, "s", "p");
    cli_json_kint(j, "pid", 1);
    cli_json_kint(j, "tid", 0);
    cli_json_kint(j, "ts", ts);
    cli_json_key(j, "args");
    cli_json_begin_obj(j);
}
static void jobs_locks(cli_json *j, const hist_view *v, long long t0,
                       long long now)
{
    const char **extra = calloc(v->nholds + 1, sizeof(*extra));
    char label[64];
    size_t i, nextra = 0;

    for (i = 0; extra && i < v->nholds; i++) {
        const hist_hold *h = &v->holds[i];
        long long end = h->how ? h->ended : now;

        snprintf(label, sizeof(label), "hold %lld", h->token);
        slice(j, label, "lock", holder_tid(v, extra, &nextra, h->id),
              h->granted - t0, end - h->granted);
        cli_json_key(j, "args");
        cli_json_begin_obj(j);
        cli_json_kint(j, "token", h->token);
        cli_json_kint(j, "wait_ms", h->wait_ms);
        cli_json_kstr(j, "ended_by", h->how);
        cli_json_end_obj(j);
        cli_json_end_obj(j);
    }
    for (i = 0; i < nextra; i++)
        meta(j, "thread_name", (long long)(v->nparties + i) + 1, extra[i]);
    free(extra);
    for (i = 0; i < v->nattempts; i++) {
        const hist_attempt *a = &v->attempts[i];
        long long end = a->end ? a->end : now;

        snprintf(label, sizeof(label), "attempt %lld", a->att);
        slice(j, label, "job", 0, a->start - t0, end - a->start);
        cli_json_end_obj(j);
        if (!a->reason)
            continue;
        break_instant(j, a->restarted ? "job break (restart)" : "job break",
                      (a->end - t0) * 1000);
        cli_json_kstr(j, "cause", a->cause);
        cli_json_kstr(j, "reason", a->reason);
        cli_json_end_obj(j);
        cli_json_end_obj(j);
    }
}

static void trace(cli_json *j, const char *name, const hist_view *v)
{
    /* Times from the first thing shown (with --last, the first round
     * kept); what is still open ends at the newest event. */
    long long t0 = v->nrounds ? v->t0 : LLONG_MAX;
    long long now = v->h.events_count ?
                    v->h.events[v->h.events_count - 1].ms : 0;
    size_t i, k;
    char label[64];

    for (i = 0; i < v->nholds; i++)
        if (v->holds[i].granted < t0)
            t0 = v->holds[i].granted;
    for (i = 0; i < v->nattempts; i++)
        if (v->attempts[i].start < t0)
            t0 = v->attempts[i].start;
    if (t0 == LLONG_MAX)
        t0 = now;

    cli_json_kstr(j, "displayTimeUnit", "ms");
    cli_json_key(j, "otherData");
    cli_json_begin_obj(j);
    cli_json_kstr(j, "name", name);
    cli_json_kint(j, "start_ms", t0);
    cli_json_end_obj(j);
    cli_json_key(j, "traceEvents");
    cli_json_begin_arr(j);
    meta(j, "process_name", 0, name);
    if (v->nattempts)
        meta(j, "thread_name", 0, "job");
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
            cli_json_kint(j, "ts", (v->arr[k].ms - t0) * 1000);
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
        break_instant(j, "break", (r->end - t0) * 1000);
        cli_json_kint(j, "gen", r->g);
        cli_json_kstr(j, "cause", r->cause);
        cli_json_kstr(j, "reason", r->reason);
        cli_json_end_obj(j);
        cli_json_end_obj(j);
    }
    jobs_locks(j, v, t0, now);
    cli_json_end_arr(j);
}

int cmd_trace(int argc, char **argv)
{
    cli_config cfg = CLI_CONFIG_INIT;
    const char *name = NULL;
    hist_view v;
    cli_json j;
    int code;

    code = hist_open_cmd(argc, argv,
                         "Write the name's history as Chrome trace-event "
                         "JSON on stdout (open it in\nPerfetto or "
                         "chrome://tracing): a track per party, a slice per "
                         "wait from its\narrival to the round's end, an "
                         "instant per break. Changes nothing.\nThe output "
                         "is the trace itself, with or without --json.",
                         "only its last K ended rounds", &v, &cfg, &name);
    if (code < 0) {
        cli_json_open(&j);   /* the trace's top-level object */
        trace(&j, name, &v);
        fflush(stdout);
        code = CLI_EXIT_OK;
        if (j.oom)
            code = cli_fail(CLI_EXIT_REDIS, "out of memory");
        else if (cli_json_write(&j, 1) != 0)
            cli_stdout_failed(errno);
        cli_json_free(&j);
    }
    hist_free(&v);
    cli_config_free(&cfg);
    return code;
}
