/*
 * Least privilege: what a Redis ACL user needs for rbarrier, and a refusal
 * turned into what to grant. Redis says "NOPERM this user has no
 * permissions to run the 'zadd' command" for a command sent directly, but
 * only "The user executing the script can't run this command" when a
 * script's call is refused, and never which key was refused: the call's
 * own arguments (its keys carry the prefix) and the list of commands
 * rbarrier uses fill in the rest.
 */
#include "fmacros.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "rb_acl.h"
#include "rb_internal.h"
#include "rb_reply.h"

/* The key pattern a call's keys fall under: "<prefix>:*", taken from the
 * first argument shaped like "<prefix>:<kind>:{..." (the kind, one letter,
 * is left to the pattern: one grant covers every kind). */
static int key_pattern(char *out, size_t len, int argc, const char **argv,
                       const size_t *lens)
{
    int i;

    for (i = 1; i < argc; i++) {
        const char *brace = memchr(argv[i], '{', lens[i]);
        size_t plen;

        if (brace && brace > argv[i] && brace[-1] == ':' &&
            (size_t)(brace - argv[i]) < len - 2) {
            plen = (size_t)(brace - argv[i]);
            if (plen >= 4 && brace[-3] == ':' && brace[-2] != ':')
                plen -= 2;
            snprintf(out, len, "%.*s*", (int)plen, argv[i]);
            return 1;
        }
    }
    return 0;
}

int rb_acl__explain(rb_error *err, rb_reply_err kind, const char *reply,
                    int argc, const char **argv, const size_t *lens)
{
    char pattern[256], cmd[64];

    switch (kind) {
    case RB_REPLY_NOPERM_COMMAND:
        if (!rb_reply__noperm_command(reply, cmd, sizeof(cmd)))
            break;
        return rb_error__set(err, RB_EREDIS,
                             "Redis ACL refused the command '%s': grant the "
                             "user +%s (all rbarrier needs: %s)",
                             cmd, cmd, RB_ACL_COMMANDS);
    case RB_REPLY_NOPERM_SCRIPT:
        return rb_error__set(err, RB_EREDIS,
                             "Redis ACL refused a command one of rbarrier's "
                             "scripts calls: grant the user %s",
                             RB_ACL_COMMANDS);
    case RB_REPLY_NOPERM_KEYS:
        if (key_pattern(pattern, sizeof(pattern), argc, argv, lens))
            return rb_error__set(err, RB_EREDIS,
                                 "Redis ACL refused the keys %s: grant the "
                                 "user ~%s", pattern, pattern);
        return rb_error__set(err, RB_EREDIS,
                             "Redis ACL refused a key: grant the user "
                             "~<prefix>:* (rb:* by default)");
    default:
        break;
    }
    if (kind == RB_REPLY_NOPERM || kind == RB_REPLY_NOPERM_COMMAND)
        return rb_error__set(err, RB_EREDIS, "Redis ACL: %s",
                             reply[0] && reply[6] ? reply + 7 : reply);
    return RB_OK;
}
