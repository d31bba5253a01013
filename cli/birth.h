#ifndef RB_CLI_BIRTH_H
#define RB_CLI_BIRTH_H

/* Between the process half (spawn.c) and the birth (birth.c) of the
 * process runner; the public side of both is spawn.h. */

#include <sys/types.h>

#include "spawn.h"

/* What a child needs from its birth to its exec, made before the birth:
 * a child born sharing our memory may not allocate, nor write anything
 * of ours, and we are suspended until its exec. */
typedef struct cli_birth {
    const cli_proc_opts *o;
    char **envp;        /* the environment it runs with; NULL: ours */
    pid_t parent;
    int report;         /* its exec's errno goes here (-1: fn children) */
} cli_birth;

/* The environment a command runs with, made before its birth: ours, with
 * each "NAME=value" of add in place of ours of that name (putenv's rule:
 * the last of a name wins; a "NAME" alone removes it). Free it; the
 * strings are ours and add's. NULL with errno. */
char **cli_birth__env(const char *const *add);

/* Give birth to the child b describes: sharing our memory where it only
 * execs (it never comes back here), else a fork. Every signal is blocked
 * across it, so no handler of ours runs in the child before it has put
 * back the dispositions it starts with. Returns as fork does: the
 * child's pid, -1 with errno, or 0 in a forked child, every signal still
 * blocked, which the caller makes its own and hands to cli_birth__child. */
pid_t cli_birth__start(cli_birth *b);

/* The child, from its birth to its exec (or o->fn). Does not return. */
void cli_birth__child(const cli_birth *b) __attribute__((noreturn));

#endif
