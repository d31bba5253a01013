#ifndef RB_CLI_DEMO_H
#define RB_CLI_DEMO_H

/* The demo's parts: the private redis-server, and the
 * demo line (the one format worker prints and demo and the tests check). */

#include <stdio.h>
#include <sys/types.h>

#include "rbarrier.h"
#include "spawn.h"

/* ---- demo_server.c ---- */

typedef struct cli_demo_server {
    cli_proc guard;         /* the process that stops the server and
                               removes dir when the demo ends, however */
    int guard_fd;           /* closing it tells the guard to clean up */
    pid_t pid;              /* redis-server */
    char dir[4096];
    char *url;              /* unix://<dir>/redis.sock, malloc'd */
} cli_demo_server;

#define CLI_DEMO_SERVER_INIT { CLI_PROC_INIT, -1, 0, "", NULL }

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
