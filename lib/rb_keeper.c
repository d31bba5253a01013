/*
 * The keeper's markers. A keeper (lua/includes/keeper.lua) is lost only
 * with everything else, which a new server looks like too; what tells the
 * two apart is a marker in the server's script cache, which FLUSHALL and
 * FLUSHDB leave alone: the script "marker of keeper K, lease class k",
 * loaded once K stands and before it records that a lease of up to 2^k
 * ms is in use, with the base marker "K was here", so that a new server
 * costs one look. Lock and job scripts answer 'keeper' when the client
 * must look or load.
 */
#include "fmacros.h"

#include <stdio.h>
#include <string.h>

#include "rb_keeper.h"
#include "rb_sha1.h"

#define KEEPER_CLASS_MIN 10
#define KEEPER_CLASS_MAX 40   /* 2^40 ms covers the longest lease, 10^12 */

/* The marker of class k (0: the keeper's base marker, there before any
 * class's): its script and SHA1. */
typedef struct marker {
    char src[2 * RB_KEY_MAX + 96];
    char sha[41];
    size_t len;
} marker;

static int marker_make(marker *m, const char *keeper, int k, rb_error *err)
{
    char hex[2 * RB_KEY_MAX + 1];
    size_t i, klen = strlen(keeper);
    int n;

    /* The key goes in as hex: a prefix may hold any byte a Lua string
     * literal would take for code. */
    if (klen >= RB_KEY_MAX)
        return rb_error__set(err, RB_EINVAL, "keeper key too long");
    for (i = 0; i < klen; i++)
        snprintf(hex + 2 * i, 3, "%02x", (unsigned char)keeper[i]);
    hex[2 * klen] = '\0';
    if (k == 0)
        n = snprintf(m->src, sizeof(m->src), "return 'rbarrier keeper "
                     "marker: %s'", hex);
    else
        n = snprintf(m->src, sizeof(m->src), "return 'rbarrier keeper "
                     "marker: %s, leases up to 2^%d ms'", hex, k);
    if (n < 0 || (size_t)n >= sizeof(m->src))
        return rb_error__set(err, RB_EINVAL, "keeper key too long");
    m->len = (size_t)n;
    rb_sha1_hex(m->src, m->len, m->sha);
    return RB_OK;
}

/* The words of one call of marker m: EVALSHA to look for it, or EVAL to
 * load it, sent with the keeper as its key so that it reaches the
 * keeper's node. */
static void marker_words(const marker *m, const char *keeper, int load,
                         const char *argv[4], size_t lens[4])
{
    argv[0] = load ? "EVAL" : "EVALSHA";
    argv[1] = load ? m->src : m->sha;
    argv[2] = "1";
    argv[3] = keeper;
    lens[0] = strlen(argv[0]);
    lens[1] = load ? m->len : 40;
    lens[2] = 1;
    lens[3] = strlen(keeper);
}

/* One call of the marker of class k. Returns 1 when it ran, 0 when the
 * server does not have it (NOSCRIPT, EVALSHA only), or -rc on an error. */
static int marker_call(rb_conn *c, const char *keeper, int k, int load,
                       const rb_call *proto, rb_error *err)
{
    const char *argv[4];
    size_t lens[4];
    rb_call call = *proto;
    redisReply *r = NULL;
    marker m;
    int rc;

    if ((rc = marker_make(&m, keeper, k, err)) != RB_OK)
        return rc;
    marker_words(&m, keeper, load, argv, lens);
    call.then = NULL;
    rc = rb_conn__call(c, 4, argv, lens, &call, &r, err);
    if (r)
        freeReplyObject(r);
    if (rc == RB_EREDIS && call.reply_err == RB_REPLY_NOSCRIPT && !load)
        return 0;
    return rc == RB_OK ? 1 : rc;   /* the rb codes are negative */
}

/* Load the base marker and the marker of class k, in that order, in one
 * write: Redis runs them in order, and the class is recorded only once
 * both answered (the next script call), so a class marker that loaded
 * without its base marker records nothing. */
static int markers_load(rb_conn *c, const char *keeper, int k,
                        const rb_call *proto, rb_error *err)
{
    const char *argv[4], *then_argv[4];
    size_t lens[4], then_lens[4];
    rb_call call = *proto;
    rb_cmd then;
    redisReply *r = NULL;
    marker base, klass;
    int rc;

    if ((rc = marker_make(&base, keeper, 0, err)) != RB_OK ||
        (rc = marker_make(&klass, keeper, k, err)) != RB_OK)
        return rc;
    marker_words(&base, keeper, 1, argv, lens);
    marker_words(&klass, keeper, 1, then_argv, then_lens);
    then.argc = 4;
    then.argv = then_argv;
    then.lens = then_lens;
    call.then = &then;
    rc = rb_conn__call(c, 4, argv, lens, &call, &r, err);
    if (r)
        freeReplyObject(r);
    if (rc != RB_OK)
        return rc;
    if (call.then_reply) {
        freeReplyObject(call.then_reply);
        return RB_OK;
    }
    /* The class marker's load failed where the base marker's did not:
     * once more on its own, which says why. */
    rc = marker_call(c, keeper, k, 1, proto, err);
    return rc == 1 ? RB_OK : rc;
}

int rb_keeper__init(rb_keeper *k, const char *prefix, const char *base,
                    rb_error *err)
{
    k->marked[0] = '\0';
    k->marks = 0;
    return rb_key__keeper(k->key, sizeof(k->key), prefix, base, err);
}

int rb_keeper__answer(rb_keeper *k, rb_conn *c, int klass, int missing,
                      const rb_call *proto, const char *who, rb_error *err)
{
    int found = -1, base, i, rc;

    if (klass == 0) {
        k->marked[0] = '\0';
        k->marks = 0;
        return RB_OK;
    }
    /* Nothing was granted. A first use takes two answers (the hash is
     * made from a look, then a marker is loaded for it); twice that is a
     * keeper lost again at once; more is a server that does not keep
     * it. */
    if (++k->marks > 4)
        return rb_error__set(err, RB_EPROTO, "%s: the keeper %s does not "
                             "keep its marks", who, k->key);
    if (missing) {
        /* The hash is gone: say what the cache holds, and load nothing
         * (a marker loaded before the hash stands would tell a crowd
         * meeting a new keeper that state was lost). A keeper never seen
         * here (the usual case) costs one look: without the base marker
         * no class marker can be there either. */
        if ((base = marker_call(c, k->key, 0, 0, proto, err)) < 0)
            return base;
        for (i = KEEPER_CLASS_MAX; base && i >= KEEPER_CLASS_MIN; i--) {
            if ((rc = marker_call(c, k->key, i, 0, proto, err)) < 0)
                return rc;
            if (rc == 1) {
                found = i;
                break;
            }
        }
        snprintf(k->marked, sizeof(k->marked), "0 %d", found);
        return RB_OK;
    }
    /* The hash stands and does not record this class yet: its marker
     * first, with the base marker (a cache emptied since, SCRIPT FLUSH,
     * gets it back). "-2": no look was made; the script asks for one if
     * the hash is gone by the time this comes back. */
    if ((rc = markers_load(c, k->key, klass, proto, err)) != RB_OK)
        return rc;
    snprintf(k->marked, sizeof(k->marked), "%d -2", klass);
    return RB_OK;
}
