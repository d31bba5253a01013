/* The job scripts' reply decoders against good and hostile replies, built
 * from RESP bytes by hiredis' own reader (no server). */
#include "fmacros.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "resp.h"

#include "rb_job.h"


static void test_job_reply_good(void **state)
{
    redisReply *r;
    rb_job_reply jr;

    (void)state;
    r = parse("*8\r\n$4\r\nwait\r\n:17\r\n:2\r\n:1\r\n:3\r\n:4\r\n$0\r\n\r\n"
              ":1500\r\n");
    assert_int_equal(rb_job__decode(r, &jr), RB_OK);
    assert_int_equal(jr.kind, RB_JOB_WAIT);
    assert_int_equal(jr.epoch, 17);
    assert_int_equal(jr.att, 2);
    assert_int_equal(jr.rank, 1);
    assert_int_equal(jr.count, 3);
    assert_int_equal(jr.n, 4);
    assert_int_equal(jr.next_ms, 1500);
    freeReplyObject(r);
    r = parse("*8\r\n$3\r\nout\r\n:1\r\n:0\r\n:-1\r\n:0\r\n:0\r\n"
              "$24\r\nbroken lease of w expired\r\n:-1\r\n");
    assert_null(r);   /* the length is wrong: the reader waits for more */
    r = parse("*8\r\n$3\r\nout\r\n:1\r\n:0\r\n:-1\r\n:0\r\n:0\r\n"
              "$25\r\nbroken lease of w expired\r\n:-1\r\n");
    assert_int_equal(rb_job__decode(r, &jr), RB_OK);
    assert_int_equal(jr.kind, RB_JOB_OUT);
    assert_string_equal(jr.text, "broken lease of w expired");
    freeReplyObject(r);
    r = parse("*8\r\n$4\r\nstop\r\n:1\r\n:0\r\n:-1\r\n:0\r\n:2\r\n"
              "$20\r\nstopping m0 was shot\r\n:-1\r\n");
    assert_int_equal(rb_job__decode(r, &jr), RB_OK);
    assert_int_equal(jr.kind, RB_JOB_STOP);
    assert_string_equal(jr.text, "stopping m0 was shot");
    freeReplyObject(r);
    r = parse("*8\r\n$3\r\ndup\r\n:1\r\n:0\r\n:-1\r\n:0\r\n:2\r\n"
              "$0\r\n\r\n:2500\r\n");
    assert_int_equal(rb_job__decode(r, &jr), RB_OK);
    assert_int_equal(jr.kind, RB_JOB_DUP);
    assert_int_equal(jr.next_ms, 2500);
    freeReplyObject(r);
    r = parse("*8\r\n$6\r\nkeeper\r\n:0\r\n:0\r\n:12\r\n:0\r\n:2\r\n"
              "$7\r\nmissing\r\n:-1\r\n");
    assert_int_equal(rb_job__decode(r, &jr), RB_OK);
    assert_int_equal(jr.kind, RB_JOB_KEEPER);
    assert_int_equal(jr.rank, 12);
    freeReplyObject(r);
    r = parse("*8\r\n$10\r\nquarantine\r\n:0\r\n:0\r\n:-1\r\n:0\r\n:2\r\n"
              "$4\r\nlost\r\n:4096\r\n");
    assert_int_equal(rb_job__decode(r, &jr), RB_OK);
    assert_int_equal(jr.kind, RB_JOB_QUARANTINE);
    assert_int_equal(jr.next_ms, 4096);
    assert_null(jr.rdv[0]);
    freeReplyObject(r);
    /* job-enter's 'go' goes on with the member's rendezvous values, each
     * text or nil */
    r = parse("*11\r\n$2\r\ngo\r\n:17\r\n:0\r\n:3\r\n:4\r\n:4\r\n"
              "$0\r\n\r\n:-1\r\n$5\r\n1 2 1\r\n$1\r\n2\r\n$-1\r\n");
    assert_int_equal(rb_job__decode(r, &jr), RB_OK);
    assert_int_equal(jr.kind, RB_JOB_GO);
    assert_non_null(jr.rdv[0]);
    assert_string_equal(jr.rdv[0]->str, "1 2 1");
    assert_string_equal(jr.rdv[1]->str, "2");
    assert_int_equal(jr.rdv[2]->type, REDIS_REPLY_NIL);
    freeReplyObject(r);
}

static void test_job_reply_hostile(void **state)
{
    static const char *const bad[] = {
        "+OK\r\n", ":1\r\n", "*0\r\n", "$-1\r\n",
        /* rendezvous values after another kind than 'go' */
        "*11\r\n$4\r\nwait\r\n:1\r\n:0\r\n:0\r\n:1\r\n:2\r\n$0\r\n\r\n:-1\r\n"
        "$5\r\n0 1 0\r\n$1\r\n1\r\n$-1\r\n",
        /* a rendezvous value that is no text */
        "*11\r\n$2\r\ngo\r\n:1\r\n:0\r\n:0\r\n:2\r\n:2\r\n$0\r\n\r\n:-1\r\n"
        ":5\r\n$1\r\n1\r\n$-1\r\n",
        /* 9 elements */
        "*9\r\n$2\r\ngo\r\n:1\r\n:0\r\n:0\r\n:2\r\n:2\r\n$0\r\n\r\n:-1\r\n"
        "$5\r\n0 1 0\r\n",
        /* 7 elements */
        "*7\r\n$4\r\nwait\r\n:1\r\n:0\r\n:0\r\n:1\r\n:2\r\n$0\r\n\r\n",
        /* unknown kind */
        "*8\r\n$4\r\nwhat\r\n:1\r\n:0\r\n:0\r\n:1\r\n:2\r\n$0\r\n\r\n:-1\r\n",
        /* a rank past n's range, a negative epoch */
        "*8\r\n$4\r\nwait\r\n:1\r\n:0\r\n:100001\r\n:1\r\n:2\r\n$0\r\n\r\n:-1\r\n",
        "*8\r\n$4\r\nwait\r\n:-1\r\n:0\r\n:0\r\n:1\r\n:2\r\n$0\r\n\r\n:-1\r\n",
        /* a keeper class out of range, an unknown why; a quarantine
         * without its time */
        "*8\r\n$6\r\nkeeper\r\n:0\r\n:0\r\n:9\r\n:0\r\n:2\r\n$5\r\nclass\r\n:-1\r\n",
        "*8\r\n$6\r\nkeeper\r\n:0\r\n:0\r\n:12\r\n:0\r\n:2\r\n$3\r\nwhy\r\n:-1\r\n",
        "*8\r\n$10\r\nquarantine\r\n:0\r\n:0\r\n:-1\r\n:0\r\n:2\r\n$0\r\n\r\n:-1\r\n",
        /* an outcome that is neither ok nor broken */
        "*8\r\n$3\r\nout\r\n:1\r\n:0\r\n:0\r\n:1\r\n:2\r\n$4\r\nmeh!\r\n:-1\r\n",
        /* a stop without its reason, a break that is a stop */
        "*8\r\n$4\r\nstop\r\n:1\r\n:0\r\n:0\r\n:1\r\n:2\r\n$4\r\nmeh!\r\n:-1\r\n",
        "*8\r\n$6\r\nbroken\r\n:1\r\n:0\r\n:0\r\n:1\r\n:2\r\n$11\r\nstopping m0\r\n:-1\r\n",
        /* a nil where the text goes */
        "*8\r\n$4\r\nwait\r\n:1\r\n:0\r\n:0\r\n:1\r\n:2\r\n$-1\r\n:-1\r\n",
    };
    size_t i;
    rb_job_reply jr;

    (void)state;
    assert_int_equal(rb_job__decode(NULL, &jr), RB_EPROTO);
    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        redisReply *r = parse_n(bad[i], strlen(bad[i]));

        assert_non_null(r);
        assert_int_equal(rb_job__decode(r, &jr), RB_EPROTO);
        freeReplyObject(r);
    }
    {
        /* a NUL inside the text */
        redisReply *r = parse("*8\r\n$3\r\nout\r\n:1\r\n:0\r\n:0\r\n:1\r\n"
                              ":2\r\n$4\r\nok\0x\r\n:-1\r\n");

        assert_non_null(r);
        assert_int_equal(rb_job__decode(r, &jr), RB_EPROTO);
        freeReplyObject(r);
    }
}

static void test_job_status(void **state)
{
    redisReply *r;
    rb_job_status st;

    (void)state;
    r = parse("*1\r\n:0\r\n");
    assert_int_equal(rb_job__decode_status(r, &st), RB_OK);
    assert_int_equal(st.epoch, 0);
    freeReplyObject(r);
    r = parse("*14\r\n:5\r\n$3\r\nrun\r\n:1\r\n:2\r\n:3\r\n:1000\r\n"
              "$0\r\n\r\n$5\r\na,b,c\r\n"
              "$1\r\na\r\n:0\r\n$7\r\nrunning\r\n:4000\r\n:-1\r\n"
              ":700\r\n");
    assert_int_equal(rb_job__decode_status(r, &st), RB_OK);
    assert_int_equal(st.epoch, 5);
    assert_string_equal(st.state, "run");
    assert_int_equal(st.attempt, 1);
    assert_int_equal(st.n, 2);
    assert_int_equal(st.restarts, 3);
    assert_string_equal(st.expect, "a,b,c");
    assert_int_equal(st.members_count, 1);
    assert_string_equal(st.members[0].id, "a");
    assert_int_equal(st.members[0].lease_left_ms, 3000);
    assert_int_equal(st.members[0].exit_status, -1);
    assert_int_equal(st.members[0].progress_age_ms, 300);
    rb_job_status_clear(&st);
    freeReplyObject(r);
    /* a member cut short, an exit status past 255 */
    r = parse("*13\r\n:5\r\n$3\r\nrun\r\n:1\r\n:2\r\n:3\r\n:1000\r\n"
              "$0\r\n\r\n$0\r\n\r\n$1\r\na\r\n:0\r\n$7\r\nrunning\r\n:4000\r\n"
              ":-1\r\n");
    assert_int_equal(rb_job__decode_status(r, &st), RB_EPROTO);
    freeReplyObject(r);
    r = parse("*14\r\n:5\r\n$3\r\nrun\r\n:1\r\n:2\r\n:3\r\n:1000\r\n"
              "$0\r\n\r\n$0\r\n\r\n$1\r\na\r\n:0\r\n$4\r\nleft\r\n:-1\r\n"
              ":256\r\n:-1\r\n");
    assert_int_equal(rb_job__decode_status(r, &st), RB_EPROTO);
    freeReplyObject(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_job_reply_good),
        cmocka_unit_test(test_job_reply_hostile),
        cmocka_unit_test(test_job_status),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
