/* The barrier reply decoders against hostile replies, built from RESP bytes
 * by hiredis' own reader (no server): wrong types, short and long arrays,
 * huge integers, NULs. Each must give RB_EPROTO, never a crash or a value
 * read from the wrong place. */
#include "fmacros.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "resp.h"

#include "rb_reply.h"


static const char *const not_arrays[] = {
    "+OK\r\n", ":1\r\n", "$-1\r\n", "*-1\r\n", "*0\r\n", "-ERR x\r\n",
    "$4\r\nwait\r\n",
};

static void test_arrive_good(void **state)
{
    redisReply *r;
    rb_arrive_reply a;

    (void)state;
    r = parse("*6\r\n$4\r\nwait\r\n:3\r\n:2\r\n:4\r\n:1\r\n:0\r\n");
    assert_int_equal(rb_reply__arrive(r, &a), RB_OK);
    assert_int_equal(a.kind, RB_ARRIVE_WAIT);
    assert_int_equal(a.gen, 3);
    assert_int_equal(a.count, 2);
    assert_int_equal(a.n, 4);
    assert_int_equal(a.index, 1);
    assert_int_equal(a.dup, 0);
    freeReplyObject(r);
    r = parse("*6\r\n$3\r\nrun\r\n:9\r\n$1\r\n4\r\n:4\r\n:3\r\n:1\r\n");
    assert_int_equal(rb_reply__arrive(r, &a), RB_OK);
    assert_int_equal(a.kind, RB_ARRIVE_RUN);
    assert_int_equal(a.count, 4);
    assert_int_equal(a.dup, 1);
    freeReplyObject(r);
    r = parse("*6\r\n$4\r\ndone\r\n:1\r\n:1\r\n:1\r\n:0\r\n:0\r\n");
    assert_int_equal(rb_reply__arrive(r, &a), RB_OK);
    assert_int_equal(a.kind, RB_ARRIVE_DONE);
    freeReplyObject(r);
    r = parse("*2\r\n$4\r\nbadn\r\n:3\r\n");
    assert_int_equal(rb_reply__arrive(r, &a), RB_OK);
    assert_int_equal(a.kind, RB_ARRIVE_BADN);
    assert_int_equal(a.open_n, 3);
    freeReplyObject(r);
    r = parse("*1\r\n$8\r\nneedlist\r\n");
    assert_int_equal(rb_reply__arrive(r, &a), RB_OK);
    assert_int_equal(a.kind, RB_ARRIVE_NEEDLIST);
    freeReplyObject(r);
}

/* expect-store: the whole list, or the part to send next; nothing else,
 * and no part outside 1..parts. */
static void test_expect_store(void **state)
{
    static const struct { const char *resp; size_t len; } bad[] = {
#define B(s) { s, sizeof(s) - 1 }
        B("*2\r\n$6\r\nstored\r\n:1\r\n"),
        B("*1\r\n$4\r\npart\r\n"),
        B("*2\r\n$4\r\npart\r\n:0\r\n"),
        B("*2\r\n$4\r\npart\r\n:4\r\n"),
        B("*2\r\n$4\r\npart\r\n:-1\r\n"),
        B("*2\r\n$4\r\npart\r\n$1\r\nx\r\n"),
        B("*3\r\n$4\r\npart\r\n:2\r\n:2\r\n"),
        B("*2\r\n$4\r\nPART\r\n:2\r\n"),
        B("*1\r\n$8\r\nneedlist\r\n"),
        B("*0\r\n"),
        B(":1\r\n"),
        B("$6\r\nstored\r\n"),
#undef B
    };
    redisReply *r;
    long next;
    size_t i;

    (void)state;
    r = parse("*1\r\n$6\r\nstored\r\n");
    assert_int_equal(rb_reply__expect_store(r, 3, &next), RB_OK);
    assert_int_equal(next, 0);
    freeReplyObject(r);
    r = parse("*2\r\n$4\r\npart\r\n:3\r\n");
    assert_int_equal(rb_reply__expect_store(r, 3, &next), RB_OK);
    assert_int_equal(next, 3);
    freeReplyObject(r);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = parse_n(bad[i].resp, bad[i].len);
        assert_non_null(r);
        if (rb_reply__expect_store(r, 3, &next) != RB_EPROTO)
            fail_msg("expect-store reply #%zu was accepted", i);
        freeReplyObject(r);
    }
}

static void test_arrive_hostile(void **state)
{
    static const struct { const char *resp; size_t len; } bad[] = {
#define B(s) { s, sizeof(s) - 1 }
        B("*1\r\n$4\r\nwait\r\n"),
        B("*5\r\n$4\r\nwait\r\n:3\r\n:2\r\n:4\r\n:1\r\n"),
        B("*7\r\n$4\r\nwait\r\n:3\r\n:2\r\n:4\r\n:1\r\n:0\r\n:0\r\n"),
        B("*6\r\n$4\r\nWAIT\r\n:3\r\n:2\r\n:4\r\n:1\r\n:0\r\n"),
        B("*6\r\n$5\r\nwa\0it\r\n:3\r\n:2\r\n:4\r\n:1\r\n:0\r\n"),
        B("*6\r\n$4\r\nwait\r\n:0\r\n:2\r\n:4\r\n:1\r\n:0\r\n"),
        B("*6\r\n$4\r\nwait\r\n:-3\r\n:2\r\n:4\r\n:1\r\n:0\r\n"),
        B("*6\r\n$4\r\nwait\r\n$20\r\n99999999999999999999\r\n:2\r\n:4\r\n:1\r\n:0\r\n"),
        B("*6\r\n$4\r\nwait\r\n:9223372036854775807\r\n:2\r\n:4\r\n:1\r\n:0\r\n"),
        B("*6\r\n$4\r\nwait\r\n$3\r\n 12\r\n:2\r\n:4\r\n:1\r\n:0\r\n"),
        B("*6\r\n$4\r\nwait\r\n$4\r\n0x12\r\n:2\r\n:4\r\n:1\r\n:0\r\n"),
        B("*6\r\n$4\r\nwait\r\n$3\r\n1\0002\r\n:2\r\n:4\r\n:1\r\n:0\r\n"),
        B("*6\r\n$4\r\nwait\r\n:3\r\n:5\r\n:4\r\n:1\r\n:0\r\n"),
        B("*6\r\n$4\r\nwait\r\n:3\r\n:2\r\n:4\r\n:2\r\n:0\r\n"),
        B("*6\r\n$4\r\nwait\r\n:3\r\n:2\r\n:4\r\n:-1\r\n:0\r\n"),
        B("*6\r\n$4\r\nwait\r\n:3\r\n:2\r\n:4\r\n:1\r\n:2\r\n"),
        B("*6\r\n$4\r\nwait\r\n:3\r\n:2\r\n:100001\r\n:1\r\n:0\r\n"),
        B("*6\r\n$4\r\nwait\r\n*1\r\n:3\r\n:2\r\n:4\r\n:1\r\n:0\r\n"),
        B("*6\r\n$4\r\nwait\r\n$-1\r\n:2\r\n:4\r\n:1\r\n:0\r\n"),
        B("*6\r\n$4\r\ndone\r\n:3\r\n:2\r\n:4\r\n:1\r\n:0\r\n"),
        B("*6\r\n$3\r\nrun\r\n:3\r\n:2\r\n:4\r\n:1\r\n:0\r\n"),
        B("*2\r\n$4\r\nbadn\r\n$3\r\nabc\r\n"),
        B("*2\r\n$4\r\nbadn\r\n:0\r\n"),
        B("*3\r\n$4\r\nbadn\r\n:3\r\n:3\r\n"),
        B("*2\r\n:1\r\n:3\r\n"),
        B("*2\r\n$8\r\nneedlist\r\n:1\r\n"),
        B("*0\r\n"),
#undef B
    };
    rb_arrive_reply a;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        redisReply *r = parse_n(bad[i].resp, bad[i].len);

        if (r == NULL)
            continue;   /* hiredis' reader refused it: never reaches us */
        if (rb_reply__arrive(r, &a) != RB_EPROTO)
            fail_msg("arrive reply #%zu was accepted", i);
        freeReplyObject(r);
    }
    for (i = 0; i < sizeof(not_arrays) / sizeof(not_arrays[0]); i++) {
        redisReply *r = parse_n(not_arrays[i], strlen(not_arrays[i]));

        assert_non_null(r);
        assert_int_equal(rb_reply__arrive(r, &a), RB_EPROTO);
        assert_int_equal(rb_reply__round(r, (rb_round_reply *)&a),
                         RB_EPROTO);
        freeReplyObject(r);
    }
    assert_int_equal(rb_reply__arrive(NULL, &a), RB_EPROTO);
}

static void test_round_good(void **state)
{
    redisReply *r;
    rb_round_reply o;

    (void)state;
    r = parse("*2\r\n$3\r\nout\r\n$2\r\nok\r\n");
    assert_int_equal(rb_reply__round(r, &o), RB_OK);
    assert_int_equal(o.kind, RB_ROUND_OUT);
    assert_string_equal(o.text, "ok");
    freeReplyObject(r);
    r = parse("*3\r\n$6\r\nbroken\r\n$12\r\nbroken a b c\r\n$12\r\nbroken reset\r\n");
    assert_int_equal(rb_reply__round(r, &o), RB_OK);
    assert_int_equal(o.kind, RB_ROUND_BROKEN);
    assert_string_equal(o.previous, "broken reset");
    freeReplyObject(r);
    r = parse("*5\r\n$4\r\nwait\r\n:2\r\n:3\r\n$2\r\nw0\r\n$2\r\nw1\r\n");
    assert_int_equal(rb_reply__round(r, &o), RB_OK);
    assert_int_equal(o.kind, RB_ROUND_WAIT);
    assert_int_equal(o.count, 2);
    assert_int_equal(o.members_count, 2);
    assert_string_equal(o.members[1]->str, "w1");
    freeReplyObject(r);
    r = parse("*3\r\n$4\r\nwait\r\n:2\r\n:0\r\n");
    assert_int_equal(rb_reply__round(r, &o), RB_OK);
    assert_int_equal(o.members_count, 0);
    assert_null(o.members);
    freeReplyObject(r);
    r = parse("*1\r\n$4\r\nlost\r\n");
    assert_int_equal(rb_reply__round(r, &o), RB_OK);
    assert_int_equal(o.kind, RB_ROUND_LOST);
    freeReplyObject(r);
}

static void test_round_hostile(void **state)
{
    static const struct { const char *resp; size_t len; } bad[] = {
#define B(s) { s, sizeof(s) - 1 }
        B("*1\r\n$3\r\nout\r\n"),
        B("*2\r\n$3\r\nout\r\n$4\r\nokay\r\n"),
        B("*2\r\n$3\r\nout\r\n$7\r\nbroken \r\n"),
        B("*2\r\n$3\r\nout\r\n$3\r\nok\0\r\n"),
        B("*2\r\n$3\r\nout\r\n:1\r\n"),
        B("*2\r\n$3\r\nout\r\n$-1\r\n"),
        B("*3\r\n$3\r\nout\r\n$2\r\nok\r\n$2\r\nok\r\n"),
        B("*2\r\n$6\r\nbroken\r\n$2\r\nok\r\n"),
        B("*3\r\n$6\r\nbroken\r\n$8\r\nbroken x\r\n$2\r\nok\r\n"),
        B("*4\r\n$6\r\nbroken\r\n$8\r\nbroken x\r\n$8\r\nbroken y\r\n$1\r\nz\r\n"),
        B("*2\r\n$4\r\nlost\r\n$1\r\nx\r\n"),
        B("*2\r\n$4\r\nwait\r\n:2\r\n"),
        B("*3\r\n$4\r\nwait\r\n:-2\r\n:3\r\n"),
        B("*3\r\n$4\r\nwait\r\n:2\r\n$3\r\nabc\r\n"),
        B("*4\r\n$4\r\nwait\r\n:2\r\n:3\r\n$2\r\nw0\r\n"),
        B("*5\r\n$4\r\nwait\r\n:2\r\n:3\r\n$2\r\nw0\r\n:7\r\n"),
        B("*5\r\n$4\r\nwait\r\n:2\r\n:3\r\n$2\r\nw0\r\n*0\r\n"),
        B("*3\r\n$5\r\nwait!\r\n:2\r\n:3\r\n"),
#undef B
    };
    rb_round_reply o;
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        redisReply *r = parse_n(bad[i].resp, bad[i].len);

        if (r == NULL)
            continue;
        if (rb_reply__round(r, &o) != RB_EPROTO)
            fail_msg("round reply #%zu was accepted", i);
        freeReplyObject(r);
    }
}

static void test_outcome_and_block(void **state)
{
    const char *reason = NULL, *text;
    redisReply *r;

    (void)state;
    assert_int_equal(rb_reply__outcome("ok", NULL), 1);
    assert_int_equal(rb_reply__outcome("broken reset", &reason), 0);
    assert_string_equal(reason, "reset");
    assert_int_equal(rb_reply__outcome("broken ", NULL), -1);
    assert_int_equal(rb_reply__outcome("brokenx", NULL), -1);
    assert_int_equal(rb_reply__outcome("OK", NULL), -1);
    assert_int_equal(rb_reply__outcome("", NULL), -1);
    assert_int_equal(rb_reply__outcome(NULL, NULL), -1);

    r = parse("$-1\r\n");
    assert_int_equal(rb_reply__block(r, &text), RB_OK);
    assert_null(text);
    freeReplyObject(r);
    r = parse("$2\r\nok\r\n");
    assert_int_equal(rb_reply__block(r, &text), RB_OK);
    assert_string_equal(text, "ok");
    freeReplyObject(r);
    r = parse(":1\r\n");
    assert_int_equal(rb_reply__block(r, &text), RB_EPROTO);
    freeReplyObject(r);
    r = parse("$3\r\nok\0\r\n");
    assert_int_equal(rb_reply__block(r, &text), RB_EPROTO);
    freeReplyObject(r);
    r = parse("$5\r\nhello\r\n");
    assert_int_equal(rb_reply__block(r, &text), RB_EPROTO);
    freeReplyObject(r);
    r = parse("*1\r\n$2\r\nok\r\n");
    assert_int_equal(rb_reply__block(r, &text), RB_EPROTO);
    freeReplyObject(r);
    assert_int_equal(rb_reply__block(NULL, &text), RB_EPROTO);
}

static void test_status(void **state)
{
    redisReply *r;
    rb_status st;
    char big[700];
    size_t i;
    static const char *const bad[] = {
        "*3\r\n:1\r\n:2\r\n:3\r\n",
        "*5\r\n:1\r\n:2\r\n:3\r\n$0\r\n\r\n$1\r\na\r\n",
        "*6\r\n:1\r\n:2\r\n:3\r\n$0\r\n\r\n$1\r\na\r\n$3\r\nabc\r\n",
        "*6\r\n:1\r\n:2\r\n:3\r\n$0\r\n\r\n:5\r\n$3\r\n100\r\n",
        "*6\r\n:1\r\n:2\r\n:3\r\n$0\r\n\r\n$0\r\n\r\n$3\r\n100\r\n",
        "*4\r\n$1\r\nx\r\n:2\r\n:3\r\n$0\r\n\r\n",
        "*4\r\n:1\r\n:2\r\n:3\r\n:4\r\n",
        "*4\r\n:-1\r\n:2\r\n:3\r\n$0\r\n\r\n",
    };

    (void)state;
    r = parse("*6\r\n:4\r\n:3\r\n:1000\r\n$12\r\nbroken reset\r\n"
              "$2\r\nw0\r\n$4\r\n3500\r\n");
    assert_int_equal(rb_reply__status(r, &st), RB_OK);
    assert_int_equal(st.gen, 4);
    assert_int_equal(st.n, 3);
    assert_string_equal(st.last_outcome, "broken reset");
    assert_int_equal(st.members_count, 1);
    assert_string_equal(st.members[0].id, "w0");
    assert_int_equal(st.members[0].lease_left_ms, 2500);
    rb_status_clear(&st);
    freeReplyObject(r);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        r = parse_n(bad[i], strlen(bad[i]));
        assert_non_null(r);
        if (rb_reply__status(r, &st) != RB_EPROTO)
            fail_msg("status reply #%zu was accepted", i);
        assert_null(st.members);
        freeReplyObject(r);
    }
    /* A long last outcome comes back whole, never cut. */
    memcpy(big, "*4\r\n:1\r\n:2\r\n:3\r\n$600\r\n", 22);
    memset(big + 22, 'x', 600);
    memcpy(big + 622, "\r\n", 2);
    r = parse_n(big, 624);
    assert_non_null(r);
    assert_int_equal(rb_reply__status(r, &st), RB_OK);
    assert_int_equal(strlen(st.last_outcome), 600);
    rb_status_clear(&st);
    freeReplyObject(r);
}

static void test_reset_and_strings(void **state)
{
    redisReply *r, **items;
    rb_reset_reply rs;
    size_t count;

    (void)state;
    r = parse("*2\r\n:7\r\n:2\r\n");
    assert_int_equal(rb_reply__reset(r, &rs), RB_OK);
    assert_int_equal(rs.gen, 7);
    assert_int_equal(rs.members, 2);
    assert_int_equal(rs.removed_count, 0);
    freeReplyObject(r);
    r = parse("*3\r\n:0\r\n:0\r\n$9\r\nrb:{x}:in\r\n");
    assert_int_equal(rb_reply__reset(r, &rs), RB_OK);
    assert_int_equal(rs.removed_count, 1);
    assert_string_equal(rs.removed[0]->str, "rb:{x}:in");
    freeReplyObject(r);
    r = parse("*3\r\n:0\r\n:0\r\n:1\r\n");
    assert_int_equal(rb_reply__reset(r, &rs), RB_EPROTO);
    freeReplyObject(r);
    r = parse("*1\r\n:0\r\n");
    assert_int_equal(rb_reply__reset(r, &rs), RB_EPROTO);
    freeReplyObject(r);

    r = parse("*2\r\n$1\r\n3\r\n$1\r\n9\r\n");
    assert_int_equal(rb_reply__strings(r, &items, &count), RB_OK);
    assert_int_equal(count, 2);
    assert_string_equal(items[1]->str, "9");
    freeReplyObject(r);
    r = parse("*0\r\n");
    assert_int_equal(rb_reply__strings(r, &items, &count), RB_OK);
    assert_int_equal(count, 0);
    freeReplyObject(r);
    r = parse("*2\r\n$1\r\n3\r\n*0\r\n");
    assert_int_equal(rb_reply__strings(r, &items, &count), RB_EPROTO);
    freeReplyObject(r);
    r = parse("$-1\r\n");
    assert_int_equal(rb_reply__strings(r, &items, &count), RB_EPROTO);
    freeReplyObject(r);
}

/* Error replies as Redis 7.0 words them, read by hiredis' reader: each is
 * classified by its prefix, once; a text that only mentions a prefix
 * further in is not that class. */
static void test_classify_errors(void **state)
{
    static const struct {
        const char *resp;
        rb_reply_err kind;
    } cases[] = {
        { "-NOSCRIPT No matching script. Please use EVAL.\r\n",
          RB_REPLY_NOSCRIPT },
        { "-WRONGTYPE Operation against a key holding the wrong kind of "
          "value\r\n", RB_REPLY_WRONGTYPE },
        { "-MOVED 3999 127.0.0.1:6381\r\n", RB_REPLY_MOVED },
        { "-ASK 3999 127.0.0.1:6381\r\n", RB_REPLY_ASK },
        { "-LOADING Redis is loading the dataset in memory\r\n",
          RB_REPLY_LOADING },
        { "-BUSY Redis is busy running a script.\r\n", RB_REPLY_BUSY },
        { "-TRYAGAIN Multiple keys request during rehashing of slot\r\n",
          RB_REPLY_TRYAGAIN },
        { "-MASTERDOWN Link with MASTER is down\r\n",
          RB_REPLY_MASTERDOWN },
        { "-READONLY You can't write against a read only replica.\r\n",
          RB_REPLY_READONLY },
        { "-UNBLOCKED force unblock from blocking operation\r\n",
          RB_REPLY_UNBLOCKED },
        { "-CLUSTERDOWN The cluster is down\r\n", RB_REPLY_CLUSTERDOWN },
        { "-NOPERM this user has no permissions to run the 'zadd' "
          "command\r\n", RB_REPLY_NOPERM_COMMAND },
        { "-NOPERM this user has no permissions to access one of the keys "
          "used as arguments\r\n", RB_REPLY_NOPERM_KEYS },
        { "-ERR The user executing the script can't run this command or "
          "subcommand script: abc, on @user_script:1.\r\n",
          RB_REPLY_NOPERM_SCRIPT },
        { "-NOPERM something new\r\n", RB_REPLY_NOPERM },
        { "-ERR unknown command 'BLMOVE', with args beginning with: \r\n",
          RB_REPLY_UNKNOWN_COMMAND },
        { "-ERR damaged rb:{x}: n is not a number\r\n", RB_REPLY_DAMAGED },
        { "-ERR no such key\r\n", RB_REPLY_OTHER },
        { "-ERR the text says MOVED and NOSCRIPT\r\n", RB_REPLY_OTHER },
        { "-MOVEDX 1 h:1\r\n", RB_REPLY_OTHER },
    };
    size_t i;

    (void)state;
    for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        redisReply *r = parse_n(cases[i].resp, strlen(cases[i].resp));

        assert_non_null(r);
        assert_int_equal(r->type, REDIS_REPLY_ERROR);
        if (rb_reply__classify(r->str) != cases[i].kind)
            fail_msg("'%s': class %d, not %d", r->str,
                     (int)rb_reply__classify(r->str), (int)cases[i].kind);
        freeReplyObject(r);
    }
}

static void test_error_text(void **state)
{
    static const char raised[] = "ERR damaged barrier state in rb:{x} "
                                 "script: 0123abcd, on @user_script:84.";
    static const char plain[] = "ERR no script: here";

    (void)state;
    /* A script's error loses where it was raised, not what it says. */
    assert_int_equal(rb_reply__error_text(raised, strlen(raised)),
                     strlen("ERR damaged barrier state in rb:{x}"));
    assert_int_equal(rb_reply__error_text(plain, strlen(plain)),
                     strlen(plain));
}

static void test_noperm_command(void **state)
{
    char cmd[8];

    (void)state;
    assert_true(rb_reply__noperm_command("NOPERM this user has no "
                                         "permissions to run the 'ZADD' "
                                         "command", cmd, sizeof(cmd)));
    assert_string_equal(cmd, "zadd");
    /* Cut to the buffer, never past it. */
    assert_true(rb_reply__noperm_command("NOPERM this user has no "
                                         "permissions to run the "
                                         "'client|setname' command", cmd,
                                         sizeof(cmd)));
    assert_string_equal(cmd, "client|");
    assert_false(rb_reply__noperm_command("NOPERM other", cmd, sizeof(cmd)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_arrive_good),
        cmocka_unit_test(test_arrive_hostile),
        cmocka_unit_test(test_expect_store),
        cmocka_unit_test(test_round_good),
        cmocka_unit_test(test_round_hostile),
        cmocka_unit_test(test_outcome_and_block),
        cmocka_unit_test(test_status),
        cmocka_unit_test(test_reset_and_strings),
        cmocka_unit_test(test_classify_errors),
        cmocka_unit_test(test_noperm_command),
        cmocka_unit_test(test_error_text),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
