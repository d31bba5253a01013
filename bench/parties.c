/* Parties for the measurements that need many: each with its own
 * library connection, on a thread of its own. */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#define THREAD_STACK (256 * 1024)

static void *party_main(void *arg)
{
    tparty *tp = arg;
    long i;

    if (tp->delay_ms > 0)
        sleep_ms(tp->delay_ms);
    for (i = 0; i < tp->reps; i++) {
        tp->rc = party_wait(tp->c, &tp->a, NULL, tp->why, sizeof(tp->why));
        if (tp->release)
            tp->release[i] = now_ns();
        if (tp->released)
            __atomic_add_fetch(&tp->released[i], 1, __ATOMIC_SEQ_CST);
        if (tp->rc != 0)
            break;
    }
    return NULL;
}

/* Set up `count` parties with their connections made one at a time (a
 * thousand simultaneous connects would overflow the listen backlog and
 * measure SYN retries instead). */
tparty *parties_new(const char *url, long count)
{
    tparty *tp = calloc((size_t)count, sizeof(*tp));
    long i;

    if (tp == NULL)
        die("out of memory");
    for (i = 0; i < count; i++) {
        tp[i].c = party_conn(url, NULL);
        tp[i].a.id = tp[i].id;
        tp[i].a.name = tp[i].name;
        tp[i].a.timeout_s = 120;
        tp[i].reps = 1;
    }
    return tp;
}

void parties_start(tparty *tp, long count)
{
    pthread_attr_t attr;
    long i;

    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, THREAD_STACK);
    for (i = 0; i < count; i++)
        if (pthread_create(&tp[i].th, &attr, party_main, &tp[i]) != 0)
            die("pthread_create failed at party %ld", i);
    pthread_attr_destroy(&attr);
}

void parties_join_free(tparty *tp, long count)
{
    long i;

    for (i = 0; i < count; i++) {
        pthread_join(tp[i].th, NULL);
        if (tp[i].rc != 0)
            die("party %s: %s", tp[i].id, tp[i].why);
        party_conn_free(tp[i].c);
        free(tp[i].release);
    }
    free(tp);
}

void await_blocked(redisContext *adm, long count)
{
    long long until = now_ns() + 60 * 1000000000LL;

    while (info_num(adm, "clients", "blocked_clients") < (double)count) {
        if (now_ns() > until)
            die("parties did not all block within 60 s");
        sleep_ms(2);
    }
}

long long complete_round(bench_conn *c, const char *name, long n,
                         const char *id, long long *sent)
{
    party_args a = { .name = name, .id = id, .n = n, .timeout_s = 60 };
    party_outcome res;
    char why[600];
    long long t;

    if (sent)
        *sent = now_ns();
    if (party_wait(c, &a, &res, why, sizeof(why)) != 0)
        die("completing arrival at %s: %s", name, why);
    t = now_ns();
    if (!res.completed)
        die("arrival at %s did not complete the round", name);
    return t;
}
