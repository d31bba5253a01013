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

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

int rb_acl__explain(rb_error *err, const char *reply, int argc,
                    const char **argv, const size_t *lens)
{
    static const char run[] = "NOPERM this user has no permissions to run "
                              "the '";
    char pattern[256], cmd[64];
    size_t i;

    if (starts(reply, run)) {
        const char *name = reply + sizeof(run) - 1;

        for (i = 0; i + 1 < sizeof(cmd) && name[i] && name[i] != '\''; i++)
            cmd[i] = (char)tolower((unsigned char)name[i]);
        cmd[i] = '\0';
        return rb_error__set(err, RB_EREDIS,
                             "Redis ACL refused the command '%s': grant the "
                             "user +%s (all rbarrier needs: %s)",
                             cmd, cmd, RB_ACL_COMMANDS);
    }
    if (strstr(reply, "can't run this command") != NULL)
        return rb_error__set(err, RB_EREDIS,
                             "Redis ACL refused a command one of rbarrier's "
                             "scripts calls: grant the user %s",
                             RB_ACL_COMMANDS);
    if ((starts(reply, "NOPERM") && strstr(reply, "keys") != NULL) ||
        strstr(reply, "can't access at least one of the keys") != NULL) {
        if (key_pattern(pattern, sizeof(pattern), argc, argv, lens))
            return rb_error__set(err, RB_EREDIS,
                                 "Redis ACL refused the keys %s: grant the "
                                 "user ~%s", pattern, pattern);
        return rb_error__set(err, RB_EREDIS,
                             "Redis ACL refused a key: grant the user "
                             "~<prefix>:* (rb:* by default)");
    }
    if (starts(reply, "NOPERM"))
        return rb_error__set(err, RB_EREDIS, "Redis ACL: %s", reply + 7);
    return RB_OK;
}
