/* Rounds: N processes pass R rounds of one barrier. The rate, the release
 * times (a waiter's return minus the completing party's return, and minus
 * its send), the client commands and Redis calls per round (INFO
 * commandstats), and the CPU per round of the parties and Redis. */
#include "fmacros.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

typedef struct round_shm {
    int ready;
    int go;
    int failed;
    char why[600];
} round_shm;

int bench_rounds(bench_ctx *ctx, int argc, char **argv)
{
    const char *name = NULL, *suffix = "";
    long n = 4, rounds = 2000, warmup = 50, ttl = 0;
    const bench_opt opts[] = {
        BENCH_NUM("--n", &n),
        BENCH_NUM("--rounds", &rounds),
        BENCH_NUM("--warmup", &warmup),
        BENCH_NUM("--ttl", &ttl),
        BENCH_STR("--name", &name),
        BENCH_STR("--suffix", &suffix),
        BENCH_OPTS_END
    };
    char defname[64], label[64];
    size_t hdr, sz;
    round_shm *shm;
    long long *t, *t_send, *gen;
    int *completer;
    long p, r;
    redisContext *adm;
    cmdstats *before, *after;
    cmd_delta d;
    long long *rel, *rels;
    double srv0, srv1, kids0, kids1;
    size_t nrel = 0;
    int failed = 0;

    bench_parse(ctx, argc, argv, opts);
    if (n < 2 || rounds < 2 || warmup >= rounds - 1)
        bench_usage_error(ctx, "need --n >= 2 and --rounds > --warmup + 1");
    if (name == NULL) {
        snprintf(defname, sizeof(defname), "bench-rounds-%ld-%ld", n,
                 (long)getpid());
        name = defname;
    }

    hdr = (sizeof(round_shm) + 63) & ~(size_t)63;
    sz = hdr + (size_t)rounds * (size_t)n * sizeof(long long) * 3 +
         (size_t)rounds * sizeof(int);
    shm = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
               -1, 0);
    if (shm == MAP_FAILED)
        die("mmap: %s", strerror(errno));
    memset(shm, 0, sz);
    t = (long long *)((char *)shm + hdr);
    t_send = t + rounds * n;
    gen = t_send + rounds * n;
    completer = (int *)(gen + rounds * n);
    for (r = 0; r < rounds; r++)
        completer[r] = -1;

    fflush(stdout);
    for (p = 0; p < n; p++) {
        pid_t pid = fork();

        if (pid < 0)
            die("fork: %s", strerror(errno));
        if (pid == 0) {
            rb_conn *c = party_conn(&ctx->url);
            rb_wait_opts o = RB_WAIT_OPTS_INIT;
            rb_wait_result res;
            rb_error err;
            char id[32];

            snprintf(id, sizeof(id), "p%ld", p);
            o.name = name;
            o.n = n;
            o.id = id;
            o.ttl_ms = (long long)ttl * 1000;
            o.timeout_ms = 60000;
            __atomic_add_fetch(&shm->ready, 1, __ATOMIC_SEQ_CST);
            while (!__atomic_load_n(&shm->go, __ATOMIC_SEQ_CST))
                sleep_ms(1);
            for (r = 0; r < rounds; r++) {
                int rc;

                t_send[r * n + p] = now_ns();
                rc = rb_barrier_wait(&res, c, &o, &err);

                t[r * n + p] = now_ns();
                if (rc != RB_OK) {
                    if (__atomic_add_fetch(&shm->failed, 1,
                                           __ATOMIC_SEQ_CST) == 1)
                        snprintf(shm->why, sizeof(shm->why),
                                 "party %ld round %ld: %.500s", p, r, err.msg);
                    break;
                }
                gen[r * n + p] = res.gen;
                if (res.completed)
                    completer[r] = (int)p;
            }
            rb_conn_free(c);
            _exit(0);
        }
    }

    adm = admin_connect(&ctx->url);
    before = malloc(sizeof(*before));
    after = malloc(sizeof(*after));
    if (before == NULL || after == NULL)
        die("out of memory");
    while (__atomic_load_n(&shm->ready, __ATOMIC_SEQ_CST) < n)
        sleep_ms(1);
    cmdstats_take(adm, before);
    srv0 = server_cpu_s(adm);
    kids0 = rusage_cpu_s(RUSAGE_CHILDREN);
    __atomic_store_n(&shm->go, 1, __ATOMIC_SEQ_CST);
    for (p = 0; p < n; p++) {
        int status;

        if (wait(&status) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            failed = 1;
    }
    kids1 = rusage_cpu_s(RUSAGE_CHILDREN);
    srv1 = server_cpu_s(adm);
    cmdstats_take(adm, after);
    if (failed || shm->failed)
        die("rounds n=%ld: %s", n, shm->failed ? shm->why : "a party died");

    /* Every round: one completer, every party in the same generation. */
    for (r = 0; r < rounds; r++) {
        if (completer[r] < 0)
            die("round %ld had no completing party", r);
        for (p = 1; p < n; p++)
            if (gen[r * n + p] != gen[r * n])
                die("round %ld: parties saw different generations", r);
    }
    /* A waiter's release: its return time minus the time the completing
     * party got its arrive reply (rel), or minus the time the completing
     * party sent its arrival (rels: never negative; includes the arrive
     * round trip). */
    rel = calloc((size_t)((rounds - warmup) * (n - 1)), sizeof(*rel));
    rels = calloc((size_t)((rounds - warmup) * (n - 1)), sizeof(*rels));
    if (rel == NULL || rels == NULL)
        die("out of memory");
    for (r = warmup; r < rounds; r++) {
        long long tc = t[r * n + completer[r]];
        long long ts = t_send[r * n + completer[r]];

        for (p = 0; p < n; p++)
            if (p != completer[r]) {
                rels[nrel] = t[r * n + p] - ts;
                rel[nrel++] = t[r * n + p] - tc;
            }
    }
    qsort(rel, nrel, sizeof(*rel), cmp_ll);
    qsort(rels, nrel, sizeof(*rels), cmp_ll);

    snprintf(label, sizeof(label), "n=%ld%s per round:", n, suffix);
    d = cmdstats_delta(adm, before, after, label, (double)rounds);
    {
        long long span = t[(rounds - 1) * n + completer[rounds - 1]] -
                         t[warmup * n + completer[warmup]];
        double rate = (double)(rounds - 1 - warmup) * 1e9 / (double)span;

        printf("rounds_per_s%s.%ld %.0f\n", suffix, n, rate);
        printf("release_p50_us%s.%ld %.2f\n", suffix, n,
               (double)pct(rel, nrel, 50) / 1e3);
        printf("release_p99_us%s.%ld %.2f\n", suffix, n,
               (double)pct(rel, nrel, 99) / 1e3);
        printf("release_send_p50_us%s.%ld %.2f\n", suffix, n,
               (double)pct(rels, nrel, 50) / 1e3);
        printf("release_send_p99_us%s.%ld %.2f\n", suffix, n,
               (double)pct(rels, nrel, 99) / 1e3);
        printf("redis_busy_us_per_round%s.%ld %.2f\n", suffix, n,
               (double)d.client_usec / (double)rounds);
        printf("cmds_per_round%s.%ld %.2f\n", suffix, n,
               (double)d.client / (double)rounds);
        printf("cpu_us_per_round%s.%ld %.2f\n", suffix, n,
               ((kids1 - kids0) + (srv1 - srv0)) * 1e6 / (double)rounds);
        printf("# n=%ld%s: CPU per round: parties %.2f us, redis-server "
               "%.2f us\n", n, suffix, (kids1 - kids0) * 1e6 / (double)rounds,
               (srv1 - srv0) * 1e6 / (double)rounds);
        printf("calls_per_round%s.%ld %.2f\n", suffix, n,
               (double)(d.client + d.inside) / (double)rounds);
        printf("evalsha_usec%s.%ld %.2f\n", suffix, n,
               d.evalsha ? (double)d.evalsha_usec / (double)d.evalsha : 0.0);
        printf("# n=%ld%s: release min %.2f us max %.2f us over %zu "
               "releases; round time %.2f us\n", n, suffix,
               (double)rel[0] / 1e3, (double)rel[nrel - 1] / 1e3, nrel,
               1e6 / rate);
    }
    free(rel);
    free(rels);
    free(before);
    free(after);
    redisFree(adm);
    munmap(shm, sz);
    return 0;
}
