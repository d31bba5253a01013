/*
 * A job's rendezvous data: what torchrun's agents exchange before they
 * start their workers, handed round in the entering round that exists
 * anyway. Each member offers its host and an endpoint with its entering
 * (job-enter's ARGV[10..11]); the attempt keeps rank 0's endpoint, and
 * the entry that completes the round groups the members by host once
 * (includes/job.lua, job_group_hosts). Each member then reads its own
 * field: one O(1) call, whatever N is.
 */
#include "fmacros.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rb_job.h"
#include "rb_reply.h"

static char *dup_str(const char *s, int *failed)
{
    char *d;

    if (s == NULL)
        return NULL;
    if ((d = strdup(s)) == NULL)
        *failed = 1;
    return d;
}

int rb_job__rdv_init(rb_job_rdv *v, const rb_job_opts *o, rb_error *err)
{
    int failed = 0;

    memset(v, 0, sizeof(*v));
    v->local_rank = v->local_world = v->group_rank = v->group_world = -1;
    if (o->version < 2)
        return RB_OK;
    v->host = dup_str(o->host, &failed);
    v->master_addr = dup_str(o->master_addr, &failed);
    v->master_port = o->master_port;
    if (failed) {
        rb_job__rdv_free(v);
        return rb_error__set(err, RB_ENOMEM, "out of memory");
    }
    return RB_OK;
}

void rb_job__rdv_free(rb_job_rdv *v)
{
    free(v->host);
    free(v->master_addr);
    v->host = v->master_addr = NULL;
}

/* A TCP port free on this host now, on every address (where torch's
 * store listens): bound to port 0, read back, closed, as torchrun's own
 * agent picks it. Never `avoid` (the last attempt's, which a restart must
 * not meet again: its old store may linger): while the socket holding
 * that one stays bound, the next bind gets another. */
static int free_port(int v6, int avoid)
{
    struct sockaddr_storage ss;
    socklen_t sl;
    int fd, port = -1;

    memset(&ss, 0, sizeof(ss));
    if (v6) {
        ((struct sockaddr_in6 *)&ss)->sin6_family = AF_INET6;
        ((struct sockaddr_in6 *)&ss)->sin6_addr = in6addr_any;
        sl = sizeof(struct sockaddr_in6);
    } else {
        ((struct sockaddr_in *)&ss)->sin_family = AF_INET;
        ((struct sockaddr_in *)&ss)->sin_addr.s_addr = htonl(INADDR_ANY);
        sl = sizeof(struct sockaddr_in);
    }
    if ((fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return -1;
    if (bind(fd, (struct sockaddr *)&ss, sl) == 0 &&
        getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        port = ntohs(v6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                        : ((struct sockaddr_in *)&ss)->sin_port);
    if (port > 0 && port == avoid)
        port = free_port(v6, -1);
    close(fd);
    return port;
}

int rb_job__rdv_offer(rb_job_rdv *v, rb_conn *c, rb_error *err)
{
    char addr[64];
    int port = v->master_port;

    if (v->master_addr)
        snprintf(addr, sizeof(addr), "%s", v->master_addr);
    else if (rb_conn__local_addr(c, addr, sizeof(addr)) != 0)
        return rb_error__set(err, RB_EUNREACHABLE, "no connection to "
                             "Redis to take this host's address from");
    if (port == 0 &&
        (port = free_port(strchr(addr, ':') != NULL, v->port)) <= 0)
        return rb_error__set(err, RB_EUNREACHABLE, "no free TCP port for "
                             "the rendezvous");
    snprintf(v->endpoint, sizeof(v->endpoint), "%s %d", addr, port);
    return RB_OK;
}

static void one_host(rb_job_rdv *v, long rank, long n)
{
    v->local_rank = rank;
    v->local_world = n;
    v->group_rank = 0;
    v->group_world = 1;
}

const rb_cmd *rb_job__rdv_read(rb_job_rdv *v, const char *base,
                               long long epoch, long att, const char *id)
{
    int i;

    snprintf(v->key, sizeof(v->key), "%s:%lld:%ld:rdv", base, epoch, att);
    v->argv[0] = "HMGET";
    v->argv[1] = v->key;
    v->argv[2] = id;
    v->argv[3] = "groups";
    v->argv[4] = "master";
    for (i = 0; i < 5; i++)
        v->lens[i] = strlen(v->argv[i]);
    v->read.argc = 5;
    v->read.argv = v->argv;
    v->read.lens = v->lens;
    return &v->read;
}

/* A field's text, or NULL when absent (nil) or not text. */
static const char *field(const redisReply *r)
{
    const char *s = NULL;

    if (r && r->type != REDIS_REPLY_NIL)
        rb_job__str_at(r, &s);
    return s;
}

void rb_job__rdv_take(rb_job_rdv *v, const redisReply *mine_r,
                     const redisReply *groups_r, const redisReply *master_r,
                     long rank, long n)
{
    const char *mine = field(mine_r), *groups = field(groups_r),
               *master = field(master_r);
    char addr[64];
    long lr, lw, gr, gw;
    int port;

    one_host(v, rank, n);
    if (mine && groups &&
        sscanf(mine, "%ld %ld %ld", &lr, &lw, &gr) == 3 &&
        sscanf(groups, "%ld", &gw) == 1 && lr >= 0 && lr < lw &&
        lw <= n && gr >= 0 && gr < gw && gw <= n) {
        v->local_rank = lr;
        v->local_world = lw;
        v->group_rank = gr;
        v->group_world = gw;
    }
    /* Rank 0's endpoint; this member's own offer when none was kept. */
    if (!master || sscanf(master, "%63s %d", addr, &port) != 2 ||
        port <= 0 || port > 65535)
        sscanf(v->endpoint, "%63s %d", addr, &port);
    snprintf(v->addr, sizeof(v->addr), "%s", addr);
    v->port = port;
    v->taken = 1;
}

int rb_job__rdv_fetch(rb_job_rdv *v, rb_conn *c, const char *base,
                      long long epoch, long att, const char *id, long rank,
                      long n, long long lease_ms, rb_error *err)
{
    const rb_cmd *read = rb_job__rdv_read(v, base, epoch, att, id);
    rb_call call = { .deadline = rb_deadline__within(rb_now_ms(),
                                                     lease_ms) };
    redisReply *r = NULL;
    int rc;

    if ((rc = rb_conn__call(c, read->argc, read->argv, read->lens, &call,
                            &r, err)) != RB_OK)
        return rc;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 3) {
        freeReplyObject(r);
        return rb_error__set(err, RB_EPROTO, "bad rendezvous reply");
    }
    rb_job__rdv_take(v, r->element[0], r->element[1], r->element[2], rank,
                     n);
    freeReplyObject(r);
    return RB_OK;
}

/* The rendezvous data of the attempt (rb_job_rdv.c fetched it). */
long rb_job_local_rank(const rb_job *j) { return j->rdv.local_rank; }
long rb_job_local_world(const rb_job *j) { return j->rdv.local_world; }
long rb_job_group_rank(const rb_job *j) { return j->rdv.group_rank; }
long rb_job_group_world(const rb_job *j) { return j->rdv.group_world; }

const char *rb_job_master_addr(const rb_job *j)
{
    return j->rdv.addr[0] ? j->rdv.addr : NULL;
}

int rb_job_master_port(const rb_job *j) { return j->rdv.port; }
