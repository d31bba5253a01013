/* Idle load: parties blocked on a round that does not complete; the client
 * commands and Redis calls per party and second over a few windows. */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench.h"

int bench_idle(bench_ctx *ctx, int argc, char **argv)
{
    long parties = 200, seconds = 20, windows = 3, i, w;
    const bench_opt opts[] = {
        BENCH_NUM("--parties", &parties),
        BENCH_NUM("--seconds", &seconds),
        BENCH_NUM("--windows", &windows),
        BENCH_OPTS_END
    };
    tparty *tp;
    rb_conn *me;
    redisContext *adm;
    cmdstats *before, *after;
    char name[64];

    bench_parse(ctx, argc, argv, opts);
    if (parties < 1 || seconds < 1)
        bench_usage_error(ctx, "need --parties >= 1 and --seconds >= 1");
    before = malloc(sizeof(cmdstats));
    after = malloc(sizeof(cmdstats));
    if (before == NULL || after == NULL)
        die("out of memory");
    snprintf(name, sizeof(name), "bench-idle-%ld", (long)getpid());
    tp = parties_new(&ctx->url, parties);
    for (i = 0; i < parties; i++) {
        snprintf(tp[i].id, sizeof(tp[i].id), "w%ld", i);
        snprintf(tp[i].name, sizeof(tp[i].name), "%s", name);
        tp[i].o.n = parties + 1;
        tp[i].o.timeout_ms = (long long)(seconds * windows + 60) * 1000;
    }
    me = party_conn(&ctx->url);
    adm = admin_connect(&ctx->url);
    parties_start(tp, parties);
    await_blocked(adm, parties);
    for (w = 0; w < windows; w++) {
        cmd_delta d;
        long long t0, t1;
        double per;
        char label[48];

        cmdstats_take(adm, before);
        t0 = now_ns();
        sleep_ms(seconds * 1000);
        cmdstats_take(adm, after);
        t1 = now_ns();
        per = (double)(t1 - t0) / 1e9 * (double)parties;
        snprintf(label, sizeof(label), "idle window %ld per party-s:", w);
        d = cmdstats_delta(adm, before, after, label, per);
        printf("idle_cmds_per_party_s %.3f\n", (double)d.client / per);
        printf("idle_calls_per_party_s %.3f\n",
               (double)(d.client + d.inside) / per);
        fflush(stdout);
    }
    complete_round(me, name, parties + 1, "completer", NULL);
    parties_join_free(tp, parties);
    rb_conn_free(me);
    redisFree(adm);
    free(before);
    free(after);
    return 0;
}
