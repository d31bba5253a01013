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

/* CRC16-CCITT (XModem), polynomial 0x1021, as in Redis' crc16.c, a byte
 * at a time by table. */
static const unsigned short crc16_table[256] = {
    0x0000, 0x1021, 0x2042, 0x3063, 0x4084, 0x50a5, 0x60c6, 0x70e7,
    0x8108, 0x9129, 0xa14a, 0xb16b, 0xc18c, 0xd1ad, 0xe1ce, 0xf1ef,
    0x1231, 0x0210, 0x3273, 0x2252, 0x52b5, 0x4294, 0x72f7, 0x62d6,
    0x9339, 0x8318, 0xb37b, 0xa35a, 0xd3bd, 0xc39c, 0xf3ff, 0xe3de,
    0x2462, 0x3443, 0x0420, 0x1401, 0x64e6, 0x74c7, 0x44a4, 0x5485,
    0xa56a, 0xb54b, 0x8528, 0x9509, 0xe5ee, 0xf5cf, 0xc5ac, 0xd58d,
    0x3653, 0x2672, 0x1611, 0x0630, 0x76d7, 0x66f6, 0x5695, 0x46b4,
    0xb75b, 0xa77a, 0x9719, 0x8738, 0xf7df, 0xe7fe, 0xd79d, 0xc7bc,
    0x48c4, 0x58e5, 0x6886, 0x78a7, 0x0840, 0x1861, 0x2802, 0x3823,
    0xc9cc, 0xd9ed, 0xe98e, 0xf9af, 0x8948, 0x9969, 0xa90a, 0xb92b,
    0x5af5, 0x4ad4, 0x7ab7, 0x6a96, 0x1a71, 0x0a50, 0x3a33, 0x2a12,
    0xdbfd, 0xcbdc, 0xfbbf, 0xeb9e, 0x9b79, 0x8b58, 0xbb3b, 0xab1a,
    0x6ca6, 0x7c87, 0x4ce4, 0x5cc5, 0x2c22, 0x3c03, 0x0c60, 0x1c41,
    0xedae, 0xfd8f, 0xcdec, 0xddcd, 0xad2a, 0xbd0b, 0x8d68, 0x9d49,
    0x7e97, 0x6eb6, 0x5ed5, 0x4ef4, 0x3e13, 0x2e32, 0x1e51, 0x0e70,
    0xff9f, 0xefbe, 0xdfdd, 0xcffc, 0xbf1b, 0xaf3a, 0x9f59, 0x8f78,
    0x9188, 0x81a9, 0xb1ca, 0xa1eb, 0xd10c, 0xc12d, 0xf14e, 0xe16f,
    0x1080, 0x00a1, 0x30c2, 0x20e3, 0x5004, 0x4025, 0x7046, 0x6067,
    0x83b9, 0x9398, 0xa3fb, 0xb3da, 0xc33d, 0xd31c, 0xe37f, 0xf35e,
    0x02b1, 0x1290, 0x22f3, 0x32d2, 0x4235, 0x5214, 0x6277, 0x7256,
    0xb5ea, 0xa5cb, 0x95a8, 0x8589, 0xf56e, 0xe54f, 0xd52c, 0xc50d,
    0x34e2, 0x24c3, 0x14a0, 0x0481, 0x7466, 0x6447, 0x5424, 0x4405,
    0xa7db, 0xb7fa, 0x8799, 0x97b8, 0xe75f, 0xf77e, 0xc71d, 0xd73c,
    0x26d3, 0x36f2, 0x0691, 0x16b0, 0x6657, 0x7676, 0x4615, 0x5634,
    0xd94c, 0xc96d, 0xf90e, 0xe92f, 0x99c8, 0x89e9, 0xb98a, 0xa9ab,
    0x5844, 0x4865, 0x7806, 0x6827, 0x18c0, 0x08e1, 0x3882, 0x28a3,
    0xcb7d, 0xdb5c, 0xeb3f, 0xfb1e, 0x8bf9, 0x9bd8, 0xabbb, 0xbb9a,
    0x4a75, 0x5a54, 0x6a37, 0x7a16, 0x0af1, 0x1ad0, 0x2ab3, 0x3a92,
    0xfd2e, 0xed0f, 0xdd6c, 0xcd4d, 0xbdaa, 0xad8b, 0x9de8, 0x8dc9,
    0x7c26, 0x6c07, 0x5c64, 0x4c45, 0x3ca2, 0x2c83, 0x1ce0, 0x0cc1,
    0xef1f, 0xff3e, 0xcf5d, 0xdf7c, 0xaf9b, 0xbfba, 0x8fd9, 0x9ff8,
    0x6e17, 0x7e36, 0x4e55, 0x5e74, 0x2e93, 0x3eb2, 0x0ed1, 0x1ef0,
};

/* One byte more of a CRC16. */
static unsigned crc16_step(unsigned crc, unsigned char c)
{
    return ((crc << 8) ^ crc16_table[((crc >> 8) ^ c) & 0xff]) & 0xffff;
}

static unsigned crc16(const char *buf, size_t len)
{
    unsigned crc = 0;
    size_t i;

    for (i = 0; i < len; i++)
        crc = crc16_step(crc, (unsigned char)buf[i]);
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

/* The hundred two-digit suffixes "00".."99", ordered by the slot bits
 * of their CRC (then by value) for a binary search. */
typedef struct suffixes {
    unsigned short low[100];
    unsigned char value[100];
} suffixes;

static void suffixes_make(suffixes *s)
{
    int q, j;

    for (q = 0; q < 100; q++) {
        unsigned low = crc16_step(crc16_step(0, (unsigned char)('0' + q / 10)),
                                  (unsigned char)('0' + q % 10)) & 16383;

        for (j = q; j > 0 && s->low[j - 1] > low; j--) {
            s->low[j] = s->low[j - 1];
            s->value[j] = s->value[j - 1];
        }
        s->low[j] = (unsigned short)low;
        s->value[j] = (unsigned char)q;
    }
}

/* The smallest suffix whose CRC has these slot bits, or -1. */
static int suffix_of(const suffixes *s, unsigned low)
{
    int lo = 0, hi = 100;

    while (lo < hi) {
        int mid = (lo + hi) / 2;

        if (s->low[mid] < low)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < 100 && s->low[lo] == low ? s->value[lo] : -1;
}

/* The smallest decimal of len digits (no leading zero unless it is "0")
 * whose slot is slot. Its first len - 2 digits count up like an odometer
 * with the CRC of each prefix kept, and the last two are looked up: with
 * a zero initial value the CRC is linear, crc(PQ) = crc(P "\0\0") ^
 * crc(Q), so the suffix that completes a prefix P, if any, is the one
 * whose CRC has the slot bits of crc(P "\0\0") ^ slot. Some 200 steps
 * for a mean slot, where trying each number cost some 20,000 and 40 us of
 * every lock's and member's start. */
static long smallest_of_len(unsigned slot, int len, const suffixes *sfx)
{
    unsigned crc[8];
    int digit[8], pos = 0, plen = len > 2 ? len - 2 : len;

    crc[0] = 0;
    digit[0] = len > 1 ? 1 : 0;
    for (;;) {
        long n = 0;
        int i, q = -1;

        if (digit[pos] > 9) {
            if (pos == 0)
                return -1;
            digit[--pos]++;
            continue;
        }
        crc[pos + 1] = crc16_step(crc[pos],
                                  (unsigned char)('0' + digit[pos]));
        if (pos < plen - 1) {
            digit[++pos] = 0;
            continue;
        }
        if (len > 2)
            q = suffix_of(sfx, (crc16_step(crc16_step(crc[plen], 0), 0) ^
                                slot) & 16383);
        else if ((crc[plen] & 16383) == slot)
            q = 0;
        if (q >= 0) {
            for (i = 0; i < plen; i++)
                n = n * 10 + digit[i];
            return len > 2 ? n * 100 + q : n;
        }
        digit[pos]++;
    }
}

/* "<prefix>:k:{T}", the keeper of key's slot (lua/includes/keeper.lua):
 * T is the smallest decimal number whose slot is the key's, so every name
 * of one slot shares one keeper and each script stays in one slot. Every
 * slot has such a number below 10^6 (the search is bounded all the same). */
int rb_key__keeper(char *buf, size_t len, const char *prefix,
                   const char *key, rb_error *err)
{
    unsigned slot = rb_key__slot(key, strlen(key));
    suffixes sfx;
    char tag[24];
    long n = -1;
    int digits;

    suffixes_make(&sfx);
    for (digits = 1; digits <= 7 && n < 0; digits++)
        n = smallest_of_len(slot, digits, &sfx);
    if (n < 0)
        return rb_error__set(err, RB_EINVAL, "no keeper tag for slot %u",
                             slot);
    snprintf(tag, sizeof(tag), "%ld", n);
    return build(buf, len, prefix, 'k', tag, "", err);
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
