/* clock.h: CLOCK_MONOTONIC milliseconds, and random names from getrandom(2)
 * with a clock-and-pid fallback (a name needs to differ, not to be secret). */
#include <sys/random.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"

long long cli_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void cli_random_hex(char *buf, size_t bytes)
{
    static const char digits[] = "0123456789abcdef";
    unsigned char raw[32];
    size_t i;

    if (bytes > sizeof(raw))
        bytes = sizeof(raw);
    if (getrandom(raw, bytes, 0) != (ssize_t)bytes) {
        unsigned long long x = (unsigned long long)cli_now_ms() *
                               6364136223846793005ULL ^ (unsigned)getpid();

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
