#ifndef RB_CLI_CLOCK_H
#define RB_CLI_CLOCK_H

/* The CLI's own clock and randomness, so cli/ needs no private lib header. */

#include <stddef.h>

/* Milliseconds on CLOCK_MONOTONIC: the clock of the library's deadlines
 * (rb_conn_connect's until_ms). */
long long cli_now_ms(void);

/* 2*bytes lowercase hex digits and a NUL into buf (bytes <= 32). Names
 * that must not collide between runs, not secrets. */
void cli_random_hex(char *buf, size_t bytes);

#endif
