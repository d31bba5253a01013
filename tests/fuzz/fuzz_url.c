/* libFuzzer: the URL parser (every URL form; percent-escapes; limits). */
#include "fmacros.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rbarrier.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    rb_url url;
    rb_error err;

    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (rb_url_parse(&url, text, &err) == RB_OK) {
        /* What was accepted is within its documented limits. */
        if (url.kind == RB_URL_UNIX ? url.nodes_count != 0
                                    : (url.nodes_count < 1 ||
                                       url.nodes_count > RB_URL_NODES_MAX))
            abort();
        if (strlen(url.password) > RB_URL_PASSWORD_MAX ||
            strlen(url.user) > RB_URL_USER_MAX)
            abort();
    } else if (memchr(err.msg, '\0', sizeof(err.msg)) == NULL) {
        abort();   /* every message is a terminated line */
    }
    free(text);
    return 0;
}
