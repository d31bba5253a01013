/* Floor: the EVALSHA rate of a one-INCR script on one connection. */
#include "fmacros.h"

#include <stdio.h>

#include "bench.h"

int bench_evalsha(bench_ctx *ctx, int argc, char **argv)
{
    long count = 20000, i;
    const bench_opt opts[] = {
        BENCH_NUM("--count", &count),
        BENCH_OPTS_END
    };
    redisContext *c;
    redisReply *r;
    char sha[64];
    long long t0, t1;

    bench_parse(ctx, argc, argv, opts);
    if (count < 1)
        bench_usage_error(ctx, "--count must be at least 1");
    c = admin_connect(&ctx->addr);
    r = cmd(c, "SCRIPT LOAD %s", "return redis.call('INCR', KEYS[1])");
    snprintf(sha, sizeof(sha), "%s", r->str);
    freeReplyObject(r);
    for (i = 0; i < 500; i++)
        freeReplyObject(cmd(c, "EVALSHA %s 1 rb-bench:evalsha", sha));
    t0 = now_ns();
    for (i = 0; i < count; i++)
        freeReplyObject(cmd(c, "EVALSHA %s 1 rb-bench:evalsha", sha));
    t1 = now_ns();
    freeReplyObject(cmd(c, "DEL rb-bench:evalsha"));
    printf("evalsha_per_s %.0f\n", (double)count * 1e9 / (double)(t1 - t0));
    redisFree(c);
    return 0;
}
