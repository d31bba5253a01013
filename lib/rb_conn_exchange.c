/*
 * One attempt of a call on one node, for rb_conn.c's resend loop: the
 * commands that go in one write ([ASKING] the call [its then]
 * [an acknowledged write and WAIT]) and what their replies came to.
 */
#include "fmacros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rb_reply.h"
#include "rb_router.h"

/* How long one WAIT for replica acknowledgements may block. */
#define RB_ACK_MAX_MS 1000
/* The key an acknowledged write touches: next to the call's own key (same
 * slot), expiring on its own. */
#define RB_ACK_SUFFIX ":ack"
#define RB_ACK_TTL_MS "60000"

const char *rb_conn__call_key(int argc, const char **argv,
                              const size_t *lens, size_t *len)
{
    int k = 1;

    if (argc > 2 && (strcasecmp(argv[0], "EVALSHA") == 0 ||
                     strcasecmp(argv[0], "EVAL") == 0)) {
        if (atoi(argv[2]) < 1 || argc < 4)
            return NULL;
        k = 3;
    }
    if (argc <= k)
        return NULL;
    *len = lens[k];
    return argv[k];
}

rb_node_io rb_conn__exchange(rb_conn *c, int idx, int asking, int argc,
                             const char **argv, const size_t *lens,
                             const char *key, size_t keylen, rb_call *call,
                             rb_answer *a, rb_reply_err *kind,
                             redisReply **out, rb_error *err)
{
    const rb_deadline *d = &call->deadline;
    rb_cmd cmds[RB_NODE_CMDS_MAX];
    redisReply *r[RB_NODE_CMDS_MAX];
    const char *asking_argv[1] = { "ASKING" };
    size_t asking_len[1] = { 6 };
    const char *ack_argv[5], *wait_argv[3];
    size_t ack_len[5], wait_len[3];
    char ack_key[RB_KEY_MAX + 8], k_text[16], ms_text[24];
    long long now = rb_now_ms(), ack_ms = 0, left, reply_by;
    int n = 0, main_at, then_at = -1, wait_at = -1, i;
    rb_node_io io;

    if (asking) {
        cmds[n].argc = 1;
        cmds[n].argv = asking_argv;
        cmds[n++].lens = asking_len;
    }
    main_at = n;
    cmds[n].argc = argc;
    cmds[n].argv = argv;
    cmds[n++].lens = lens;
    /* Not after an ASK: the slot is moving key by key, and ASKING would
     * let the second command run where its key may not be yet (an HMGET
     * answering nils for values that are still on the other node). The
     * caller then sends it on its own. */
    if (call->then && !asking) {
        then_at = n;
        cmds[n++] = *call->then;
    }
    if (c->opts.replicas > 0 && key && keylen + 8 < sizeof(ack_key)) {
        /* A write of our own that always replicates, then WAIT: the
         * stream is ordered, so everything the call wrote or read before
         * it is on K replicas once this is. */
        left = rb_deadline__left(d, now);
        ack_ms = left > 0 && left < RB_ACK_MAX_MS ? left : RB_ACK_MAX_MS;
        if (ack_ms < 10)
            ack_ms = 10;
        memcpy(ack_key, key, keylen);
        memcpy(ack_key + keylen, RB_ACK_SUFFIX, sizeof(RB_ACK_SUFFIX));
        ack_argv[0] = "SET";
        ack_argv[1] = ack_key;
        ack_argv[2] = "1";
        ack_argv[3] = "PX";
        ack_argv[4] = RB_ACK_TTL_MS;
        for (i = 0; i < 5; i++)
            ack_len[i] = strlen(ack_argv[i]);
        snprintf(k_text, sizeof(k_text), "%d", c->opts.replicas);
        snprintf(ms_text, sizeof(ms_text), "%lld", ack_ms);
        wait_argv[0] = "WAIT";
        wait_argv[1] = k_text;
        wait_argv[2] = ms_text;
        for (i = 0; i < 3; i++)
            wait_len[i] = strlen(wait_argv[i]);
        cmds[n].argc = 5;
        cmds[n].argv = ack_argv;
        cmds[n++].lens = ack_len;
        wait_at = n;
        cmds[n].argc = 3;
        cmds[n].argv = wait_argv;
        cmds[n++].lens = wait_len;
    }
    reply_by = rb_deadline__reply_by(d, now, call->block_ms + ack_ms,
                                     c->opts.command_timeout_ms);
    io = rb_node__exchange(c->nodes[idx], cmds, n, reply_by,
                           call->cancellable ? c->opts.cancel_fd : -1, r,
                           err);
    if (io != RB_NODE_OK)
        return io;
    if (call->fault != RB_FAULT_NONE && rb_fault__fire(call->fault)) {
        /* The script ran; pretend its reply was lost on the wire. */
        for (i = 0; i < n; i++)
            freeReplyObject(r[i]);
        rb_node__drop(c->nodes[idx]);
        rb_error__set(err, RB_EUNREACHABLE, "injected fault: reply lost");
        return RB_NODE_FAILED;
    }
    if (r[main_at]->type == REDIS_REPLY_ERROR) {
        *a = RB_ANSWER_ERROR;
        *kind = rb_reply__classify(r[main_at]->str);
        rb_error__set(err, RB_EREDIS, "%.*s",
                      (int)rb_reply__error_text(r[main_at]->str,
                                                r[main_at]->len > 4096
                                                    ? 4096
                                                    : r[main_at]->len),
                      r[main_at]->str);
    } else if (wait_at >= 0 && (r[wait_at]->type != REDIS_REPLY_INTEGER ||
                                r[wait_at]->integer < c->opts.replicas)) {
        *a = RB_ANSWER_ACKS;
        rb_error__set(err, d->kind == RB_DEADLINE_UNTIL ? RB_EREDIS
                                                        : RB_EUNREACHABLE,
                      "only %lld of %d replicas "
                      "acknowledged the write at %s",
                      r[wait_at]->type == REDIS_REPLY_INTEGER
                          ? r[wait_at]->integer : 0LL,
                      c->opts.replicas, rb_node__name(c->nodes[idx]));
    } else {
        *a = RB_ANSWER_DONE;
        *out = r[main_at];
        r[main_at] = NULL;
        if (then_at >= 0 && r[then_at]->type != REDIS_REPLY_ERROR) {
            call->then_reply = r[then_at];
            r[then_at] = NULL;
        }
    }
    for (i = 0; i < n; i++)
        if (r[i])
            freeReplyObject(r[i]);
    return RB_NODE_OK;
}
