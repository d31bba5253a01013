/*
 * rb_bench: the measuring half of `make bench` (bench/run.sh drives it).
 *
 * Each subcommand measures one figure against a redis-server that run.sh
 * started, and prints its results on stdout as `key value` lines; lines
 * starting with '#' are details for the raw log. Parties always go through
 * the public library (rb_conn_new, rb_barrier_wait); hiredis is used
 * directly only for the floors and for reading INFO.
 *
 *   rtt      --url U [--count 10000] [--key rtt_p50_us]
 *   evalsha  --url U [--count 20000]
 *   rounds   --url U --n N [--rounds 2000] [--warmup 50] [--ttl S]
 *            [--name NAME] [--suffix S]
 *   cli      --url U --rbarrier PATH [--redis-cli PATH] [--count 200]
 *   fanout   --url U [--parties 1000] [--reps 5]
 *   idle     --url U [--parties 200] [--seconds 20] [--windows 3]
 *   memory   --url U [--barriers 1000] [--n 5] [--arrived 4] [--reps 3]
 *            [--procs 8]
 *
 * Times are CLOCK_MONOTONIC, shared by every process and thread here.
 */
#include "fmacros.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "rbarrier.h"
#include "rb_support.h"

extern char **environ;

#define THREAD_STACK (256 * 1024)

/* ---- small helpers ------------------------------------------------------ */

static void die(const char *fmt, ...)
{
    va_list ap;

    fputs("rb_bench: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

static long long now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ms(long ms)
{
    struct timespec ts;

    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

static const char *opt_str(int argc, char **argv, const char *name,
                           const char *def)
{
    int i;

    for (i = 2; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return def;
}

static long opt_long(int argc, char **argv, const char *name, long def)
{
    const char *s = opt_str(argc, argv, name, NULL);
    char *end;
    long v;

    if (s == NULL)
        return def;
    v = strtol(s, &end, 10);
    if (*end != '\0' || v < 0)
        die("%s: not a count: '%s'", name, s);
    return v;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;

    return x < y ? -1 : x > y;
}

/* Nearest-rank percentile of sorted samples. */
static long long pct(const long long *v, size_t n, double p)
{
    size_t k;

    if (n == 0)
        return 0;
    k = (size_t)(p / 100.0 * (double)n + 0.999999);
    if (k < 1)
        k = 1;
    if (k > n)
        k = n;
    return v[k - 1];
}

static void url_of(const char *text, rb_url *u)
{
    rb_error err;

    if (rb_url_parse(u, text, &err) != RB_OK)
        die("--url: %s", err.msg);
}

/* ---- direct hiredis connection for floors and INFO ---------------------- */

static redisContext *admin_connect(const rb_url *u)
{
    struct timeval tv = { 5, 0 };
    redisContext *c;
    redisReply *r;

    c = u->kind == RB_URL_UNIX
            ? redisConnectUnixWithTimeout(u->path, tv)
            : redisConnectWithTimeout(u->nodes[0].host, u->nodes[0].port, tv);
    if (c == NULL || c->err)
        die("cannot connect to Redis: %s", c ? c->errstr : "out of memory");
    if (u->has_password) {
        r = u->user[0] ? redisCommand(c, "AUTH %s %s", u->user, u->password)
                       : redisCommand(c, "AUTH %s", u->password);
        if (r == NULL || r->type == REDIS_REPLY_ERROR)
            die("AUTH refused");
        freeReplyObject(r);
    }
    if (u->db) {
        r = redisCommand(c, "SELECT %d", u->db);
        if (r == NULL || r->type == REDIS_REPLY_ERROR)
            die("SELECT refused");
        freeReplyObject(r);
    }
    return c;
}

static redisReply *cmd(redisContext *c, const char *fmt, ...)
{
    va_list ap;
    redisReply *r;

    va_start(ap, fmt);
    r = redisvCommand(c, fmt, ap);
    va_end(ap);
    if (r == NULL)
        die("Redis connection failed: %s", c->errstr);
    if (r->type == REDIS_REPLY_ERROR)
        die("Redis error: %s", r->str);
    return r;
}

/* A numeric `field:value` line of INFO <section>. */
static double info_num(redisContext *c, const char *section,
                       const char *field)
{
    redisReply *r = cmd(c, "INFO %s", section);
    size_t flen = strlen(field);
    const char *p = r->str;
    double v = -1;

    while (p && *p) {
        if (strncmp(p, field, flen) == 0 && p[flen] == ':') {
            v = strtod(p + flen + 1, NULL);
            break;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    freeReplyObject(r);
    if (v < 0)
        die("INFO %s has no %s", section, field);
    return v;
}

/* CPU seconds the server has used (user + system, all its threads). */
static double server_cpu_s(redisContext *c)
{
    return info_num(c, "cpu", "used_cpu_user") +
           info_num(c, "cpu", "used_cpu_sys");
}

/* CPU seconds of this process (who = RUSAGE_SELF) or of its waited-for
 * children (RUSAGE_CHILDREN). */
static double rusage_cpu_s(int who)
{
    struct rusage ru;

    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* ---- INFO commandstats snapshots --------------------------------------- */

#define MAX_CMDS 256

typedef struct cmdstats {
    size_t n;
    char name[MAX_CMDS][64];
    long long calls[MAX_CMDS];
    long long usec[MAX_CMDS];
} cmdstats;

static void cmdstats_take(redisContext *c, cmdstats *s)
{
    redisReply *r = cmd(c, "INFO commandstats");
    const char *p = r->str;

    s->n = 0;
    while (p && *p) {
        const char *colon;

        if (strncmp(p, "cmdstat_", 8) == 0 && (colon = strchr(p, ':')) &&
            s->n < MAX_CMDS) {
            size_t len = (size_t)(colon - p - 8);
            const char *calls = strstr(colon, "calls=");
            const char *usec = strstr(colon, "usec=");

            if (len >= sizeof(s->name[0]))
                len = sizeof(s->name[0]) - 1;
            memcpy(s->name[s->n], p + 8, len);
            s->name[s->n][len] = '\0';
            s->calls[s->n] = calls ? strtoll(calls + 6, NULL, 10) : 0;
            s->usec[s->n] = usec ? strtoll(usec + 5, NULL, 10) : 0;
            s->n++;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    freeReplyObject(r);
}

static long long cmdstats_get(const cmdstats *s, const char *name,
                              long long *usec)
{
    size_t i;

    for (i = 0; i < s->n; i++)
        if (strcmp(s->name[i], name) == 0) {
            if (usec)
                *usec = s->usec[i];
            return s->calls[i];
        }
    if (usec)
        *usec = 0;
    return 0;
}

/* Whether scripts may not call this command (COMMAND INFO flag noscript):
 * such a call was sent by a client. Redis also counts every redis.call()
 * inside a script under that command's name, so the commandstats total is
 * client commands plus the commands the scripts ran. */
static int is_client_only(redisContext *c, const char *name)
{
    redisReply *r = cmd(c, "COMMAND INFO %s", name);
    int found = 0;
    size_t i;

    if (r->type == REDIS_REPLY_ARRAY && r->elements == 1 &&
        r->element[0]->type == REDIS_REPLY_ARRAY &&
        r->element[0]->elements > 2) {
        const redisReply *flags = r->element[0]->element[2];

        for (i = 0; flags->type == REDIS_REPLY_ARRAY && i < flags->elements;
             i++)
            if (flags->element[i]->type == REDIS_REPLY_STATUS &&
                strcmp(flags->element[i]->str, "noscript") == 0)
                found = 1;
    }
    freeReplyObject(r);
    return found;
}

typedef struct cmd_delta {
    long long client;     /* commands sent by clients */
    long long client_usec;/* Redis time spent on them, scripts included */
    long long inside;     /* commands run by scripts */
    long long evalsha;    /* EVALSHA + EVAL calls */
    long long evalsha_usec;
    long long blocking;   /* BLMOVE + BRPOPLPUSH calls */
} cmd_delta;

/* Delta between two snapshots, leaving out INFO (the bench's own reads:
 * nothing else of ours runs between the two). Prints the breakdown as
 * '#' lines, divided by `per`. Call after `after` was taken: the
 * COMMAND INFO lookups here must not fall inside the window. */
static cmd_delta cmdstats_delta(redisContext *c, const cmdstats *before,
                                const cmdstats *after, const char *label,
                                double per)
{
    cmd_delta d;
    size_t i;

    memset(&d, 0, sizeof(d));
    for (i = 0; i < after->n; i++) {
        long long u0, calls;
        const char *name = after->name[i];

        calls = after->calls[i] - cmdstats_get(before, name, &u0);
        if (calls <= 0 || strcmp(name, "info") == 0)
            continue;
        if (is_client_only(c, name)) {
            d.client += calls;
            d.client_usec += after->usec[i] - u0;
            if (strcmp(name, "evalsha") == 0 || strcmp(name, "eval") == 0) {
                d.evalsha += calls;
                d.evalsha_usec += after->usec[i] - u0;
            }
            if (strcmp(name, "blmove") == 0 ||
                strcmp(name, "brpoplpush") == 0)
                d.blocking += calls;
        } else {
            d.inside += calls;
        }
        printf("# %s %s %s %.3f\n", label, name,
               is_client_only(c, name) ? "client" : "in-script",
               (double)calls / per);
    }
    return d;
}

/* ---- floors ------------------------------------------------------------- */

static int cmd_rtt(int argc, char **argv)
{
    rb_url u;
    redisContext *c;
    long count = opt_long(argc, argv, "--count", 10000), i;
    const char *key = opt_str(argc, argv, "--key", "rtt_p50_us");
    long long *v;
    double srv0, srv1, me0, me1;

    url_of(opt_str(argc, argv, "--url", ""), &u);
    c = admin_connect(&u);
    v = calloc((size_t)count, sizeof(*v));
    if (v == NULL || count < 1)
        die("bad --count");
    for (i = 0; i < 200; i++)
        freeReplyObject(cmd(c, "PING"));
    srv0 = server_cpu_s(c);
    me0 = rusage_cpu_s(RUSAGE_SELF);
    for (i = 0; i < count; i++) {
        long long t0 = now_ns();

        freeReplyObject(cmd(c, "PING"));
        v[i] = now_ns() - t0;
    }
    me1 = rusage_cpu_s(RUSAGE_SELF);
    srv1 = server_cpu_s(c);
    qsort(v, (size_t)count, sizeof(*v), cmp_ll);
    printf("%s %.2f\n", key, (double)pct(v, (size_t)count, 50) / 1e3);
    if (strcmp(key, "rtt_p50_us") == 0)
        printf("ping_cpu_us %.2f\n",
               ((me1 - me0) + (srv1 - srv0)) * 1e6 / (double)count);
    printf("# %s p99 %.2f us, min %.2f us\n", key,
           (double)pct(v, (size_t)count, 99) / 1e3, (double)v[0] / 1e3);
    free(v);
    redisFree(c);
    return 0;
}

static int cmd_evalsha(int argc, char **argv)
{
    rb_url u;
    redisContext *c;
    redisReply *r;
    long count = opt_long(argc, argv, "--count", 20000), i;
    char sha[64];
    long long t0, t1;

    url_of(opt_str(argc, argv, "--url", ""), &u);
    c = admin_connect(&u);
    r = cmd(c, "SCRIPT LOAD %s", "return redis.call('INCR', KEYS[1])");
    snprintf(sha, sizeof(sha), "%s", r->str);
    freeReplyObject(r);
    for (i = 0; i < 500; i++)
        freeReplyObject(cmd(c, "EVALSHA %s 1 rb-bench:evalsha", sha));
    t0 = now_ns();
    for (i = 0; i < count; i++)
        freeReplyObject(cmd(c, "EVALSHA %s 1 rb-bench:evalsha", sha));
    t1 = now_ns();
    freeReplyObject(cmd(c, "DEL rb-bench:evalsha"));
    printf("evalsha_per_s %.0f\n", (double)count * 1e9 / (double)(t1 - t0));
    redisFree(c);
    return 0;
}

/* ---- a party: one rb_conn, one thread or process ------------------------ */

static rb_conn *party_conn(const rb_url *u)
{
    rb_conn *c;
    rb_error err;

    if (rb_conn_new(&c, u, NULL, &err) != RB_OK)
        die("rb_conn_new: %s", err.msg);
    if (rb_conn_connect(c, rb_now_ms() + 10000, &err) != RB_OK)
        die("rb_conn_connect: %s", err.msg);
    return c;
}

/* ---- (1) rounds: N processes, R rounds ---------------------------------- */

typedef struct round_shm {
    int ready;
    int go;
    int failed;
    char why[600];
} round_shm;

static int cmd_rounds(int argc, char **argv)
{
    long n = opt_long(argc, argv, "--n", 4);
    long rounds = opt_long(argc, argv, "--rounds", 2000);
    long warmup = opt_long(argc, argv, "--warmup", 50);
    long ttl = opt_long(argc, argv, "--ttl", 0);
    const char *suffix = opt_str(argc, argv, "--suffix", "");
    char defname[64], label[64];
    const char *name;
    rb_url u;
    size_t hdr, sz;
    round_shm *shm;
    long long *t, *t_send, *gen;
    int *completer;
    long p, r;
    redisContext *adm;
    cmdstats *before, *after;
    cmd_delta d;
    long long *rel, *rels;
    double srv0, srv1, kids0, kids1;
    size_t nrel = 0;
    int failed = 0;

    snprintf(defname, sizeof(defname), "bench-rounds-%ld-%ld", n,
             (long)getpid());
    name = opt_str(argc, argv, "--name", defname);
    url_of(opt_str(argc, argv, "--url", ""), &u);
    if (n < 2 || rounds < 2 || warmup >= rounds - 1)
        die("rounds: need --n >= 2 and --rounds > --warmup + 1");

    hdr = (sizeof(round_shm) + 63) & ~(size_t)63;
    sz = hdr + (size_t)rounds * (size_t)n * sizeof(long long) * 3 +
         (size_t)rounds * sizeof(int);
    shm = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
               -1, 0);
    if (shm == MAP_FAILED)
        die("mmap: %s", strerror(errno));
    memset(shm, 0, sz);
    t = (long long *)((char *)shm + hdr);
    t_send = t + rounds * n;
    gen = t_send + rounds * n;
    completer = (int *)(gen + rounds * n);
    for (r = 0; r < rounds; r++)
        completer[r] = -1;

    fflush(stdout);
    for (p = 0; p < n; p++) {
        pid_t pid = fork();

        if (pid < 0)
            die("fork: %s", strerror(errno));
        if (pid == 0) {
            rb_conn *c = party_conn(&u);
            rb_wait_opts o = RB_WAIT_OPTS_INIT;
            rb_wait_result res;
            rb_error err;
            char id[32];

            snprintf(id, sizeof(id), "p%ld", p);
            o.name = name;
            o.n = n;
            o.id = id;
            o.ttl_s = ttl;
            o.timeout_s = 60;
            __atomic_add_fetch(&shm->ready, 1, __ATOMIC_SEQ_CST);
            while (!__atomic_load_n(&shm->go, __ATOMIC_SEQ_CST))
                sleep_ms(1);
            for (r = 0; r < rounds; r++) {
                int rc;

                t_send[r * n + p] = now_ns();
                rc = rb_barrier_wait(c, &o, &res, &err);

                t[r * n + p] = now_ns();
                if (rc != RB_OK) {
                    if (__atomic_add_fetch(&shm->failed, 1,
                                           __ATOMIC_SEQ_CST) == 1)
                        snprintf(shm->why, sizeof(shm->why),
                                 "party %ld round %ld: %.500s", p, r, err.msg);
                    break;
                }
                gen[r * n + p] = res.gen;
                if (res.completed)
                    completer[r] = (int)p;
            }
            rb_conn_free(c);
            _exit(0);
        }
    }

    adm = admin_connect(&u);
    before = malloc(sizeof(*before));
    after = malloc(sizeof(*after));
    if (before == NULL || after == NULL)
        die("out of memory");
    while (__atomic_load_n(&shm->ready, __ATOMIC_SEQ_CST) < n)
        sleep_ms(1);
    cmdstats_take(adm, before);
    srv0 = server_cpu_s(adm);
    kids0 = rusage_cpu_s(RUSAGE_CHILDREN);
    __atomic_store_n(&shm->go, 1, __ATOMIC_SEQ_CST);
    for (p = 0; p < n; p++) {
        int status;

        if (wait(&status) < 0 || !WIFEXITED(status) ||
            WEXITSTATUS(status) != 0)
            failed = 1;
    }
    kids1 = rusage_cpu_s(RUSAGE_CHILDREN);
    srv1 = server_cpu_s(adm);
    cmdstats_take(adm, after);
    if (failed || shm->failed)
        die("rounds n=%ld: %s", n, shm->failed ? shm->why : "a party died");

    /* Every round: one completer, every party in the same generation. */
    for (r = 0; r < rounds; r++) {
        if (completer[r] < 0)
            die("round %ld had no completing party", r);
        for (p = 1; p < n; p++)
            if (gen[r * n + p] != gen[r * n])
                die("round %ld: parties saw different generations", r);
    }
    /* A waiter's release: its return time minus the time the completing
     * party got its arrive reply (rel), or minus the time the completing
     * party sent its arrival (rels: never negative; includes the arrive
     * round trip). */
    rel = calloc((size_t)((rounds - warmup) * (n - 1)), sizeof(*rel));
    rels = calloc((size_t)((rounds - warmup) * (n - 1)), sizeof(*rels));
    if (rel == NULL || rels == NULL)
        die("out of memory");
    for (r = warmup; r < rounds; r++) {
        long long tc = t[r * n + completer[r]];
        long long ts = t_send[r * n + completer[r]];

        for (p = 0; p < n; p++)
            if (p != completer[r]) {
                rels[nrel] = t[r * n + p] - ts;
                rel[nrel++] = t[r * n + p] - tc;
            }
    }
    qsort(rel, nrel, sizeof(*rel), cmp_ll);
    qsort(rels, nrel, sizeof(*rels), cmp_ll);

    snprintf(label, sizeof(label), "n=%ld%s per round:", n, suffix);
    d = cmdstats_delta(adm, before, after, label, (double)rounds);
    {
        long long span = t[(rounds - 1) * n + completer[rounds - 1]] -
                         t[warmup * n + completer[warmup]];
        double rate = (double)(rounds - 1 - warmup) * 1e9 / (double)span;

        printf("rounds_per_s%s.%ld %.0f\n", suffix, n, rate);
        printf("release_p50_us%s.%ld %.2f\n", suffix, n,
               (double)pct(rel, nrel, 50) / 1e3);
        printf("release_p99_us%s.%ld %.2f\n", suffix, n,
               (double)pct(rel, nrel, 99) / 1e3);
        printf("release_send_p50_us%s.%ld %.2f\n", suffix, n,
               (double)pct(rels, nrel, 50) / 1e3);
        printf("release_send_p99_us%s.%ld %.2f\n", suffix, n,
               (double)pct(rels, nrel, 99) / 1e3);
        printf("redis_busy_us_per_round%s.%ld %.2f\n", suffix, n,
               (double)d.client_usec / (double)rounds);
        printf("cmds_per_round%s.%ld %.2f\n", suffix, n,
               (double)d.client / (double)rounds);
        printf("cpu_us_per_round%s.%ld %.2f\n", suffix, n,
               ((kids1 - kids0) + (srv1 - srv0)) * 1e6 / (double)rounds);
        printf("# n=%ld%s: CPU per round: parties %.2f us, redis-server "
               "%.2f us\n", n, suffix, (kids1 - kids0) * 1e6 / (double)rounds,
               (srv1 - srv0) * 1e6 / (double)rounds);
        printf("calls_per_round%s.%ld %.2f\n", suffix, n,
               (double)(d.client + d.inside) / (double)rounds);
        printf("evalsha_usec%s.%ld %.2f\n", suffix, n,
               d.evalsha ? (double)d.evalsha_usec / (double)d.evalsha : 0.0);
        printf("# n=%ld%s: release min %.2f us max %.2f us over %zu "
               "releases; round time %.2f us\n", n, suffix,
               (double)rel[0] / 1e3, (double)rel[nrel - 1] / 1e3, nrel,
               1e6 / rate);
    }
    free(rel);
    free(rels);
    free(before);
    free(after);
    redisFree(adm);
    munmap(shm, sz);
    return 0;
}

/* ---- (2) CLI process cost ----------------------------------------------- */

/* Wall time of one process, stdout and stderr to /dev/null; exit 0. */
static long long spawn_ns(char *const *args)
{
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int status, rc;
    long long t0, t1;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    t0 = now_ns();
    rc = posix_spawnp(&pid, args[0], &fa, NULL, args, environ);
    if (rc != 0)
        die("cannot run %s: %s", args[0], strerror(rc));
    if (waitpid(pid, &status, 0) < 0)
        die("waitpid: %s", strerror(errno));
    t1 = now_ns();
    posix_spawn_file_actions_destroy(&fa);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("%s %s exited with status %d", args[0], args[1], status);
    return t1 - t0;
}

static int cmd_cli(int argc, char **argv)
{
    const char *url = opt_str(argc, argv, "--url", "");
    const char *rbarrier = opt_str(argc, argv, "--rbarrier", NULL);
    const char *rcli = opt_str(argc, argv, "--redis-cli", "redis-cli");
    long count = opt_long(argc, argv, "--count", 200), i;
    rb_url u;
    char port[16], *ping[8], *wait_[8], *train[8];
    long long *vp, *vw, *vt;

    if (rbarrier == NULL)
        die("cli: --rbarrier PATH is needed");
    url_of(url, &u);
    if (u.kind != RB_URL_TCP || u.nodes_count != 1 || u.tls ||
        u.has_password || u.db)
        die("cli: give a plain redis://host:port URL");
    if (setenv("RBARRIER_URL", url, 1) != 0)
        die("setenv: %s", strerror(errno));
    snprintf(port, sizeof(port), "%d", u.nodes[0].port);
    ping[0] = (char *)rcli; ping[1] = (char *)"-h"; ping[2] = u.nodes[0].host;
    ping[3] = (char *)"-p"; ping[4] = port; ping[5] = (char *)"PING"; ping[6] = NULL;
    wait_[0] = (char *)rbarrier; wait_[1] = (char *)"wait"; wait_[2] = (char *)"--name";
    wait_[3] = (char *)"bench-cli"; wait_[4] = (char *)"--n"; wait_[5] = (char *)"1";
    wait_[6] = NULL;
    train[0] = (char *)rbarrier; train[1] = (char *)"train"; train[2] = (char *)"--param";
    train[3] = (char *)"bench-cli"; train[4] = (char *)"--worker"; train[5] = (char *)"w0";
    train[6] = NULL;
    vp = calloc((size_t)count, sizeof(*vp));
    vw = calloc((size_t)count, sizeof(*vw));
    vt = calloc((size_t)count, sizeof(*vt));
    if (vp == NULL || vw == NULL || vt == NULL || count < 1)
        die("bad --count");
    for (i = 0; i < 5; i++) {      /* warm the page cache */
        spawn_ns(ping);
        spawn_ns(wait_);
        spawn_ns(train);
    }
    for (i = 0; i < count; i++) {  /* interleaved: drift hits all three */
        vp[i] = spawn_ns(ping);
        vw[i] = spawn_ns(wait_);
        vt[i] = spawn_ns(train);
    }
    qsort(vp, (size_t)count, sizeof(*vp), cmp_ll);
    qsort(vw, (size_t)count, sizeof(*vw), cmp_ll);
    qsort(vt, (size_t)count, sizeof(*vt), cmp_ll);
    printf("redis_cli_ping_ms %.3f\n", (double)pct(vp, (size_t)count, 50) / 1e6);
    printf("cli_wait_ms %.3f\n", (double)pct(vw, (size_t)count, 50) / 1e6);
    printf("cli_train_ms %.3f\n", (double)pct(vt, (size_t)count, 50) / 1e6);
    printf("# cli p90 ms: redis-cli PING %.3f, wait %.3f, train %.3f\n",
           (double)pct(vp, (size_t)count, 90) / 1e6,
           (double)pct(vw, (size_t)count, 90) / 1e6,
           (double)pct(vt, (size_t)count, 90) / 1e6);
    free(vp);
    free(vw);
    free(vt);
    return 0;
}

/* ---- threaded parties (fan-out, idle, memory) ---------------------------- */

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

static void *party_main(void *arg)
{
    tparty *tp = arg;
    rb_wait_result res;
    rb_error err;
    long i;

    for (i = 0; i < tp->reps; i++) {
        tp->rc = rb_barrier_wait(tp->c, &tp->o, &res, &err);
        if (tp->release)
            tp->release[i] = now_ns();
        if (tp->released)
            __atomic_add_fetch(&tp->released[i], 1, __ATOMIC_SEQ_CST);
        if (tp->rc != RB_OK) {
            snprintf(tp->why, sizeof(tp->why), "%.500s", err.msg);
            break;
        }
    }
    return NULL;
}

/* Set up `count` parties with their connections made one at a time (a
 * thousand simultaneous connects would overflow the listen backlog and
 * measure SYN retries instead). */
static tparty *parties_new(const rb_url *u, long count)
{
    tparty *tp = calloc((size_t)count, sizeof(*tp));
    long i;

    if (tp == NULL)
        die("out of memory");
    for (i = 0; i < count; i++) {
        rb_wait_opts o = RB_WAIT_OPTS_INIT;

        tp[i].c = party_conn(u);
        tp[i].o = o;
        tp[i].o.id = tp[i].id;
        tp[i].o.name = tp[i].name;
        tp[i].o.timeout_s = 120;
        tp[i].reps = 1;
    }
    return tp;
}

static void parties_start(tparty *tp, long count)
{
    pthread_attr_t attr;
    long i;

    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, THREAD_STACK);
    for (i = 0; i < count; i++)
        if (pthread_create(&tp[i].th, &attr, party_main, &tp[i]) != 0)
            die("pthread_create failed at party %ld", i);
    pthread_attr_destroy(&attr);
}

static void parties_join_free(tparty *tp, long count)
{
    long i;

    for (i = 0; i < count; i++) {
        pthread_join(tp[i].th, NULL);
        if (tp[i].rc != RB_OK)
            die("party %s: %s", tp[i].id, tp[i].why);
        rb_conn_free(tp[i].c);
        free(tp[i].release);
    }
    free(tp);
}

/* Wait until Redis shows `count` clients blocked (every waiter is in its
 * BLMOVE, not on its way there). */
static void await_blocked(redisContext *adm, long count)
{
    long long until = now_ns() + 60 * 1000000000LL;

    while (info_num(adm, "clients", "blocked_clients") < (double)count) {
        if (now_ns() > until)
            die("parties did not all block within 60 s");
        sleep_ms(2);
    }
}

/* One completing arrival by the bench itself; returns its reply time, and
 * the time it was sent in *sent (may be NULL). */
static long long complete_round(rb_conn *c, const char *name, long n,
                                const char *id, long long *sent)
{
    rb_wait_opts o = RB_WAIT_OPTS_INIT;
    rb_wait_result res;
    rb_error err;
    long long t;

    o.name = name;
    o.n = n;
    o.id = id;
    o.timeout_s = 60;
    if (sent)
        *sent = now_ns();
    if (rb_barrier_wait(c, &o, &res, &err) != RB_OK)
        die("completing arrival at %s: %s", name, err.msg);
    t = now_ns();
    if (!res.completed)
        die("arrival at %s did not complete the round", name);
    return t;
}

/* ---- (3) fan-out ---------------------------------------------------------- */

static int cmd_fanout(int argc, char **argv)
{
    long parties = opt_long(argc, argv, "--parties", 1000);
    long reps = opt_long(argc, argv, "--reps", 5);
    long waiters = parties - 1, i, k;
    rb_url u;
    tparty *tp;
    rb_conn *me;
    redisContext *adm;
    int *released;
    char name[64];

    url_of(opt_str(argc, argv, "--url", ""), &u);
    if (parties < 2 || reps < 1)
        die("fanout: need --parties >= 2");
    snprintf(name, sizeof(name), "bench-fanout-%ld", (long)getpid());
    released = calloc((size_t)reps, sizeof(*released));
    tp = parties_new(&u, waiters);
    for (i = 0; i < waiters; i++) {
        snprintf(tp[i].id, sizeof(tp[i].id), "w%ld", i);
        snprintf(tp[i].name, sizeof(tp[i].name), "%s", name);
        tp[i].o.n = parties;
        tp[i].reps = reps;
        tp[i].released = released;
        tp[i].release = calloc((size_t)reps, sizeof(long long));
        if (tp[i].release == NULL || released == NULL)
            die("out of memory");
    }
    me = party_conn(&u);
    adm = admin_connect(&u);
    parties_start(tp, waiters);
    for (k = 0; k < reps; k++) {
        long long t0, t1, last = 0, p50;
        long long *rel = calloc((size_t)waiters, sizeof(*rel));

        await_blocked(adm, waiters);
        sleep_ms(50);
        t1 = complete_round(me, name, parties, "completer", &t0);
        while (__atomic_load_n(&released[k], __ATOMIC_SEQ_CST) < waiters)
            sleep_ms(1);
        for (i = 0; i < waiters; i++) {
            rel[i] = tp[i].release[k] - t0;
            if (tp[i].release[k] > last)
                last = tp[i].release[k];
        }
        qsort(rel, (size_t)waiters, sizeof(*rel), cmp_ll);
        p50 = pct(rel, (size_t)waiters, 50);
        printf("fanout_%ld_ms %.3f\n", parties, (double)(last - t0) / 1e6);
        printf("# fanout rep %ld from the completing arrival's send: p50 "
               "release %.3f ms, last %.3f ms; its own reply after %.3f ms\n",
               k, (double)p50 / 1e6, (double)(last - t0) / 1e6,
               (double)(t1 - t0) / 1e6);
        fflush(stdout);
        free(rel);
    }
    parties_join_free(tp, waiters);
    free(released);
    rb_conn_free(me);
    redisFree(adm);
    return 0;
}

/* ---- (4) idle load -------------------------------------------------------- */

static int cmd_idle(int argc, char **argv)
{
    long parties = opt_long(argc, argv, "--parties", 200);
    long seconds = opt_long(argc, argv, "--seconds", 20);
    long windows = opt_long(argc, argv, "--windows", 3), i, w;
    rb_url u;
    tparty *tp;
    rb_conn *me;
    redisContext *adm;
    cmdstats *before = malloc(sizeof(cmdstats)), *after = malloc(sizeof(cmdstats));
    char name[64];

    url_of(opt_str(argc, argv, "--url", ""), &u);
    if (parties < 1 || seconds < 1 || before == NULL || after == NULL)
        die("idle: bad arguments");
    snprintf(name, sizeof(name), "bench-idle-%ld", (long)getpid());
    tp = parties_new(&u, parties);
    for (i = 0; i < parties; i++) {
        snprintf(tp[i].id, sizeof(tp[i].id), "w%ld", i);
        snprintf(tp[i].name, sizeof(tp[i].name), "%s", name);
        tp[i].o.n = parties + 1;
        tp[i].o.timeout_s = (double)(seconds * windows + 60);
    }
    me = party_conn(&u);
    adm = admin_connect(&u);
    parties_start(tp, parties);
    await_blocked(adm, parties);
    for (w = 0; w < windows; w++) {
        cmd_delta d;
        long long t0, t1;
        double per;
        char label[48];

        cmdstats_take(adm, before);
        t0 = now_ns();
        sleep_ms(seconds * 1000);
        cmdstats_take(adm, after);
        t1 = now_ns();
        per = (double)(t1 - t0) / 1e9 * (double)parties;
        snprintf(label, sizeof(label), "idle window %ld per party-s:", w);
        d = cmdstats_delta(adm, before, after, label, per);
        printf("idle_cmds_per_party_s %.3f\n", (double)d.client / per);
        printf("idle_calls_per_party_s %.3f\n",
               (double)(d.client + d.inside) / per);
        fflush(stdout);
    }
    complete_round(me, name, parties + 1, "completer", NULL);
    parties_join_free(tp, parties);
    rb_conn_free(me);
    redisFree(adm);
    free(before);
    free(after);
    return 0;
}

/* ---- (5) memory per open barrier ------------------------------------------ */

/* Sum of MEMORY USAGE over the keys matching `pattern` (a cross-check). */
static long long keys_usage(redisContext *adm, const char *pattern,
                            long long *nkeys)
{
    char cursor[32] = "0";
    long long total = 0;

    *nkeys = 0;
    do {
        redisReply *r = cmd(adm, "SCAN %s MATCH %s COUNT 1000", cursor,
                            pattern);
        size_t i;

        if (r->type != REDIS_REPLY_ARRAY || r->elements != 2)
            die("bad SCAN reply");
        snprintf(cursor, sizeof(cursor), "%s", r->element[0]->str);
        for (i = 0; i < r->element[1]->elements; i++) {
            redisReply *m = cmd(adm, "MEMORY USAGE %s SAMPLES 0",
                                r->element[1]->element[i]->str);

            if (m->type == REDIS_REPLY_INTEGER) {
                total += m->integer;
                (*nkeys)++;
            }
            freeReplyObject(m);
        }
        freeReplyObject(r);
    } while (strcmp(cursor, "0") != 0);
    return total;
}

/* Open barriers, each with `arrived` of its n parties in and blocked. The
 * parties are threads in child processes; once every one is blocked the
 * children are killed, so Redis frees their connections and what remains
 * is the barriers' own state: used_memory then minus used_memory before
 * is the cost of the open barriers, free of the query and reply buffers of
 * thousands of connections. Run it on a database of its own (FLUSHDB at
 * the end). */
static int cmd_memory(int argc, char **argv)
{
    long barriers = opt_long(argc, argv, "--barriers", 1000);
    long n = opt_long(argc, argv, "--n", 5);
    long arrived = opt_long(argc, argv, "--arrived", 4);
    long reps = opt_long(argc, argv, "--reps", 3);
    long procs = opt_long(argc, argv, "--procs", 8), k, q;
    long count = barriers * arrived;
    rb_url u;
    redisContext *adm;

    url_of(opt_str(argc, argv, "--url", ""), &u);
    if (barriers < 1 || arrived < 1 || arrived >= n || procs < 1)
        die("memory: need 1 <= --arrived < --n");
    adm = admin_connect(&u);
    for (k = 0; k < reps; k++) {
        long long used0, used1, clients0, nkeys, usage;
        pid_t *pids = calloc((size_t)procs, sizeof(*pids));
        char pattern[64];

        if (pids == NULL)
            die("out of memory");
        clients0 = (long long)info_num(adm, "clients", "connected_clients");
        sleep_ms(100);
        used0 = (long long)info_num(adm, "memory", "used_memory");
        fflush(stdout);
        for (q = 0; q < procs; q++) {
            long lo = count * q / procs, hi = count * (q + 1) / procs, i;

            pids[q] = fork();
            if (pids[q] < 0)
                die("fork: %s", strerror(errno));
            if (pids[q] == 0) {
                tparty *tp = parties_new(&u, hi - lo);

                for (i = lo; i < hi; i++) {
                    tparty *p = &tp[i - lo];

                    snprintf(p->id, sizeof(p->id), "w%ld", i % arrived);
                    snprintf(p->name, sizeof(p->name), "bench-mem-%ld-%ld",
                             k, i / arrived);
                    p->o.n = n;
                    p->o.ttl_s = 600;
                }
                parties_start(tp, hi - lo);
                for (;;)
                    pause();
            }
        }
        await_blocked(adm, count);
        for (q = 0; q < procs; q++) {
            kill(pids[q], SIGKILL);
            waitpid(pids[q], NULL, 0);
        }
        while (info_num(adm, "clients", "connected_clients") >
               (double)clients0)
            sleep_ms(10);
        sleep_ms(100);
        used1 = (long long)info_num(adm, "memory", "used_memory");
        snprintf(pattern, sizeof(pattern), "rb:{bench-mem-%ld-*", k);
        usage = keys_usage(adm, pattern, &nkeys);
        printf("bytes_per_open_barrier %.0f\n",
               (double)(used1 - used0) / (double)barriers);
        printf("# memory rep %ld: used_memory +%lld over %ld barriers with "
               "%ld/%ld in; %lld keys, MEMORY USAGE sum %lld (%.0f per "
               "barrier)\n", k, used1 - used0, barriers, arrived, n, nkeys,
               usage, (double)usage / (double)barriers);
        fflush(stdout);
        free(pids);
    }
    freeReplyObject(cmd(adm, "FLUSHDB"));
    redisFree(adm);
    return 0;
}

/* ------------------------------------------------------------------------ */

int main(int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2)
        die("usage: rb_bench rtt|evalsha|rounds|cli|fanout|idle|memory "
            "--url URL [options]");
    if (strcmp(argv[1], "rtt") == 0)
        return cmd_rtt(argc, argv);
    if (strcmp(argv[1], "evalsha") == 0)
        return cmd_evalsha(argc, argv);
    if (strcmp(argv[1], "rounds") == 0)
        return cmd_rounds(argc, argv);
    if (strcmp(argv[1], "cli") == 0)
        return cmd_cli(argc, argv);
    if (strcmp(argv[1], "fanout") == 0)
        return cmd_fanout(argc, argv);
    if (strcmp(argv[1], "idle") == 0)
        return cmd_idle(argc, argv);
    if (strcmp(argv[1], "memory") == 0)
        return cmd_memory(argc, argv);
    die("unknown subcommand '%s'", argv[1]);
    return 2;
}
