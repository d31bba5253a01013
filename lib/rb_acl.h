#ifndef RB_ACL_H
#define RB_ACL_H

/* Least privilege (private to lib/). */

#include <stddef.h>

#include "rb_internal.h"

/* Every command rbarrier sends or its scripts call, as ACL rules; the
 * README's ACL line is this list (tests/unit/test_acl.c checks both, and
 * that every redis.call in lua/ is here). +select is needed only for a
 * URL with a database other than 0. */
#define RB_ACL_COMMANDS                                                      \
    "+evalsha +eval +get +blmove +brpoplpush +client|setname +ping "        \
    "+expire +hdel +hget +hmget +hset +incrby +incrbyfloat +lindex "        \
    "+lrange +rpush +set +time +type +del +zadd +zcard +zrange "            \
    "+zrangebyscore +zscore +zrem +xadd +xrevrange +hincrby +hgetall +ttl " \
    "+exists +sadd +sismember +srandmember +zmscore +rename"

/* When kind (rb_reply__classify of reply) is an ACL refusal, fill err
 * with one line naming what to grant: the command (+cmd), or the key
 * pattern (~<prefix>:*) read from the call's keys. argv/lens: the call.
 * @return RB_EREDIS when it explained the reply, else RB_OK (err as was) */
int rb_acl__explain(rb_error *err, rb_reply_err kind, const char *reply,
                    int argc, const char **argv, const size_t *lens);

#endif
