/*
 * An --expect list goes to Redis once per list, not with every arrival: a
 * list of 100,000 ids is megabytes, which every party would send and every
 * arrival search. Each party sends the list's digest; the arrive script
 * holds the ids in a set named by it (lua/includes/expect.lua) and answers
 * 'needlist' when it has none, and only then is the list stored, in parts
 * (expect-store), so that no call holds the server for long. The digest is the SHA1 of the parts' SHA1s, so that the
 * server checks each part as it comes.
 */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rb_barrier.h"
#include "rb_reply.h"
#include "rb_script.h"

/* Stores of the list for one arrival: past them, a 'needlist' answer is a
 * bad reply (the list never stays). */
#define RB_EXPECT_STORES_MAX 3

/* Store the list: the server says which part it lacks next (another party
 * may be storing the same list: it then skips the parts stored). */
static int store_list(rb_waiter *w, const char **keys, rb_call *call,
                      rb_error *err)
{
    char index[24];
    const char *args[6];
    rb_expect_parts *p = malloc(sizeof(*p));
    char *part = malloc(RB_EXPECT_PART_BYTES + 1);
    int rc = RB_OK;
    long next = 1;

    if (p == NULL || part == NULL)
        rc = rb_error__set(err, RB_ENOMEM, "out of memory");
    else if (rb_expect__cut(w->o->expect, p) != 0)
        rc = rb_error__set(err, RB_EINVAL, "%s: --expect has more than %d "
                           "ids", w->o->name, RB_N_MAX);
    args[0] = w->expect_sha;
    args[1] = index;
    args[2] = p ? p->sums : NULL;
    args[3] = part;
    args[4] = w->ttl;
    args[5] = w->lease_text;
    while (rc == RB_OK && next > 0) {
        /* The part's text, without the comma that ends it. */
        size_t len = (size_t)(p->start[next] - p->start[next - 1]) - 1;
        redisReply *r = NULL;

        memcpy(part, p->start[next - 1], len);
        part[len] = '\0';
        snprintf(index, sizeof(index), "%ld", next);
        rc = rb_script__run(w->c, RB_SCRIPT_EXPECT_STORE, keys, args, 6,
                            call, &r, err);
        if (rc == RB_OK &&
            rb_reply__expect_store(r, p->count, &next) != RB_OK)
            rc = rb_barrier__bad_reply(w, "expect-store", err);
        freeReplyObject(r);
    }
    free(part);
    free(p);
    return rc;
}

int rb_barrier__arrive_call(rb_waiter *w, const char **keys, int nkeys,
                            const char **args, rb_call *call,
                            redisReply **r, rb_error *err)
{
    rb_arrive_reply a;
    int rc, stores = 0;

    if (w->o->expect && w->expect_sha[0] == '\0') {
        rb_barrier__expect_digest(w->o->expect, w->expect_sha);
        /* Never '': that would arrive with no --expect at all. */
        if (w->expect_sha[0] == '\0')
            return rb_error__set(err, RB_ENOMEM, "%s: cannot take the "
                                 "--expect list's digest", w->o->name);
    }
    args[8] = w->expect_sha;
    for (;;) {
        rc = rb_script__run_keys(w->c, RB_SCRIPT_ARRIVE, keys, nkeys, args,
                                 10, call, r, err);
        if (rc != RB_OK || !w->o->expect ||
            rb_reply__arrive(*r, &a) != RB_OK ||
            a.kind != RB_ARRIVE_NEEDLIST || stores == RB_EXPECT_STORES_MAX)
            return rc;
        /* Nothing was written: store the list, then the same call (same
         * nonce) again. The list may be gone again by then (a reset, an
         * eviction, a failover to a replica that had not seen it all). */
        freeReplyObject(*r);
        *r = NULL;
        stores++;
        if ((rc = store_list(w, keys, call, err)) != RB_OK)
            return rc;
    }
}
