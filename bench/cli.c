/* CLI process cost: the wall time of one process of `rbarrier get`,
 * `rbarrier wait --n 1` and `rbarrier train`, against `redis-cli GET` and
 * `redis-cli PING`: a user's one-command call, start-up included. */
#include "fmacros.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define KINDS 5

int bench_cli(bench_ctx *ctx, int argc, char **argv)
{
    const char *rbarrier = NULL, *rcli = "redis-cli";
    long count = 200, i, k;
    const bench_opt opts[] = {
        BENCH_REQUIRED_STR("--rbarrier", &rbarrier),
        BENCH_STR("--redis-cli", &rcli),
        BENCH_NUM("--count", &count),
        BENCH_OPTS_END
    };
    static const char *const keys[KINDS] = {
        "redis_cli_ping_ms", "redis_cli_get_ms", "cli_get_ms", "cli_wait_ms",
        "cli_train_ms"
    };
    char port[16];
    char *args[KINDS][10];
    long long *v[KINDS];
    const bench_addr *a = &ctx->addr;

    bench_parse(ctx, argc, argv, opts);
    if (a->unix_socket || a->tls || a->has_password || a->db)
        bench_usage_error(ctx, "give a plain redis://host:port URL");
    if (count < 1)
        bench_usage_error(ctx, "--count must be at least 1");
    if (setenv("RBARRIER_URL", ctx->url_text, 1) != 0)
        die("setenv: %s", strerror(errno));
    snprintf(port, sizeof(port), "%d", a->port);
    {
        char *const ping[] = { (char *)rcli, (char *)"-h", (char *)a->host,
                               (char *)"-p", port, (char *)"PING", NULL };
        /* The key `rbarrier get` reads is not the one redis-cli reads:
         * both are one GET of a short string. */
        char *const get[] = { (char *)rcli, (char *)"-h", (char *)a->host,
                              (char *)"-p", port, (char *)"GET",
                              (char *)"bench-cli", NULL };
        char *const rget[] = { (char *)rbarrier, (char *)"get",
                               (char *)"--param", (char *)"bench-cli", NULL };
        char *const wait_[] = { (char *)rbarrier, (char *)"wait",
                                (char *)"--name", (char *)"bench-cli",
                                (char *)"--n", (char *)"1", NULL };
        char *const train[] = { (char *)rbarrier, (char *)"train",
                                (char *)"--param", (char *)"bench-cli",
                                (char *)"--worker", (char *)"w0", NULL };
        char *const *all[KINDS] = { ping, get, rget, wait_, train };

        for (k = 0; k < KINDS; k++) {
            for (i = 0; all[k][i]; i++)
                args[k][i] = all[k][i];
            args[k][i] = NULL;
        }
    }
    {
        redisContext *adm = admin_connect(a);
        char *const set[] = { (char *)rbarrier, (char *)"set",
                              (char *)"--param", (char *)"bench-cli",
                              (char *)"--value", (char *)"12345", NULL };

        freeReplyObject(cmd(adm, "SET bench-cli 12345"));
        redisFree(adm);
        spawn_ns(set, NULL);
    }
    for (k = 0; k < KINDS; k++) {
        v[k] = calloc((size_t)count, sizeof(long long));
        if (v[k] == NULL)
            die("out of memory");
    }
    for (i = 0; i < 5; i++)        /* warm the page cache */
        for (k = 0; k < KINDS; k++)
            spawn_ns(args[k], NULL);
    for (i = 0; i < count; i++)    /* interleaved: drift hits all alike */
        for (k = 0; k < KINDS; k++)
            v[k][i] = spawn_ns(args[k], NULL);
    for (k = 0; k < KINDS; k++) {
        qsort(v[k], (size_t)count, sizeof(long long), cmp_ll);
        printf("%s %.3f\n", keys[k], (double)pct(v[k], (size_t)count, 50) / 1e6);
    }
    for (k = 0; k < KINDS; k++) {
        printf("# cli %s p90 %.3f\n", keys[k],
               (double)pct(v[k], (size_t)count, 90) / 1e6);
        free(v[k]);
    }
    return 0;
}
