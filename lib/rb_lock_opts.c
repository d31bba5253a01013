/*
 * A lock request's options, checked before anything is sent (kept apart
 * from rb_lock_acquire.c and rb_lock.c, which make and hold a request).
 */
#include "fmacros.h"

#include "rb_lock.h"

int rb_lock__check_opts(const rb_lock_opts *o, rb_error *err)
{
    int rc;

    if (o == NULL)
        return rb_error__set(err, RB_EINVAL, "no lock options (declare "
                             "them with RB_LOCK_OPTS_INIT)");
    if (o->version < 1 || o->version > RB_LOCK_OPTS_VERSION)
        return rb_error__set(err, RB_EINVAL, "rb_lock_opts version %u is "
                             "not one this library knows (1..%d)",
                             o->version, RB_LOCK_OPTS_VERSION);
    if ((rc = rb_check_name(o->name, "lock name", err)) != RB_OK)
        return rc;
    if ((rc = rb_check_id(o->id, "holder id", err)) != RB_OK)
        return rc;
    if (o->prefix && (rc = rb_check_name(o->prefix, "prefix", err)) != RB_OK)
        return rc;
    if (o->max < 0 || o->max > RB_LOCK_MAX)
        return rb_error__set(err, RB_EINVAL, "max must be 1..%d, not %ld",
                             RB_LOCK_MAX, o->max);
    if (o->timeout_ms < 0 || o->lease_ms < 0 || o->ttl_ms < 0)
        return rb_error__set(err, RB_EINVAL, "timeout, lease and ttl must "
                             "not be negative");
    if (o->lease_ms > 0 && o->lease_ms < 30)
        return rb_error__set(err, RB_EINVAL, "lease must be at least 30 ms");
    if (o->version >= 2 && o->shared && o->max > 1)
        return rb_error__set(err, RB_EINVAL, "a shared request takes no max "
                             "(a read-write lock has one exclusive slot), "
                             "not %ld", o->max);
    return RB_OK;
}
