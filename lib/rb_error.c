#include "fmacros.h"

#include <stdarg.h>
#include <stdio.h>

#include "rb_internal.h"

int rb_error__set(rb_error *err, int code, const char *fmt, ...)
{
    va_list ap;

    if (err == NULL)
        return code;
    err->code = code;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
    va_end(ap);
    return code;
}
