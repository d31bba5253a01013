/* Option values: parsed by hand rather than with arg_int/arg_dbl so each
 * bad value gets one message that names the option and the limit. */
#include "../lib/fmacros.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static int fail(rb_error *err, const char *what, const char *problem,
                const char *text)
{
    err->code = RB_EINVAL;
    if (text)
        snprintf(err->msg, sizeof(err->msg), "%s %s, not '%s'", what,
                 problem, text);
    else
        snprintf(err->msg, sizeof(err->msg), "%s %s", what, problem);
    return RB_EINVAL;
}

int cli_parse_long(const char *text, const char *what, long lo, long hi,
                   long *out, rb_error *err)
{
    char *end;
    long v;

    if (text == NULL || text[0] == '\0')
        return fail(err, what, "must not be empty", NULL);
    errno = 0;
    v = strtol(text, &end, 10);
    if (*end != '\0' || end == text)
        return fail(err, what, "must be a whole number", text);
    if (errno == ERANGE || v < lo || v > hi) {
        err->code = RB_EINVAL;
        snprintf(err->msg, sizeof(err->msg), "%s must be %ld..%ld, not '%s'",
                 what, lo, hi, text);
        return RB_EINVAL;
    }
    *out = v;
    return RB_OK;
}

int cli_parse_count(const char *text, const char *what, long *out,
                    rb_error *err)
{
    return cli_parse_long(text, what, 1, RB_N_MAX, out, err);
}

int cli_parse_seconds(const char *text, const char *what, int allow_zero,
                      double *out, rb_error *err)
{
    char *end;
    double v;

    if (text == NULL || text[0] == '\0')
        return fail(err, what, "must not be empty", NULL);
    errno = 0;
    v = strtod(text, &end);
    if (*end != '\0' || end == text || !isfinite(v) ||
        strchr(text, 'x') || strchr(text, 'X'))
        return fail(err, what, "must be a number of seconds", text);
    if (v < 0 || (!allow_zero && v == 0))
        return fail(err, what,
                    allow_zero ? "must not be negative" : "must be positive",
                    text);
    if (v > 1e7)
        return fail(err, what, "must be at most 10000000", text);
    *out = v;
    return RB_OK;
}

void cli_default_id(char *buf, size_t len)
{
    char host[128];

    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "localhost");
    host[sizeof(host) - 1] = '\0';
    snprintf(buf, len, "%s:%ld", host, (long)getpid());
}
