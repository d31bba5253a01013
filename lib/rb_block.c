/* The one blocking read every waiter makes: barriers, jobs and locks all
 * wait for an element on a list that is never consumed, with a rotating
 * move (BLMOVE key key LEFT LEFT), so the element stays for every other
 * reader and any late retry, and nobody polls. */
#include "fmacros.h"

#include <stdio.h>
#include <string.h>

#include "rb_internal.h"

int rb_conn__block_rotate(rb_conn *c, const char *key, rb_call *call,
                          redisReply **out, const char **cmd, rb_error *err)
{
    char secs[32];
    const char *argv[6];
    size_t lens[6];
    int argc, i, rc;

    if (!rb_conn__no_blmove(c)) {
        snprintf(secs, sizeof(secs), "%.3f", (double)call->block_ms / 1000.0);
        argv[0] = "BLMOVE";
        argv[3] = "LEFT";
        argv[4] = "LEFT";
        argv[5] = secs;
        argc = 6;
    } else {
        /* BRPOPLPUSH, before Redis 6.2, takes whole seconds only. */
        snprintf(secs, sizeof(secs), "%lld",
                 ((long long)call->block_ms + 999) / 1000);
        argv[0] = "BRPOPLPUSH";
        argv[3] = secs;
        argc = 4;
    }
    argv[1] = argv[2] = key;
    for (i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    if (cmd)
        *cmd = argv[0];
    rc = rb_conn__call(c, argc, argv, lens, call, out, err);
    if (rc == RB_EREDIS && !rb_conn__no_blmove(c) &&
        call->reply_err == RB_REPLY_UNKNOWN_COMMAND) {
        rb_conn__set_no_blmove(c);
        return rb_conn__block_rotate(c, key, call, out, cmd, err);
    }
    return rc;
}
