/*
 * Loading OpenSSL for the first rediss:// handle (rb_openssl.h says why
 * not at start). Once loaded it stays for the life of the process:
 * OpenSSL registers its own clean-up at exit, which an unloaded library
 * could not run.
 */
#include "fmacros.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define RB_OPENSSL_LOADER
#include "rb_internal.h"
#include "rb_openssl.h"

struct rb_openssl rb_openssl__api;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static int loaded;
static char load_error[512];

static void load(void)
{
    void *h, *p;
    const char *missing = NULL;

    dlerror();
    h = dlopen(RB_LIBSSL_SONAME, RTLD_LAZY | RTLD_LOCAL);
    if (h == NULL) {
        const char *why = dlerror();

        snprintf(load_error, sizeof(load_error), "%s",
                 why ? why : "cannot load " RB_LIBSSL_SONAME);
        return;
    }
    /* libcrypto's functions are found through libssl's handle: the loader
     * searches the libraries it brought in with it. */
#define RB_OPENSSL_RESOLVE(f)                                  \
    if (missing == NULL) {                                     \
        p = dlsym(h, #f);                                      \
        if (p == NULL)                                         \
            missing = #f;                                      \
        else                                                   \
            memcpy(&rb_openssl__api.f, &p, sizeof(p));         \
    }
    RB_OPENSSL_FUNCTIONS(RB_OPENSSL_RESOLVE)
#undef RB_OPENSSL_RESOLVE
    if (missing != NULL) {
        snprintf(load_error, sizeof(load_error),
                 "%s has no %s (not the OpenSSL this was built for?)",
                 RB_LIBSSL_SONAME, missing);
        memset(&rb_openssl__api, 0, sizeof(rb_openssl__api));
        dlclose(h);
        return;
    }
    loaded = 1;
}

int rb_openssl__load(rb_error *err)
{
    pthread_once(&load_once, load);
    if (loaded)
        return RB_OK;
    return rb_error__set(err, RB_EINVAL,
                         "TLS: rediss:// needs OpenSSL (" RB_LIBSSL_SONAME
                         "), which cannot be loaded: %s", load_error);
}
