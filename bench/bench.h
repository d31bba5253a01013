#ifndef RB_BENCH_H
#define RB_BENCH_H

/*
 * rb_bench: the measuring half of `make bench` (bench/run.sh drives it).
 *
 * One measurement per file (rtt.c, rounds.c, ...), each a `bench_cmd` in
 * main.c's table. A measurement prints its results on stdout as
 * `key value` lines; lines starting with '#' are details for the raw log.
 * Library parties go through lib.c, the only file that calls the library;
 * hiredis is used directly (redis.c) for the floors and for reading INFO.
 * Times are CLOCK_MONOTONIC, shared by every process and thread here.
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

#if defined(__GNUC__)
#define BENCH_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define BENCH_NORETURN __attribute__((noreturn))
#else
#define BENCH_PRINTF(f, a)
#define BENCH_NORETURN
#endif

/* ---- the library (lib.c: every call into lib/ is there) ----------------- */

/* One server, as the bench's own hiredis connections need it. */
typedef struct bench_addr {
    int unix_socket;      /* else TCP */
    int tls;              /* rediss:// */
    char host[256];
    int port;
    char path[108];
    int db;
    char user[256];
    char password[1024];
    int has_password;
} bench_addr;

/* Parse a redis://, rediss:// or unix:// URL of one server as the library
 * does; -1 with the reason in why. */
int bench_addr_parse(bench_addr *a, const char *url, char *why,
                     size_t whylen);

/* A party's library connection, connected (dies when it cannot be).
 * cacert: the CA file for rediss://, or NULL. */
typedef struct bench_conn bench_conn;
bench_conn *party_conn(const char *url, const char *cacert);
void party_conn_free(bench_conn *c);

typedef struct party_args {
    const char *name, *id;
    long n;
    double timeout_s;     /* <= 0: none */
    long ttl_s;           /* 0: the library's default */
} party_args;

typedef struct party_outcome {
    long long gen;
    int completed;        /* this arrival completed the round */
} party_outcome;

/* One rb_barrier_wait; 0 when the round passed, else -1 and why. */
int party_wait(bench_conn *c, const party_args *a, party_outcome *out,
               char *why, size_t whylen);

/* The lock, one helper per call (lock.c): a held lock of the default
 * lease; 0, else -1 and why. */
typedef struct held_lock held_lock;
int lock_acquire(held_lock **out, bench_conn *c, const char *name,
                 const char *id, long long timeout_ms, char *why,
                 size_t whylen);
/* The same, shared (a read lock) when `shared`. */
int lock_acquire_mode(held_lock **out, bench_conn *c, const char *name,
                      const char *id, int shared, long long timeout_ms,
                      char *why, size_t whylen);
int lock_renew(held_lock *l, char *why, size_t whylen);
/* rb_lock_renew_in_ms: nonzero when the renewal is due. */
int lock_renew_due(const held_lock *l);
int lock_release(held_lock *l, char *why, size_t whylen);
void lock_free(held_lock *l);

/* ---- the measurements (main.c's table) --------------------------------- */

typedef struct bench_cmd bench_cmd;

/* One run of a measurement. */
typedef struct bench_ctx {
    const bench_cmd *cmd;
    const char *url_text; /* --url, which every measurement takes ... */
    bench_addr addr;      /* ... parsed (by bench_parse) */
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
int bench_lock(bench_ctx *ctx, int argc, char **argv);

/* ---- the parties of the rounds measurement ----------------------------- */

/* What every party of one rounds run shares. */
typedef struct round_setup {
    const char *url;
    const bench_addr *addr;
    const char *cacert;   /* rediss:// */
    const char *name;     /* the barrier */
    long n;
    long ttl_s;
    char sha[48];         /* the floor's arrival script, loaded */
} round_setup;

/* One way to pass a barrier: open party p (before the clock starts), pass
 * round r (0 when it passed, else -1 and why), close. */
typedef struct round_impl {
    void *(*open)(const round_setup *s, long p);
    int (*wait)(void *party, long r, party_outcome *out, char *why,
                size_t whylen);
    void (*close)(void *party);
} round_impl;

extern const round_impl round_library;   /* rounds.c */
extern const round_impl round_floor;     /* floor.c */
/* SCRIPT LOAD the floor's arrival script from file into sha. */
void floor_load(redisContext *c, const char *file, char *sha, size_t shalen);

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

redisContext *admin_connect(const bench_addr *a);
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

/* A party on a thread of its own. */
typedef struct tparty {
    pthread_t th;
    bench_conn *c;
    party_args a;         /* a.id and a.name point at id and name */
    char id[48];
    char name[64];
    long reps;
    long delay_ms;        /* before the first arrival */
    long long *release;   /* [reps]: return time of each wait */
    int *released;        /* shared counter per rep, or NULL */
    int rc;
    char why[600];
} tparty;

/* `count` parties, connected one at a time, 1 rep, timeout 120 s; the
 * caller sets their id, name and n before parties_start. */
tparty *parties_new(const char *url, long count);
void parties_start(tparty *tp, long count);
/* Join them all; die if any wait failed. */
void parties_join_free(tparty *tp, long count);
/* Wait until Redis shows `count` clients blocked (every waiter is in its
 * BLMOVE, not on its way there). */
void await_blocked(redisContext *adm, long count);
/* One completing arrival by the bench itself; returns its reply time, and
 * the time it was sent in *sent (may be NULL). */
long long complete_round(bench_conn *c, const char *name, long n,
                         const char *id, long long *sent);

#endif
