/*
 * Random hex for the nonces that make a resent arrival or train step
 * harmless: unpredictable enough that two parties never pick the same one,
 * cheap enough to make on every call.
 */
#include "fmacros.h"

#include <sys/random.h>
#include <sys/types.h>
#include <unistd.h>

#include "rb_internal.h"

void rb_random_hex(char *buf, size_t bytes)
{
    static const char digits[] = "0123456789abcdef";
    unsigned char raw[32];
    size_t i;
    ssize_t got;

    if (bytes > sizeof(raw))
        bytes = sizeof(raw);
    /* getrandom(2), not /dev/urandom: one syscall instead of three on every
     * wait, which the benchmarks showed as a fifth of a round's CPU. */
    got = getrandom(raw, bytes, 0);
    if (got != (ssize_t)bytes) {
        unsigned long long x =
            (unsigned long long)rb_now_ms() * 6364136223846793005ULL ^
            (unsigned long long)getpid() << 32;

        for (i = 0; i < bytes; i++) {
            x = x * 6364136223846793005ULL + 1442695040888963407ULL;
            raw[i] = (unsigned char)(x >> 56);
        }
    }
    for (i = 0; i < bytes; i++) {
        buf[2 * i] = digits[raw[i] >> 4];
        buf[2 * i + 1] = digits[raw[i] & 15];
    }
    buf[2 * bytes] = '\0';
}
