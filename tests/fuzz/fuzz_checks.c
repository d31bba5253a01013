/* libFuzzer: the input checks every name, id and number goes through
 * before anything is sent (rb_check_name, rb_check_id, rb_check_number),
 * and the key layout they feed (rb_key__*, rb_key__slot). */
#include "fmacros.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rb_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    char base[RB_KEY_MAX], g[RB_KEY_MAX], l[RB_KEY_MAX], t[RB_KEY_MAX];
    rb_error err;
    int is_float = -1;

    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (rb_check_name(text, "name", &err) == RB_OK) {
        const char *keys[2] = { base, NULL };

        /* An accepted name has no brace, blank or control byte, and all
         * of its keys land in one slot. */
        if (strpbrk(text, "{} \t\r\n") || strlen(text) > RB_NAME_MAX)
            abort();
        if (rb_key__barrier(base, sizeof(base), NULL, text, &err) != RB_OK)
            abort();
        if (rb_key__round(g, sizeof(g), base, 123456789, "out", &err) !=
            RB_OK)
            abort();
        keys[1] = g;
        if (!rb_key__same_slot(keys, 2))
            abort();
        if (rb_check_id(text, "id", &err) == RB_OK &&
            rb_key__param(g, l, t, sizeof(g), "rb", text, text, &err) ==
                RB_OK) {
            const char *pk[3] = { g, l, t };

            if (!rb_key__same_slot(pk, 3))
                abort();
        }
    }
    if (rb_check_id(text, "id", &err) == RB_OK && strchr(text, ','))
        abort();
    if (rb_check_number(&is_float, text, "value", &err) == RB_OK) {
        /* A number is a JSON-safe decimal: digits on both sides of a dot. */
        if (strspn(text, "-0123456789.") != strlen(text) ||
            (is_float != 0 && is_float != 1))
            abort();
    }
    (void)rb_key__slot((const char *)data, size);
    free(text);
    return 0;
}
