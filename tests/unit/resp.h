#ifndef RB_TEST_RESP_H
#define RB_TEST_RESP_H

/* The reply decoders' tests feed RESP text through hiredis' own reader, as
 * a server's bytes would arrive. Include after cmocka.h. */

#include <hiredis/hiredis.h>

/* One reply from RESP text (explicit length: the text may hold NULs);
 * NULL when the reader refuses it. */
static redisReply *parse_n(const char *resp, size_t len)
{
    redisReader *rd = redisReaderCreate();
    void *reply = NULL;

    assert_non_null(rd);
    assert_int_equal(redisReaderFeed(rd, resp, len), REDIS_OK);
    if (redisReaderGetReply(rd, &reply) != REDIS_OK)
        reply = NULL;
    redisReaderFree(rd);
    return reply;
}
#define parse(lit) parse_n(lit, sizeof(lit) - 1)

#endif
