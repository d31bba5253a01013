/* The floor: the leanest correct barrier a C programmer can write with
 * hiredis, as the rounds measurement's other party (--impl floor). Per
 * party per round one EVALSHA of bench/arrive.lua, and for every party
 * but the completing one a BLPOP of the round's release list: no lease,
 * nonce, expiry, once or reset, which the library pays for. */
#include "fmacros.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* Longer than any round here; the socket waits a little longer still, so
 * a lost release is a nil reply, never a hiredis I/O error. */
#define FLOOR_POP_S 30

typedef struct floor_party {
    redisContext *c;
    const round_setup *s;
} floor_party;

void floor_load(redisContext *c, const char *file, char *sha, size_t shalen)
{
    FILE *f = fopen(file, "r");
    char *text;
    long len;
    redisReply *r;

    if (f == NULL)
        die("%s: %s", file, strerror(errno));
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 ||
        fseek(f, 0, SEEK_SET) != 0)
        die("%s: cannot read", file);
    text = malloc((size_t)len + 1);
    if (text == NULL)
        die("out of memory");
    if (fread(text, 1, (size_t)len, f) != (size_t)len)
        die("%s: cannot read", file);
    text[len] = '\0';
    fclose(f);
    r = cmd(c, "SCRIPT LOAD %s", text);
    snprintf(sha, shalen, "%s", r->str);
    freeReplyObject(r);
    free(text);
}

static void *floor_open(const round_setup *s, long p)
{
    floor_party *fp = calloc(1, sizeof(*fp));
    struct timeval tv = { FLOOR_POP_S + 5, 0 };

    (void)p;
    if (fp == NULL)
        die("out of memory");
    fp->s = s;
    fp->c = admin_connect(s->addr);
    if (redisSetTimeout(fp->c, tv) != REDIS_OK)
        die("redisSetTimeout failed");
    return fp;
}

static int floor_wait(void *party, long round, party_outcome *out, char *why,
                      size_t whylen)
{
    floor_party *fp = party;
    char count[300], release[300];
    redisReply *r;
    long long c;

    snprintf(count, sizeof(count), "bench-floor:{%s}:%ld:count", fp->s->name,
             round);
    snprintf(release, sizeof(release), "bench-floor:{%s}:%ld:release",
             fp->s->name, round);
    r = redisCommand(fp->c, "EVALSHA %s 2 %s %s %ld", fp->s->sha, count,
                     release, fp->s->n);
    if (r == NULL || r->type != REDIS_REPLY_INTEGER) {
        snprintf(why, whylen, "arrival: %s", r ? (r->str ? r->str : "?")
                                               : fp->c->errstr);
        if (r)
            freeReplyObject(r);
        return -1;
    }
    c = r->integer;
    freeReplyObject(r);
    out->gen = round;
    out->completed = c == fp->s->n;
    if (out->completed)
        return 0;
    r = redisCommand(fp->c, "BLPOP %s %d", release, FLOOR_POP_S);
    if (r == NULL || r->type != REDIS_REPLY_ARRAY) {
        snprintf(why, whylen, "release: %s",
                 r ? "not released in time" : fp->c->errstr);
        if (r)
            freeReplyObject(r);
        return -1;
    }
    freeReplyObject(r);
    return 0;
}

static void floor_close(void *party)
{
    floor_party *fp = party;

    redisFree(fp->c);
    free(fp);
}

const round_impl round_floor = { floor_open, floor_wait, floor_close };
