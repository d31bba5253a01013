/* rbarrier wait (and run): meet N-1 other parties at a named barrier.
 * The library does the protocol; this file turns flags into rb_wait_opts,
 * runs --once commands for it (the library never forks), draws progress
 * on a terminal and says what happened. */
#include "../lib/fmacros.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "wait.h"

static const char wait_description[] =
    "Arrive at barrier NAME and block until N parties (any machines) have\n"
    "arrived in the same round; then all are released, and the same name\n"
    "serves the next round. A party that times out, dies (its lease runs\n"
    "out) or is interrupted breaks the round for everyone; each says why on\n"
    "stderr. Silent on success, unless asked for the arrival index\n"
    "(--print-index) or the agreed value (--value with --reduce).\n"
    "\n"
    "--once CMD: the party whose arrival completes the round runs CMD with\n"
    "/bin/sh -c while the others stay blocked; CMD exits 0 and all are\n"
    "released, else the round breaks and this party exits with CMD's status.\n"
    "CMD sees RBARRIER_NAME, RBARRIER_GEN, RBARRIER_N, RBARRIER_ID and\n"
    "RBARRIER_INDEX (0 for the round's first arrival).\n"
    "\n"
    "Durations take 90, 1.5, 30s, 5m, 2h or 1d; --timeout 0 means no limit.";

static const char run_description[] =
    "rbarrier run [options] -- CMD [ARGS...]\n"
    "\n"
    "A double barrier around a command, in the manner of flock FILE CMD:\n"
    "the N parties enter together (one round of NAME), each runs CMD with\n"
    "ARGS, and all leave together (the next round). The exit status is\n"
    "CMD's, or the barrier's code when a round broke. --timeout applies to\n"
    "each of the two waits, not to CMD. CMD sees the RBARRIER_* variables\n"
    "that wait --once sets (RBARRIER_INDEX: this party's place on entry).\n"
    "A signal to this party while CMD runs is passed on to CMD; this party\n"
    "then exits 128+N without entering the second round, which the others\n"
    "then leave only by their own --timeout: give run a --timeout.";

/* ---- running a command (for --once, and for run) ---- */

typedef struct child {
    const char *shell_cmd;    /* --once: /bin/sh -c this */
    char *const *argv;        /* run: execvp this */
    pid_t pid;
} child;

static void set_env_num(const char *name, long long v)
{
    char buf[32];

    snprintf(buf, sizeof(buf), "%lld", v);
    setenv(name, buf, 1);
}

static void export_info(const rb_once_info *info)
{
    setenv("RBARRIER_NAME", info->name, 1);
    set_env_num("RBARRIER_GEN", info->gen);
    set_env_num("RBARRIER_N", info->n);
    setenv("RBARRIER_ID", info->id, 1);
    set_env_num("RBARRIER_INDEX", info->index);
}

static int child_start(const rb_once_info *info, void *payload,
                       rb_error *err)
{
    child *ch = payload;
    pid_t pid;

    fflush(stdout);
    fflush(stderr);
    pid = fork();
    if (pid < 0)
        return cli_error(err, "fork: %s", strerror(errno));
    if (pid == 0) {
        struct sigaction sa;

        /* Die with this party: a command must not outlive a barrier
         * whose round is over (a kill -9 of the party included). */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() == 1)
            _exit(127);
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = SIG_DFL;
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
        sigaction(SIGPIPE, &sa, NULL);
        export_info(info);
        if (ch->shell_cmd)
            execl("/bin/sh", "sh", "-c", ch->shell_cmd, (char *)NULL);
        else
            execvp(ch->argv[0], ch->argv);
        {
            /* One write: the line must not interleave with others. */
            char msg[512];
            int len = snprintf(msg, sizeof(msg), "rbarrier: cannot run "
                               "'%.200s': %s\n",
                               ch->shell_cmd ? "/bin/sh" : ch->argv[0],
                               strerror(errno));
            if (write(STDERR_FILENO, msg, (size_t)len) < 0)
                _exit(127);
        }
        _exit(127);
    }
    ch->pid = pid;
    return RB_OK;
}

static int status_code(int st)
{
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return 127;
}

static void sleep_ms(long ms)
{
    struct timespec ts;

    ts.tv_sec = ms / 1000;
    ts.tv_nsec = (ms % 1000) * 1000000L;
    nanosleep(&ts, NULL);
}

static long long mono_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait up to timeout_ms (forever when < 0) for the child. A signal to
 * this party returns early (0) so the library can break the round. */
static int child_wait(void *payload, int timeout_ms, int *status)
{
    child *ch = payload;
    long long until = mono_ms() + timeout_ms;

    for (;;) {
        int st;
        pid_t r = waitpid(ch->pid, &st, WNOHANG);

        if (r == ch->pid) {
            ch->pid = 0;
            *status = status_code(st);
            return 1;
        }
        if (r < 0 && errno != EINTR) {
            ch->pid = 0;
            return -1;
        }
        if (cli_signal() || (timeout_ms >= 0 && mono_ms() >= until))
            return 0;
        /* Polling with a short sleep: reaction within 10 ms, and no
         * SIGCHLD handler to race with the signal pipe. */
        sleep_ms(10);
    }
}

static void child_kill(void *payload)
{
    child *ch = payload;
    int st, i;

    if (ch->pid <= 0)
        return;
    kill(ch->pid, SIGTERM);
    for (i = 0; i < 200; i++) {
        if (waitpid(ch->pid, &st, WNOHANG) == ch->pid) {
            ch->pid = 0;
            return;
        }
        sleep_ms(10);
    }
    kill(ch->pid, SIGKILL);
    waitpid(ch->pid, &st, 0);
    ch->pid = 0;
}

static const rb_once_ops child_ops = { child_start, child_wait, child_kill };

/* ---- progress on a terminal ---- */

typedef struct progress_line {
    const char *name;
    const char *expect;
    int shown;
} progress_line;

static int listed(const rb_progress *p, const char *id, size_t len)
{
    size_t i;

    for (i = 0; i < p->members_count; i++)
        if (strlen(p->members[i]) == len && memcmp(p->members[i], id, len) == 0)
            return 1;
    return 0;
}

static void show_progress(const rb_progress *p, void *payload)
{
    progress_line *line = payload;
    char buf[400];
    size_t len;

    len = (size_t)snprintf(buf, sizeof(buf), "\r\033[K%s: %ld/%ld arrived, "
                           "waiting %llds", line->name, p->count, p->n,
                           p->waited_ms / 1000);
    if (line->expect && p->members && len < sizeof(buf)) {
        const char *e = line->expect;
        int first = 1;

        while (*e && len + 4 < sizeof(buf)) {
            size_t l = strcspn(e, ",");

            if (!listed(p, e, l)) {
                len += (size_t)snprintf(buf + len, sizeof(buf) - len,
                                        "%s%.*s", first ? " (missing " : ",",
                                        (int)l, e);
                first = 0;
            }
            e += l + (e[l] == ',');
        }
        if (!first && len + 1 < sizeof(buf))
            buf[len++] = ')';
    }
    if (len >= sizeof(buf))
        len = sizeof(buf) - 1;
    /* One write per redraw. */
    if (write(STDERR_FILENO, buf, len) < 0)
        return;
    line->shown = 1;
}

static void erase_progress(progress_line *line)
{
    if (line->shown && write(STDERR_FILENO, "\r\033[K", 4) < 0)
        line->shown = 0;
    line->shown = 0;
}

/* ---- --reduce ---- */

typedef enum { REDUCE_NONE, REDUCE_MAX, REDUCE_MIN, REDUCE_SUM,
               REDUCE_ALL } reduce_kind;

static int parse_reduce(const char *text, reduce_kind *out, rb_error *err)
{
    if (strcmp(text, "max") == 0)
        *out = REDUCE_MAX;
    else if (strcmp(text, "min") == 0)
        *out = REDUCE_MIN;
    else if (strcmp(text, "sum") == 0)
        *out = REDUCE_SUM;
    else if (strcmp(text, "all") == 0)
        *out = REDUCE_ALL;
    else
        return cli_error(err, "--reduce must be max, min, sum or all, not "
                         "'%s'", text);
    return RB_OK;
}

/* Reduce the round's values into buf. Integers stay exact (int64, an
 * overflowing sum is an error); a fraction anywhere makes it floating. */
static int reduce_values(reduce_kind kind, char *const *v, size_t count,
                         char *buf, size_t len, rb_error *err)
{
    size_t i, best = 0;
    int any_float = 0, is_float;
    long long isum = 0;
    double fsum = 0;

    if (count == 0)
        return cli_error(err, "the round holds no values");
    for (i = 0; i < count; i++) {
        rb_error e;

        if (rb_check_number(&is_float, v[i], "value", &e) != RB_OK) {
            err->code = RB_EPROTO;
            snprintf(err->msg, sizeof(err->msg), "another party's value "
                     "'%.60s' is not a number (did every party pass the "
                     "same --reduce?)", v[i]);
            return RB_EPROTO;
        }
        any_float |= is_float;
    }
    for (i = 0; i < count; i++) {
        if (any_float) {
            double x = strtod(v[i], NULL), b = strtod(v[best], NULL);

            fsum += x;
            if ((kind == REDUCE_MAX && x > b) || (kind == REDUCE_MIN && x < b))
                best = i;
        } else {
            long long x, b = strtoll(v[best], NULL, 10);

            errno = 0;
            x = strtoll(v[i], NULL, 10);
            if (errno == ERANGE || __builtin_add_overflow(isum, x, &isum)) {
                err->code = RB_EPROTO;
                snprintf(err->msg, sizeof(err->msg), "the values do not fit "
                         "a 64-bit integer");
                return RB_EPROTO;
            }
            if ((kind == REDUCE_MAX && x > b) || (kind == REDUCE_MIN && x < b))
                best = i;
        }
    }
    if (kind == REDUCE_SUM && any_float)
        snprintf(buf, len, "%.15g", fsum);
    else if (kind == REDUCE_SUM)
        snprintf(buf, len, "%lld", isum);
    else
        snprintf(buf, len, "%s", v[best]);
    return RB_OK;
}

/* ---- the command ---- */

typedef struct wait_flags {
    cli_common common;
    struct arg_str *name, *n, *id, *timeout, *lease, *ttl, *once, *value,
                   *reduce, *expect;
    struct arg_lit *print_index, *quiet;
    struct arg_end *end;
} wait_flags;

/* Count the comma-separated ids of --expect and check each. */
static int parse_expect(const char *text, long *count, rb_error *err)
{
    const char *p = text;
    char id[RB_NAME_MAX + 1];

    *count = 0;
    if (text[0] == '\0')
        return cli_error(err, "--expect must not be empty");
    while (*p) {
        size_t l = strcspn(p, ",");
        const char *q;

        if (l == 0 || l > RB_NAME_MAX)
            return cli_error(err, "--expect: ids must be 1..%d bytes, "
                             "separated by single commas", RB_NAME_MAX);
        memcpy(id, p, l);
        id[l] = '\0';
        if (rb_check_id(id, "--expect id", err) != RB_OK)
            return RB_EINVAL;
        /* Each id once: a round of n counts n distinct ids. */
        for (q = text; q < p; q += strcspn(q, ",") + 1)
            if (strcspn(q, ",") == l && memcmp(q, p, l) == 0)
                return cli_error(err, "--expect lists '%s' twice", id);
        (*count)++;
        if (*count > RB_N_MAX)
            return cli_error(err, "--expect lists more than %d ids",
                             RB_N_MAX);
        p += l;
        if (*p == ',' && *++p == '\0')
            return cli_error(err, "--expect must not end with ','");
    }
    return RB_OK;
}

static int in_expect(const char *expect, const char *id)
{
    size_t len = strlen(id);

    while (*expect) {
        size_t l = strcspn(expect, ",");

        if (l == len && memcmp(expect, id, l) == 0)
            return 1;
        expect += l + (expect[l] == ',');
    }
    return 0;
}

static void json_result(const rb_wait_opts *o, const rb_wait_result *res,
                        int rc, reduce_kind reduce, const char *reduced)
{
    cli_json *j = cli_out_json();
    size_t i;

    if (j == NULL)
        return;
    cli_json_kstr(j, "name", o->name);
    cli_json_kstr(j, "id", o->id);
    if (res->gen > 0) {
        cli_json_kint(j, "gen", res->gen);
        cli_json_kint(j, "n", o->n);
        cli_json_kint(j, "index", res->index);
        cli_json_kbool(j, "completed", res->completed);
    } else {
        cli_json_kint(j, "n", o->n);
    }
    cli_json_kint(j, "waited_ms", res->waited_ms);
    if (rc == RB_OK && reduce == REDUCE_ALL) {
        cli_json_key(j, "value");
        cli_json_begin_arr(j);
        for (i = 0; i < res->values_count; i++)
            cli_json_num(j, res->values[i]);
        cli_json_end_arr(j);
    } else if (rc == RB_OK && reduced) {
        cli_json_knum(j, "value", reduced);
    }
}

static int parse_flags(wait_flags *f, rb_wait_opts *o, rb_url *url,
                       reduce_kind *reduce, char *default_id, size_t idlen,
                       rb_error *err)
{
    long long ms;
    long expected = 0;

    o->name = f->name->sval[0];
    if (rb_check_name(o->name, "barrier name", err) != RB_OK)
        return RB_EINVAL;
    if (f->expect->count) {
        if (parse_expect(f->expect->sval[0], &expected, err) != RB_OK)
            return RB_EINVAL;
        o->expect = f->expect->sval[0];
    }
    if (f->n->count) {
        if (cli_parse_count(f->n->sval[0], "--n", &o->n, err) != RB_OK)
            return RB_EINVAL;
        if (expected && o->n != expected)
            return cli_error(err, "--n %ld but --expect lists %ld ids",
                             o->n, expected);
    } else if (expected) {
        o->n = expected;
    } else {
        return cli_error(err, "--n is required (or --expect with the ids)");
    }
    if (f->timeout->count) {
        if (cli_parse_duration(f->timeout->sval[0], "--timeout", 0,
                               CLI_TIMEOUT_MAX_MS, &ms, err) != RB_OK)
            return RB_EINVAL;
        o->timeout_ms = ms;
    }
    if (f->lease->count) {
        if (cli_parse_duration(f->lease->sval[0], "--lease", CLI_LEASE_MIN_MS,
                               CLI_LEASE_MAX_MS, &ms, err) != RB_OK)
            return RB_EINVAL;
        o->lease_ms = ms;
    }
    if (f->ttl->count) {
        if (cli_parse_duration(f->ttl->sval[0], "--ttl", CLI_TTL_MIN_MS,
                               CLI_TTL_MAX_MS, &ms, err) != RB_OK)
            return RB_EINVAL;
        o->ttl_ms = ms;
    }
    if (f->id->count) {
        o->id = f->id->sval[0];
    } else if (o->expect) {
        return cli_error(err, "--expect needs --id (one of %.200s)",
                         o->expect);
    } else {
        cli_default_id(default_id, idlen);
        o->id = default_id;
    }
    if (rb_check_id(o->id, "--id", err) != RB_OK)
        return RB_EINVAL;
    if (o->expect && !in_expect(o->expect, o->id))
        return cli_error(err, "--id '%s' is not one of --expect %.200s",
                         o->id, o->expect);
    if (f->once && f->once->count) {
        if (f->once->sval[0][0] == '\0')
            return cli_error(err, "--once must not be empty");
    }
    *reduce = REDUCE_NONE;
    if (f->reduce->count &&
        parse_reduce(f->reduce->sval[0], reduce, err) != RB_OK)
        return RB_EINVAL;
    if (f->value->count) {
        int is_float;

        o->value = f->value->sval[0];
        if (*reduce == REDUCE_NONE)
            *reduce = REDUCE_ALL;
        /* The round's parties must agree on it, as on --n. */
        o->reduce = f->reduce->count ? f->reduce->sval[0] : "all";
        if (*reduce != REDUCE_ALL &&
            rb_check_number(&is_float, o->value, "--value", err) != RB_OK)
            return RB_EINVAL;
        if (strlen(o->value) > 200 || strpbrk(o->value, "\n\r\t\x7f"))
            return cli_error(err, "--value must be 1..200 bytes without "
                             "control characters");
    } else if (*reduce != REDUCE_NONE) {
        return cli_error(err, "--reduce needs --value");
    }
    if (cli_prefix(&f->common, &o->prefix, err) != RB_OK ||
        cli_url(&f->common, url, err) != RB_OK)
        return RB_EINVAL;
    return RB_OK;
}

/* Exit code of a wait: this party's --once command's status when it
 * failed, else the barrier's. */
static int wait_code(int rc, const rb_wait_result *res)
{
    if (rc == RB_EBROKEN && res->ran_once && res->once_status != 0)
        return res->once_status;
    return cli_exit_code(rc, cli_signal());
}

/* Print what a passed wait was asked for: index, then value(s). */
static int print_pass(const wait_flags *f, const rb_wait_result *res,
                      reduce_kind reduce, char *reduced, size_t len,
                      rb_error *err)
{
    size_t i;

    if (reduce != REDUCE_NONE && reduce != REDUCE_ALL &&
        reduce_values(reduce, res->values, res->values_count, reduced, len,
                      err) != RB_OK)
        return RB_EPROTO;
    if (cli_out_json())
        return RB_OK;
    if (f->print_index->count)
        printf("%ld\n", res->index);
    if (reduce == REDUCE_ALL)
        for (i = 0; i < res->values_count; i++)
            printf("%s\n", res->values[i]);
    else if (reduce != REDUCE_NONE)
        printf("%s\n", reduced);
    fflush(stdout);
    return RB_OK;
}

int wait_command(int argc, char **argv, char *const *run_argv)
{
    wait_flags f;
    void *table[12 + CLI_COMMON_COUNT + 1];
    size_t nt = 0;
    rb_wait_opts o = RB_WAIT_OPTS_INIT;
    rb_wait_result res;
    rb_error err;
    rb_url url;
    rb_conn *conn = NULL;
    progress_line line = { NULL, NULL, 0 };
    child ch = { NULL, NULL, 0 };
    reduce_kind reduce = REDUCE_NONE;
    char default_id[192], reduced[64] = "";
    int code, rc, quiet;

    memset(&res, 0, sizeof(res));
    cli_common_init(&f.common);
    f.name = arg_str1(NULL, "name", "NAME", "barrier name (no braces, "
                      "spaces or control characters; up to 200 bytes)");
    f.n = arg_str0(NULL, "n", "N", "parties per round, 1..100000 (may be "
                   "left out with --expect)");
    f.id = arg_str0(NULL, "id", "ID", "this party's id (default "
                    "hostname:pid); the same id twice in a round counts "
                    "once, with a warning");
    f.expect = arg_str0(NULL, "expect", "ID,ID,..", "the ids of the round's "
                        "parties; messages name the missing ones");
    f.timeout = arg_str0(NULL, "timeout", "DUR", "give up after DUR (exit "
                         "124; the round breaks); 0: no limit (default)");
    f.lease = arg_str0(NULL, "lease", "DUR", "a party silent this long is "
                       "presumed dead and breaks the round (default 10s, "
                       "0.1s..1d)");
    f.ttl = arg_str0(NULL, "ttl", "DUR", "idle barrier state expires after "
                     "DUR (default 1d, 1s..365d)");
    f.once = run_argv ? NULL
                      : arg_str0(NULL, "once", "CMD", "if this arrival "
                                 "completes the round, run CMD before "
                                 "anyone is released");
    f.value = arg_str0(NULL, "value", "V", "this party's value; when the "
                       "round passes every party prints the same reduction");
    f.reduce = arg_str0(NULL, "reduce", "max|min|sum|all", "how --value "
                        "is reduced (default all: every value in arrival "
                        "order, one per line)");
    f.print_index = arg_lit0(NULL, "print-index", "print this arrival's "
                             "place in its round (0 first) on a pass");
    f.quiet = arg_lit0("q", "quiet", "no progress line and no warnings");
    f.end = arg_end(10);
    table[nt++] = f.name;
    table[nt++] = f.n;
    table[nt++] = f.id;
    table[nt++] = f.expect;
    table[nt++] = f.timeout;
    table[nt++] = f.lease;
    table[nt++] = f.ttl;
    if (f.once)
        table[nt++] = f.once;
    table[nt++] = f.value;
    table[nt++] = f.reduce;
    table[nt++] = f.print_index;
    table[nt++] = f.quiet;
    nt += (size_t)cli_common_table(&f.common, table + nt);
    table[nt++] = f.end;

    code = cli_parse(argc, argv, table, f.end, &f.common, argv[0],
                     run_argv ? run_description : wait_description);
    if (code >= 0)
        goto out;
    if (parse_flags(&f, &o, &url, &reduce, default_id, sizeof(default_id),
                    &err) != RB_OK) {
        code = cli_fail(CLI_EXIT_USAGE, "%s", err.msg);
        goto out;
    }
    quiet = f.quiet->count > 0;
    if (f.once && f.once->count) {
        ch.shell_cmd = f.once->sval[0];
        o.once = &child_ops;
        o.once_payload = &ch;
    }
    if (!quiet && isatty(STDERR_FILENO)) {
        line.name = o.name;
        line.expect = o.expect;
        o.progress = show_progress;
        o.payload = &line;
        o.progress_ms = 1000;
    }

    if ((code = cli_open(&url, &conn)) >= 0)
        goto out;
    rc = rb_barrier_wait(&res, conn, &o, &err);
    erase_progress(&line);
    if (res.duplicate && !quiet)
        cli_message("warning: %s: id '%s' was already waiting in round %lld "
                    "(a restarted party, or two processes sharing one id?); "
                    "it counts once", o.name, o.id, res.gen);
    if (rc == RB_OK && run_argv) {
        /* run: entered together; now the command, then leave together. */
        rb_once_info info = { o.name, res.gen, o.n, o.id, res.index };
        int status = 0, st;

        if (print_pass(&f, &res, reduce, reduced, sizeof(reduced), &err) !=
            RB_OK) {
            code = cli_fail(CLI_EXIT_REDIS, "%s", err.msg);
            goto out;
        }
        ch.argv = run_argv;
        if (child_start(&info, &ch, &err) != RB_OK) {
            code = cli_fail(CLI_EXIT_REDIS, "%s", err.msg);
            goto out;
        }
        while ((st = child_wait(&ch, -1, &status)) == 0)
            if (cli_signal())
                kill(ch.pid, cli_signal());
        if (st < 0)
            status = 127;
        if (cli_signal()) {
            code = cli_exit_code(RB_ECANCELED, cli_signal());
            json_result(&o, &res, RB_ECANCELED, reduce, NULL);
            code = cli_fail(code, "%s: interrupted while running the "
                            "command", o.name);
            goto out;
        }
        rb_wait_result_clear(&res);
        o.value = NULL;   /* the value was agreed on entry */
        o.reduce = NULL;
        rc = rb_barrier_wait(&res, conn, &o, &err);
        erase_progress(&line);
        if (rc == RB_OK) {
            json_result(&o, &res, rc, REDUCE_NONE, NULL);
            code = cli_done(status, status ? "the command failed" : NULL);
            goto out;
        }
        reduce = REDUCE_NONE;
    }
    code = wait_code(rc, &res);
    if (rc == RB_OK &&
        print_pass(&f, &res, reduce, reduced, sizeof(reduced), &err) !=
            RB_OK) {
        rc = err.code;
        code = CLI_EXIT_REDIS;
    }
    json_result(&o, &res, rc, reduce, reduced[0] ? reduced : NULL);
    if (rc != RB_OK)
        cli_fail_as(code, NULL, err.msg, o.name);
    else
        cli_done(code, NULL);

out:
    if (ch.pid > 0)
        child_kill(&ch);
    rb_wait_result_clear(&res);
    rb_conn_free(conn);
    arg_freetable(table, nt);
    return code;
}

int cmd_wait(int argc, char **argv)
{
    return wait_command(argc, argv, NULL);
}
