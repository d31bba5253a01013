#ifndef RB_KEEPER_H
#define RB_KEEPER_H

/* The keeper's markers (lua/includes/keeper.lua; private to lib/). */

#include <stddef.h>

#include "rb_internal.h"

/* A script answered 'keeper' (class, missing): load the marker of lease
 * class klass into the keeper's server before the keeper may record it;
 * when the keeper is missing, first look for the markers already there
 * (the highest says how long a holder of the lost state may still run).
 * Writes "<klass> <found>" into marked, the script's argument for its
 * next first call. proto: the call's deadline and cancellation.
 * @return an rb_code */
int rb_keeper__mark(rb_conn *c, const char *keeper, int klass, int missing,
                    const rb_call *proto, char *marked, size_t len,
                    rb_error *err);

#endif
