/*
 * Fault injection for tests: a test build can make a chosen call lose its
 * reply after the server ran it, which is the one failure a retry must
 * handle without counting twice. Release builds compile this to no-ops.
 */
#include "fmacros.h"

#include "rb_internal.h"

#ifdef RB_FAULT_INJECTION
static rb_fault_point armed_point = RB_FAULT_NONE;
static int armed_times;

int rb_fault_arm(rb_fault_point point, int times, rb_error *err)
{
    (void)err;
    armed_point = point;
    armed_times = times;
    return RB_OK;
}

int rb_fault__fire(rb_fault_point point)
{
    if (point != armed_point || armed_times <= 0)
        return 0;
    armed_times--;
    return 1;
}
#else
int rb_fault_arm(rb_fault_point point, int times, rb_error *err)
{
    (void)point;
    (void)times;
    return rb_error__set(err, RB_EINVAL,
                         "fault injection is not compiled into this build");
}

int rb_fault__fire(rb_fault_point point)
{
    (void)point;
    return 0;
}
#endif
