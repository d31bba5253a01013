/* The cost of TLS: the same measurements against one server over plain TCP
 * and over TLS (--url, rediss://), interleaved so that drift hits both. A round: two parties
 * on threads of their own pass R rounds of one barrier (per-round wall
 * time). A process: `rbarrier wait --n 1` run C times (its wall time,
 * handshake and certificate checks included). */
#include "fmacros.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

extern char **environ;

typedef struct pair_party {
    pthread_t th;
    const rb_url *u;
    const rb_tls_opts *tls;
    const char *name, *id;
    long rounds;
    int rc;
    char why[600];
} pair_party;

static void *pair_run(void *arg)
{
    pair_party *p = arg;
    rb_conn_opts co = RB_CONN_OPTS_INIT;
    rb_wait_opts o = RB_WAIT_OPTS_INIT;
    rb_conn *c = NULL;
    rb_error err;
    long r;

    co.tls = p->tls;
    p->rc = rb_conn_new(&c, p->u, &co, &err);
    o.name = p->name;
    o.n = 2;
    o.id = p->id;
    o.timeout_ms = 60000;
    for (r = 0; p->rc == RB_OK && r < p->rounds; r++)
        p->rc = rb_barrier_wait(NULL, c, &o, &err);
    if (p->rc != RB_OK)
        snprintf(p->why, sizeof(p->why), "%s", err.msg);
    rb_conn_free(c);
    return NULL;
}

/* Wall ns per round of a 2-party barrier, connection set-up included
 * once per party (amortised over the rounds). */
static double round_ns(const rb_url *u, const rb_tls_opts *tls,
                       const char *name, long rounds)
{
    pair_party p[2];
    long long t0, t1;
    int i;

    t0 = now_ns();
    for (i = 0; i < 2; i++) {
        memset(&p[i], 0, sizeof(p[i]));
        p[i].u = u;
        p[i].tls = tls;
        p[i].name = name;
        p[i].id = i ? "b" : "a";
        p[i].rounds = rounds;
        if (pthread_create(&p[i].th, NULL, pair_run, &p[i]) != 0)
            die("pthread_create failed");
    }
    for (i = 0; i < 2; i++) {
        pthread_join(p[i].th, NULL);
        if (p[i].rc != RB_OK)
            die("tls: party %s: %s", p[i].id, p[i].why);
    }
    t1 = now_ns();
    return (double)(t1 - t0) / (double)rounds;
}

int bench_tls(bench_ctx *ctx, int argc, char **argv)
{
    const char *plain = NULL, *tls, *cacert = NULL, *rbarrier = NULL;
    long rounds = 1000, count = 100, i;
    const bench_opt opts[] = {
        BENCH_REQUIRED_STR("--plain", &plain),
        BENCH_REQUIRED_STR("--cacert", &cacert),
        BENCH_REQUIRED_STR("--rbarrier", &rbarrier),
        BENCH_NUM("--rounds", &rounds),
        BENCH_NUM("--count", &count),
        BENCH_OPTS_END
    };
    rb_tls_opts to = RB_TLS_OPTS_INIT;
    rb_url up, ut;
    rb_error err;
    char *args[8], **env_plain, **env_tls, name[64];
    char url_plain[600], url_tls[600], ca[600];
    long long *vp, *vt;
    double rp, rt;
    size_t n = 0, k;

    bench_parse(ctx, argc, argv, opts);
    tls = ctx->url_text;
    ut = ctx->url;
    if (rb_url_parse(&up, plain, &err) != RB_OK)
        bench_usage_error(ctx, "--plain: %s", err.msg);
    if (up.tls || !ut.tls)
        bench_usage_error(ctx, "--plain takes redis://, --url rediss://");
    if (rounds < 10 || count < 1)
        bench_usage_error(ctx, "need --rounds >= 10 and --count >= 1");
    to.cacert = cacert;

    /* Rounds: warm both, then plain and TLS alternately. */
    snprintf(name, sizeof(name), "bench-tls-%ld", (long)getpid());
    round_ns(&up, NULL, name, 10);
    round_ns(&ut, &to, name, 10);
    rp = rt = 0;
    for (i = 0; i < 3; i++) {
        rp += round_ns(&up, NULL, name, rounds) / 3;
        rt += round_ns(&ut, &to, name, rounds) / 3;
    }
    printf("tls_round_plain_us %.1f\n", rp / 1e3);
    printf("tls_round_us %.1f\n", rt / 1e3);

    /* Processes: the same argv, the URL and CA in the environment. */
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
    args[0] = (char *)rbarrier; args[1] = (char *)"wait";
    args[2] = (char *)"--name"; args[3] = name;
    args[4] = (char *)"--n"; args[5] = (char *)"1"; args[6] = NULL;
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
    printf("# tls: round %.1f us (plain %.1f us); wait process p50 %.3f ms "
           "(plain %.3f ms), p90 %.3f ms (plain %.3f ms)\n", rt / 1e3,
           rp / 1e3, (double)pct(vt, (size_t)count, 50) / 1e6,
           (double)pct(vp, (size_t)count, 50) / 1e6,
           (double)pct(vt, (size_t)count, 90) / 1e6,
           (double)pct(vp, (size_t)count, 90) / 1e6);
    free(env_plain);
    free(env_tls);
    free(vp);
    free(vt);
    return 0;
}
