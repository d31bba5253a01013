/* CLI process cost: the wall time of one `rbarrier wait --n 1` and one
 * `rbarrier train` process, against one `redis-cli PING` process. */
#include "fmacros.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "bench.h"

int bench_cli(bench_ctx *ctx, int argc, char **argv)
{
    const char *rbarrier = NULL, *rcli = "redis-cli";
    long count = 200, i;
    const bench_opt opts[] = {
        BENCH_REQUIRED_STR("--rbarrier", &rbarrier),
        BENCH_STR("--redis-cli", &rcli),
        BENCH_NUM("--count", &count),
        BENCH_OPTS_END
    };
    char port[16], *ping[8], *wait_[8], *train[8];
    long long *vp, *vw, *vt;

    bench_parse(ctx, argc, argv, opts);
    if (ctx->url.kind != RB_URL_TCP || ctx->url.nodes_count != 1 || ctx->url.tls ||
        ctx->url.has_password || ctx->url.db)
        bench_usage_error(ctx, "give a plain redis://host:port URL");
    if (count < 1)
        bench_usage_error(ctx, "--count must be at least 1");
    if (setenv("RBARRIER_URL", ctx->url_text, 1) != 0)
        die("setenv: %s", strerror(errno));
    snprintf(port, sizeof(port), "%d", ctx->url.nodes[0].port);
    ping[0] = (char *)rcli; ping[1] = (char *)"-h"; ping[2] = ctx->url.nodes[0].host;
    ping[3] = (char *)"-p"; ping[4] = port; ping[5] = (char *)"PING"; ping[6] = NULL;
    wait_[0] = (char *)rbarrier; wait_[1] = (char *)"wait"; wait_[2] = (char *)"--name";
    wait_[3] = (char *)"bench-cli"; wait_[4] = (char *)"--n"; wait_[5] = (char *)"1";
    wait_[6] = NULL;
    train[0] = (char *)rbarrier; train[1] = (char *)"train"; train[2] = (char *)"--param";
    train[3] = (char *)"bench-cli"; train[4] = (char *)"--worker"; train[5] = (char *)"w0";
    train[6] = NULL;
    vp = calloc((size_t)count, sizeof(*vp));
    vw = calloc((size_t)count, sizeof(*vw));
    vt = calloc((size_t)count, sizeof(*vt));
    if (vp == NULL || vw == NULL || vt == NULL)
        die("out of memory");
    for (i = 0; i < 5; i++) {      /* warm the page cache */
        spawn_ns(ping, NULL);
        spawn_ns(wait_, NULL);
        spawn_ns(train, NULL);
    }
    for (i = 0; i < count; i++) {  /* interleaved: drift hits all three */
        vp[i] = spawn_ns(ping, NULL);
        vw[i] = spawn_ns(wait_, NULL);
        vt[i] = spawn_ns(train, NULL);
    }
    qsort(vp, (size_t)count, sizeof(*vp), cmp_ll);
    qsort(vw, (size_t)count, sizeof(*vw), cmp_ll);
    qsort(vt, (size_t)count, sizeof(*vt), cmp_ll);
    printf("redis_cli_ping_ms %.3f\n", (double)pct(vp, (size_t)count, 50) / 1e6);
    printf("cli_wait_ms %.3f\n", (double)pct(vw, (size_t)count, 50) / 1e6);
    printf("cli_train_ms %.3f\n", (double)pct(vt, (size_t)count, 50) / 1e6);
    printf("# cli p90 ms: redis-cli PING %.3f, wait %.3f, train %.3f\n",
           (double)pct(vp, (size_t)count, 90) / 1e6,
           (double)pct(vw, (size_t)count, 90) / 1e6,
           (double)pct(vt, (size_t)count, 90) / 1e6);
    free(vp);
    free(vw);
    free(vt);
    return 0;
}
