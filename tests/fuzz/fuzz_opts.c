/* libFuzzer: the option value parsers of cli/opts.c (counts, whole
 * numbers, seconds, durations), the duration formatter and the --reduce
 * arithmetic of cli/reduce.c. The first byte picks the parser. */
#include "fmacros.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "reduce.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text, buf[64];
    rb_error err;
    long v;
    long long ms;
    double s;

    if (size < 1)
        return 0;
    text = malloc(size);
    if (text == NULL)
        return 0;
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    switch (data[0] % 5) {
    case 0:
        if (cli_parse_count(text, "--n", &v, &err) == RB_OK &&
            (v < 1 || v > RB_N_MAX))
            abort();
        break;
    case 1:
        if (cli_parse_long(text, "--x", -5, 1000000, &v, &err) == RB_OK &&
            (v < -5 || v > 1000000))
            abort();
        break;
    case 2:
        if (cli_parse_seconds(text, "--s", data[0] & 4, &s, &err) == RB_OK &&
            !(s >= 0 && s <= 1e7))
            abort();
        break;
    case 3: {
        /* Values separated by ',': a reduction never overflows silently
         * and max/min answer one of the values as written. */
        char *vals[16], out[64], *p = text;
        size_t n = 0, i;
        int found = 0;

        while (n < 16 && p) {
            vals[n++] = p;
            if ((p = strchr(p, ',')) != NULL)
                *p++ = '\0';
        }
        if (cli_reduce_values(data[0] & 8 ? CLI_REDUCE_MAX : CLI_REDUCE_MIN,
                              vals, n, out, sizeof(out), &err) == RB_OK) {
            for (i = 0; i < n; i++)
                found |= strcmp(out, vals[i]) == 0;
            if (!found)
                abort();
        }
        cli_reduce_values(CLI_REDUCE_SUM, vals, n, out, sizeof(out), &err);
        break;
    }
    default:
        if (cli_parse_duration(text, "--timeout", 0, CLI_TIMEOUT_MAX_MS, &ms,
                               &err) == RB_OK) {
            long long back;

            if (ms < 0 || ms > CLI_TIMEOUT_MAX_MS)
                abort();
            /* What the formatter says parses back to the same value. */
            cli_format_ms(buf, sizeof(buf), ms);
            if (cli_parse_duration(buf, "--timeout", 0, CLI_TIMEOUT_MAX_MS,
                                   &back, &err) != RB_OK || back != ms)
                abort();
        }
        break;
    }
    free(text);
    return 0;
}
