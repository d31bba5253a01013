/* Parties for the measurements that need many: each with its own
 * library connection, on a thread of its own. */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

#define THREAD_STACK (256 * 1024)

rb_conn *party_conn(const rb_url *u)
{
    rb_conn *c;
    rb_error err;

    if (rb_conn_new(&c, u, NULL, &err) != RB_OK)
        die("rb_conn_new: %s", err.msg);
    if (rb_conn_connect(c, rb_now_ms() + 10000, &err) != RB_OK)
        die("rb_conn_connect: %s", err.msg);
    return c;
}

static void *party_main(void *arg)
{
    tparty *tp = arg;
    rb_wait_result res;
    rb_error err;
    long i;

    for (i = 0; i < tp->reps; i++) {
        tp->rc = rb_barrier_wait(&res, tp->c, &tp->o, &err);
        if (tp->release)
            tp->release[i] = now_ns();
        if (tp->released)
            __atomic_add_fetch(&tp->released[i], 1, __ATOMIC_SEQ_CST);
        if (tp->rc != RB_OK) {
            snprintf(tp->why, sizeof(tp->why), "%.500s", err.msg);
            break;
        }
    }
    return NULL;
}

/* Set up `count` parties with their connections made one at a time (a
 * thousand simultaneous connects would overflow the listen backlog and
 * measure SYN retries instead). */
tparty *parties_new(const rb_url *u, long count)
{
    tparty *tp = calloc((size_t)count, sizeof(*tp));
    long i;

    if (tp == NULL)
        die("out of memory");
    for (i = 0; i < count; i++) {
        rb_wait_opts o = RB_WAIT_OPTS_INIT;

        tp[i].c = party_conn(u);
        tp[i].o = o;
        tp[i].o.id = tp[i].id;
        tp[i].o.name = tp[i].name;
        tp[i].o.timeout_ms = 120000;
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
        if (tp[i].rc != RB_OK)
            die("party %s: %s", tp[i].id, tp[i].why);
        rb_conn_free(tp[i].c);
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

long long complete_round(rb_conn *c, const char *name, long n,
                                const char *id, long long *sent)
{
    rb_wait_opts o = RB_WAIT_OPTS_INIT;
    rb_wait_result res;
    rb_error err;
    long long t;

    o.name = name;
    o.n = n;
    o.id = id;
    o.timeout_ms = 60000;
    if (sent)
        *sent = now_ns();
    if (rb_barrier_wait(&res, c, &o, &err) != RB_OK)
        die("completing arrival at %s: %s", name, err.msg);
    t = now_ns();
    if (!res.completed)
        die("arrival at %s did not complete the round", name);
    return t;
}
