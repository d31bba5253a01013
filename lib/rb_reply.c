/*
 * Decoders of the barrier scripts' replies (see rb_reply.h). Every element
 * is checked for its type before it is read, and every string for an
 * embedded NUL: a reply is data from the network, and a Lua script on a
 * shared server is only as trustworthy as whoever else can load one.
 */
#include "fmacros.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rb_reply.h"

static int is_text(const redisReply *r)
{
    return r && r->type == REDIS_REPLY_STRING && r->str &&
           memchr(r->str, '\0', r->len) == NULL;
}

static int text_is(const redisReply *r, const char *s)
{
    return is_text(r) && strcmp(r->str, s) == 0;
}

static int array_at_least(const redisReply *r, size_t min)
{
    return r && r->type == REDIS_REPLY_ARRAY && r->elements >= min &&
           (r->elements == 0 || r->element);
}

int rb_reply__int(const redisReply *r, long long lo, long long hi,
                  long long *out)
{
    long long v;

    if (r == NULL)
        return RB_EPROTO;
    if (r->type == REDIS_REPLY_INTEGER) {
        v = r->integer;
    } else if (is_text(r)) {
        char *end;
        size_t i = r->str[0] == '-' ? 1 : 0;

        /* Digits only: strtoll would take blanks, a '+' and "0x". */
        if (r->len == i || r->len > 20)
            return RB_EPROTO;
        for (; i < r->len; i++)
            if (r->str[i] < '0' || r->str[i] > '9')
                return RB_EPROTO;
        errno = 0;
        v = strtoll(r->str, &end, 10);
        if (errno == ERANGE || *end != '\0')
            return RB_EPROTO;
    } else {
        return RB_EPROTO;
    }
    if (v < lo || v > hi)
        return RB_EPROTO;
    *out = v;
    return RB_OK;
}

int rb_reply__expect_store(const redisReply *r, long parts, long *next_part)
{
    long long j;

    *next_part = 0;
    if (!array_at_least(r, 1))
        return RB_EPROTO;
    if (text_is(r->element[0], "stored"))
        return r->elements == 1 ? RB_OK : RB_EPROTO;
    if (!text_is(r->element[0], "part") || r->elements != 2 ||
        rb_reply__int(r->element[1], 1, parts, &j) != RB_OK)
        return RB_EPROTO;
    *next_part = (long)j;
    return RB_OK;
}

#define GEN_MAX 1000000000000000LL   /* 1e15: the scripts' own bound */

int rb_reply__arrive(const redisReply *r, rb_arrive_reply *out)
{
    long long gen, count, n, index, dup;

    memset(out, 0, sizeof(*out));
    if (!array_at_least(r, 1))
        return RB_EPROTO;
    if (text_is(r->element[0], "needlist")) {
        if (r->elements != 1)
            return RB_EPROTO;
        out->kind = RB_ARRIVE_NEEDLIST;
        return RB_OK;
    }
    if (text_is(r->element[0], "badn")) {
        if (r->elements != 2 ||
            rb_reply__int(r->element[1], 1, RB_N_MAX, &n) != RB_OK)
            return RB_EPROTO;
        out->kind = RB_ARRIVE_BADN;
        out->open_n = (long)n;
        return RB_OK;
    }
    if (text_is(r->element[0], "badexpect") ||
        text_is(r->element[0], "badreduce")) {
        if (r->elements != 2 || !is_text(r->element[1]))
            return RB_EPROTO;
        out->kind = r->element[0]->str[3] == 'e' ? RB_ARRIVE_BADEXPECT
                                                 : RB_ARRIVE_BADREDUCE;
        out->open_text = r->element[1]->str;
        return RB_OK;
    }
    if (text_is(r->element[0], "jobbroken")) {
        if (r->elements != 2 || !is_text(r->element[1]))
            return RB_EPROTO;
        out->kind = RB_ARRIVE_JOBBROKEN;
        out->open_text = r->element[1]->str;
        return RB_OK;
    }
    if (text_is(r->element[0], "wait"))
        out->kind = RB_ARRIVE_WAIT;
    else if (text_is(r->element[0], "done"))
        out->kind = RB_ARRIVE_DONE;
    else if (text_is(r->element[0], "run"))
        out->kind = RB_ARRIVE_RUN;
    else
        return RB_EPROTO;
    if (r->elements != 6 ||
        rb_reply__int(r->element[1], 1, GEN_MAX, &gen) != RB_OK ||
        rb_reply__int(r->element[3], 1, RB_N_MAX, &n) != RB_OK ||
        rb_reply__int(r->element[2], 1, n, &count) != RB_OK ||
        rb_reply__int(r->element[4], 0, count - 1, &index) != RB_OK ||
        rb_reply__int(r->element[5], 0, 1, &dup) != RB_OK)
        return RB_EPROTO;
    if (out->kind != RB_ARRIVE_WAIT && count != n)
        return RB_EPROTO;
    out->gen = gen;
    out->count = (long)count;
    out->n = (long)n;
    out->index = (long)index;
    out->dup = (int)dup;
    return RB_OK;
}

int rb_reply__round(const redisReply *r, rb_round_reply *out)
{
    long long count, n;
    size_t i;

    memset(out, 0, sizeof(*out));
    if (!array_at_least(r, 1))
        return RB_EPROTO;
    if (text_is(r->element[0], "lost")) {
        if (r->elements != 1)
            return RB_EPROTO;
        out->kind = RB_ROUND_LOST;
        return RB_OK;
    }
    if (text_is(r->element[0], "run") || text_is(r->element[0], "none")) {
        if (r->elements != 1)
            return RB_EPROTO;
        out->kind = r->element[0]->str[0] == 'r' ? RB_ROUND_RUN
                                                 : RB_ROUND_NONE;
        return RB_OK;
    }
    if (text_is(r->element[0], "out") || text_is(r->element[0], "broken")) {
        int broken = r->element[0]->str[0] == 'b';

        if (r->elements < 2 || r->elements > (broken ? 3u : 2u) ||
            !is_text(r->element[1]) ||
            rb_reply__outcome(r->element[1]->str, NULL) < 0)
            return RB_EPROTO;
        /* This call broke it: that can only be a break. */
        if (broken && rb_reply__outcome(r->element[1]->str, NULL) != 0)
            return RB_EPROTO;
        if (r->elements == 3) {
            if (!is_text(r->element[2]) ||
                rb_reply__outcome(r->element[2]->str, NULL) != 0)
                return RB_EPROTO;
            out->previous = r->element[2]->str;
        }
        out->kind = broken ? RB_ROUND_BROKEN : RB_ROUND_OUT;
        out->text = r->element[1]->str;
        return RB_OK;
    }
    if (!text_is(r->element[0], "wait") || r->elements < 3 ||
        rb_reply__int(r->element[2], 0, RB_N_MAX, &n) != RB_OK ||
        rb_reply__int(r->element[1], 0, RB_N_MAX, &count) != RB_OK)
        return RB_EPROTO;
    for (i = 3; i < r->elements; i++)
        if (!is_text(r->element[i]))
            return RB_EPROTO;
    if (r->elements > 3 && r->elements - 3 != (size_t)count)
        return RB_EPROTO;
    out->kind = RB_ROUND_WAIT;
    out->count = (long)count;
    out->n = (long)n;
    out->members = r->elements > 3 ? r->element + 3 : NULL;
    out->members_count = r->elements - 3;
    return RB_OK;
}

int rb_reply__outcome(const char *text, const char **reason)
{
    if (text == NULL)
        return -1;
    if (strcmp(text, "ok") == 0)
        return 1;
    if (strncmp(text, "broken ", 7) == 0 && text[7] != '\0') {
        if (reason)
            *reason = text + 7;
        return 0;
    }
    return -1;
}

int rb_reply__block(const redisReply *r, const char **text)
{
    *text = NULL;
    if (r == NULL)
        return RB_EPROTO;
    if (r->type == REDIS_REPLY_NIL)
        return RB_OK;
    if (!is_text(r) || rb_reply__outcome(r->str, NULL) < 0)
        return RB_EPROTO;
    *text = r->str;
    return RB_OK;
}

static char *dup_text(const redisReply *r)
{
    char *s = malloc(r->len + 1);

    if (s)
        memcpy(s, r->str, r->len + 1);
    return s;
}

int rb_reply__status(const redisReply *r, rb_status *out)
{
    long long gen, n, now, deadline;
    size_t i, count;

    memset(out, 0, sizeof(*out));
    if (!array_at_least(r, 4) || (r->elements - 4) % 2 != 0 ||
        rb_reply__int(r->element[0], 0, GEN_MAX * 10, &gen) != RB_OK ||
        rb_reply__int(r->element[1], 0, RB_N_MAX, &n) != RB_OK ||
        rb_reply__int(r->element[2], 0, GEN_MAX * 10, &now) != RB_OK ||
        !is_text(r->element[3]))
        return RB_EPROTO;
    count = (r->elements - 4) / 2;
    for (i = 0; i < count; i++) {
        const redisReply *id = r->element[4 + 2 * i];

        /* Scores come back as strings, possibly with a fraction. */
        if (!is_text(id) || id->len == 0 || id->len > RB_NAME_MAX ||
            !is_text(r->element[5 + 2 * i]) ||
            rb_reply__int(r->element[5 + 2 * i], 0, GEN_MAX * 10,
                          &deadline) != RB_OK)
            return RB_EPROTO;
    }
    if ((out->last_outcome = dup_text(r->element[3])) == NULL)
        return RB_ENOMEM;
    if (count) {
        out->members = calloc(count, sizeof(rb_member));
        if (out->members == NULL)
            return RB_ENOMEM;
    }
    out->exists = gen > 0;
    out->gen = gen;
    out->n = (long)n;
    for (i = 0; i < count; i++) {
        const redisReply *id = r->element[4 + 2 * i];

        rb_reply__int(r->element[5 + 2 * i], 0, GEN_MAX * 10, &deadline);
        if ((out->members[i].id = dup_text(id)) == NULL)
            return RB_ENOMEM;
        out->members_count = i + 1;
        out->members[i].lease_left_ms = deadline - now;
    }
    return RB_OK;
}

int rb_reply__reset(const redisReply *r, rb_reset_reply *out)
{
    long long gen, members;
    size_t i;

    memset(out, 0, sizeof(*out));
    if (!array_at_least(r, 2) ||
        rb_reply__int(r->element[0], 0, GEN_MAX * 10, &gen) != RB_OK ||
        rb_reply__int(r->element[1], 0, RB_N_MAX, &members) != RB_OK)
        return RB_EPROTO;
    for (i = 2; i < r->elements; i++)
        if (!is_text(r->element[i]))
            return RB_EPROTO;
    out->gen = gen;
    out->members = (long)members;
    out->removed = r->elements > 2 ? r->element + 2 : NULL;
    out->removed_count = r->elements - 2;
    return RB_OK;
}

int rb_reply__strings(const redisReply *r, redisReply ***items,
                      size_t *count)
{
    size_t i;

    *items = NULL;
    *count = 0;
    if (!array_at_least(r, 0))
        return RB_EPROTO;
    for (i = 0; i < r->elements; i++)
        if (!is_text(r->element[i]))
            return RB_EPROTO;
    *items = r->elements ? r->element : NULL;
    *count = r->elements;
    return RB_OK;
}

/* ---- error replies ---------------------------------------------------- */

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Redis' "NOPERM this user has no permissions to run the 'zadd' command". */
static const char noperm_run[] = "NOPERM this user has no permissions to "
                                 "run the '";

rb_reply_err rb_reply__classify(const char *msg)
{
    static const struct {
        const char *prefix;
        rb_reply_err kind;
    } rules[] = {
        { "NOSCRIPT", RB_REPLY_NOSCRIPT },
        { "WRONGTYPE", RB_REPLY_WRONGTYPE },
        { "MOVED ", RB_REPLY_MOVED },
        { "ASK ", RB_REPLY_ASK },
        { "LOADING", RB_REPLY_LOADING },
        { "BUSY", RB_REPLY_BUSY },
        { "TRYAGAIN", RB_REPLY_TRYAGAIN },
        { "MASTERDOWN", RB_REPLY_MASTERDOWN },
        { "READONLY", RB_REPLY_READONLY },
        { "UNBLOCKED", RB_REPLY_UNBLOCKED },
        { "CLUSTERDOWN", RB_REPLY_CLUSTERDOWN },
        { "ERR unknown command", RB_REPLY_UNKNOWN_COMMAND },
        { "ERR damaged ", RB_REPLY_DAMAGED },
    };
    size_t i;

    if (msg == NULL)
        return RB_REPLY_OTHER;
    for (i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
        if (starts(msg, rules[i].prefix))
            return rules[i].kind;
    /* A script's refused call is reported inside the script's error, with
     * no prefix of its own, and never names the key. */
    if (strstr(msg, "can't access at least one of the keys") != NULL ||
        (starts(msg, "NOPERM") && strstr(msg, "keys") != NULL))
        return RB_REPLY_NOPERM_KEYS;
    if (starts(msg, noperm_run))
        return RB_REPLY_NOPERM_COMMAND;
    if (strstr(msg, "can't run this command") != NULL)
        return RB_REPLY_NOPERM_SCRIPT;
    if (starts(msg, "NOPERM"))
        return RB_REPLY_NOPERM;
    return RB_REPLY_OTHER;
}

int rb_reply__noperm_command(const char *msg, char *out, size_t len)
{
    const char *name;
    size_t i;

    if (len == 0 || !starts(msg, noperm_run))
        return 0;
    name = msg + sizeof(noperm_run) - 1;
    for (i = 0; i + 1 < len && name[i] && name[i] != '\''; i++)
        out[i] = (char)(name[i] >= 'A' && name[i] <= 'Z' ? name[i] + 32
                                                          : name[i]);
    out[i] = '\0';
    return i > 0;
}

const char *rb_reply__wrongtype_key(const char *msg)
{
    /* Redis' own "WRONGTYPE Operation against a key ..." names no key; the
     * scripts' "WRONGTYPE <key> holds ..." does. */
    if (!starts(msg, "WRONGTYPE ") || starts(msg, "WRONGTYPE Operation"))
        return NULL;
    return msg + sizeof("WRONGTYPE ") - 1;
}

const char *rb_reply__damaged_text(const char *msg)
{
    return starts(msg, "ERR damaged ") ? msg + sizeof("ERR ") - 1 : NULL;
}

size_t rb_reply__error_text(const char *msg, size_t len)
{
    /* An error a script raised ends in " script: <sha>, on
     * @user_script:<line>.": where, not what; keep the what. */
    const char *tail = strstr(msg, " script: ");

    if (tail && strstr(tail, "@user_script") && (size_t)(tail - msg) < len)
        return (size_t)(tail - msg);
    return len;
}
