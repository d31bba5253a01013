#include "fmacros.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "rb_internal.h"

/* Callers often wrap the message already there ("...: %s", err->msg), so
 * the text is formatted apart first: vsnprintf into its own argument is
 * undefined, and in practice leaves the message empty. */
int rb_error__set(rb_error *err, int code, const char *fmt, ...)
{
    char text[sizeof(err->msg)];
    va_list ap;

    if (err == NULL)
        return code;
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    memcpy(err->msg, text, sizeof(text));
    return code;
}

const char *rb_strerror(int code)
{
    switch (code) {
    case RB_OK: return "done";
    case RB_EREDIS: return "Redis answered with an error";
    case RB_EINVAL: return "bad input";
    case RB_EBROKEN: return "the round was broken";
    case RB_EUNREACHABLE: return "Redis could not be reached";
    case RB_ETIMEOUT: return "timed out";
    case RB_ECANCELED: return "interrupted";
    case RB_ELOST: return "state lost";
    case RB_ENOMEM: return "out of memory";
    case RB_EPROTO: return "bad reply from Redis";
    default: return "unknown error code";
    }
}

const char *rb_version(void)
{
    return RB_VERSION;
}
