/*
 * Input checks, pure so they can be unit-tested and run before any
 * connection exists: bad input must never reach Redis.
 */
#include "fmacros.h"

#include <string.h>

#include "rb_internal.h"

static int check_word(const char *s, const char *what, int allow_comma,
                      rb_error *err)
{
    size_t len, i;

    if (s == NULL || s[0] == '\0')
        return rb_error__set(err, RB_EINVAL, "%s must not be empty", what);
    len = strlen(s);
    if (len > RB_NAME_MAX)
        return rb_error__set(err, RB_EINVAL,
                             "%s is %zu bytes long; the limit is %d", what,
                             len, RB_NAME_MAX);
    for (i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];

        if (ch == '{' || ch == '}')
            return rb_error__set(err, RB_EINVAL,
                                 "%s must not contain '%c' (it is the key's "
                                 "hash tag)", what, ch);
        if (ch <= ' ' || ch == 0x7f)
            return rb_error__set(err, RB_EINVAL,
                                 "%s must not contain whitespace or control "
                                 "characters (byte 0x%02x at offset %zu)",
                                 what, ch, i);
        if (!allow_comma && ch == ',')
            return rb_error__set(err, RB_EINVAL,
                                 "%s must not contain ','", what);
    }
    return RB_OK;
}

int rb_check_name(const char *name, const char *what, rb_error *err)
{
    return check_word(name, what, 1, err);
}

int rb_check_id(const char *id, const char *what, rb_error *err)
{
    return check_word(id, what, 0, err);
}

int rb_check_number(int *is_float, const char *text, const char *what,
                    rb_error *err)
{
    const char *p = text, *int_start;
    int digits = 0, dots = 0;
    size_t int_len;

    if (text == NULL || text[0] == '\0')
        return rb_error__set(err, RB_EINVAL, "%s must not be empty", what);
    if (strlen(text) > 40)
        return rb_error__set(err, RB_EINVAL, "%s '%.40s...' is too long",
                             what, text);
    if (*p == '-')
        p++;
    int_start = p;
    for (; *p; p++) {
        if (*p >= '0' && *p <= '9')
            digits++;
        else if (*p == '.' && dots == 0 && digits > 0 && p[1] >= '0' &&
                 p[1] <= '9')
            dots++;   /* digits on both sides: the value stays valid JSON */
        else
            return rb_error__set(err, RB_EINVAL,
                                 "%s '%s' is not a decimal number", what,
                                 text);
    }
    if (digits == 0)
        return rb_error__set(err, RB_EINVAL,
                             "%s '%s' is not a decimal number", what, text);
    int_len = strcspn(int_start, ".");
    /* One spelling per number: Redis' INCRBY refuses 007 and -0, and a
     * value printed back must be the value stored. */
    if ((int_len > 1 && int_start[0] == '0') ||
        (int_start != text && dots == 0 && strcmp(int_start, "0") == 0))
        return rb_error__set(err, RB_EINVAL, "%s '%s' is not a decimal "
                             "number in canonical form (no leading zero, "
                             "no -0)", what, text);
    /* Integers are exact 64-bit values; past that range no step on them
     * could be exact. */
    if (dots == 0 && (int_len > 19 ||
                      (int_len == 19 &&
                       strcmp(int_start, int_start == text
                                             ? "9223372036854775807"
                                             : "9223372036854775808") > 0)))
        return rb_error__set(err, RB_EINVAL, "%s '%s' is outside the 64-bit "
                             "integer range", what, text);
    if (is_float)
        *is_float = dots > 0;
    return RB_OK;
}
