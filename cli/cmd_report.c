/* rbarrier report: who the rounds wait for, from the name's history (read
 * only). Parties are sorted straggler first: most often last, then the
 * latest median arrival. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"

typedef struct row {
    const hist_party *p;
    long long p50, p95, max;
} row;

static int cmp_row(const void *a, const void *b)
{
    const row *x = a, *y = b;

    if (x->p->last != y->p->last)
        return x->p->last > y->p->last ? -1 : 1;
    if (x->p50 != y->p50)
        return x->p50 > y->p50 ? -1 : 1;
    return strcmp(x->p->id, y->p->id);
}

static void json_pcts(cli_json *j, const char *key, long long p50,
                      long long p95, long long max)
{
    cli_json_key(j, key);
    cli_json_begin_obj(j);
    cli_json_kint(j, "p50", p50);
    cli_json_kint(j, "p95", p95);
    cli_json_kint(j, "max", max);
    cli_json_end_obj(j);
}


/* Per holder of a lock: its grants, holds and waits. */
typedef struct holder {
    const char *id;
    size_t grants;
    long long *hold, *wait;
    size_t nhold, nwait;
} holder;

static int add_ll(long long **xs, size_t *n, long long x)
{
    long long *m = realloc(*xs, (*n + 1) * sizeof(*m));

    if (!m)
        return -1;
    m[(*n)++] = x;
    *xs = m;
    return 0;
}

/* The holders of v's grants, in order of first grant; NULL out of memory
 * (or none: *n 0). */
static holder *holders_of(const hist_view *v, size_t *n)
{
    holder *hs = calloc(v->nholds + 1, sizeof(*hs));
    size_t i, k;

    *n = 0;
    if (!hs)
        return NULL;
    for (i = 0; i < v->nholds; i++) {
        const hist_hold *h = &v->holds[i];

        for (k = 0; k < *n && strcmp(hs[k].id, h->id) != 0; k++)
            ;
        if (k == *n)
            hs[(*n)++].id = h->id;
        hs[k].grants++;
        if ((h->how && add_ll(&hs[k].hold, &hs[k].nhold,
                              h->ended - h->granted)) ||
            add_ll(&hs[k].wait, &hs[k].nwait, h->wait_ms))
            return hs;   /* what fitted: the counts stay right */
    }
    return hs;
}

static void free_holders(holder *hs, size_t n)
{
    size_t i;

    for (i = 0; hs && i < n; i++) {
        free(hs[i].hold);
        free(hs[i].wait);
    }
    free(hs);
}

static void print_job(const hist_view *v)
{
    cli_json *j = cli_out_json();
    size_t i;

    if (j) {
        cli_json_key(j, "job");
        cli_json_begin_obj(j);
        cli_json_kint(j, "restarts", hist_counter(v, "job_restarts"));
        cli_json_kint(j, "stalls", hist_counter(v, "job_broken:stall"));
        cli_json_key(j, "attempts");
        cli_json_begin_arr(j);
    } else {
        printf("job: %zu attempt%s in its history, %lld restart%s, %lld "
               "stall%s\n", v->nattempts, v->nattempts == 1 ? "" : "s",
               hist_counter(v, "job_restarts"),
               hist_counter(v, "job_restarts") == 1 ? "" : "s",
               hist_counter(v, "job_broken:stall"),
               hist_counter(v, "job_broken:stall") == 1 ? "" : "s");
    }
    for (i = 0; i < v->nattempts; i++) {
        const hist_attempt *a = &v->attempts[i];
        const char *outcome = a->done ? "ok" : a->end ? "broken" : "running";

        if (j) {
            cli_json_begin_obj(j);
            cli_json_kint(j, "epoch", a->epoch);
            cli_json_kint(j, "attempt", a->att);
            cli_json_kstr(j, "outcome", outcome);
            if (a->end)
                cli_json_kint(j, "duration_ms", a->end - a->start);
            if (a->reason) {
                cli_json_kstr(j, "cause", a->cause);
                cli_json_kstr(j, "reason", a->reason);
                cli_json_kbool(j, "restarted", a->restarted);
            }
            cli_json_end_obj(j);
        } else if (a->reason) {
            printf("  attempt %lld: broken after %.1fs (%s): %s%s\n", a->att,
                   (double)(a->end - a->start) / 1000,
                   a->cause ? a->cause : "?", a->reason,
                   a->restarted ? "; restarted" : "");
        } else {
            printf("  attempt %lld: %s", a->att, outcome);
            if (a->end)
                printf(" after %.1fs", (double)(a->end - a->start) / 1000);
            printf("\n");
        }
    }
    if (j) {
        cli_json_end_arr(j);
        cli_json_end_obj(j);
    }
}

static void print_lock(const hist_view *v)
{
    cli_json *j = cli_out_json();
    size_t n = 0, i;
    holder *hs = holders_of(v, &n);

    if (j) {
        cli_json_key(j, "lock");
        cli_json_begin_obj(j);
        cli_json_kint(j, "grants", hist_counter(v, "lock_grant"));
        cli_json_kint(j, "expired", hist_counter(v, "lock_expire"));
        cli_json_key(j, "holders");
        cli_json_begin_arr(j);
    } else {
        printf("lock: %lld grant%s, %lld lease%s expired; in its history:\n",
               hist_counter(v, "lock_grant"),
               hist_counter(v, "lock_grant") == 1 ? "" : "s",
               hist_counter(v, "lock_expire"),
               hist_counter(v, "lock_expire") == 1 ? "" : "s");
        printf("%-20s %7s %10s %10s %10s %10s\n", "holder", "grants",
               "hold p50", "hold max", "wait p50", "wait max");
    }
    for (i = 0; i < n; i++) {
        holder *h = &hs[i];
        long long h50 = hist_pct(h->hold, h->nhold, 50);
        long long h95 = hist_pct(h->hold, h->nhold, 95);
        long long hmax = hist_pct(h->hold, h->nhold, 100);
        long long w50 = hist_pct(h->wait, h->nwait, 50);
        long long w95 = hist_pct(h->wait, h->nwait, 95);
        long long wmax = hist_pct(h->wait, h->nwait, 100);

        if (j) {
            cli_json_begin_obj(j);
            cli_json_kstr(j, "id", h->id);
            cli_json_kint(j, "grants", (long long)h->grants);
            json_pcts(j, "hold_ms", h50, h95, hmax);
            json_pcts(j, "wait_ms", w50, w95, wmax);
            cli_json_end_obj(j);
        } else {
            printf("%-20s %7zu %8lldms %8lldms %8lldms %8lldms\n", h->id,
                   h->grants, h50, hmax, w50, wmax);
        }
    }
    if (j) {
        cli_json_end_arr(j);
        cli_json_end_obj(j);
    }
    free_holders(hs, n);
}

static void print_report(const char *name, hist_view *v, row *rows)
{
    cli_json *j = cli_out_json();
    long long *dur = calloc(v->nrounds + 1, sizeof(*dur));
    long long d50, d95, dmax;
    size_t i, passed = 0;

    for (i = 0; i < v->nrounds; i++) {
        passed += (size_t)v->rounds[i].passed;
        if (dur)
            dur[i] = v->rounds[i].end - v->rounds[i].start;
    }
    d50 = dur ? hist_pct(dur, v->nrounds, 50) : 0;
    d95 = dur ? hist_pct(dur, v->nrounds, 95) : 0;
    dmax = dur ? hist_pct(dur, v->nrounds, 100) : 0;
    free(dur);
    if (j) {
        cli_json_kbool(j, "exists", v->h.events_count > 0);
        cli_json_kbool(j, "history", !v->h.off);
        cli_json_kint(j, "rounds", (long long)v->nrounds);
        cli_json_kint(j, "passed", (long long)passed);
        cli_json_kint(j, "broken", (long long)(v->nrounds - passed));
        json_pcts(j, "duration_ms", d50, d95, dmax);
        cli_json_key(j, "parties");
        cli_json_begin_arr(j);
        for (i = 0; i < v->nparties; i++) {
            cli_json_begin_obj(j);
            cli_json_kstr(j, "id", rows[i].p->id);
            cli_json_kint(j, "rounds", (long long)rows[i].p->rounds);
            cli_json_kint(j, "last", (long long)rows[i].p->last);
            json_pcts(j, "late_ms", rows[i].p50, rows[i].p95, rows[i].max);
            cli_json_end_obj(j);
        }
        cli_json_end_arr(j);
        cli_json_key(j, "breaks");
        cli_json_begin_arr(j);
        for (i = 0; i < v->nrounds; i++) {
            if (v->rounds[i].passed)
                continue;
            cli_json_begin_obj(j);
            cli_json_kint(j, "gen", v->rounds[i].g);
            cli_json_kstr(j, "cause", v->rounds[i].cause);
            cli_json_kstr(j, "reason", v->rounds[i].reason);
            cli_json_end_obj(j);
        }
        cli_json_end_arr(j);
        if (v->nattempts)
            print_job(v);
        if (v->nholds)
            print_lock(v);
        cli_json_key(j, "counters");
        cli_json_begin_obj(j);
        for (i = 0; i < v->h.counters_count; i++)
            cli_json_kint(j, v->h.counters[i].field, v->h.counters[i].value);
        cli_json_end_obj(j);
        cli_done(CLI_EXIT_OK, NULL);
        return;
    }
    if (v->nrounds + v->nattempts + v->nholds == 0) {
        printf("%s: nothing in its history%s\n", name, v->h.off ?
               " (history is off for this name)" : "");
        return;
    }
    if (v->nattempts)
        print_job(v);
    if (v->nholds)
        print_lock(v);
    if (v->nrounds == 0)
        return;
    printf("%s: %zu round%s (%zu passed, %zu broken) over %.1fs\n", name,
           v->nrounds, v->nrounds == 1 ? "" : "s", passed,
           v->nrounds - passed, (double)(v->t1 - v->t0) / 1000);
    printf("round duration (first arrival to end): p50 %lldms, p95 %lldms, "
           "max %lldms\n", d50, d95, dmax);
    if (rows[0].p->last > 0 && v->nparties > 1)
        printf("straggler: %s (last in %zu of %zu passed rounds)\n",
               rows[0].p->id, rows[0].p->last, passed);
    printf("%-20s %7s %7s %10s %10s %10s\n", "party", "rounds", "last",
           "late p50", "late p95", "late max");
    for (i = 0; i < v->nparties; i++)
        printf("%-20s %7zu %7zu %8lldms %8lldms %8lldms\n", rows[i].p->id,
               rows[i].p->rounds, rows[i].p->last, rows[i].p50, rows[i].p95,
               rows[i].max);
    for (i = 0; i < v->nrounds; i++)
        if (!v->rounds[i].passed)
            printf("round %lld broken: %s\n", v->rounds[i].g,
                   v->rounds[i].reason ? v->rounds[i].reason : "?");
}

int cmd_report(int argc, char **argv)
{
    cli_config cfg = CLI_CONFIG_INIT;
    const char *name = NULL;
    hist_view v;
    row *rows = NULL;
    size_t i;
    int code;

    code = hist_open_cmd(argc, argv,
                         "Read the name's history and say, per party, how "
                         "many rounds it was in,\nhow often it arrived last "
                         "and how late it arrived (after the round's "
                         "first\narrival: median, p95, max), and the rounds' "
                         "durations; the straggler first.\nChanges nothing.",
                         "only its last K ended rounds (default: all its "
                         "history keeps)", &v, &cfg, &name);
    if (code >= 0)
        goto out;
    if (!(rows = calloc(v.nparties + 1, sizeof(*rows)))) {
        code = cli_fail(CLI_EXIT_REDIS, "out of memory");
        goto out;
    }
    for (i = 0; i < v.nparties; i++) {
        hist_party *p = &v.parties[i];

        rows[i].p = p;
        rows[i].p50 = hist_pct(p->late, p->nlate, 50);
        rows[i].p95 = hist_pct(p->late, p->nlate, 95);
        rows[i].max = hist_pct(p->late, p->nlate, 100);
    }
    qsort(rows, v.nparties, sizeof(*rows), cmp_row);
    print_report(name, &v, rows);
    code = CLI_EXIT_OK;
out:
    free(rows);
    hist_free(&v);
    cli_config_free(&cfg);
    return code;
}
