#ifndef RB_KEEPER_H
#define RB_KEEPER_H

/* The keeper's markers (lua/includes/keeper.lua; private to lib/). */

#include <stddef.h>

#include "rb_internal.h"

/* One request's side of the keeper: its key, and what the client saw of
 * the markers, which the scripts take as their 'marked' argument. */
typedef struct rb_keeper {
    char key[RB_KEY_MAX];   /* <prefix>:k:{T}, the keeper of base's slot */
    char marked[32];        /* "<klass> <found>" right after a 'keeper'
                               answer (klass 0: none loaded; found -2:
                               no look), else "" */
    int marks;              /* 'keeper' answers in a row */
} rb_keeper;

/* The keeper of base's slot, nothing seen yet. @return an rb_code */
int rb_keeper__init(rb_keeper *k, const char *prefix, const char *base,
                    rb_error *err);

/* Every answer to a request's first call goes here. klass 0: an answer
 * other than 'keeper'; what was seen of the markers is forgotten (it is
 * true only for the call right after the look). klass 10..40: the script
 * answered 'keeper'. With missing (the keeper hash is gone): look at the
 * markers already there (the highest says how long a holder of a lost
 * state may still run) and load none, so that the script makes the hash
 * from the look. Without: the hash stands; load the marker of that lease
 * class before the hash may record it. The caller then makes its first
 * call again. who names the request in errors; proto: the call's deadline
 * and cancellation.
 * @return an rb_code; RB_EPROTO after a few 'keeper' answers in a row (a
 *         server that does not keep the keeper) */
int rb_keeper__answer(rb_keeper *k, rb_conn *c, int klass, int missing,
                      const rb_call *proto, const char *who, rb_error *err);

#endif
