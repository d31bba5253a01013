/* rbarrier metrics: Prometheus text (version 0.0.4, which promtool checks
 * and every scraper reads) for a textfile collector or a scrape wrapper.
 * One label set per name. The *_total counters come from the name's
 * counter hash, which never goes back; the histograms are of what the
 * capped history keeps (its last rounds), so they describe recent rounds,
 * not all since the start (doc/SEEING.md). Read only. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"

static const double bounds[] = {
    0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 60, 300
};
#define NBOUNDS (sizeof(bounds) / sizeof(bounds[0]))

/* A label value as the text format wants it. */
static void label(const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            putchar('\\');
        if (*s == '\n')
            fputs("\\n", stdout);
        else
            putchar(*s);
    }
}

static void family(const char *metric, const char *type, const char *help)
{
    printf("# HELP %s %s\n# TYPE %s %s\n", metric, help, metric, type);
}

static void sample(const char *metric, const char *name, const char *k,
                   const char *v, const char *value)
{
    printf("%s{name=\"", metric);
    label(name);
    if (k) {
        printf("\",%s=\"", k);
        label(v);
    }
    printf("\"} %s\n", value);
}

/* Counters whose hash field starts with prefix: one sample each, the rest
 * of the field as label k (NULL: the field must be exactly prefix). */
static void counters(const hist_view *v, const char *name, const char *metric,
                     const char *prefix, const char *k)
{
    char num[24];
    size_t i, n = strlen(prefix);

    for (i = 0; i < v->h.counters_count; i++) {
        const rb_counter *c = &v->h.counters[i];

        if (strncmp(c->field, prefix, n) != 0 ||
            (k == NULL && c->field[n] != '\0'))
            continue;
        snprintf(num, sizeof(num), "%lld", c->value);
        sample(metric, name, k, c->field + n, num);
    }
}

/* What a histogram is made of: counts per bucket (the last: +Inf). */
typedef struct hist {
    size_t count[NBOUNDS + 1], total;
    long long sum_ms;
} hist;

static void hist_add(hist *h, long long ms)
{
    size_t k;

    for (k = 0; k < NBOUNDS && (double)ms / 1000 > bounds[k]; k++)
        ;
    h->count[k]++;
    h->sum_ms += ms;
    h->total++;
}

static void histogram(const char *m, const char *name, const hist *h)
{
    size_t i, b;
    char metric[64], num[32], le[16];
    snprintf(metric, sizeof(metric), "%s_bucket", m);
    for (b = 0, i = 0; b <= NBOUNDS; b++) {
        i += h->count[b];
        if (b < NBOUNDS)
            snprintf(le, sizeof(le), "%g", bounds[b]);
        else
            snprintf(le, sizeof(le), "+Inf");
        snprintf(num, sizeof(num), "%zu", i);
        sample(metric, name, "le", le, num);
    }
    snprintf(metric, sizeof(metric), "%s_sum", m);
    snprintf(num, sizeof(num), "%.3f", (double)h->sum_ms / 1000);
    sample(metric, name, NULL, NULL, num);
    snprintf(metric, sizeof(metric), "%s_count", m);
    snprintf(num, sizeof(num), "%zu", h->total);
    sample(metric, name, NULL, NULL, num);
}

/* which: 0 barrier waits, 1 lock holds, 2 lock waits. */
static void recent(const hist_view *v, const char *name, const char *m,
                   int which)
{
    hist h;
    size_t i, b;

    memset(&h, 0, sizeof(h));
    if (which == 0) {
        for (i = 0; i < v->nparties; i++)
            for (b = 0; b < v->parties[i].nwait; b++)
                hist_add(&h, v->parties[i].wait[b]);
    } else {
        for (i = 0; i < v->nholds; i++) {
            if (which == 1 && v->holds[i].how)
                hist_add(&h, v->holds[i].ended - v->holds[i].granted);
            if (which == 2)
                hist_add(&h, v->holds[i].wait_ms);
        }
    }
    histogram(m, name, &h);
}

/* A counter family from one hash field per name. */
static void plain(const hist_view *vs, const char *const *names, int n,
                  const char *metric, const char *field, const char *help)
{
    char num[32];
    int i;

    family(metric, "counter", help);
    for (i = 0; i < n; i++) {
        snprintf(num, sizeof(num), "%lld", hist_counter(&vs[i], field));
        sample(metric, names[i], NULL, NULL, num);
    }
}

/* Every family once, with a sample per name (the text format wants a
 * family's samples together). */
static void metrics(const hist_view *vs, const char *const *names, int n)
{
    char num[32];
    int i;

    plain(vs, names, n, "rbarrier_rounds_passed_total", "passed",
          "Rounds passed, since the name's history began.");
    family("rbarrier_rounds_broken_total", "counter",
           "Rounds broken, by cause, since the name's history began.");
    for (i = 0; i < n; i++)
        counters(&vs[i], names[i], "rbarrier_rounds_broken_total", "broken:",
                 "cause");
    family("rbarrier_history_events", "gauge",
           "Events the name's capped history keeps.");
    for (i = 0; i < n; i++) {
        snprintf(num, sizeof(num), "%zu", vs[i].h.events_count);
        sample("rbarrier_history_events", names[i], NULL, NULL, num);
    }
    family("rbarrier_history_on", "gauge",
           "1 while the name's history is recorded, 0 once turned off.");
    for (i = 0; i < n; i++)
        sample("rbarrier_history_on", names[i], NULL, NULL,
               vs[i].h.off ? "0" : "1");
    family("rbarrier_recent_wait_seconds", "histogram",
           "Waits (arrival to the round's end) of the rounds the history "
           "keeps: the last rounds, not all since the start.");
    for (i = 0; i < n; i++)
        recent(&vs[i], names[i], "rbarrier_recent_wait_seconds", 0);
    family("rbarrier_job_breaks_total", "counter",
           "Job attempts broken, by cause (stall: made no progress).");
    for (i = 0; i < n; i++)
        counters(&vs[i], names[i], "rbarrier_job_breaks_total",
                 "job_broken:", "cause");
    plain(vs, names, n, "rbarrier_job_restarts_total", "job_restarts",
          "Job restarts (a break with restarts left).");
    plain(vs, names, n, "rbarrier_job_attempts_total", "job_go",
          "Job attempts begun (every member entered).");
    plain(vs, names, n, "rbarrier_jobs_done_total", "job_done",
          "Jobs ended well (every member left).");
    plain(vs, names, n, "rbarrier_lock_grants_total", "lock_grant",
          "Lock slots granted.");
    plain(vs, names, n, "rbarrier_lock_expired_total", "lock_expire",
          "Lock holders whose lease ran out.");
    family("rbarrier_recent_lock_hold_seconds", "histogram",
           "Lock holds (grant to release or expiry) the history keeps.");
    for (i = 0; i < n; i++)
        recent(&vs[i], names[i], "rbarrier_recent_lock_hold_seconds", 1);
    family("rbarrier_recent_lock_wait_seconds", "histogram",
           "Lock waits (in line to grant; 0 granted at once) the history "
           "keeps.");
    for (i = 0; i < n; i++)
        recent(&vs[i], names[i], "rbarrier_recent_lock_wait_seconds", 2);
}

int cmd_metrics(int argc, char **argv)
{
    cli_common common;
    struct arg_str *name;
    struct arg_end *end;
    void *table[1 + CLI_COMMON_COUNT + 1];
    cli_config cfg = CLI_CONFIG_INIT;
    hist_view *vs = NULL;
    rb_error err;
    int code, i, j;

    cli_common_init(&common);
    name = arg_strn(NULL, "name", "NAME", 1, 100, "a name to report (one "
                    "or more --name)");
    end = arg_end(10);
    table[0] = name;
    table[1 + cli_common_table(&common, table + 1)] = end;
    code = cli_parse(argc, argv, table, end, &common, argv[0],
                     "Write the names' counts and recent waits as Prometheus "
                     "text on stdout (for\na textfile collector or a scrape "
                     "wrapper), one label set per name.\nChanges nothing.");
    if (code >= 0)
        goto out;
    for (i = 0; i < name->count; i++)
        for (j = 0; j < i; j++)
            if (strcmp(name->sval[i], name->sval[j]) == 0) {
                code = cli_fail(CLI_EXIT_USAGE, "--name %s is given twice",
                                name->sval[i]);
                goto out;
            }
    for (i = 0; i < name->count; i++)
        if (rb_check_name(name->sval[i], "name", &err) != RB_OK) {
            code = cli_fail(CLI_EXIT_USAGE, "%s", err.msg);
            goto out;
        }
    if (!(vs = calloc((size_t)name->count, sizeof(*vs)))) {
        code = cli_fail(CLI_EXIT_REDIS, "out of memory");
        goto out;
    }
    for (i = 0; i < name->count; i++) {
        cli_config_free(&cfg);
        cfg = (cli_config)CLI_CONFIG_INIT;
        if ((code = hist_load(&vs[i], &common, name->sval[i], 0, &cfg)) >= 0)
            goto out;
    }
    metrics(vs, name->sval, name->count);
    code = CLI_EXIT_OK;
out:
    for (i = 0; vs && i < name->count; i++)
        hist_free(&vs[i]);
    free(vs);
    cli_config_free(&cfg);
    arg_freetable(table, sizeof(table) / sizeof(table[0]));
    return code;
}
