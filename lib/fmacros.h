#ifndef RB_FMACROS_H
#define RB_FMACROS_H

/* Included first by every .c file: -std=c99 hides POSIX (poll, strdup,
 * clock_gettime, getaddrinfo) unless a feature level is asked for. */
#define _POSIX_C_SOURCE 200809L
#define _DEFAULT_SOURCE

#endif
