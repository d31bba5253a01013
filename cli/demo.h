#ifndef RB_CLI_DEMO_H
#define RB_CLI_DEMO_H

/* The demo's parts: starting processes, the private redis-server, and the
 * demo line (the one format worker prints and demo and the tests check). */

#include <stdio.h>
#include <sys/types.h>

#include "rbarrier.h"

/* ---- spawn.c ---- */

typedef struct cli_spawn_opts {
    int stdout_fd;          /* -1: inherit */
    int null_stdio;         /* stdout and stderr to /dev/null */
    int parent_death_signal;/* 0, or the signal the child gets when the
                               process that spawned it dies (even by
                               SIGKILL) */
    int own_group;          /* a process group of its own: a terminal's
                               Ctrl-C does not reach it */
    const char *env_name;   /* one variable to set in the child (a URL
                               with a password goes here, never in argv,
                               where ps shows it to everyone) */
    const char *env_value;
    const char *const *env; /* more "NAME=value" strings to set in the
                               child, NULL-terminated; NULL: none */
    int exec_status;        /* 1: an exec failure is not reported to the
                               caller; the child says why on stderr and
                               exits 127 (not found) or 126, as sh does */
} cli_spawn_opts;

#define CLI_SPAWN_OPTS_INIT { .stdout_fd = -1 }

/* pipe(2) with both ends close-on-exec: a child holds only the end it is
 * given (a worker that held the read end of its own output pipe would
 * block forever once the reader died). */
int cli_pipe_cloexec(int fds[2]);

/* fork and exec argv (PATH searched). Returns the pid, or -1 with errno
 * set, also when exec failed (reported through a close-on-exec pipe). */
pid_t cli_spawn(const char *const *argv, const cli_spawn_opts *opts);

/* Wait up to timeout_ms (< 0: no limit) for child pid to end: 1 with
 * *status (its exit status, or 128+signal), 0 when the time is up or a
 * signal from the cancel set arrived, -1 on error. */
int cli_spawn_wait(pid_t pid, long long timeout_ms, int *status);

/* End a child that leads its own process group: sig to the group, SIGKILL
 * to the group kill_after_ms later if the child has not ended, then reap
 * it; the group's stragglers get SIGKILL too. Returns its status as
 * cli_spawn_wait gives it. */
int cli_spawn_stop(pid_t pid, int sig, long long kill_after_ms);

/* ---- demo_server.c ---- */

typedef struct cli_demo_server {
    pid_t guard;            /* the process that stops the server and
                               removes dir when the demo ends, however */
    int guard_fd;           /* closing it tells the guard to clean up */
    pid_t pid;              /* redis-server */
    char dir[4096];
    char *url;              /* unix://<dir>/redis.sock, malloc'd */
} cli_demo_server;

#define CLI_DEMO_SERVER_INIT { 0, -1, 0, "", NULL }

/* Start a redis-server on a unix socket in a fresh temporary directory
 * ($TMPDIR or /tmp) and wait until it answers. Even after kill -9 of the
 * caller the server stops and the directory goes: a guard process holds
 * the server and cleans up when the caller's end of a pipe closes. */
int cli_demo_server_start(cli_demo_server *s, rb_error *err);
/* Stop the server, remove the directory, wait for both. Idempotent. */
void cli_demo_server_stop(cli_demo_server *s);

/* ---- demo_line.c ---- */

/* One worker line: "worker %2ld, local_param %2ld global_param %2ld". */
int cli_demo_line_format(char *buf, size_t len, long worker, long local,
                         long global);
/* Parse a line exactly as formatted (trailing newline allowed). Returns 0
 * or -1. */
int cli_demo_line_parse(const char *line, long *worker, long *local,
                        long *global);

/* The demo's property over all lines of a run: global values are exactly
 * 1..N*I, each once; a worker's k-th line (from 0) has local value N*k.
 * Lines that do not start with "worker" are ignored. */
typedef struct cli_demo_check {
    long workers, iters;
    long lines;
    long *lines_of;         /* lines seen per worker */
    unsigned char *seen;    /* global values seen, 1..workers*iters */
    char problem[256];      /* the first thing wrong; "" while all is well */
} cli_demo_check;

int cli_demo_check_init(cli_demo_check *k, long workers, long iters);
void cli_demo_check_line(cli_demo_check *k, const char *line);
/* NULL when the run is complete and right, else the first problem. */
const char *cli_demo_check_result(cli_demo_check *k);
void cli_demo_check_free(cli_demo_check *k);

#endif
