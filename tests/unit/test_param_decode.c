/* The reply decoders of rb_param.c against hostile replies, built with
 * hiredis' own reader (no server): wrong types, short and long arrays, nil
 * where a value must be, huge integers, NULs, long values. */
#include "fmacros.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "rb_internal.h"

/* The reply hiredis builds from RESP text. */
static redisReply *reply_of(const char *resp, size_t len)
{
    redisReader *reader = redisReaderCreate();
    void *r = NULL;

    assert_non_null(reader);
    assert_int_equal(redisReaderFeed(reader, resp, len), REDIS_OK);
    assert_int_equal(redisReaderGetReply(reader, &r), REDIS_OK);
    assert_non_null(r);
    redisReaderFree(reader);
    return r;
}
#define REPLY(lit) reply_of(lit, sizeof(lit) - 1)

/* decode_value of a reply: the value, or "ERR <code>" */
static char *value_of(redisReply *r)
{
    static char out[1024];
    char *v = NULL;
    rb_error err;
    int rc = rb_param__decode_value(&v, r, "get", &err);

    if (rc == RB_OK) {
        snprintf(out, sizeof(out), "%s", v);
        assert_int_equal(strlen(v), strlen(out));
    } else {
        assert_null(v);
        assert_int_equal(err.code, rc);
        assert_non_null(strstr(err.msg, "get: "));
        snprintf(out, sizeof(out), "ERR %d", rc);
    }
    free(v);
    freeReplyObject(r);
    return out;
}

static void test_decode_value(void **state)
{
    char resp[600], big[302];

    (void)state;
    assert_string_equal(value_of(REPLY("$2\r\n42\r\n")), "42");
    assert_string_equal(value_of(REPLY("$3\r\n007\r\n")), "007");
    assert_string_equal(value_of(REPLY("$0\r\n\r\n")), "");
    assert_string_equal(value_of(REPLY("$-1\r\n")), "0");
    assert_string_equal(value_of(REPLY(":-9223372036854775808\r\n")),
                        "-9223372036854775808");
    assert_string_equal(value_of(REPLY(":9223372036854775807\r\n")),
                        "9223372036854775807");
    assert_string_equal(value_of(REPLY("$21\r\n100000000000000000000\r\n")),
                        "100000000000000000000");
    /* a value of any length goes through whole */
    memset(big, 'v', 301);
    big[301] = '\0';
    snprintf(resp, sizeof(resp), "$301\r\n%s\r\n", big);
    assert_string_equal(value_of(reply_of(resp, strlen(resp))), big);
    /* hostile: a NUL inside would cut the value silently */
    assert_string_equal(value_of(REPLY("$3\r\n4\0002\r\n")), "ERR -9");
    assert_string_equal(value_of(REPLY("+OK\r\n")), "ERR -9");
    assert_string_equal(value_of(REPLY("-ERR boom\r\n")), "ERR -9");
    assert_string_equal(value_of(REPLY("*1\r\n$1\r\n1\r\n")), "ERR -9");
    assert_string_equal(value_of(REPLY("*0\r\n")), "ERR -9");
    /* hiredis makes a null array a nil, as a null bulk string */
    assert_string_equal(value_of(REPLY("*-1\r\n")), "0");
}

/* decode_train of a reply: "L G", or "ERR <code>" */
static char *train_of(redisReply *r)
{
    static char out[1024];
    char *l = (char *)"x", *g = (char *)"y";
    rb_error err;
    int rc = rb_param__decode_train(&l, &g, r, &err);

    if (rc == RB_OK) {
        snprintf(out, sizeof(out), "%s %s", l, g);
    } else {
        assert_null(l);
        assert_null(g);
        assert_int_equal(err.code, rc);
        snprintf(out, sizeof(out), "ERR %d", rc);
    }
    free(l);
    free(g);
    freeReplyObject(r);
    return out;
}

static void test_decode_train(void **state)
{
    rb_error err;
    char *l, *g;

    (void)state;
    assert_string_equal(train_of(REPLY("*2\r\n$2\r\n41\r\n$2\r\n42\r\n")),
                        "41 42");
    assert_string_equal(train_of(REPLY("*2\r\n$1\r\n0\r\n$4\r\n42.5\r\n")),
                        "0 42.5");
    assert_string_equal(train_of(REPLY("*2\r\n:1\r\n:99999999999999\r\n")),
                        "1 99999999999999");
    /* hostile shapes */
    assert_string_equal(train_of(REPLY("*1\r\n$2\r\n41\r\n")), "ERR -9");
    assert_string_equal(train_of(REPLY("*3\r\n:1\r\n:2\r\n:3\r\n")), "ERR -9");
    assert_string_equal(train_of(REPLY("*0\r\n")), "ERR -9");
    assert_string_equal(train_of(REPLY("*-1\r\n")), "ERR -9");
    assert_string_equal(train_of(REPLY("$2\r\n42\r\n")), "ERR -9");
    assert_string_equal(train_of(REPLY(":42\r\n")), "ERR -9");
    assert_string_equal(train_of(REPLY("$-1\r\n")), "ERR -9");
    assert_string_equal(train_of(REPLY("*2\r\n$-1\r\n$2\r\n42\r\n")), "ERR -9");
    assert_string_equal(train_of(REPLY("*2\r\n$2\r\n41\r\n$-1\r\n")), "ERR -9");
    assert_string_equal(train_of(REPLY("*2\r\n*0\r\n$2\r\n42\r\n")), "ERR -9");
    assert_string_equal(train_of(REPLY("*2\r\n$2\r\n41\r\n-ERR x\r\n")),
                        "ERR -9");
    assert_string_equal(train_of(REPLY("*2\r\n$2\r\n41\r\n$3\r\n4\0002\r\n")),
                        "ERR -9");
    /* no reply at all */
    assert_int_equal(rb_param__decode_train(&l, &g, NULL, &err), RB_EPROTO);
    assert_int_equal(rb_param__decode_value(&l, NULL, "get", &err),
                     RB_EPROTO);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_value),
        cmocka_unit_test(test_decode_train),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
