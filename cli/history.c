/* The history view: rounds and parties rebuilt from a name's events
 * (history.h); pure, so unit-tested with events made up by the test. The stream is capped, so its oldest round may have lost
 * arrivals: a passed round with fewer arrivals than its n is left out
 * rather than shown with a wrong straggler. */

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;

    return x < y ? -1 : x > y;
}

long long hist_pct(long long *xs, size_t n, int pct)
{
    size_t rank;

    if (n == 0)
        return 0;
    qsort(xs, n, sizeof(*xs), cmp_ll);
    rank = (n * (size_t)pct + 99) / 100;
    return xs[rank ? rank - 1 : 0];
}

long long hist_counter(const hist_view *v, const char *field)
{
    size_t i;

    for (i = 0; i < v->h.counters_count; i++)
        if (strcmp(v->h.counters[i].field, field) == 0)
            return v->h.counters[i].value;
    return 0;
}

/* Ids in the order a person reads them: digit runs by value. */
static int natural_cmp(const char *a, const char *b)
{
    while (*a && *b) {
        if (isdigit((unsigned char)*a) && isdigit((unsigned char)*b)) {
            size_t la, lb;

            while (*a == '0' && isdigit((unsigned char)a[1]))
                a++;
            while (*b == '0' && isdigit((unsigned char)b[1]))
                b++;
            for (la = 0; isdigit((unsigned char)a[la]); la++)
                ;
            for (lb = 0; isdigit((unsigned char)b[lb]); lb++)
                ;
            if (la != lb)
                return la < lb ? -1 : 1;
            if (memcmp(a, b, la))
                return memcmp(a, b, la);
            a += la;
            b += lb;
        } else if (*a != *b) {
            return (unsigned char)*a - (unsigned char)*b;
        } else {
            a++;
            b++;
        }
    }
    return (unsigned char)*a - (unsigned char)*b;
}

static int cmp_id(const void *a, const void *b)
{
    return natural_cmp(*(const char *const *)a, *(const char *const *)b);
}

/* A round's events, grouped before the view is laid out. */
typedef struct draft {
    long long g, n, start, end;
    int passed;
    const rb_event *brk;
    size_t *ev;             /* indexes of its arrivals in h.events */
    size_t nev, cap;
} draft;

static draft *find_draft(draft **ds, size_t *nd, size_t *cap, long long g)
{
    size_t i;

    /* Rounds follow one another: a round's events are among the last few
     * rounds seen. */
    for (i = *nd; i > 0 && i + 16 > *nd; i--)
        if ((*ds)[i - 1].g == g)
            return &(*ds)[i - 1];
    if (*nd == *cap) {
        size_t nc = *cap ? *cap * 2 : 64;
        draft *n = realloc(*ds, nc * sizeof(*n));

        if (!n)
            return NULL;
        *ds = n;
        *cap = nc;
    }
    memset(&(*ds)[*nd], 0, sizeof(draft));
    (*ds)[*nd].g = g;
    return &(*ds)[(*nd)++];
}

static int add_ev(draft *d, size_t i)
{
    if (d->nev == d->cap) {
        size_t nc = d->cap ? d->cap * 2 : 8;
        size_t *n = realloc(d->ev, nc * sizeof(*n));

        if (!n)
            return -1;
        d->ev = n;
        d->cap = nc;
    }
    d->ev[d->nev++] = i;
    return 0;
}

static size_t party_of(const hist_view *v, const char *const *ids,
                       const char *id)
{
    const char *const *p = bsearch(&id, ids, v->nparties, sizeof(*ids),
                                   cmp_id);

    return (size_t)(p - ids);
}

static int push(long long **xs, size_t *n, long long x)
{
    long long *m = realloc(*xs, (*n + 1) * sizeof(*m));

    if (!m)
        return -1;
    m[(*n)++] = x;
    *xs = m;
    return 0;
}

/* Lay the drafts out as rounds, arrivals and parties. */
static int build(hist_view *v, draft *ds, size_t nd, long last)
{
    const rb_event *e = v->h.events;
    const char **ids = NULL;
    size_t i, k, total = 0, nids = 0, keep = 0, first;

    for (i = 0; i < nd; i++)
        if ((ds[i].passed && ds[i].nev >= (size_t)ds[i].n) ||
            (ds[i].brk && ds[i].nev > 0))
            ds[keep++] = ds[i];
        else
            free(ds[i].ev);
    first = last > 0 && keep > (size_t)last ? keep - (size_t)last : 0;
    for (i = first; i < keep; i++)
        total += ds[i].nev;
    if (!(ids = malloc((total + 1) * sizeof(*ids))) ||
        !(v->arr = malloc((total + 1) * sizeof(*v->arr))) ||
        !(v->rounds = calloc(keep - first + 1, sizeof(*v->rounds))))
        goto oom;
    for (i = first; i < keep; i++)
        for (k = 0; k < ds[i].nev; k++)
            ids[nids++] = e[ds[i].ev[k]].id;
    qsort(ids, nids, sizeof(*ids), cmp_id);
    for (i = 0, k = 0; i < nids; i++)
        if (k == 0 || strcmp(ids[k - 1], ids[i]) != 0)
            ids[k++] = ids[i];
    v->nparties = k;
    if (!(v->parties = calloc(k + 1, sizeof(*v->parties))))
        goto oom;
    for (i = 0; i < k; i++)
        v->parties[i].id = ids[i];
    for (i = first; i < keep; i++) {
        draft *d = &ds[i];
        hist_round *r = &v->rounds[v->nrounds++];

        r->g = d->g;
        r->n = d->n;
        r->passed = d->passed;
        r->start = e[d->ev[0]].ms;
        r->end = d->passed ? d->end : d->brk->ms;
        if (d->brk) {
            r->cause = d->brk->cause;
            r->reason = d->brk->reason;
        }
        r->a0 = v->narr;
        for (k = 0; k < d->nev; k++) {
            hist_arrival *a = &v->arr[v->narr++];
            hist_party *p;

            a->party = party_of(v, ids, e[d->ev[k]].id);
            a->ms = e[d->ev[k]].ms;
            p = &v->parties[a->party];
            p->rounds++;
            if (push(&p->late, &p->nlate, a->ms - r->start) ||
                push(&p->wait, &p->nwait, r->end - a->ms))
                goto oom;
        }
        r->na = d->nev;
        r->last = v->arr[v->narr - 1].party;
        if (r->passed)
            v->parties[r->last].last++;
        if (v->nrounds == 1 || r->start < v->t0)
            v->t0 = r->start;
        if (r->end > v->t1)
            v->t1 = r->end;
    }
    for (i = 0; i < nd; i++)
        if (i < keep)
            free(ds[i].ev);
    free(ids);
    return 0;
oom:
    for (i = 0; i < keep; i++)
        free(ds[i].ev);
    free(ids);
    return -1;
}

static int rounds_view(hist_view *v, long last)
{
    const rb_event *e = v->h.events;
    draft *ds = NULL, *d;
    size_t nd = 0, cap = 0, i;
    int rc;

    for (i = 0; i < v->h.events_count; i++) {
        if (e[i].kind != 'b' || e[i].in || e[i].g <= 0)
            continue;
        if (!(d = find_draft(&ds, &nd, &cap, e[i].g)))
            goto oom;
        if (strcmp(e[i].event, "arrive") == 0 && e[i].id) {
            size_t k;

            for (k = 0; k < d->nev; k++)
                if (strcmp(e[d->ev[k]].id, e[i].id) == 0)
                    break;
            if (k == d->nev && add_ev(d, i))
                goto oom;
            if (d->nev == 1 || e[i].n)
                d->n = e[i].n;
            if (e[i].passed) {
                d->passed = 1;
                d->end = e[i].ms;
            }
        } else if (strcmp(e[i].event, "pass") == 0) {
            d->passed = 1;
            d->end = e[i].ms;
        } else if (strcmp(e[i].event, "break") == 0 && !d->brk) {
            d->brk = &e[i];
        }
    }
    rc = build(v, ds, nd, last);
    free(ds);
    return rc;
oom:
    for (i = 0; i < nd; i++)
        free(ds[i].ev);
    free(ds);
    return -1;
}

int hist_build(hist_view *v, long last)
{
    if (rounds_view(v, last) != 0)
        return -1;
    return hist_jobs_locks(v);
}

void hist_free(hist_view *v)
{
    size_t i;

    for (i = 0; i < v->nparties; i++) {
        free(v->parties[i].late);
        free(v->parties[i].wait);
    }
    free(v->parties);
    free(v->rounds);
    free(v->arr);
    free(v->holds);
    free(v->attempts);
    rb_history_clear(&v->h);
    memset(v, 0, sizeof(*v));
}
