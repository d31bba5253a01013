/* Floor: the Redis round trip, p50 of PINGs on one connection, and the
 * CPU one PING costs client and server together. */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "bench.h"

int bench_rtt(bench_ctx *ctx, int argc, char **argv)
{
    const char *key = "rtt_p50_us";
    long count = 10000, i;
    const bench_opt opts[] = {
        BENCH_NUM("--count", &count),
        BENCH_STR("--key", &key),
        BENCH_OPTS_END
    };
    redisContext *c;
    long long *v;
    double srv0, srv1, me0, me1;

    bench_parse(ctx, argc, argv, opts);
    if (count < 1)
        bench_usage_error(ctx, "--count must be at least 1");
    c = admin_connect(&ctx->addr);
    v = calloc((size_t)count, sizeof(*v));
    if (v == NULL)
        die("out of memory");
    for (i = 0; i < 200; i++)
        freeReplyObject(cmd(c, "PING"));
    srv0 = server_cpu_s(c);
    me0 = rusage_cpu_s(RUSAGE_SELF);
    for (i = 0; i < count; i++) {
        long long t0 = now_ns();

        freeReplyObject(cmd(c, "PING"));
        v[i] = now_ns() - t0;
    }
    me1 = rusage_cpu_s(RUSAGE_SELF);
    srv1 = server_cpu_s(c);
    qsort(v, (size_t)count, sizeof(*v), cmp_ll);
    printf("%s %.2f\n", key, (double)pct(v, (size_t)count, 50) / 1e3);
    if (strcmp(key, "rtt_p50_us") == 0)
        printf("ping_cpu_us %.2f\n",
               ((me1 - me0) + (srv1 - srv0)) * 1e6 / (double)count);
    printf("# %s p99 %.2f us, min %.2f us\n", key,
           (double)pct(v, (size_t)count, 99) / 1e3, (double)v[0] / 1e3);
    free(v);
    redisFree(c);
    return 0;
}
