/*
 * The key layout, in one place (the Lua side derives the per-round keys
 * from the base key in lua/includes/keys.lua):
 *
 *   <prefix>:b:{NAME}                    barrier hash: gen, n, expect, reduce
 *   <prefix>:b:{NAME}:<gen>:in           the round's members (sorted set)
 *   <prefix>:b:{NAME}:<gen>:out          the round's outcome (list)
 *   <prefix>:b:{NAME}:nonce              (id -> nonce gen count) hash
 *   <prefix>:b:{JOB}:<epoch>:<att>:NAME  barrier NAME inside job JOB (its
 *                                        rounds and nonces derive from it
 *                                        as above)
 *   <prefix>:j:{JOB}...                  a job (lua/includes/job.lua)
 *   <prefix>:p:{NAME}                    a parameter's global value
 *   <prefix>:p:{NAME}:set                the last value set (a list of
 *                                        one), what get --until-set reads
 *   <prefix>:p:{NAME}:local:<w>          worker w's local copy
 *   <prefix>:p:{NAME}:local:<w>:train    w's last train call
 *   <prefix>:l:{NAME}                    a lock's hash (max, seq, exp); its
 *   <prefix>:l:{NAME}:<part>             token, holders, queue, wait, info
 *                                        and wake:<id> (lua/includes/lock.lua)
 *   <prefix>:h:{NAME}                    the name's history (a stream; the
 *                                        string 'off' while it is off), for
 *                                        its barrier, job and lock alike
 *   <prefix>:h:{NAME}:n                  its counters
 *                                        (lua/includes/history.lua)
 *
 * One family per kind, the kind's letter after the prefix (j and l are
 * reserved for jobs and locks), so a barrier named "param:P" can never
 * reach parameter P's keys. Every key of one barrier or parameter carries
 * the same {tag}, so each script touches one cluster slot; rb_key__slot
 * computes it as Redis' keyHashSlot does, and the script runner checks it
 * before each call.
 */
#include "fmacros.h"

#include <stdio.h>
#include <string.h>

#include "rb_internal.h"

static int build(char *buf, size_t len, const char *prefix, char kind,
                 const char *name, const char *suffix, rb_error *err)
{
    int n = snprintf(buf, len, "%s:%c:{%s}%s", prefix ? prefix : "rb", kind,
                     name, suffix);

    if (n < 0 || (size_t)n >= len)
        return rb_error__set(err, RB_EINVAL, "key for '%s' is too long",
                             name);
    return RB_OK;
}

int rb_key__barrier(char *buf, size_t len, const char *prefix,
                    const char *name, rb_error *err)
{
    return build(buf, len, prefix, 'b', name, "", err);
}

int rb_key__round(char *buf, size_t len, const char *base, long long gen,
                  const char *part, rb_error *err)
{
    int n = snprintf(buf, len, "%s:%lld:%s", base, gen, part);

    if (n < 0 || (size_t)n >= len)
        return rb_error__set(err, RB_EINVAL, "round key too long");
    return RB_OK;
}

int rb_key__nonces(char *buf, size_t len, const char *base, rb_error *err)
{
    int n = snprintf(buf, len, "%s:nonce", base);

    if (n < 0 || (size_t)n >= len)
        return rb_error__set(err, RB_EINVAL, "nonce key too long");
    return RB_OK;
}

int rb_key__param(char *global, char *localk, char *traink, size_t len,
                  const char *prefix, const char *param, const char *worker,
                  rb_error *err)
{
    char suffix[RB_NAME_MAX + 16];
    int rc;

    if ((rc = build(global, len, prefix, 'p', param, "", err)) != RB_OK)
        return rc;
    if (worker == NULL)
        return RB_OK;
    snprintf(suffix, sizeof(suffix), ":local:%s", worker);
    if ((rc = build(localk, len, prefix, 'p', param, suffix, err)))
        return rc;
    snprintf(suffix, sizeof(suffix), ":local:%s:train", worker);
    return build(traink, len, prefix, 'p', param, suffix, err);
}

int rb_key__param_wake(char *buf, size_t len, const char *prefix,
                       const char *param, rb_error *err)
{
    return build(buf, len, prefix, 'p', param, ":set", err);
}

/* CRC16-CCITT (XModem), polynomial 0x1021, as in Redis' crc16.c. */
static unsigned crc16(const char *buf, size_t len)
{
    unsigned crc = 0;
    size_t i;
    int b;

    for (i = 0; i < len; i++) {
        crc ^= (unsigned)(unsigned char)buf[i] << 8;
        for (b = 0; b < 8; b++)
            crc = (crc & 0x8000) ? ((crc << 1) ^ 0x1021) & 0xffff
                                 : (crc << 1) & 0xffff;
    }
    return crc;
}

unsigned rb_key__slot(const char *key, size_t len)
{
    size_t s, e;

    /* As keyHashSlot: the first '{', then the first '}' after it; an
     * empty or unclosed tag hashes the whole key. */
    for (s = 0; s < len; s++)
        if (key[s] == '{')
            break;
    if (s == len)
        return crc16(key, len) & 16383;
    for (e = s + 1; e < len; e++)
        if (key[e] == '}')
            break;
    if (e == len || e == s + 1)
        return crc16(key, len) & 16383;
    return crc16(key + s + 1, e - s - 1) & 16383;
}

/* "<prefix>:k:{T}", the keeper of key's slot (lua/includes/keeper.lua):
 * T is the smallest decimal number whose slot is the key's, so every name
 * of one slot shares one keeper and each script stays in one slot. Every
 * slot has such a number below 10^6 (the loop is bounded all the same). */
int rb_key__keeper(char *buf, size_t len, const char *prefix,
                   const char *key, rb_error *err)
{
    unsigned slot = rb_key__slot(key, strlen(key));
    char tag[16];
    long i;

    for (i = 0; i < 10000000L; i++) {
        int n = snprintf(tag, sizeof(tag), "%ld", i);

        if ((crc16(tag, (size_t)n) & 16383) == slot)
            return build(buf, len, prefix, 'k', tag, "", err);
    }
    return rb_error__set(err, RB_EINVAL, "no keeper tag for slot %u", slot);
}

int rb_key__same_slot(const char *const *keys, int count)
{
    unsigned slot;
    int i;

    if (count <= 0)
        return 1;
    slot = rb_key__slot(keys[0], strlen(keys[0]));
    for (i = 1; i < count; i++)
        if (rb_key__slot(keys[i], strlen(keys[i])) != slot)
            return 0;
    return 1;
}

long long rb_key__ttl_s(long long ttl_ms)
{
    if (ttl_ms <= 0)
        return 86400;
    if (ttl_ms > 1000000000LL * 1000)
        return 1000000000LL;   /* the scripts' bound */
    return (ttl_ms + 999) / 1000;
}

/* "<prefix>:j:{JOB}", a job's base key; the job's other keys derive from
 * it in lua/includes/job.lua, under the same tag. */
int rb_key__job(char *buf, size_t len, const char *prefix, const char *name,
                rb_error *err)
{
    int n = snprintf(buf, len, "%s:j:{%s}", prefix ? prefix : "rb", name);

    if (n < 0 || (size_t)n >= len)
        return rb_error__set(err, RB_EINVAL, "key for job '%s' is too long",
                             name);
    return RB_OK;
}

/* A lock's base key "<prefix>:l:{NAME}": its own family, so a lock never
 * reaches a barrier's or a parameter's keys of the same name. The lock's
 * other keys are "<base>:<part>" (rb_key__lock_part; the scripts derive
 * them by the same rule in lua/includes/keys.lua). */
int rb_key__lock(char *buf, size_t len, const char *prefix, const char *name,
                 rb_error *err)
{
    int n = snprintf(buf, len, "%s:l:{%s}", prefix ? prefix : "rb", name);

    if (n < 0 || (size_t)n >= len)
        return rb_error__set(err, RB_EINVAL, "key for lock '%s' is too long",
                             name);
    return RB_OK;
}

int rb_key__lock_part(char *buf, size_t len, const char *base,
                      const char *part, rb_error *err)
{
    int n = snprintf(buf, len, "%s:%s", base, part);

    if (n < 0 || (size_t)n >= len)
        return rb_error__set(err, RB_EINVAL, "lock key too long");
    return RB_OK;
}

/* Inside a job: "<prefix>:b:{JOB}:<epoch>:<att>:NAME", a barrier under the
 * job's tag (so the job's break reaches its rounds in one script), one per
 * attempt (a restart starts clean). */
int rb_key__job_barrier(char *buf, size_t len, const char *prefix,
                        const char *job, long long epoch, long att,
                        const char *name, rb_error *err)
{
    char suffix[RB_NAME_MAX + 64];

    snprintf(suffix, sizeof(suffix), ":%lld:%ld:%s", epoch, att, name);
    return build(buf, len, prefix, 'b', job, suffix, err);
}

/* "<prefix>:j:{JOB}:<epoch>:<att>:<part>", a key of one attempt. */
int rb_key__job_attempt(char *buf, size_t len, const char *prefix,
                        const char *job, long long epoch, long att,
                        const char *part, rb_error *err)
{
    int n = snprintf(buf, len, "%s:j:{%s}:%lld:%ld:%s",
                     prefix ? prefix : "rb", job, epoch, att, part);

    if (n < 0 || (size_t)n >= len)
        return rb_error__set(err, RB_EINVAL, "key for job '%s' is too long",
                             job);
    return RB_OK;
}

/* "<prefix>:h:{NAME}<suffix>": a name's history (suffix "") or its
 * counters (":n"); one per name, whatever kind wrote it, under the name's
 * tag (lua/includes/keys.lua's history_key). */
int rb_key__history(char *buf, size_t len, const char *prefix,
                    const char *name, const char *suffix, rb_error *err)
{
    return build(buf, len, prefix, 'h', name, suffix, err);
}
