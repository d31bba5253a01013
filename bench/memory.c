/* Memory: the bytes Redis holds per open barrier with some of its parties
 * in. */
#include "fmacros.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/* Sum of MEMORY USAGE over the keys matching `pattern` (a cross-check). */
static long long keys_usage(redisContext *adm, const char *pattern,
                            long long *nkeys)
{
    char cursor[32] = "0";
    long long total = 0;

    *nkeys = 0;
    do {
        redisReply *r = cmd(adm, "SCAN %s MATCH %s COUNT 1000", cursor,
                            pattern);
        size_t i;

        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2)
            die("bad SCAN reply");
        snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
        for (i = 0; i < r->element[1]->elements; i++) {
            redisReply *m = cmd(adm, "MEMORY USAGE %s SAMPLES 0",
                                r->element[1]->element[i]->str);

            if (m->type == REDIS_REPLY_INTEGER) {
                total += m->integer;
                (*nkeys)++;
            }
            freeReplyObject(m);
        }
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0);
    return total;
}

/* Open barriers, each with `arrived` of its n parties in and blocked. The
 * parties are threads in child processes; once every one is blocked the
 * children are killed, so Redis frees their connections and what remains
 * is the barriers' own state: used_memory then minus used_memory before
 * is the cost of the open barriers, free of the query and reply buffers of
 * thousands of connections. Run it on a database of its own (FLUSHDB at
 * the end). */
int bench_memory(bench_ctx *ctx, int argc, char **argv)
{
    long barriers = 1000, n = 5, arrived = 4, reps = 3, procs = 8, count, k, q;
    const bench_opt opts[] = {
        BENCH_NUM("--barriers", &barriers),
        BENCH_NUM("--n", &n),
        BENCH_NUM("--arrived", &arrived),
        BENCH_NUM("--reps", &reps),
        BENCH_NUM("--procs", &procs),
        BENCH_OPTS_END
    };
    redisContext *adm;

    bench_parse(ctx, argc, argv, opts);
    if (barriers < 1 || arrived < 1 || arrived >= n || procs < 1)
        bench_usage_error(ctx, "need --barriers >= 1, 1 <= --arrived < --n "
                          "and --procs >= 1");
    count = barriers * arrived;
    adm = admin_connect(&ctx->url);
    for (k = 0; k < reps; k++) {
        long long used0, used1, clients0, nkeys, usage;
        pid_t *pids = calloc((size_t)procs, sizeof(*pids));
        char pattern[64];

        if (pids == NULL)
            die("out of memory");
        clients0 = (long long)info_num(adm, "clients", "connected_clients");
        sleep_ms(100);
        used0 = (long long)info_num(adm, "memory", "used_memory");
        fflush(stdout);
        for (q = 0; q < procs; q++) {
            long lo = count * q / procs, hi = count * (q + 1) / procs, i;

            pids[q] = fork();
            if (pids[q] < 0)
                die("fork: %s", strerror(errno));
            if (pids[q] == 0) {
                tparty *tp = parties_new(&ctx->url, hi - lo);

                for (i = lo; i < hi; i++) {
                    tparty *p = &tp[i - lo];

                    snprintf(p->id, sizeof(p->id), "w%ld", i % arrived);
                    snprintf(p->name, sizeof(p->name), "bench-mem-%ld-%ld",
                             k, i / arrived);
                    p->o.n = n;
                    p->o.ttl_ms = 600000;
                }
                parties_start(tp, hi - lo);
                for (;;)
                    pause();
            }
        }
        await_blocked(adm, count);
        for (q = 0; q < procs; q++) {
            kill(pids[q], SIGKILL);
            waitpid(pids[q], NULL, 0);
        }
        while (info_num(adm, "clients", "connected_clients") >
               (double)clients0)
            sleep_ms(10);
        sleep_ms(100);
        used1 = (long long)info_num(adm, "memory", "used_memory");
        snprintf(pattern, sizeof(pattern), "rb:b:{bench-mem-%ld-*", k);
        usage = keys_usage(adm, pattern, &nkeys);
        printf("bytes_per_open_barrier %.0f\n",
               (double)(used1 - used0) / (double)barriers);
        printf("# memory rep %ld: used_memory +%lld over %ld barriers with "
               "%ld/%ld in; %lld keys, MEMORY USAGE sum %lld (%.0f per "
               "barrier)\n", k, used1 - used0, barriers, arrived, n, nkeys,
               usage, (double)usage / (double)barriers);
        fflush(stdout);
        free(pids);
    }
    freeReplyObject(cmd(adm, "FLUSHDB"));
    redisFree(adm);
    return 0;
}
