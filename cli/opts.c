/* Option values: parsed by hand rather than with arg_int/arg_dbl so each
 * bad value gets one message that names the option and the limit. */

#include <ctype.h>
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
    /* strtol skips leading blanks; a number is digits only. */
    if (*end != '\0' || end == text || !(isdigit((unsigned char)text[0]) ||
                                         text[0] == '-'))
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
        !(isdigit((unsigned char)text[0]) || text[0] == '.' ||
          text[0] == '-') ||
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

/* A duration as timeout(1) takes it: a decimal number (fractions allowed,
 * no sign, exponent or blanks) and an optional unit s, m, h or d. The value
 * is converted with integer arithmetic, so 0.3 is exactly 300 ms and no
 * accepted text can overflow: the integer part is checked against the
 * bound before it is multiplied. A fraction of a millisecond rounds up, so
 * a positive duration never becomes 0 ("no limit"). */
int cli_parse_duration(const char *text, const char *what, long long min_ms,
                       long long max_ms, long long *out_ms, rb_error *err)
{
    static const char form[] =
        "must be a duration like 90, 1.5, 30s, 5m, 2h or 1d";
    const char *p = text;
    long long unit = 1000, whole = 0, frac = 0, scale = 1, ms;
    int ndigits = 0;
    char lo[32], hi[32];

    if (text == NULL || text[0] == '\0')
        return fail(err, what, "must not be empty", NULL);
    for (; isdigit((unsigned char)*p); p++, ndigits++) {
        /* Past max_ms seconds nothing can be in range: stop growing. */
        if (whole <= max_ms)
            whole = whole * 10 + (*p - '0');
    }
    if (*p == '.') {
        for (p++; isdigit((unsigned char)*p); p++, ndigits++)
            if (scale <= 1000000000LL) {
                frac = frac * 10 + (*p - '0');
                scale *= 10;
            } else if (*p != '0') {
                frac |= 1;  /* a nonzero digit past 10 places: round up */
            }
    }
    switch (*p) {
    case 's': unit = 1000LL; p++; break;
    case 'm': unit = 60LL * 1000; p++; break;
    case 'h': unit = 3600LL * 1000; p++; break;
    case 'd': unit = 86400LL * 1000; p++; break;
    default: break;
    }
    if (ndigits == 0 || *p != '\0')
        return fail(err, what, form, text);
    cli_format_ms(lo, sizeof(lo), min_ms);
    cli_format_ms(hi, sizeof(hi), max_ms);
    if (whole > max_ms / unit + 1)
        goto range;
    /* frac/scale of a unit, in ms, rounded up; frac < scale <= 1e10 and
     * unit <= 8.64e7, so the product stays below 2^63. */
    ms = whole * unit + (frac * unit + scale - 1) / scale;
    if (ms < min_ms || ms > max_ms)
        goto range;
    *out_ms = ms;
    return RB_OK;
range:
    err->code = RB_EINVAL;
    snprintf(err->msg, sizeof(err->msg), "%s must be %s..%s, not '%s'",
             what, lo, hi, text);
    return RB_EINVAL;
}

void cli_format_ms(char *buf, size_t len, long long ms)
{
    static const struct { long long ms; const char *unit; } units[] = {
        { 86400000LL, "d" }, { 3600000LL, "h" }, { 60000LL, "m" },
        { 1000LL, "s" },
    };
    size_t i;

    if (ms == 0) {
        snprintf(buf, len, "0");
        return;
    }
    for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (ms >= units[i].ms && ms % units[i].ms == 0) {
            snprintf(buf, len, "%lld%s", ms / units[i].ms, units[i].unit);
            return;
        }
    snprintf(buf, len, "%lld.%03llds", ms / 1000, ms % 1000);
}

void cli_default_id(char *buf, size_t len)
{
    char host[128];

    if (gethostname(host, sizeof(host)) != 0)
        snprintf(host, sizeof(host), "localhost");
    host[sizeof(host) - 1] = '\0';
    snprintf(buf, len, "%s:%ld", host, (long)getpid());
}
