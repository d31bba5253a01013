/* libFuzzer: the URL parser (every URL form; percent-escapes; limits). */
#include "fmacros.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rbarrier.h"
#include "rb_internal.h"   /* the limits */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    rb_url *url = NULL;
    rb_error err;
    size_t n, i;

    if (text == NULL)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    if (rb_url_parse(&url, text, &err) == RB_OK) {
        const char *pw = rb_url_get_password(url) ? rb_url_get_password(url)
                                                  : "";

        /* What was accepted is within its documented limits. */
        n = rb_url_nodes_count(url);
        if (rb_url_get_kind(url) == RB_URL_UNIX
                ? n != 0 || rb_url_get_path(url) == NULL ||
                      strlen(rb_url_get_path(url)) > RB_URL_PATH_MAX
                : n < 1 || n > RB_URL_NODES_MAX)
            abort();
        for (i = 0; i < n; i++)
            if (strlen(rb_url_get_host(url, i)) > RB_URL_HOST_MAX ||
                rb_url_get_port(url, i) < 1 ||
                rb_url_get_port(url, i) > 65535)
                abort();
        if (strlen(pw) > RB_URL_PASSWORD_MAX ||
            strlen(rb_url_get_user(url)) > RB_URL_USER_MAX ||
            (rb_url_get_password(url) != NULL) != rb_url_has_password(url))
            abort();
    } else if (url != NULL ||
               memchr(err.msg, '\0', sizeof(err.msg)) == NULL) {
        abort();   /* nothing made; every message a terminated line */
    }
    rb_url_free(url);
    free(text);
    return 0;
}
