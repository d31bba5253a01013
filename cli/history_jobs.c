/* A name's lock grants and job attempts, from its history (history.h).
 * A hold ends at its holder's release, its lease's expiry or a reset; a
 * wait is the time in line (a queue event) before the grant. */

#include <stdlib.h>
#include <string.h>

#include "history.h"

static int grow(void **p, size_t n, size_t *cap, size_t size)
{
    void *q;

    if (n < *cap)
        return 0;
    *cap = *cap ? *cap * 2 : 32;
    if (!(q = realloc(*p, *cap * size)))
        return -1;
    *p = q;
    return 0;
}

/* The newest open hold of id (any open hold when id is NULL), or NULL. */
static hist_hold *open_hold(hist_view *v, const char *id)
{
    size_t i;

    for (i = v->nholds; i > 0; i--) {
        hist_hold *h = &v->holds[i - 1];

        if (h->how == NULL && (id == NULL || strcmp(h->id, id) == 0))
            return h;
    }
    return NULL;
}

static long long queued_at(const rb_history *h, size_t upto, const char *id)
{
    size_t i;

    /* Its own last queue event since its last grant. */
    for (i = upto; i > 0; i--) {
        const rb_event *e = &h->events[i - 1];

        if (e->kind != 'l' || !e->id || strcmp(e->id, id) != 0)
            continue;
        if (strcmp(e->event, "queue") == 0)
            return e->ms;
        if (strcmp(e->event, "grant") == 0)
            return -1;
    }
    return -1;
}

static int lock_event(hist_view *v, size_t i, size_t *cap)
{
    const rb_event *e = &v->h.events[i];
    hist_hold *h;

    if (strcmp(e->event, "grant") == 0 && e->id) {
        long long q = queued_at(&v->h, i, e->id);

        if (grow((void **)&v->holds, v->nholds, cap, sizeof(*v->holds)))
            return -1;
        h = &v->holds[v->nholds++];
        memset(h, 0, sizeof(*h));
        h->id = e->id;
        h->token = e->g;
        h->granted = e->ms;
        h->ended = -1;
        h->wait_ms = q >= 0 ? e->ms - q : 0;
    } else if ((strcmp(e->event, "release") == 0 ||
                strcmp(e->event, "expire") == 0) && e->id) {
        if ((h = open_hold(v, e->id))) {
            h->ended = e->ms;
            h->how = e->event;
        }
    } else if (strcmp(e->event, "reset") == 0) {
        while ((h = open_hold(v, NULL))) {
            h->ended = e->ms;
            h->how = "reset";
        }
    }
    return 0;
}

static int job_event(hist_view *v, size_t i, size_t *cap)
{
    const rb_event *e = &v->h.events[i];
    hist_attempt *a = v->nattempts ? &v->attempts[v->nattempts - 1] : NULL;

    if (!a || a->att != e->g || a->epoch != e->epoch || a->end) {
        if (strcmp(e->event, "enter") != 0)
            return 0;   /* its start fell out of the history */
        if (grow((void **)&v->attempts, v->nattempts, cap,
                 sizeof(*v->attempts)))
            return -1;
        a = &v->attempts[v->nattempts++];
        memset(a, 0, sizeof(*a));
        a->att = e->g;
        a->start = e->ms;
    }
    a->epoch = e->epoch;
    if (strcmp(e->event, "leave") == 0 && e->outcome &&
        strcmp(e->outcome, "done") == 0) {
        a->done = 1;
        a->end = e->ms;
    } else if (strcmp(e->event, "break") == 0) {
        a->end = e->ms;
        a->cause = e->cause;
        a->reason = e->reason;
        a->restarted = e->restart;
    }
    return 0;
}

int hist_jobs_locks(hist_view *v)
{
    size_t i, hcap = 0, acap = 0;

    for (i = 0; i < v->h.events_count; i++) {
        const rb_event *e = &v->h.events[i];

        if (e->kind == 'l' && lock_event(v, i, &hcap))
            return -1;
        if (e->kind == 'j' && job_event(v, i, &acap))
            return -1;
    }
    return 0;
}
