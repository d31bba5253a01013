#ifndef RB_SCRIPT_H
#define RB_SCRIPT_H

/* The Lua scripts of lua/, embedded at build time (tools/embed-lua.sh). */

#include <stddef.h>

#include "rb_internal.h"

typedef struct rb_script {
    const char *name;     /* file name without -<numkeys>.lua */
    const char *source;
    size_t length;
    int numkeys;
    const char *sha1;     /* hex, computed at build time */
} rb_script;

/* Indexes into rb_scripts[]: the generator emits the lua/ files in name order,
 * and a unit test checks that these match. */
typedef enum rb_script_id {
    RB_SCRIPT_ABANDON = 0,
    RB_SCRIPT_ARRIVE,
    RB_SCRIPT_CLAIM,
    RB_SCRIPT_EXPECT_STORE,
    RB_SCRIPT_HEARTBEAT,
    RB_SCRIPT_JOB_END,
    RB_SCRIPT_JOB_ENTER,
    RB_SCRIPT_JOB_KEEP,
    RB_SCRIPT_JOB_RESET,
    RB_SCRIPT_JOB_STATUS,
    RB_SCRIPT_JOB_STOP,
    RB_SCRIPT_LOCK_ACQUIRE,
    RB_SCRIPT_LOCK_RELEASE,
    RB_SCRIPT_LOCK_RENEW,
    RB_SCRIPT_LOCK_RESET,
    RB_SCRIPT_LOCK_STATUS,
    RB_SCRIPT_RELEASE,
    RB_SCRIPT_RESET,
    RB_SCRIPT_SET,
    RB_SCRIPT_STATUS,
    RB_SCRIPT_SYNC,
    RB_SCRIPT_TRAIN,
    RB_SCRIPT_WITHDRAW,
    RB_SCRIPT__COUNT
} rb_script_id;

extern const rb_script rb_scripts[];
extern const size_t rb_scripts_count;

/* Run a script by EVALSHA; on NOSCRIPT (a flushed or restarted server)
 * send it once by EVAL, which also caches it again. keys has the script's
 * numkeys entries; args has nargs. call->reply_err tells the class of an
 * error reply (rb_conn__call). */
int rb_script__run(rb_conn *c, rb_script_id id, const char *const *keys,
                   const char *const *args, int nargs, rb_call *call,
                   redisReply **out, rb_error *err);
/* The same with nkeys keys (at least the script's numkeys, at most 9), for
 * a script with optional trailing keys (arrive's job keys). */
int rb_script__run_keys(rb_conn *c, rb_script_id id, const char *const *keys,
                        int nkeys, const char *const *args, int nargs,
                        rb_call *call, redisReply **out, rb_error *err);

#endif
