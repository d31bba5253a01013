/* The barrier module's pure parts, without a server: the replies of the
 * protocol's scripts (built from RESP bytes by hiredis' own reader) as the
 * module reads them, what it makes of an outcome, the words of a refused
 * arrival, the options it refuses before sending anything, and how a wait
 * is cut into slices. */
#include "fmacros.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "resp.h"

#include "rb_barrier.h"
#include "rb_sha1.h"


static int noop_start(const rb_once_info *i, void *p, rb_error *e)
{
    (void)i; (void)p; (void)e;
    return RB_OK;
}
static int noop_wait(void *p, int t, int *s)
{
    (void)p; (void)t; (void)s;
    return 1;
}
static void noop_kill(void *p)
{
    (void)p;
}

static rb_wait_opts good_opts(void)
{
    rb_wait_opts o = RB_WAIT_OPTS_INIT;

    o.name = "ckpt";
    o.id = "w0";
    o.n = 2;
    return o;
}

/* ---- replies ---- */

static void test_barrier_arrive_refusals_decode(void **state)
{
    redisReply *r;
    rb_arrive_reply a;

    (void)state;
    r = parse("*2\r\n$9\r\nbadexpect\r\n$3\r\na,b\r\n");
    assert_int_equal(rb_reply__arrive(r, &a), RB_OK);
    assert_int_equal(a.kind, RB_ARRIVE_BADEXPECT);
    assert_string_equal(a.open_text, "a,b");
    freeReplyObject(r);
    r = parse("*2\r\n$9\r\nbadreduce\r\n$0\r\n\r\n");
    assert_int_equal(rb_reply__arrive(r, &a), RB_OK);
    assert_int_equal(a.kind, RB_ARRIVE_BADREDUCE);
    assert_string_equal(a.open_text, "");
    freeReplyObject(r);
    /* The open term must be text, and alone. */
    r = parse("*2\r\n$9\r\nbadexpect\r\n:1\r\n");
    assert_int_equal(rb_reply__arrive(r, &a), RB_EPROTO);
    freeReplyObject(r);
    r = parse("*3\r\n$9\r\nbadreduce\r\n$3\r\nsum\r\n$1\r\nx\r\n");
    assert_int_equal(rb_reply__arrive(r, &a), RB_EPROTO);
    freeReplyObject(r);
    r = parse_n("*2\r\n$9\r\nbadexpect\r\n$3\r\na\0b\r\n", 27);
    assert_int_equal(rb_reply__arrive(r, &a), RB_EPROTO);
    freeReplyObject(r);
}

static void test_barrier_claim_and_withdraw_decode(void **state)
{
    redisReply *r;
    rb_round_reply rr;

    (void)state;
    r = parse("*1\r\n$3\r\nrun\r\n");
    assert_int_equal(rb_reply__round(r, &rr), RB_OK);
    assert_int_equal(rr.kind, RB_ROUND_RUN);
    freeReplyObject(r);
    r = parse("*1\r\n$4\r\nnone\r\n");
    assert_int_equal(rb_reply__round(r, &rr), RB_OK);
    assert_int_equal(rr.kind, RB_ROUND_NONE);
    freeReplyObject(r);
    r = parse("*2\r\n$3\r\nrun\r\n$2\r\nok\r\n");
    assert_int_equal(rb_reply__round(r, &rr), RB_EPROTO);
    freeReplyObject(r);
    r = parse("*2\r\n$3\r\nout\r\n$28\r\nbroken barrier state deleted\r\n");
    assert_int_equal(rb_reply__round(r, &rr), RB_OK);
    assert_int_equal(rr.kind, RB_ROUND_OUT);
    assert_string_equal(rr.text, "broken barrier state deleted");
    freeReplyObject(r);
}

static void test_barrier_status_owns_its_strings(void **state)
{
    redisReply *r;
    rb_status st;

    (void)state;
    r = parse("*8\r\n:9\r\n:2\r\n:1000\r\n$2\r\nok\r\n"
              "$2\r\nw0\r\n$4\r\n1500\r\n$2\r\nw1\r\n$3\r\n900\r\n");
    assert_int_equal(rb_reply__status(r, &st), RB_OK);
    freeReplyObject(r);   /* nothing of st may point into it */
    assert_true(st.exists);
    assert_int_equal(st.gen, 9);
    assert_string_equal(st.last_outcome, "ok");
    assert_int_equal(st.members_count, 2);
    assert_string_equal(st.members[0].id, "w0");
    assert_int_equal(st.members[0].lease_left_ms, 500);
    assert_string_equal(st.members[1].id, "w1");
    assert_int_equal(st.members[1].lease_left_ms, -100);
    rb_status_clear(&st);
    assert_null(st.members);
    assert_null(st.last_outcome);
    rb_status_clear(&st);   /* twice is harmless */
    rb_status_clear(NULL);

    /* A name never used: gen 0. */
    r = parse("*4\r\n:0\r\n:0\r\n:1000\r\n$0\r\n\r\n");
    assert_int_equal(rb_reply__status(r, &st), RB_OK);
    assert_false(st.exists);
    assert_string_equal(st.last_outcome, "");
    rb_status_clear(&st);
    freeReplyObject(r);
}

static void test_barrier_reset_result_owns_removed(void **state)
{
    redisReply *r;
    rb_reset_result res;

    (void)state;
    r = parse("*4\r\n:7\r\n:2\r\n$13\r\nrb:b:{x}:7:in\r\n$10\r\nrb:b:{x} n\r\n");
    assert_int_equal(rb_barrier__reset_from_reply(&res, r), RB_OK);
    freeReplyObject(r);
    assert_int_equal(res.gen, 7);
    assert_int_equal(res.members, 2);
    assert_int_equal(res.removed_count, 2);
    assert_string_equal(res.removed[0], "rb:b:{x}:7:in");
    assert_string_equal(res.removed[1], "rb:b:{x} n");
    rb_reset_result_clear(&res);
    assert_null(res.removed);
    assert_int_equal(res.removed_count, 0);
    rb_reset_result_clear(NULL);

    r = parse("*2\r\n:0\r\n:0\r\n");
    assert_int_equal(rb_barrier__reset_from_reply(&res, r), RB_OK);
    assert_null(res.removed);
    freeReplyObject(r);
    r = parse("*3\r\n:1\r\n:0\r\n:5\r\n");
    assert_int_equal(rb_barrier__reset_from_reply(&res, r), RB_EPROTO);
    assert_null(res.removed);
    freeReplyObject(r);
}

/* ---- outcomes and messages ---- */

static void test_barrier_outcome(void **state)
{
    rb_error err;

    (void)state;
    assert_int_equal(rb_barrier__outcome("ckpt", "3", "ok", &err), RB_OK);
    assert_int_equal(rb_barrier__outcome("ckpt", "3", "broken reset", &err),
                     RB_EBROKEN);
    assert_string_equal(err.msg, "ckpt: round 3 broken: reset");
    assert_int_equal(rb_barrier__outcome("ckpt", "3", "okay", &err),
                     RB_EPROTO);
    assert_int_equal(rb_barrier__outcome("ckpt", "3", "broken", &err),
                     RB_EPROTO);
    assert_int_equal(rb_barrier__outcome("ckpt", "3", NULL, &err),
                     RB_EPROTO);
}

/* sha1sum of "w0,w1" */
#define W0W1_SHA1 "664cae954e0c09823a2aadb6cb95b9102e999bbe"
/* The digest of the --expect list w0,w1 (one part): the SHA1 of its
 * SHA1's 40 hex digits. */
#define W0W1_DIGEST "c55affdbd57b8d51eecbf12366696763b8f477ac"

static void test_sha1_vectors(void **state)
{
    static char million[1000000];
    char hex[41];

    (void)state;
    rb_sha1_hex("abc", 3, hex);
    assert_string_equal(hex, "a9993e364706816aba3e25717850c26c9cd0d89d");
    rb_sha1_hex("", 0, hex);
    assert_string_equal(hex, "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    /* 56 bytes: the length no longer fits the last block. */
    rb_sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
                hex);
    assert_string_equal(hex, "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    memset(million, 'a', sizeof(million));
    rb_sha1_hex(million, sizeof(million), hex);
    assert_string_equal(hex, "34aa973cd4c4daa4f61eeb2bdbad27316534016f");
    rb_sha1_hex("w0,w1", 5, hex);
    assert_string_equal(hex, W0W1_SHA1);
}

/* list (len bytes) cut into two parts at the comma at cut: its digest is
 * the SHA1 of the two parts' SHA1s. */
static void assert_two_parts(const char *list, size_t cut, size_t len)
{
    char sums[81], want[41], hex[41];

    rb_sha1_hex(list, cut, sums);
    rb_sha1_hex(list + cut + 1, len - cut - 1, sums + 40);
    rb_sha1_hex(sums, 80, want);
    rb_barrier__expect_digest(list, hex);
    assert_string_equal(hex, want);
}

/* An --expect list's digest: parts of at most 1,024 ids and 64 KiB, each
 * part's SHA1, then the SHA1 of those (lua/includes/expect.lua). */
static void test_expect_digest(void **state)
{
    static char list[1025 * 6 + 1], long_list[400 * 201 + 1];
    char hex[41], want[41];
    size_t at = 0, cut = 0;
    int i;

    (void)state;
    rb_barrier__expect_digest("w0,w1", hex);
    assert_string_equal(hex, W0W1_DIGEST);
    /* 1,025 ids: a second part of one id. */
    for (i = 0; i < 1025; i++) {
        if (i == 1024)
            cut = at;   /* the comma before the 1,025th id */
        at += (size_t)sprintf(list + at, "%sp%04d", i ? "," : "", i);
    }
    assert_two_parts(list, cut, at);
    /* 1,024 ids and a comma that ends the list: one part, the same as
     * without the comma (the server refuses an empty part). */
    list[cut] = ',';
    list[cut + 1] = '\0';
    rb_barrier__expect_digest(list, hex);
    list[cut] = '\0';
    rb_barrier__expect_digest(list, want);
    assert_string_equal(hex, want);
    /* 400 ids of 200 bytes: a part ends before the id that would take it
     * past 64 KiB, after 326 ids (326 * 201 - 1 = 65,525 bytes). */
    for (i = 0, at = 0; i < 400; i++) {
        if (i == 326)
            cut = at;
        at += (size_t)sprintf(long_list + at, "%s%0200d", i ? "," : "", i);
    }
    assert_two_parts(long_list, cut, at);
}

static void test_barrier_refused_names_both(void **state)
{
    rb_wait_opts o = good_opts();
    rb_arrive_reply a;
    rb_error err;

    (void)state;
    memset(&a, 0, sizeof(a));
    a.kind = RB_ARRIVE_BADN;
    a.open_n = 4;
    assert_int_equal(rb_barrier__refused("ckpt", &a, &o, &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "n=4; this party said n=2"));
    /* The round's terms hold the list's SHA1: another list's here. */
    a.kind = RB_ARRIVE_BADEXPECT;
    a.open_text = "a3e1b5b6d0ed4ab4c3a0a1f0e1bd0b7c0e9c6b5f";
    assert_int_equal(rb_barrier__refused("ckpt", &a, &o, &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "has an --expect list (sha1 "
                                    "a3e1b5b6d0ed); this party said (none)"));
    o.expect = "w0,w1";
    assert_int_equal(rb_barrier__refused("ckpt", &a, &o, &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "has another --expect list (sha1 "
                                    "a3e1b5b6d0ed); this party said w0,w1"));
    a.open_text = "";
    assert_int_equal(rb_barrier__refused("ckpt", &a, &o, &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "--expect (none); this party said "
                                    "w0,w1"));
    a.open_text = W0W1_DIGEST;   /* same list: this id is not on it */
    o.id = "w7";
    assert_int_equal(rb_barrier__refused("ckpt", &a, &o, &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "'w7' is not on"));
    a.kind = RB_ARRIVE_BADREDUCE;
    a.open_text = "sum";
    o.reduce = "max";
    assert_int_equal(rb_barrier__refused("ckpt", &a, &o, &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "--reduce sum; this party said max"));
}

/* The call's error as the connection layer hands it over: classified
 * where the reply was read, the text kept for the message. */
static rb_call failed_call(rb_error *err, const char *msg)
{
    rb_call call;

    memset(&call, 0, sizeof(call));
    err->code = RB_EREDIS;
    strcpy(err->msg, msg);
    call.reply_err = rb_reply__classify(msg);
    return call;
}

static void test_barrier_script_errors(void **state)
{
    rb_error err;
    rb_call call;

    (void)state;
    call = failed_call(&err, "WRONGTYPE rb:b:{x} holds a string, not a hash "
                             "(not written by rbarrier?); nothing was "
                             "written");
    assert_int_equal(rb_barrier__script_failed("x", &call, RB_EREDIS, &err),
                     RB_EREDIS);
    assert_non_null(strstr(err.msg, "x: key rb:b:{x} holds a string"));
    assert_non_null(strstr(err.msg, "reset"));
    call = failed_call(&err, "WRONGTYPE Operation against a key holding the "
                             "wrong kind of value");
    rb_barrier__script_failed("x", &call, RB_EREDIS, &err);
    assert_non_null(strstr(err.msg, "wrong type"));
    call = failed_call(&err, "ERR damaged barrier state in rb:b:{x}");
    rb_barrier__script_failed("x", &call, RB_EREDIS, &err);
    assert_string_equal(err.msg, "x: damaged barrier state in rb:b:{x}");
    call = failed_call(&err, "ERR unknown command 'BLMOVE'");
    assert_true(rb_barrier__is_unknown_command(&call));
    assert_false(rb_barrier__is_wrongtype(&call));
    assert_int_equal(rb_barrier__script_failed("x", &call, RB_EUNREACHABLE,
                                               &err), RB_EUNREACHABLE);
}

/* ---- options ---- */

static void test_barrier_opts_version(void **state)
{
    rb_wait_opts o = good_opts();
    rb_error err;

    (void)state;
    assert_int_equal(o.version, RB_WAIT_OPTS_VERSION);
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_OK);
    o.version = 0;
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "version 0"));
    o.version = RB_WAIT_OPTS_VERSION + 1;
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_EINVAL);
    assert_int_equal(rb_barrier__check_opts(NULL, &err), RB_EINVAL);
}

static void test_barrier_opts_refused(void **state)
{
    static const rb_once_ops half = { noop_start, NULL, noop_kill };
    static const rb_once_ops full = { noop_start, noop_wait, noop_kill };
    rb_wait_opts o;
    rb_error err;

    (void)state;
    o = good_opts(); o.n = 0;
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_EINVAL);
    o = good_opts(); o.n = RB_N_MAX + 1;
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_EINVAL);
    o = good_opts(); o.lease_ms = -1;
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_EINVAL);
    o = good_opts(); o.ttl_ms = -1;
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_EINVAL);
    o = good_opts(); o.name = "a{b}";
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_EINVAL);
    o = good_opts(); o.once = &half;
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_EINVAL);
    o = good_opts(); o.once = &full;
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_OK);
    o = good_opts(); o.value = "";
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_EINVAL);
    o = good_opts(); o.value = "a\tb";
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_EINVAL);
    o = good_opts(); o.reduce = "sum";
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_OK);
    o = good_opts(); o.reduce = "";
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_EINVAL);
    o = good_opts(); o.reduce = "s m";
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_EINVAL);
    o = good_opts(); o.reduce = "abcdefghijklmnopqrstu";
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_EINVAL);
    o = good_opts(); o.expect = "w0,w1";
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_OK);
    o = good_opts(); o.expect = "w1,w2";
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_EINVAL);
    assert_non_null(strstr(err.msg, "'w0' is not one"));
    o = good_opts(); o.expect = "w0,w1,w2";
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_EINVAL);
    o = good_opts(); o.expect = "w0,,w1";
    assert_int_equal(rb_barrier__check_opts(&o, &err), RB_EINVAL);
}

/* ---- leases and slices ---- */

static void test_barrier_lease_and_slices(void **state)
{
    int last;

    (void)state;
    assert_int_equal(rb_barrier__lease_ms(0), 10000);
    assert_int_equal(rb_barrier__lease_ms(5), 30);
    assert_int_equal(rb_barrier__lease_ms(3000), 3000);
    assert_int_equal(rb_barrier__slice_ms(3000, 0, 0), 1000);
    assert_int_equal(rb_barrier__slice_ms(0, 0, 0), 3333);
    assert_int_equal(rb_barrier__slice_ms(9000, 1, 1000), 1000);
    assert_int_equal(rb_barrier__slice_ms(9000, 0, 1000), 3000);
    assert_int_equal(rb_barrier__slice_ms(900, 1, 1000), 300);
    /* No deadline: whole slices. */
    assert_int_equal(rb_barrier__next_slice(1000, -1, &last), 1000);
    assert_false(last);
    assert_int_equal(rb_barrier__next_slice(1000, 5000, &last), 1000);
    assert_false(last);
    /* The slice that reaches the deadline is the last, and no longer. */
    assert_int_equal(rb_barrier__next_slice(1000, 1000, &last), 1000);
    assert_true(last);
    assert_int_equal(rb_barrier__next_slice(1000, 250, &last), 250);
    assert_true(last);
    /* A slice ends when the next renewal is due, however late the last
     * one was answered; one that is already due still blocks (0 would
     * block forever). */
    assert_int_equal(rb_barrier__beat_in(10000, 7000), 3000);
    assert_int_equal(rb_barrier__beat_in(10000, 9990), 10);
    assert_int_equal(rb_barrier__beat_in(10000, 10000), 1);
    assert_int_equal(rb_barrier__beat_in(10000, 12000), 1);
    assert_int_equal(rb_barrier__linger_s(86400), 300);
    assert_int_equal(rb_barrier__linger_s(5), 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_barrier_arrive_refusals_decode),
        cmocka_unit_test(test_barrier_claim_and_withdraw_decode),
        cmocka_unit_test(test_barrier_status_owns_its_strings),
        cmocka_unit_test(test_barrier_reset_result_owns_removed),
        cmocka_unit_test(test_barrier_outcome),
        cmocka_unit_test(test_sha1_vectors),
        cmocka_unit_test(test_expect_digest),
        cmocka_unit_test(test_barrier_refused_names_both),
        cmocka_unit_test(test_barrier_script_errors),
        cmocka_unit_test(test_barrier_opts_version),
        cmocka_unit_test(test_barrier_opts_refused),
        cmocka_unit_test(test_barrier_lease_and_slices),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
