/* Fan-out: parties-1 threads wait on one barrier; the bench's own arrival
 * completes the round; the time from its send to the last waiter's
 * return. */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench.h"

int bench_fanout(bench_ctx *ctx, int argc, char **argv)
{
    long parties = 1000, reps = 5, waiters, i, k;
    const bench_opt opts[] = {
        BENCH_NUM("--parties", &parties),
        BENCH_NUM("--reps", &reps),
        BENCH_OPTS_END
    };
    tparty *tp;
    bench_conn *me;
    redisContext *adm;
    int *released;
    char name[64];

    bench_parse(ctx, argc, argv, opts);
    if (parties < 2 || reps < 1)
        bench_usage_error(ctx, "need --parties >= 2 and --reps >= 1");
    waiters = parties - 1;
    snprintf(name, sizeof(name), "bench-fanout-%ld", (long)getpid());
    released = calloc((size_t)reps, sizeof(*released));
    tp = parties_new(ctx->url_text, waiters);
    for (i = 0; i < waiters; i++) {
        snprintf(tp[i].id, sizeof(tp[i].id), "w%ld", i);
        snprintf(tp[i].name, sizeof(tp[i].name), "%s", name);
        tp[i].a.n = parties;
        tp[i].reps = reps;
        tp[i].released = released;
        tp[i].release = calloc((size_t)reps, sizeof(long long));
        if (tp[i].release == NULL || released == NULL)
            die("out of memory");
    }
    me = party_conn(ctx->url_text, NULL);
    adm = admin_connect(&ctx->addr);
    parties_start(tp, waiters);
    for (k = 0; k < reps; k++) {
        long long t0, t1, last = 0, p50;
        long long *rel = calloc((size_t)waiters, sizeof(*rel));

        await_blocked(adm, waiters);
        sleep_ms(50);
        t1 = complete_round(me, name, parties, "completer", &t0);
        while (__atomic_load_n(&released[k], __ATOMIC_SEQ_CST) < waiters)
            sleep_ms(1);
        for (i = 0; i < waiters; i++) {
            rel[i] = tp[i].release[k] - t0;
            if (tp[i].release[k] > last)
                last = tp[i].release[k];
        }
        qsort(rel, (size_t)waiters, sizeof(*rel), cmp_ll);
        p50 = pct(rel, (size_t)waiters, 50);
        printf("fanout_%ld_ms %.3f\n", parties, (double)(last - t0) / 1e6);
        printf("# fanout rep %ld from the completing arrival's send: p50 "
               "release %.3f ms, last %.3f ms; its own reply after %.3f ms\n",
               k, (double)p50 / 1e6, (double)(last - t0) / 1e6,
               (double)(t1 - t0) / 1e6);
        fflush(stdout);
        free(rel);
    }
    parties_join_free(tp, waiters);
    free(released);
    party_conn_free(me);
    redisFree(adm);
    return 0;
}
