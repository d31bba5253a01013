#ifndef RB_BENCH_H
#define RB_BENCH_H

/*
 * rb_bench: the measuring half of `make bench` (bench/run.sh drives it).
 *
 * One measurement per file (rtt.c, rounds.c, ...), each a `bench_cmd` in
 * main.c's table. A measurement prints its results on stdout as
 * `key value` lines; lines starting with '#' are details for the raw log.
 * Parties always go through the public library (rb_conn_new,
 * rb_barrier_wait); hiredis is used directly (redis.c) only for the
 * floors and for reading INFO. Times are CLOCK_MONOTONIC, shared by every
 * process and thread here.
 *
 * Adding a measurement: write bench/NAME.c with
 *     int bench_NAME(bench_ctx *ctx, int argc, char **argv)
 * that declares its options (all but --url) in a bench_opt table and calls
 * bench_parse first, declare it below, and add {name, fn, usage} to
 * main.c's table.
 */

#include <pthread.h>
#include <stddef.h>

#include <hiredis/hiredis.h>

#include "rbarrier.h"
#include "rb_support.h"

#if defined(__GNUC__)
#define BENCH_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define BENCH_NORETURN __attribute__((noreturn))
#else
#define BENCH_PRINTF(f, a)
#define BENCH_NORETURN
#endif

/* ---- the measurements (main.c's table) --------------------------------- */

typedef struct bench_cmd bench_cmd;

/* One run of a measurement. */
typedef struct bench_ctx {
    const bench_cmd *cmd;
    const char *url_text; /* --url, which every measurement takes ... */
    rb_url url;           /* ... parsed (by bench_parse) */
} bench_ctx;

struct bench_cmd {
    const char *name;
    /* argv[0] is the measurement's name; returns the exit status. */
    int (*fn)(bench_ctx *ctx, int argc, char **argv);
    const char *usage;    /* its options, for the usage line */
};

int bench_rtt(bench_ctx *ctx, int argc, char **argv);
int bench_evalsha(bench_ctx *ctx, int argc, char **argv);
int bench_rounds(bench_ctx *ctx, int argc, char **argv);
int bench_cli(bench_ctx *ctx, int argc, char **argv);
int bench_fanout(bench_ctx *ctx, int argc, char **argv);
int bench_idle(bench_ctx *ctx, int argc, char **argv);
int bench_memory(bench_ctx *ctx, int argc, char **argv);
int bench_tls(bench_ctx *ctx, int argc, char **argv);

/* ---- options (opts.c) -------------------------------------------------- */

/* One `--name value` option: a string (str) or a count >= 0 (num). The
 * pointed-to variable holds the default and receives the value. */
typedef struct bench_opt {
    const char *name;
    const char **str;
    long *num;
    int required;
} bench_opt;

#define BENCH_STR(n, p) { .name = (n), .str = (p) }
#define BENCH_NUM(n, p) { .name = (n), .num = (p) }
#define BENCH_REQUIRED_STR(n, p) { .name = (n), .str = (p), .required = 1 }
#define BENCH_OPTS_END { .name = NULL }

/* Parse argv[1..] strictly: --url U (required, into ctx) or an option of
 * opts, each with a value. On anything else prints one line and exits 2. */
void bench_parse(bench_ctx *ctx, int argc, char **argv,
                 const bench_opt *opts);
/* Bad option values found after parsing: one line, exit 2. */
BENCH_NORETURN void bench_usage_error(const bench_ctx *ctx,
                                      const char *fmt, ...) BENCH_PRINTF(2, 3);

/* ---- small helpers (util.c) ------------------------------------------- */

/* "rb_bench: <message>" on stderr, exit 1: the measurement failed. */
BENCH_NORETURN void die(const char *fmt, ...) BENCH_PRINTF(1, 2);
long long now_ns(void);
void sleep_ms(long ms);
int cmp_ll(const void *a, const void *b);
/* Nearest-rank percentile of sorted samples. */
long long pct(const long long *v, size_t n, double p);
/* CPU seconds of this process (who = RUSAGE_SELF) or of its waited-for
 * children (RUSAGE_CHILDREN). */
double rusage_cpu_s(int who);
/* Wall time of one run of args (spawn.c): stdin, stdout and stderr on
 * /dev/null, environment env (NULL: this process's); dies unless it
 * exits 0. */
long long spawn_ns(char *const *args, char **env);

/* ---- a direct hiredis client for floors and INFO (redis.c) ------------- */

redisContext *admin_connect(const rb_url *u);
/* A command that must succeed (else die); the caller frees the reply. */
redisReply *cmd(redisContext *c, const char *fmt, ...);
/* A numeric `field:value` line of INFO <section>. */
double info_num(redisContext *c, const char *section, const char *field);
/* CPU seconds the server has used (user + system, all its threads). */
double server_cpu_s(redisContext *c);

/* INFO commandstats snapshots. */
#define MAX_CMDS 256

typedef struct cmdstats {
    size_t n;
    char name[MAX_CMDS][64];
    long long calls[MAX_CMDS];
    long long usec[MAX_CMDS];
} cmdstats;

typedef struct cmd_delta {
    long long client;     /* commands sent by clients */
    long long client_usec;/* Redis time spent on them, scripts included */
    long long inside;     /* commands run by scripts */
    long long evalsha;    /* EVALSHA + EVAL calls */
    long long evalsha_usec;
    long long blocking;   /* BLMOVE + BRPOPLPUSH calls */
} cmd_delta;

void cmdstats_take(redisContext *c, cmdstats *s);
/* Delta between two snapshots, leaving out INFO (the bench's own reads:
 * nothing else of ours runs between the two). Prints the breakdown as
 * '#' lines, divided by `per`. Call after `after` was taken: the
 * COMMAND INFO lookups here must not fall inside the window. */
cmd_delta cmdstats_delta(redisContext *c, const cmdstats *before,
                         const cmdstats *after, const char *label,
                         double per);

/* ---- parties (parties.c) ----------------------------------------------- */

/* A connected library handle for one party. */
rb_conn *party_conn(const rb_url *u);

/* A party on a thread of its own. */
typedef struct tparty {
    pthread_t th;
    rb_conn *c;
    rb_wait_opts o;
    char id[48];
    char name[64];
    long reps;
    long long *release;   /* [reps]: return time of each wait */
    int *released;        /* shared counter per rep, or NULL */
    int rc;
    char why[600];
} tparty;

/* `count` parties, connected one at a time, 1 rep, timeout 120 s; the
 * caller sets their id, name and n before parties_start. */
tparty *parties_new(const rb_url *u, long count);
void parties_start(tparty *tp, long count);
/* Join them all; die if any wait failed. */
void parties_join_free(tparty *tp, long count);
/* Wait until Redis shows `count` clients blocked (every waiter is in its
 * BLMOVE, not on its way there). */
void await_blocked(redisContext *adm, long count);
/* One completing arrival by the bench itself; returns its reply time, and
 * the time it was sent in *sent (may be NULL). */
long long complete_round(rb_conn *c, const char *name, long n,
                         const char *id, long long *sent);

#endif
