/* The cost of TLS to a one-command CLI call: `rbarrier get` run C times
 * against one server over TLS (--url, rediss://) and over plain TCP
 * (--plain), interleaved so that drift hits both; the wall time includes
 * the handshake and the certificate checks, as a user's call does. (TLS
 * rounds are the rounds measurement with a rediss:// URL.) */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

extern char **environ;

int bench_tls(bench_ctx *ctx, int argc, char **argv)
{
    const char *plain = NULL, *tls, *cacert = NULL, *rbarrier = NULL;
    long count = 100, i;
    const bench_opt opts[] = {
        BENCH_REQUIRED_STR("--plain", &plain),
        BENCH_REQUIRED_STR("--cacert", &cacert),
        BENCH_REQUIRED_STR("--rbarrier", &rbarrier),
        BENCH_NUM("--count", &count),
        BENCH_OPTS_END
    };
    bench_addr up;
    char *args[8], **env_plain, **env_tls, why[300];
    char url_plain[600], url_tls[600], ca[600];
    long long *vp, *vt;
    size_t n = 0, k;

    bench_parse(ctx, argc, argv, opts);
    tls = ctx->url_text;
    if (bench_addr_parse(&up, plain, why, sizeof(why)) != 0)
        bench_usage_error(ctx, "--plain: %s", why);
    if (up.tls || !ctx->addr.tls)
        bench_usage_error(ctx, "--plain takes redis://, --url rediss://");
    if (count < 1)
        bench_usage_error(ctx, "need --count >= 1");

    /* The same argv, the URL and CA in the environment. */
    while (environ[n])
        n++;
    env_plain = calloc(n + 3, sizeof(char *));
    env_tls = calloc(n + 3, sizeof(char *));
    vp = calloc((size_t)count, sizeof(*vp));
    vt = calloc((size_t)count, sizeof(*vt));
    if (!env_plain || !env_tls || !vp || !vt)
        die("out of memory");
    for (k = n = 0; environ[k]; k++)
        if (strncmp(environ[k], "RBARRIER_", 9) != 0) {
            env_plain[n] = environ[k];
            env_tls[n++] = environ[k];
        }
    snprintf(url_plain, sizeof(url_plain), "RBARRIER_URL=%s", plain);
    snprintf(url_tls, sizeof(url_tls), "RBARRIER_URL=%s", tls);
    snprintf(ca, sizeof(ca), "RBARRIER_CACERT=%s", cacert);
    env_plain[n] = url_plain;
    env_tls[n] = url_tls;
    env_tls[n + 1] = ca;
    args[0] = (char *)rbarrier; args[1] = (char *)"get";
    args[2] = (char *)"--param"; args[3] = (char *)"bench-tls";
    args[4] = NULL;
    for (i = 0; i < 3; i++) {
        spawn_ns(args, env_plain);
        spawn_ns(args, env_tls);
    }
    for (i = 0; i < count; i++) {
        vp[i] = spawn_ns(args, env_plain);
        vt[i] = spawn_ns(args, env_tls);
    }
    qsort(vp, (size_t)count, sizeof(*vp), cmp_ll);
    qsort(vt, (size_t)count, sizeof(*vt), cmp_ll);
    printf("tls_cli_plain_ms %.3f\n", (double)pct(vp, (size_t)count, 50) / 1e6);
    printf("tls_cli_ms %.3f\n", (double)pct(vt, (size_t)count, 50) / 1e6);
    printf("# tls: get process p90 %.3f ms (plain %.3f ms)\n",
           (double)pct(vt, (size_t)count, 90) / 1e6,
           (double)pct(vp, (size_t)count, 90) / 1e6);
    free(env_plain);
    free(env_tls);
    free(vp);
    free(vt);
    return 0;
}
