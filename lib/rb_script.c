/*
 * Script registry: the protocol lives in lua/, and each call names a script
 * by id. EVALSHA first, so a warm server never sees the source; EVAL once on
 * NOSCRIPT, because a SCRIPT FLUSH or a restart must cost one round trip,
 * not a failed wait.
 */
#include "fmacros.h"

#include <string.h>

#include "rb_script.h"

#define RB_SCRIPT_ARGS_MAX 20

int rb_script__run(rb_conn *c, rb_script_id id, const char *const *keys,
                   const char *const *args, int nargs, rb_call *call,
                   redisReply **out, rb_error *err)
{
    return rb_script__run_keys(c, id, keys, rb_scripts[id].numkeys, args,
                               nargs, call, out, err);
}

int rb_script__run_keys(rb_conn *c, rb_script_id id, const char *const *keys,
                        int nkeys, const char *const *args, int nargs,
                        rb_call *call, redisReply **out, rb_error *err)
{
    const rb_script *s = &rb_scripts[id];
    const char *argv[RB_SCRIPT_ARGS_MAX];
    size_t lens[RB_SCRIPT_ARGS_MAX];
    char numkeys[8];
    int argc = 0, i, rc;

    if (nkeys < s->numkeys || nkeys > 9 ||
        3 + nkeys + nargs > RB_SCRIPT_ARGS_MAX)
        return rb_error__set(err, RB_EINVAL, "script %s: too many arguments",
                             s->name);
    /* One script, one slot: in a cluster anything else is refused with
     * CROSSSLOT, and on one server it would be a key layout bug. */
    if (!rb_key__same_slot(keys, nkeys))
        return rb_error__set(err, RB_EINVAL, "script %s: keys span more "
                             "than one hash slot (%s)", s->name, keys[0]);
    numkeys[0] = (char)('0' + nkeys);
    numkeys[1] = '\0';
    argv[argc++] = "EVALSHA";
    argv[argc++] = s->sha1;
    argv[argc++] = numkeys;
    for (i = 0; i < nkeys; i++)
        argv[argc++] = keys[i];
    for (i = 0; i < nargs; i++)
        argv[argc++] = args[i];
    for (i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);

    rc = rb_conn__call(c, argc, argv, lens, call, out, err);
    if (rc == RB_EREDIS && call->reply_err == RB_REPLY_NOSCRIPT) {
        argv[0] = "EVAL";
        lens[0] = 4;
        argv[1] = s->source;
        lens[1] = s->length;
        rc = rb_conn__call(c, argc, argv, lens, call, out, err);
    }
    return rc;
}
