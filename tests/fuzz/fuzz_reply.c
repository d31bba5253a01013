/* libFuzzer: every barrier reply decoder, on whatever hiredis' reader
 * makes of the bytes (any RESP: nested arrays, NULs, huge integers). */
#include "fmacros.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rb_reply.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void decode(const redisReply *r)
{
    rb_arrive_reply a;
    rb_round_reply o;
    rb_status st;
    rb_reset_reply rs;
    redisReply **items;
    size_t count, i;
    const char *text;
    long long v;

    if (rb_reply__arrive(r, &a) == RB_OK && a.kind != RB_ARRIVE_BADN &&
        (a.count < 1 || a.count > a.n || a.index < 0 || a.index >= a.count))
        abort();
    if (rb_reply__round(r, &o) == RB_OK) {
        if (o.text && strlen(o.text) == 0)
            abort();
        for (i = 0; i < o.members_count; i++)
            if (strlen(o.members[i]->str) != o.members[i]->len)
                abort();
    }
    if (rb_reply__block(r, &text) == RB_OK && text &&
        rb_reply__outcome(text, NULL) < 0)
        abort();
    if (rb_reply__status(r, &st) == RB_OK) {
        for (i = 0; i < st.members_count; i++)
            if (strlen(st.members[i].id) == 0)
                abort();
        rb_status_clear(&st);
    }
    if (rb_reply__reset(r, &rs) == RB_OK && rs.gen < 0)
        abort();
    if (rb_reply__strings(r, &items, &count) == RB_OK)
        for (i = 0; i < count; i++)
            if (items[i]->type != REDIS_REPLY_STRING)
                abort();
    (void)rb_reply__int(r, -5, 5, &v);
    if (r->type == REDIS_REPLY_STRING)
        (void)rb_reply__outcome(r->str, &text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    redisReader *rd = redisReaderCreate();
    void *reply = NULL;
    int n = 0;

    if (rd == NULL)
        return 0;
    if (redisReaderFeed(rd, (const char *)data, size) == REDIS_OK) {
        while (n++ < 8 && redisReaderGetReply(rd, &reply) == REDIS_OK &&
               reply) {
            decode(reply);
            freeReplyObject(reply);
            reply = NULL;
        }
    }
    redisReaderFree(rd);
    return 0;
}
