/* The --reduce arithmetic. The values come from other parties, so each is
 * checked again here (another version, or a party without --reduce, may
 * have sent anything). Integer arithmetic is kept exact with overflow
 * checks; doubles are used only when a value has a fraction. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reduce.h"

static int fail(rb_error *err, int code, const char *msg)
{
    err->code = code;
    snprintf(err->msg, sizeof(err->msg), "%s", msg);
    return code;
}

int cli_reduce_parse(const char *text, cli_reduce_kind *out, rb_error *err)
{
    static const struct { const char *name; cli_reduce_kind kind; } ops[] = {
        { "max", CLI_REDUCE_MAX }, { "min", CLI_REDUCE_MIN },
        { "sum", CLI_REDUCE_SUM }, { "all", CLI_REDUCE_ALL },
    };
    size_t i;

    for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        if (strcmp(text, ops[i].name) == 0) {
            *out = ops[i].kind;
            return RB_OK;
        }
    err->code = RB_EINVAL;
    snprintf(err->msg, sizeof(err->msg), "--reduce must be max, min, sum or "
             "all, not '%.60s'", text);
    return RB_EINVAL;
}

static int better(cli_reduce_kind kind, int cmp)
{
    return (kind == CLI_REDUCE_MAX && cmp > 0) ||
           (kind == CLI_REDUCE_MIN && cmp < 0);
}

int cli_reduce_values(cli_reduce_kind kind, char *const *v, size_t count,
                      char *buf, size_t len, rb_error *err)
{
    size_t i, best = 0;
    int any_float = 0, is_float;
    long long isum = 0, ibest = 0;
    double fsum = 0, fbest = 0;

    if (count == 0)
        return fail(err, RB_EPROTO, "the round holds no values");
    if (kind != CLI_REDUCE_MAX && kind != CLI_REDUCE_MIN &&
        kind != CLI_REDUCE_SUM)
        return fail(err, RB_EINVAL, "no reduction to compute");
    for (i = 0; i < count; i++) {
        rb_error e;

        if (rb_check_number(&is_float, v[i], "value", &e) != RB_OK) {
            err->code = RB_EPROTO;
            snprintf(err->msg, sizeof(err->msg), "another party's value "
                     "'%.60s' is not a number (did every party pass the "
                     "same --reduce?)", v[i]);
            return RB_EPROTO;
        }
        any_float |= is_float;
    }
    for (i = 0; i < count; i++) {
        if (any_float) {
            double x = strtod(v[i], NULL);

            fsum += x;
            if (i == 0 || better(kind, (x > fbest) - (x < fbest))) {
                best = i;
                fbest = x;
            }
        } else {
            long long x;

            errno = 0;
            x = strtoll(v[i], NULL, 10);
            if (errno == ERANGE ||
                (kind == CLI_REDUCE_SUM &&
                 __builtin_add_overflow(isum, x, &isum)))
                return fail(err, RB_EPROTO, "the values do not fit a "
                            "64-bit integer");
            if (i == 0 || better(kind, (x > ibest) - (x < ibest))) {
                best = i;
                ibest = x;
            }
        }
    }
    if (kind == CLI_REDUCE_SUM && any_float)
        snprintf(buf, len, "%.15g", fsum);
    else if (kind == CLI_REDUCE_SUM)
        snprintf(buf, len, "%lld", isum);
    else
        snprintf(buf, len, "%s", v[best]);
    return RB_OK;
}
