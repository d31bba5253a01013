/*
 * An --expect list goes to Redis once per list, not with every arrival: a
 * list of 100,000 ids is megabytes, which every party would send and every
 * arrival search. Each party sends the list's SHA1; the arrive script
 * holds the ids in a set named by it (lua/includes/expect.lua) and answers
 * 'needlist' when it has none, and only then is the list sent.
 */
#include "fmacros.h"

#include <string.h>

#include "rb_barrier.h"
#include "rb_script.h"
#include "rb_sha1.h"

int rb_barrier__arrive_call(rb_waiter *w, const char **keys, int nkeys,
                            const char **args, rb_call *call,
                            redisReply **r, rb_error *err)
{
    rb_arrive_reply a;
    int rc;

    if (w->o->expect && w->expect_sha[0] == '\0')
        rb_sha1_hex(w->o->expect, strlen(w->o->expect), w->expect_sha);
    args[8] = w->expect_sha;
    rc = rb_script__run_keys(w->c, RB_SCRIPT_ARRIVE, keys, nkeys, args, 10,
                             call, r, err);
    if (rc != RB_OK || !w->o->expect || rb_reply__arrive(*r, &a) != RB_OK ||
        a.kind != RB_ARRIVE_NEEDLIST)
        return rc;
    /* Nothing was written: the same call (same nonce) with the list. */
    freeReplyObject(*r);
    *r = NULL;
    args[10] = w->o->expect;
    return rb_script__run_keys(w->c, RB_SCRIPT_ARRIVE, keys, nkeys, args, 11,
                               call, r, err);
}
