/* The lock: rb_lock_acquire + rb_lock_release (+ rb_lock_free).
 *
 *   --mode pairs    one connection, --count uncontended acquire/release
 *                   pairs in a loop: lock_pairs_per_s;
 *   --mode handoff  --procs processes, each its own connection and id,
 *                   each looping --count acquire/release pairs on one
 *                   name, started together: lock_handoffs_per_s, the
 *                   grants of all of them over the time until the last
 *                   one is done; and per grant the client commands
 *                   and the Redis commands (INFO commandstats, scripts
 *                   included): lock_handoff_cmds, lock_handoff_calls;
 *   --mode rw       the same with a read-write lock: process 0 asks
 *                   exclusive, the other --procs - 1 shared (8 readers,
 *                   1 writer by default): lock_rw_grants_per_s,
 *                   lock_rw_cmds (redis-py has no read-write lock to
 *                   compare with);
 *   --mode idle     one holder (renewing every third of the default
 *                   lease) and --waiters waiters blocked on it (default
 *                   lease): the Redis calls (INFO commandstats, scripts
 *                   included) per waiter and second over a window of
 *                   --seconds, lock_idle_calls_per_waiter_s.
 *
 * bench/pylock.py measures redis-py's own Lock the same ways. */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

static void pair_mode(bench_conn *c, const char *name, const char *id,
                      int shared)
{
    held_lock *l;
    char why[600];

    if (lock_acquire_mode(&l, c, name, id, shared, 60000, why,
                          sizeof(why)) != 0)
        die("lock_acquire %s: %s", name, why);
    if (lock_release(l, why, sizeof(why)) != 0)
        die("lock_release %s: %s", name, why);
    lock_free(l);
}

static void pair(bench_conn *c, const char *name, const char *id)
{
    pair_mode(c, name, id, 0);
}

static void mode_pairs(const char *url, const char *name, long count)
{
    bench_conn *c = party_conn(url, NULL);
    long long t0;
    long i;

    for (i = 0; i < count / 10 + 1; i++)  /* warm-up */
        pair(c, name, "pairs");
    t0 = now_ns();
    for (i = 0; i < count; i++)
        pair(c, name, "pairs");
    printf("lock_pairs_per_s %.1f\n",
           (double)count * 1e9 / (double)(now_ns() - t0));
    party_conn_free(c);
}

static void mode_handoff(bench_ctx *ctx, const char *name, long procs,
                         long count, int rw)
{
    const char *url = ctx->url_text;
    cmdstats *before = malloc(sizeof(cmdstats)),
             *after = malloc(sizeof(cmdstats));
    redisContext *adm = admin_connect(&ctx->addr);
    long long start, end;
    double grants = (double)(procs * count);
    cmd_delta d;
    long p;
    int failed = 0, st;

    if (before == NULL || after == NULL)
        die("out of memory");
    cmdstats_take(adm, before);

    /* CLOCK_MONOTONIC is shared: every child connects, then waits for
     * the same start moment. */
    start = now_ns() + 500 * 1000000LL;
    for (p = 0; p < procs; p++) {
        pid_t pid = fork();

        if (pid < 0)
            die("fork failed");
        if (pid == 0) {
            bench_conn *c = party_conn(url, NULL);
            char id[48];
            long i;

            snprintf(id, sizeof(id), "h%ld-%ld", p, (long)getpid());
            while (now_ns() < start)
                sleep_ms(1);
            for (i = 0; i < count; i++)
                pair_mode(c, name, id, rw && p > 0);
            party_conn_free(c);
            _exit(0);
        }
    }
    while (wait(&st) > 0)
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
            failed = 1;
    end = now_ns();
    if (failed)
        die("a contender failed");
    cmdstats_take(adm, after);
    d = cmdstats_delta(adm, before, after, rw ? "lock rw per grant:"
                                              : "lock hand-off per grant:",
                       grants);
    if (rw) {
        printf("lock_rw_grants_per_s %.1f\n",
               grants * 1e9 / (double)(end - start));
        printf("lock_rw_cmds %.2f\n", (double)d.client / grants);
    } else {
        printf("lock_handoffs_per_s %.1f\n",
               grants * 1e9 / (double)(end - start));
        printf("lock_handoff_cmds %.2f\n", (double)d.client / grants);
        printf("lock_handoff_calls %.2f\n",
               (double)(d.client + d.inside) / grants);
    }
    redisFree(adm);
    free(before);
    free(after);
}

typedef struct waiter {
    pthread_t th;
    bench_conn *c;
    const char *name;
    char id[48];
    volatile int *stop;   /* the holder's: renew until set */
    int rc;
    char why[600];
} waiter;

static void *waiter_main(void *arg)
{
    waiter *w = arg;
    held_lock *l;

    w->rc = lock_acquire(&l, w->c, w->name, w->id, 600000, w->why,
                         sizeof(w->why));
    if (w->rc == 0) {
        w->rc = lock_release(l, w->why, sizeof(w->why));
        lock_free(l);
    }
    return NULL;
}

static void *holder_main(void *arg)
{
    waiter *w = arg;
    held_lock *l;

    w->rc = lock_acquire(&l, w->c, w->name, w->id, 60000, w->why,
                         sizeof(w->why));
    if (w->rc != 0)
        return NULL;
    while (!*w->stop && w->rc == 0) {
        sleep_ms(50);
        if (!*w->stop && lock_renew_due(l))
            w->rc = lock_renew(l, w->why, sizeof(w->why));
    }
    if (w->rc == 0)
        w->rc = lock_release(l, w->why, sizeof(w->why));
    lock_free(l);
    return NULL;
}

static void mode_idle(bench_ctx *ctx, const char *name, long waiters,
                      long seconds)
{
    volatile int stop = 0;
    waiter *w = calloc((size_t)waiters + 1, sizeof(*w));
    cmdstats *before = malloc(sizeof(cmdstats)),
             *after = malloc(sizeof(cmdstats));
    redisContext *adm = admin_connect(&ctx->addr);
    long long t0, t1;
    cmd_delta d;
    double per;
    long i;

    if (w == NULL || before == NULL || after == NULL)
        die("out of memory");
    for (i = 0; i <= waiters; i++) {
        w[i].c = party_conn(ctx->url_text, NULL);
        w[i].name = name;
        w[i].stop = &stop;
        snprintf(w[i].id, sizeof(w[i].id), "%s%ld", i ? "w" : "holder", i);
    }
    if (pthread_create(&w[0].th, NULL, holder_main, &w[0]) != 0)
        die("pthread_create failed");
    sleep_ms(200);
    for (i = 1; i <= waiters; i++)
        if (pthread_create(&w[i].th, NULL, waiter_main, &w[i]) != 0)
            die("pthread_create failed");
    await_blocked(adm, waiters);
    cmdstats_take(adm, before);
    t0 = now_ns();
    sleep_ms(seconds * 1000);
    cmdstats_take(adm, after);
    t1 = now_ns();
    per = (double)(t1 - t0) / 1e9 * (double)waiters;
    d = cmdstats_delta(adm, before, after, "lock idle per waiter-s:", per);
    printf("lock_idle_calls_per_waiter_s %.3f\n",
           (double)(d.client + d.inside) / per);
    fflush(stdout);
    stop = 1;
    for (i = 0; i <= waiters; i++) {
        pthread_join(w[i].th, NULL);
        if (w[i].rc != 0)
            die("%s: %s", w[i].id, w[i].why);
        party_conn_free(w[i].c);
    }
    redisFree(adm);
    free(w);
    free(before);
    free(after);
}

int bench_lock(bench_ctx *ctx, int argc, char **argv)
{
    const char *mode = NULL;
    long count = 2000, procs = 8, waiters = 20, seconds = 10;
    const bench_opt opts[] = {
        BENCH_REQUIRED_STR("--mode", &mode),
        BENCH_NUM("--count", &count),
        BENCH_NUM("--procs", &procs),
        BENCH_NUM("--waiters", &waiters),
        BENCH_NUM("--seconds", &seconds),
        BENCH_OPTS_END
    };
    char name[64];

    bench_parse(ctx, argc, argv, opts);
    if (count < 1 || procs < 1 || waiters < 1 || seconds < 1)
        bench_usage_error(ctx, "need --count, --procs, --waiters and "
                          "--seconds >= 1");
    snprintf(name, sizeof(name), "bench-lock-%s-%ld", mode, (long)getpid());
    if (strcmp(mode, "pairs") == 0)
        mode_pairs(ctx->url_text, name, count);
    else if (strcmp(mode, "handoff") == 0)
        mode_handoff(ctx, name, procs, count, 0);
    else if (strcmp(mode, "rw") == 0)
        mode_handoff(ctx, name, procs, count, 1);
    else if (strcmp(mode, "idle") == 0)
        mode_idle(ctx, name, waiters, seconds);
    else
        bench_usage_error(ctx, "--mode is pairs, handoff, rw or idle");
    return 0;
}
