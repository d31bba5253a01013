/* rbarrier wait: meet N-1 other parties at a named barrier.
 * The library does the protocol; this file turns flags into rb_wait_opts
 * (parse_flags, the one place that fills them), hands --once commands to
 * the process runner (the library never forks) and says what happened. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "run_stop.h"
#include "supervise.h"
#include "progress.h"
#include "reduce.h"

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
    "RBARRIER_INDEX (0 for the round's first arrival). CMD runs in a process\n"
    "group of its own; when the round breaks, this party times out or is\n"
    "interrupted, the whole group gets SIGTERM (or the signal this party\n"
    "got), and SIGKILL --kill-after later. With --json, --value or\n"
    "--print-index, CMD's stdout goes to stderr: stdout holds the result.\n"
    "\n"
    "Durations take 90, 1.5, 30s, 5m, 2h or 1d; --timeout 0 means no limit.";

/* ---- the --once command's process ---- */

typedef struct child {
    cli_sup_opts opts;
    cli_sup sup;
    long long held_until_ms;  /* the round waits for us until then */
    long long stalled_ms;     /* > 0: stopped after no progress this long */
    char env_text[5][256];
    const char *env[6];
} child;

/* RBARRIER_NAME, _GEN, _N, _ID, _INDEX for the command. Names and ids are
 * at most 200 bytes (rb_check_name), so nothing is cut. */
static void child_env(child *ch, const rb_once_info *info)
{
    size_t i;

    snprintf(ch->env_text[0], sizeof(ch->env_text[0]), "RBARRIER_NAME=%s",
             info->name);
    snprintf(ch->env_text[1], sizeof(ch->env_text[1]), "RBARRIER_GEN=%lld",
             info->gen);
    snprintf(ch->env_text[2], sizeof(ch->env_text[2]), "RBARRIER_N=%ld",
             info->n);
    snprintf(ch->env_text[3], sizeof(ch->env_text[3]), "RBARRIER_ID=%s",
             info->id);
    snprintf(ch->env_text[4], sizeof(ch->env_text[4]), "RBARRIER_INDEX=%ld",
             info->index);
    for (i = 0; i < 5; i++)
        ch->env[i] = ch->env_text[i];
    ch->env[5] = NULL;
    ch->opts.env = ch->env;
}

/* The command runs under the supervisor, held to the round's claim: when
 * this party can no longer renew its lease, the command's whole tree is
 * ended before the round can be broken and run again by another party. */
static int child_start(const rb_once_info *info, void *payload,
                       rb_error *err)
{
    child *ch = payload;

    child_env(ch, info);
    ch->opts.held_until_ms = ch->held_until_ms;
    return cli_sup_start(&ch->sup, &ch->opts, err);
}

static void child_held(void *payload, long long until_ms)
{
    child *ch = payload;

    ch->held_until_ms = until_ms;
    if (ch->sup.started)
        cli_sup_held(&ch->sup, until_ms);
}

static int child_wait(void *payload, int timeout_ms, int *status)
{
    child *ch = payload;

    int st = cli_sup_wait(&ch->sup, timeout_ms);

    if (st == CLI_SUP_RUNNING)
        return 0;
    /* A stuck command would hold the round for ever: it is stopped, and
     * its failure breaks the round. */
    if (st == CLI_SUP_STALLED)
        ch->stalled_ms = cli_now_ms() - cli_sup_progress_ms(&ch->sup);
    /* Ended (or ended by its watchdog, or its watchdog is gone): what it
     * left running goes now, not later. */
    *status = cli_sup_stop(&ch->sup, SIGTERM);
    return 1;
}

/* The round broke, this party timed out or was interrupted: the tree
 * gets the signal this party got (else SIGTERM), SIGKILL after
 * --kill-after; returns once nothing of it is left. */
static void child_kill(void *payload)
{
    child *ch = payload;

    cli_sup_stop(&ch->sup, cli_signal());
}

static const rb_once_ops child_ops = { child_start, child_wait, child_kill };

/* ---- the command ---- */

typedef struct wait_flags {
    cli_common common;
    struct arg_str *name, *n, *id, *timeout, *lease, *ttl, *once, *value,
                   *reduce, *expect, *kill_after, *stall_after,
                   *progress_file;
    struct arg_lit *print_index, *quiet, *no_history;
    struct arg_end *end;
    char *expect_file;        /* --expect @FILE's list, read */
} wait_flags;

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
                        int rc, cli_reduce_kind reduce, const char *reduced)
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
    if (rc == RB_OK && reduce == CLI_REDUCE_ALL) {
        cli_json_key(j, "value");
        cli_json_begin_arr(j);
        for (i = 0; i < res->values_count; i++)
            cli_json_num(j, res->values[i]);
        cli_json_end_arr(j);
    } else if (rc == RB_OK && reduced) {
        cli_json_knum(j, "value", reduced);
    }
}

/* Inside a job (RBARRIER_JOB set, as run sets it; a --once command sets
 * RBARRIER_N and _ID but no job), the member's own values are the
 * defaults of --n and --id. */
static const char *job_env(const char *name)
{
    const char *job = getenv("RBARRIER_JOB"), *v = getenv(name);

    return job && job[0] && v && v[0] ? v : NULL;
}

/* Inside a job, the wait is bound to it: its keys are the job attempt's
 * ($RBARRIER_GEN the epoch, $RBARRIER_RESTART the attempt). */
static int job_bind(rb_wait_opts *o, const char *job, rb_error *err)
{
    const char *ep = job_env("RBARRIER_GEN"), *at = job_env("RBARRIER_RESTART");
    char *end = NULL;
    long long e, a;

    if (rb_check_name(job, "$RBARRIER_JOB", err) != RB_OK)
        return RB_EINVAL;
    if (ep == NULL || at == NULL)
        return cli_error(err, "$RBARRIER_JOB is set without $RBARRIER_GEN "
                         "and $RBARRIER_RESTART");
    errno = 0;
    e = strtoll(ep, &end, 10);
    if (errno || *end || e < 1)
        return cli_error(err, "bad $RBARRIER_GEN '%.40s'", ep);
    a = strtoll(at, &end, 10);
    if (errno || *end || a < 0 || a > 1000000000LL)
        return cli_error(err, "bad $RBARRIER_RESTART '%.40s'", at);
    o->job = job;
    o->job_epoch = e;
    o->job_attempt = (long)a;
    return RB_OK;
}

static int parse_flags(wait_flags *f, rb_wait_opts *o, cli_config *cfg,
                       cli_reduce_kind *reduce, long long *kill_after_ms,
                       char *default_id, size_t idlen, rb_error *err)
{
    long long ms;
    long expected = 0;

    o->name = f->name->sval[0];
    if (rb_check_name(o->name, "barrier name", err) != RB_OK)
        return RB_EINVAL;
    if (f->expect->count) {
        if (cli_parse_expect(f->expect->sval[0], &o->expect, &f->expect_file,
                             &expected, err) != RB_OK)
            return RB_EINVAL;
    }
    if (f->n->count) {
        if (cli_parse_count(f->n->sval[0], "--n", &o->n, err) != RB_OK)
            return RB_EINVAL;
        if (expected && o->n != expected)
            return cli_error(err, "--n %ld but --expect lists %ld ids",
                             o->n, expected);
    } else if (expected) {
        o->n = expected;
    } else if (job_env("RBARRIER_N")) {
        if (cli_parse_count(job_env("RBARRIER_N"), "$RBARRIER_N", &o->n,
                            err) != RB_OK)
            return RB_EINVAL;
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
                               CLI_LEASE_MAX_MS, &o->lease_ms, err) != RB_OK)
            return RB_EINVAL;
    }
    if (f->ttl->count) {
        if (cli_parse_duration(f->ttl->sval[0], "--ttl", CLI_TTL_MIN_MS,
                               CLI_TTL_MAX_MS, &o->ttl_ms, err) != RB_OK)
            return RB_EINVAL;
    }
    if (f->id->count) {
        o->id = f->id->sval[0];
    } else if (job_env("RBARRIER_ID")) {
        o->id = job_env("RBARRIER_ID");
    } else if (o->expect) {
        return cli_error(err, "--expect needs --id (one of %.200s)",
                         o->expect);
    } else {
        cli_default_id(default_id, idlen);
        o->id = default_id;
    }
    if (rb_check_id(o->id, "--id", err) != RB_OK)
        return RB_EINVAL;
    if (job_env("RBARRIER_JOB") &&
        job_bind(o, getenv("RBARRIER_JOB"), err) != RB_OK)
        return RB_EINVAL;
    if (o->expect && !in_expect(o->expect, o->id))
        return cli_error(err, "--id '%s' is not one of --expect %.200s",
                         o->id, o->expect);
    if (f->once->count) {
        if (f->once->sval[0][0] == '\0')
            return cli_error(err, "--once must not be empty");
    }
    if (f->kill_after->count) {
        if (!f->once->count)
            return cli_error(err, "--kill-after needs --once CMD");
        if (cli_parse_duration(f->kill_after->sval[0], "--kill-after",
                               CLI_KILL_AFTER_MIN_MS, CLI_KILL_AFTER_MAX_MS,
                               kill_after_ms, err) != RB_OK)
            return RB_EINVAL;
    }
    *reduce = CLI_REDUCE_NONE;
    if (f->reduce->count &&
        cli_reduce_parse(f->reduce->sval[0], reduce, err) != RB_OK)
        return RB_EINVAL;
    o->reduce = f->reduce->count ? f->reduce->sval[0] : NULL;
    if (f->value->count) {
        int is_float;

        o->value = f->value->sval[0];
        if (*reduce == CLI_REDUCE_NONE) {
            *reduce = CLI_REDUCE_ALL;
            o->reduce = "all";   /* the default is part of the round too */
        }
        if (*reduce != CLI_REDUCE_ALL &&
            rb_check_number(&is_float, o->value, "--value", err) != RB_OK)
            return RB_EINVAL;
        if (strlen(o->value) > 200 || strpbrk(o->value, "\n\r\t\x7f"))
            return cli_error(err, "--value must be 1..200 bytes without "
                             "control characters");
    } else if (*reduce != CLI_REDUCE_NONE) {
        return cli_error(err, "--reduce needs --value");
    }
    if (cli_config_build(cfg, &f->common, err) != RB_OK)
        return RB_EINVAL;
    o->prefix = cfg->prefix;
    return RB_OK;
}

/* Exit code of a wait: this party's --once command's status when it
 * failed, else the barrier's. */
static int wait_code(int rc, const rb_wait_result *res)
{
    if (rc == RB_EBROKEN && res->ran_once && res->once_status != 0) {
        cli_verdict("command-failed");
        return res->once_status;
    }
    return cli_exit_code(rc, cli_signal());
}

/* Print what a passed wait was asked for: index, then value(s). */
static int print_pass(const wait_flags *f, const rb_wait_result *res,
                      cli_reduce_kind reduce, char *reduced, size_t len,
                      rb_error *err)
{
    size_t i;

    if (reduce != CLI_REDUCE_NONE && reduce != CLI_REDUCE_ALL &&
        cli_reduce_values(reduce, res->values, res->values_count, reduced,
                          len, err) != RB_OK)
        return RB_EPROTO;
    if (cli_out_json())
        return RB_OK;
    if (f->print_index->count)
        printf("%ld\n", res->index);
    if (reduce == CLI_REDUCE_ALL)
        for (i = 0; i < res->values_count; i++)
            printf("%s\n", res->values[i]);
    else if (reduce != CLI_REDUCE_NONE)
        printf("%s\n", reduced);
    fflush(stdout);
    return RB_OK;
}

int cmd_wait(int argc, char **argv)
{
    wait_flags f;
    void *table[16 + CLI_COMMON_COUNT + 1];
    size_t nt = 0;
    rb_wait_opts o = RB_WAIT_OPTS_INIT;
    rb_wait_result res;
    rb_error err;
    cli_config cfg = CLI_CONFIG_INIT;
    rb_conn *conn = NULL;
    cli_progress line = { NULL, NULL, 0, 0 };
    child ch;
    cli_reduce_kind reduce = CLI_REDUCE_NONE;
    char default_id[192], reduced[64] = "";
    long long kill_after_ms = 0;
    int code, rc, quiet;

    memset(&res, 0, sizeof(res));
    memset(&ch, 0, sizeof(ch));
    f.expect_file = NULL;
    cli_common_init(&f.common);
    f.name = arg_str1(NULL, "name", "NAME", "barrier name (no braces, "
                      "spaces or control characters; up to 200 bytes)");
    f.n = arg_str0(NULL, "n", "N", "parties per round, 1..100000 (may be "
                   "left out with --expect)");
    f.id = arg_str0(NULL, "id", "ID", "this party's id (default "
                    "hostname:pid); the same id twice in a round counts "
                    "once, with a warning");
    f.expect = arg_str0(NULL, "expect", "ID,ID,..|@FILE", "the ids of the "
                        "round's parties (@FILE: one a line); messages name "
                        "the missing ones");
    f.timeout = arg_str0(NULL, "timeout", "DUR", "give up after DUR (exit "
                         "124; the round breaks); 0: no limit (default)");
    f.lease = arg_str0(NULL, "lease", "DUR", "a party silent this long is "
                       "presumed dead and breaks the round (default 10s, "
                       "0.1s..1d)");
    f.ttl = arg_str0(NULL, "ttl", "DUR", "idle barrier state expires after "
                     "DUR (default 1d, 1s..365d)");
    f.once = arg_str0(NULL, "once", "CMD", "if this arrival completes the "
                      "round, run CMD before anyone is released");
    f.value = arg_str0(NULL, "value", "V", "this party's value; when the "
                       "round passes every party prints the same reduction");
    f.reduce = arg_str0(NULL, "reduce", "max|min|sum|all", "how --value "
                        "is reduced (default all: every value in arrival "
                        "order, one per line)");
    f.print_index = arg_lit0(NULL, "print-index", "print this arrival's "
                             "place in its round (0 first) on a pass");
    f.kill_after = arg_str0(NULL, "kill-after", "DUR", "with --once: when "
                            "CMD is to stop (the round broke, a timeout, a "
                            "signal), SIGKILL its process group DUR after "
                            "SIGTERM (default 10s, as timeout -k)");
    f.stall_after = arg_str0(NULL, "stall-after", "DUR", "with --once: a "
                             "command that makes no progress for DUR (a "
                             "touch of $RBARRIER_PROGRESS) is stopped and "
                             "the round broken (exit 3)");
    f.progress_file = arg_str0(NULL, "progress-file", "PATH", "with --once: "
                               "a change of PATH (a log CMD writes) is "
                               "progress too");
    f.quiet = arg_lit0("q", "quiet", "no progress line and no warnings");
    f.end = arg_end(10);
    table[nt++] = f.name;
    table[nt++] = f.n;
    table[nt++] = f.id;
    table[nt++] = f.expect;
    table[nt++] = f.timeout;
    table[nt++] = f.lease;
    table[nt++] = f.ttl;
    table[nt++] = f.once;
    table[nt++] = f.value;
    table[nt++] = f.reduce;
    table[nt++] = f.kill_after;
    table[nt++] = f.stall_after;
    table[nt++] = f.progress_file;
    table[nt++] = f.print_index;
    table[nt++] = f.quiet;
    table[nt++] = f.no_history = cli_no_history_flag();
    nt += (size_t)cli_common_table(&f.common, table + nt);
    table[nt++] = f.end;

    code = cli_parse(argc, argv, table, f.end, &f.common, argv[0],
                     wait_description);
    if (code >= 0)
        goto out;
    if (parse_flags(&f, &o, &cfg, &reduce, &kill_after_ms, default_id,
                    sizeof(default_id), &err) != RB_OK ||
        ((f.stall_after->count || f.progress_file->count) && !f.once->count &&
         cli_error(&err, "--stall-after and --progress-file need --once "
                   "CMD")) ||
        cli_run_stall_flags(f.stall_after->count ? f.stall_after->sval[0]
                                                 : NULL,
                            f.progress_file->count
                                ? f.progress_file->sval[0] : NULL,
                            &ch.opts.stall_after_ms, &ch.opts.progress_file,
                            &err) != RB_OK) {
        code = cli_fail(CLI_EXIT_USAGE, "%s", err.msg);
        goto out;
    }
    quiet = f.quiet->count > 0;
    ch.opts.stdout_fd = -1;
    ch.opts.kill_after_ms = kill_after_ms;
    ch.opts.lease_ms = o.lease_ms > 0 ? o.lease_ms : 10000;
    /* stdout carries only the result when one is asked for. */
    if (cli_out_json() || f.value->count || f.print_index->count)
        ch.opts.stdout_fd = STDERR_FILENO;
    if (f.once->count) {
        ch.opts.shell_cmd = f.once->sval[0];
        o.once = &child_ops;
        o.once_payload = &ch;
        o.once_held = child_held;
    }
    if (!quiet && isatty(STDERR_FILENO)) {
        line.name = o.name;
        line.expect = o.expect;
        o.progress = cli_progress_show;
        o.payload = &line;
        o.progress_ms = 1000;
    }

    if (o.job && getenv("RBARRIER_PROGRESS")) {
        /* Waiting for the others is progress too (run --stall-after),
         * said each second (a heartbeat a second while it waits). */
        line.touch = 1;
        o.progress = cli_progress_show;
        o.payload = &line;
        o.progress_ms = 1000;
    }
    if ((code = cli_config_open(&cfg, &conn)) >= 0 ||
        (code = cli_history_off(f.no_history, conn, o.prefix,
                                o.job ? o.job : o.name, o.ttl_ms)) >= 0)
        goto out;
    if (!o.value)
        o.reduce = NULL;   /* --reduce means nothing without --value */
    cli_progress_touch();
    rc = rb_barrier_wait(&res, conn, &o, &err);
    cli_progress_touch();
    cli_progress_erase(&line);
    if (res.duplicate && !quiet)
        cli_message("warning: %s: id '%s' was already waiting in round %lld "
                    "(a restarted party, or two processes sharing one id?); "
                    "it counts once", o.name, o.id, res.gen);
    code = wait_code(rc, &res);
    if (ch.stalled_ms > 0 && rc == RB_EBROKEN) {
        code = CLI_EXIT_BROKEN;
        cli_verdict("broken");
        snprintf(err.msg, sizeof(err.msg), "%s: the once-command made no "
                 "progress for %.1fs; it was stopped and the round broken",
                 o.name, (double)ch.stalled_ms / 1000);
    }
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
    if (ch.sup.started)
        child_kill(&ch);
    rb_wait_result_clear(&res);
    rb_conn_free(conn);
    cli_config_free(&cfg);
    arg_freetable(table, nt);
    free(f.expect_file);
    return code;
}
