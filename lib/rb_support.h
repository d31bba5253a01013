#ifndef RB_SUPPORT_H
#define RB_SUPPORT_H

/* Helpers the library exports to the programs built in this tree (the CLI,
 * its fault-injection build, the tests and the bench), but not to users:
 * never installed, not in the shared library's symbol list, free to
 * change. The product's API is include/rbarrier.h alone. */

#include <stddef.h>

#include "include/rbarrier.h"

/* Monotonic clock in milliseconds; the library's deadlines are on it
 * (rb_deadline.c, the bottom layer). */
long long rb_now_ms(void);

/* Fill buf with 2*bytes random hex digits and a NUL (bytes <= 32); the
 * library's nonces, and fresh names for callers that need one
 * (rb_random.c). */
void rb_random_hex(char *buf, size_t bytes);

/* ---- fault injection (test builds only) --------------------------------- */

/* Points where a test build can cut the connection to prove the retry
 * paths. Compiled to no-ops unless built with -DRB_FAULT_INJECTION. */
typedef enum rb_fault_point {
    RB_FAULT_NONE = 0,
    RB_FAULT_ARRIVE_REPLY, /* drop the connection after arrive ran, before
                              its reply is read */
    RB_FAULT_TRAIN_REPLY   /* the same for train */
} rb_fault_point;

/* Arm `point` to fire `times` times. Returns RB_EINVAL in builds without
 * fault injection. */
int rb_fault_arm(rb_fault_point point, int times, rb_error *err);

#endif
