/*
 * Barriers: status and reset, the two calls an operator makes. Each is one
 * script (a consistent snapshot; a reset no arrival can interleave with),
 * and each result owns what it holds (strings of any length, never cut to
 * a buffer of the library's choosing), freed by its clear function.
 */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_barrier.h"
#include "rb_script.h"

static rb_call call_admin(const rb_conn *c)
{
    rb_call call = {
        .deadline = rb_conn__op_deadline(c),
        .cancellable = 1,
    };

    return call;
}

/* The status script lists a round's members a page at a time (so that no
 * call holds Redis more than a millisecond or so, at any N), in order of
 * lease deadline: the next page starts at the last deadline listed,
 * skipping the ids at it already listed. A member that renews meanwhile
 * moves later and may be listed again (kept once, below); one not listed
 * yet can only move later, so none is missed. */
#define STATUS_PAGE 1000
#define STATUS_PAGES_MAX (2 * RB_N_MAX / STATUS_PAGE + 8)
#define STATUS_TRIES 3

typedef struct entry {
    const char *id;
    size_t pos;
} entry;

static int entry_cmp(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    int c = strcmp(x->id, y->id);

    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

/* Keep the last of each id's entries (its latest lease), in order. */
static int drop_repeats(rb_status *st)
{
    entry *e;
    char *gone;
    size_t i, j, n = st->members_count;

    if (n < 2)
        return RB_OK;
    e = malloc(n * sizeof(*e));
    gone = calloc(n, 1);
    if (e == NULL || gone == NULL) {
        free(e);
        free(gone);
        return RB_ENOMEM;
    }
    for (i = 0; i < n; i++) {
        e[i].id = st->members[i].id;
        e[i].pos = i;
    }
    qsort(e, n, sizeof(*e), entry_cmp);
    for (i = 1; i < n; i++)
        if (strcmp(e[i - 1].id, e[i].id) == 0)
            gone[e[i - 1].pos] = 1;
    for (i = j = 0; i < n; i++) {
        if (gone[i])
            free(st->members[i].id);
        else
            st->members[j++] = st->members[i];
    }
    st->members_count = j;
    free(e);
    free(gone);
    return RB_OK;
}

/* Move page's members to the end of all's. */
static int take_page(rb_status *all, rb_status *page)
{
    rb_member *m;

    if (page->members_count == 0)
        return RB_OK;
    m = realloc(all->members, (all->members_count + page->members_count) *
                                  sizeof(*m));
    if (m == NULL)
        return RB_ENOMEM;
    memcpy(m + all->members_count, page->members,
           page->members_count * sizeof(*m));
    all->members = m;
    all->members_count += page->members_count;
    free(page->members);
    page->members = NULL;
    page->members_count = 0;
    return RB_OK;
}

/* One page: from the deadline in args[0], skipping args[1] ids at it.
 * Sets *full when the page is full (more may follow) and moves args on. */
static int status_page(rb_status *page, rb_conn *c, const char **keys,
                       char *from, char *skip, int *full, const char *name,
                       rb_error *err)
{
    const char *args[3] = { from, skip, NULL };
    char limit[24];
    rb_call call = call_admin(c);
    redisReply *r = NULL;
    long long last = -1, at_last = 0, d, from_ms;
    size_t i;
    int rc;

    memset(page, 0, sizeof(*page));
    snprintf(limit, sizeof(limit), "%d", STATUS_PAGE);
    args[2] = limit;
    rc = rb_script__run(c, RB_SCRIPT_STATUS, keys, args, 3, &call, &r, err);
    if (rc != RB_OK)
        return rb_barrier__script_failed(name, &call, rc, err);
    rc = rb_reply__status(r, page);
    if (rc == RB_OK) {
        /* rb_reply__status checked every deadline. */
        for (i = 5; i < r->elements; i += 2) {
            rb_reply__int(r->element[i], 0, 1LL << 62, &d);
            at_last = d == last ? at_last + 1 : 1;
            last = d;
        }
        *full = page->members_count >= STATUS_PAGE;
        from_ms = strcmp(from, "-inf") ? atoll(from) : -1;
        if (*full && last == from_ms)
            at_last += atoll(skip);   /* the whole page at one deadline */
        snprintf(from, 24, "%lld", last);
        snprintf(skip, 24, "%lld", at_last);
    }
    freeReplyObject(r);
    if (rc == RB_ENOMEM)
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    if (rc != RB_OK)
        return rb_error__set(err, RB_EPROTO, "%s: bad status reply", name);
    return RB_OK;
}

int rb_barrier_status(rb_status *out, rb_conn *c, const char *prefix,
                      const char *name, rb_error *err)
{
    rb_error local;
    char base[RB_KEY_MAX], from[24], skip[24];
    const char *keys[1] = { base };
    rb_status page;
    int rc, tries = 0, pages = 0, full = 1;

    if (err == NULL)
        err = &local;
    memset(out, 0, sizeof(*out));
    if ((rc = rb_check_name(name, "barrier name", err)) != RB_OK)
        return rc;
    if (prefix && (rc = rb_check_name(prefix, "prefix", err)) != RB_OK)
        return rc;
    if ((rc = rb_key__barrier(base, sizeof(base), prefix, name, err)))
        return rc;
    snprintf(from, sizeof(from), "-inf");
    snprintf(skip, sizeof(skip), "0");
    while (full && pages++ < STATUS_PAGES_MAX) {
        if ((rc = status_page(&page, c, keys, from, skip, &full, name,
                              err)) != RB_OK) {
            rb_status_clear(&page);
            return rc;
        }
        if (out->last_outcome && page.gen != out->gen) {
            /* The round ended between two pages: list the new one. */
            rb_status_clear(out);
            rb_status_clear(&page);
            if (++tries == STATUS_TRIES)
                return rb_error__set(err, RB_EPROTO, "%s: rounds end "
                                     "faster than status can list them",
                                     name);
            snprintf(from, sizeof(from), "-inf");
            snprintf(skip, sizeof(skip), "0");
            full = 1;
            continue;
        }
        if (out->last_outcome == NULL) {
            out->exists = page.exists;
            out->gen = page.gen;
            out->n = page.n;
            out->last_outcome = page.last_outcome;
            page.last_outcome = NULL;
        }
        rc = take_page(out, &page);
        rb_status_clear(&page);
        if (rc != RB_OK)
            return rb_error__set(err, RB_ENOMEM, "out of memory");
    }
    if (drop_repeats(out) != RB_OK)
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    return RB_OK;
}

void rb_status_clear(rb_status *st)
{
    size_t i;

    if (st == NULL)
        return;
    for (i = 0; i < st->members_count; i++)
        free(st->members[i].id);
    free(st->members);
    free(st->last_outcome);
    memset(st, 0, sizeof(*st));
}

int rb_barrier__reset_from_reply(rb_reset_result *res, const redisReply *r)
{
    rb_reset_reply rs;
    size_t i;

    memset(res, 0, sizeof(*res));
    if (rb_reply__reset(r, &rs) != RB_OK)
        return RB_EPROTO;
    res->gen = rs.gen;
    res->members = rs.members;
    if (rs.removed_count == 0)
        return RB_OK;
    if ((res->removed = calloc(rs.removed_count, sizeof(char *))) == NULL)
        return RB_ENOMEM;
    for (i = 0; i < rs.removed_count; i++) {
        size_t len = rs.removed[i]->len;

        if ((res->removed[i] = malloc(len + 1)) == NULL)
            return RB_ENOMEM;
        memcpy(res->removed[i], rs.removed[i]->str, len + 1);
        res->removed_count = i + 1;
    }
    return RB_OK;
}

int rb_barrier_reset(rb_reset_result *out, rb_conn *c, const char *prefix,
                     const char *name, long long ttl_ms, rb_error *err)
{
    rb_error local;
    rb_reset_result tmp;
    char base[RB_KEY_MAX], nonce_key[RB_KEY_MAX], linger[24], ttl[24];
    const char *keys[2] = { base, nonce_key };
    const char *args[2] = { linger, ttl };
    rb_call call = call_admin(c);
    redisReply *r = NULL;
    long long t = rb_key__ttl_s(ttl_ms);
    int rc;

    if (err == NULL)
        err = &local;
    if (out == NULL)
        out = &tmp;
    memset(out, 0, sizeof(*out));
    if ((rc = rb_check_name(name, "barrier name", err)) != RB_OK)
        return rc;
    if (prefix && (rc = rb_check_name(prefix, "prefix", err)) != RB_OK)
        return rc;
    if ((rc = rb_key__barrier(base, sizeof(base), prefix, name, err)) ||
        (rc = rb_key__nonces(nonce_key, sizeof(nonce_key), base, err)))
        return rc;
    snprintf(linger, sizeof(linger), "%lld", rb_barrier__linger_s(t));
    snprintf(ttl, sizeof(ttl), "%lld", t);
    rc = rb_script__run(c, RB_SCRIPT_RESET, keys, args, 2, &call, &r, err);
    if (rc != RB_OK)
        return rc;
    rc = rb_barrier__reset_from_reply(out, r);
    freeReplyObject(r);
    if (out == &tmp)
        rb_reset_result_clear(&tmp);
    if (rc == RB_ENOMEM)
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    if (rc != RB_OK)
        return rb_error__set(err, RB_EPROTO, "%s: bad reset reply", name);
    return RB_OK;
}

void rb_reset_result_clear(rb_reset_result *res)
{
    size_t i;

    if (res == NULL)
        return;
    for (i = 0; i < res->removed_count; i++)
        free(res->removed[i]);
    free(res->removed);
    memset(res, 0, sizeof(*res));
}
