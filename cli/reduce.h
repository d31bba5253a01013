#ifndef RB_CLI_REDUCE_H
#define RB_CLI_REDUCE_H

/* wait --value V --reduce OP: every party of a round reduces the same
 * list of values (the library returns them in arrival order) to the same
 * answer. Pure; unit-tested (tests/unit/test_reduce.c). */

#include <stddef.h>

#include "rbarrier.h"

typedef enum cli_reduce_kind {
    CLI_REDUCE_NONE,
    CLI_REDUCE_MAX,
    CLI_REDUCE_MIN,
    CLI_REDUCE_SUM,
    CLI_REDUCE_ALL          /* every value, in arrival order */
} cli_reduce_kind;

/* "max", "min", "sum" or "all". RB_OK or RB_EINVAL with err filled. */
int cli_reduce_parse(const char *text, cli_reduce_kind *out, rb_error *err);

/* Reduce count values (max, min or sum) into buf. Integers stay exact in
 * 64 bits (a sum that does not fit is an error, never a wrapped or
 * rounded value); a fraction in any value makes the reduction decimal
 * (sum printed with 15 significant digits; max and min give the winning
 * value as it was written). RB_OK, or RB_EPROTO (a value that is not a
 * number, an overflow, no values), err filled. */
int cli_reduce_values(cli_reduce_kind kind, char *const *v, size_t count,
                      char *buf, size_t len, rb_error *err);

#endif
