/* A plain hiredis client for what the library does not do: the floors
 * (PING, EVALSHA), INFO and INFO commandstats. */
#include "fmacros.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

redisContext *admin_connect(const bench_addr *u)
{
    struct timeval tv = { 5, 0 };
    redisContext *c;
    redisReply *r;

    if (u->tls)
        die("the bench's own connections are plain: give --admin a "
            "redis:// or unix:// URL of the same server");
    c = u->unix_socket ? redisConnectUnixWithTimeout(u->path, tv)
                       : redisConnectWithTimeout(u->host, u->port, tv);
    if (c == NULL || c->err)
        die("cannot connect to Redis: %s", c ? c->errstr : "out of memory");
    if (u->has_password) {
        r = u->user[0] ? redisCommand(c, "AUTH %s %s", u->user, u->password)
                       : redisCommand(c, "AUTH %s", u->password);
        if (r == NULL || r->type == REDIS_REPLY_ERROR)
            die("AUTH refused");
        freeReplyObject(r);
    }
    if (u->db) {
        r = redisCommand(c, "SELECT %d", u->db);
        if (r == NULL || r->type == REDIS_REPLY_ERROR)
            die("SELECT refused");
        freeReplyObject(r);
    }
    return c;
}

redisReply *cmd(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    redisReply *r;

    va_start(ap, fmt);
    r = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (r == NULL)
        die("Redis connection failed: %s", c->errstr);
    if (r->type == REDIS_REPLY_ERROR)
        die("Redis error: %s", r->str);
    return r;
}

double info_num(redisContext *c, const char *section,
                       const char *field)
{
    redisReply *r = cmd(c, "INFO %s", section);
    size_t flen = strlen(field);
    const char *p = r->str;
    double v = -1;

    while (p && *p) {
        if (strncmp(p, field, flen) == 0 && p[flen] == ':') {
            v = strtod(p + flen + 1, NULL);
            break;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    freeReplyObject(r);
    if (v < 0)
        die("INFO %s has no %s", section, field);
    return v;
}

double server_cpu_s(redisContext *c)
{
    return info_num(c, "cpu", "used_cpu_user") +
           info_num(c, "cpu", "used_cpu_sys");
}

void cmdstats_take(redisContext *c, cmdstats *s)
{
    redisReply *r = cmd(c, "INFO commandstats");
    const char *p = r->str;

    s->n = 0;
    while (p && *p) {
        const char *colon;

        if (strncmp(p, "cmdstat_", 8) == 0 && (colon = strchr(p, ':')) &&
            s->n < MAX_CMDS) {
            size_t len = (size_t)(colon - p - 8);
            const char *calls = strstr(colon, "calls=");
            const char *usec = strstr(colon, "usec=");

            if (len >= sizeof(s->name[0]))
                len = sizeof(s->name[0]) - 1;
            memcpy(s->name[s->n], p + 8, len);
            s->name[s->n][len] = '\0';
            s->calls[s->n] = calls ? strtoll(calls + 6, NULL, 10) : 0;
            s->usec[s->n] = usec ? strtoll(usec + 5, NULL, 10) : 0;
            s->n++;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    freeReplyObject(r);
}

static long long cmdstats_get(const cmdstats *s, const char *name,
                              long long *usec)
{
    size_t i;

    for (i = 0; i < s->n; i++)
        if (strcmp(s->name[i], name) == 0) {
            if (usec)
                *usec = s->usec[i];
            return s->calls[i];
        }
    if (usec)
        *usec = 0;
    return 0;
}

/* Whether scripts may not call this command (COMMAND INFO flag noscript):
 * such a call was sent by a client. Redis also counts every redis.call()
 * inside a script under that command's name, so the commandstats total is
 * client commands plus the commands the scripts ran. */
static int is_client_only(redisContext *c, const char *name)
{
    redisReply *r = cmd(c, "COMMAND INFO %s", name);
    int found = 0;
    size_t i;

    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
        r->element[0]->type == REDIS_REPLY_ARRAY &&
        r->element[0]->elements > 2) {
        const redisReply *flags = r->element[0]->element[2];

        for (i = 0; flags->type == REDIS_REPLY_ARRAY && i < flags->elements;
             i++)
            if (flags->element[i]->type == REDIS_REPLY_STATUS &&
                strcmp(flags->element[i]->str, "noscript") == 0)
                found = 1;
    }
    freeReplyObject(r);
    return found;
}

cmd_delta cmdstats_delta(redisContext *c, const cmdstats *before,
                                const cmdstats *after, const char *label,
                                double per)
{
    cmd_delta d;
    size_t i;

    memset(&d, 0, sizeof(d));
    for (i = 0; i < after->n; i++) {
        long long u0, calls;
        const char *name = after->name[i];

        calls = after->calls[i] - cmdstats_get(before, name, &u0);
        if (calls <= 0 || strcmp(name, "info") == 0)
            continue;
        if (is_client_only(c, name)) {
            d.client += calls;
            d.client_usec += after->usec[i] - u0;
            if (strcmp(name, "evalsha") == 0 || strcmp(name, "eval") == 0) {
                d.evalsha += calls;
                d.evalsha_usec += after->usec[i] - u0;
            }
            if (strcmp(name, "blmove") == 0 ||
                strcmp(name, "brpoplpush") == 0)
                d.blocking += calls;
        } else {
            d.inside += calls;
        }
        printf("# %s %s %s %.3f\n", label, name,
               is_client_only(c, name) ? "client" : "in-script",
               (double)calls / per);
    }
    return d;
}
