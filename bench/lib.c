/* The library as the measurements call it: every call into lib/ that the
 * bench makes is in this file, one helper per API call, so a change of the
 * public header (its option structs, the URL type) is one edit here and
 * the measurements do not notice. */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "rbarrier.h"

struct bench_conn {
    rb_conn *c;
    rb_tls_opts tls;  /* the handle may keep pointing at it */
};

int bench_addr_parse(bench_addr *a, const char *text, char *why,
                     size_t whylen)
{
    rb_url *u;
    rb_error err;
    rb_url_kind kind;
    const char *password;
    int rc = 0;

    memset(a, 0, sizeof(*a));
    if (rb_url_parse(&u, text, &err) != RB_OK) {
        snprintf(why, whylen, "%s", err.msg);
        return -1;
    }
    kind = rb_url_get_kind(u);
    password = rb_url_get_password(u);
    /* The bench's arrays hold what the library's limits allow. */
    if (kind == RB_URL_UNIX) {
        a->unix_socket = 1;
        snprintf(a->path, sizeof(a->path), "%s", rb_url_get_path(u));
    } else if (kind == RB_URL_TCP && rb_url_nodes_count(u) == 1) {
        snprintf(a->host, sizeof(a->host), "%s", rb_url_get_host(u, 0));
        a->port = rb_url_get_port(u, 0);
    } else {
        snprintf(why, whylen, "the bench takes one server: a redis://, "
                 "rediss:// or unix:// URL");
        rc = -1;
    }
    a->tls = rb_url_is_tls(u);
    a->db = rb_url_get_db(u);
    a->has_password = password != NULL;
    snprintf(a->user, sizeof(a->user), "%s", rb_url_get_user(u));
    snprintf(a->password, sizeof(a->password), "%s", password ? password : "");
    rb_url_free(u);
    return rc;
}

bench_conn *party_conn(const char *url, const char *cacert)
{
    rb_conn_opts co = RB_CONN_OPTS_INIT;
    rb_tls_opts to = RB_TLS_OPTS_INIT;
    bench_conn *bc;
    rb_url *u;
    rb_error err;

    if (rb_url_parse(&u, url, &err) != RB_OK)
        die("bad URL: %s", err.msg);
    bc = calloc(1, sizeof(*bc));
    if (bc == NULL)
        die("out of memory");
    bc->tls = to;
    bc->tls.cacert = cacert;
    /* Plain URLs get no TLS options, as the CLI gives none. */
    if (cacert)
        co.tls = &bc->tls;
    if (rb_conn_new(&bc->c, u, &co, &err) != RB_OK)
        die("rb_conn_new: %s", err.msg);
    rb_url_free(u);
    /* Connected now, so a measured window never holds a handshake. */
    if (rb_conn_connect(bc->c, now_ns() / 1000000 + 10000, &err) != RB_OK)
        die("rb_conn_connect: %s", err.msg);
    return bc;
}

void party_conn_free(bench_conn *bc)
{
    if (bc == NULL)
        return;
    rb_conn_free(bc->c);
    free(bc);
}

int party_wait(bench_conn *bc, const party_args *a, party_outcome *out,
               char *why, size_t whylen)
{
    rb_wait_opts o = RB_WAIT_OPTS_INIT;
    rb_wait_result res;
    rb_error err;
    int rc;

    o.name = a->name;
    o.n = a->n;
    o.id = a->id;
    o.timeout_ms = (long long)(a->timeout_s * 1000.0);
    o.ttl_ms = (long long)a->ttl_s * 1000;
    memset(&res, 0, sizeof(res));
    rc = rb_barrier_wait(&res, bc->c, &o, &err);
    if (rc == RB_OK && out) {
        out->gen = res.gen;
        out->completed = res.completed;
    }
    rb_wait_result_clear(&res);
    if (rc != RB_OK) {
        snprintf(why, whylen, "%.500s", err.msg);
        return -1;
    }
    return 0;
}

/* ---- the lock (lock.c) -------------------------------------------------- */

int lock_acquire(held_lock **out, bench_conn *bc, const char *name,
                 const char *id, long long timeout_ms, char *why,
                 size_t whylen)
{
    return lock_acquire_mode(out, bc, name, id, 0, timeout_ms, why, whylen);
}

int lock_acquire_mode(held_lock **out, bench_conn *bc, const char *name,
                      const char *id, int shared, long long timeout_ms,
                      char *why, size_t whylen)
{
    rb_lock_opts o = RB_LOCK_OPTS_INIT;
    rb_lock *l = NULL;
    rb_error err;

    o.name = name;
    o.id = id;
    o.timeout_ms = timeout_ms;
    o.shared = shared;
    if (rb_lock_acquire(&l, bc->c, &o, &err) != RB_OK) {
        snprintf(why, whylen, "%s", err.msg);
        return -1;
    }
    *out = (held_lock *)l;
    return 0;
}

int lock_renew(held_lock *bl, char *why, size_t whylen)
{
    rb_error err;

    if (rb_lock_renew((rb_lock *)bl, &err) != RB_OK) {
        snprintf(why, whylen, "%s", err.msg);
        return -1;
    }
    return 0;
}

int lock_release(held_lock *bl, char *why, size_t whylen)
{
    rb_error err;

    if (rb_lock_release((rb_lock *)bl, &err) != RB_OK) {
        snprintf(why, whylen, "%s", err.msg);
        return -1;
    }
    return 0;
}

void lock_free(held_lock *bl)
{
    rb_lock_free((rb_lock *)bl);
}

int lock_renew_due(const held_lock *bl)
{
    return rb_lock_renew_in_ms((const rb_lock *)bl) == 0;
}
