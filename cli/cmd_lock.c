/* rbarrier lock --name NAME [--max K] -- CMD [ARGS]: flock(1) across
 * machines. The library queues, blocks and renews; this file runs CMD in
 * a process group of its own while the slot is held, renews the lease
 * between waits for CMD, and stops CMD's group when the slot is lost or a
 * signal arrives. */
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

static const char lock_description[] =
    "rbarrier lock [options] (-- CMD [ARGS...] | -c STRING)\n"
    "\n"
    "flock(1) across machines: run CMD while holding lock NAME, shared by\n"
    "every machine using the same Redis: exclusive (-x, the default), one\n"
    "of --max K slots (a counting semaphore), or shared (-s: any number of\n"
    "shared holders, none beside an exclusive one). Requests are served\n"
    "first come, first served, shared and exclusive alike: a shared one\n"
    "behind a waiting exclusive one waits. A release wakes the next at\n"
    "once. The lease is renewed every third of --lease while CMD runs; a\n"
    "holder that dies frees its slot within its lease and a second.\n"
    "A holder that loses its slot stops CMD's process group (SIGTERM,\n"
    "SIGKILL after --kill-after) and exits 3 (revoked by `rbarrier reset\n"
    "--name NAME --lock`, or its lease ran out), 1 (the lock's state was\n"
    "lost from Redis) or 4 (Redis unreachable).\n"
    "CMD sees RBARRIER_LOCK (the name), RBARRIER_ID and RBARRIER_LOCK_TOKEN,\n"
    "a fencing token that grows with every grant of NAME, even across a\n"
    "loss of Redis' state (a store can refuse a write carrying a token\n"
    "lower than one it has seen). A `rbarrier lock` of the same NAME inside\n"
    "CMD is refused at once (exit 2): it would wait for its own holder.\n"
    "\n"
    "flock's -w and rbarrier's --timeout differ: -w SEC gives up with exit 1\n"
    "(or -E's), --timeout DUR with 124, as timeout(1); give one of them.\n"
    "The exit status is CMD's (126/127 as the shell: not executable, not\n"
    "found), or rbarrier's own as listed below.\n"
    "\n"
    "Durations take 90, 1.5, 30s, 5m, 2h or 1d; --timeout 0 means no limit.";

typedef struct lock_flags {
    struct arg_str *name, *max, *id, *timeout, *lease, *kill_after;
    struct arg_str *wait, *conflict, *command, *stall_after, *progress_file;
    struct arg_lit *nonblock, *shared, *exclusive, *verbose, *quiet;
    struct arg_lit *no_history;
    cli_common common;
    struct arg_end *end;
} lock_flags;

/* What the command line asks beyond the library's options. */
typedef struct lock_args {
    long long kill_after;
    int conflict;           /* exit code when the lock is not had; -1: 124
                               (--timeout alone) */
    const char *shell_cmd;  /* -c */
    int verbose;
    long long stall_after_ms;   /* 0: no stall check */
    const char *progress_file;
} lock_args;

/* flock's -n, -w, -E, -s, -x and -c, with flock's meanings. */
static int parse_flock_flags(const lock_flags *f, rb_lock_opts *o,
                             lock_args *a, rb_error *err)
{
    long v;

    if (f->shared->count && f->exclusive->count)
        return cli_error(err, "-s (--shared) and -x (--exclusive) exclude "
                         "each other");
    if (f->shared->count && f->max->count)
        return cli_error(err, "-s (--shared) takes no --max: a read-write "
                         "lock has one exclusive slot");
    o->shared = f->shared->count > 0;
    if (f->wait->count && f->timeout->count)
        return cli_error(err, "-w (--wait SEC, exit 1 on expiry, as flock) "
                         "and --timeout DUR (exit 124, as timeout(1)) "
                         "exclude each other; give one");
    if (f->wait->count && f->nonblock->count)
        return cli_error(err, "-n (--nonblock) and -w (--wait) exclude each "
                         "other");
    a->conflict = f->timeout->count ? -1 : CLI_EXIT_REDIS;
    if (f->conflict->count) {
        if (cli_parse_long(f->conflict->sval[0], "-E (--conflict-exit-code)",
                           0, 255, &v, err) != RB_OK)
            return RB_EINVAL;
        a->conflict = (int)v;
    }
    if (f->wait->count) {
        double sec;

        if (cli_parse_seconds(f->wait->sval[0], "-w (--wait)", 1, &sec,
                              err) != RB_OK)
            return RB_EINVAL;
        if (sec * 1000.0 > (double)CLI_TIMEOUT_MAX_MS)
            return cli_error(err, "-w (--wait) must be at most %lld "
                             "seconds", CLI_TIMEOUT_MAX_MS / 1000);
        o->timeout_ms = (long long)(sec * 1000.0 + 0.5);
        if (o->timeout_ms == 0)
            o->nonblock = 1;    /* -w 0 is -n, as in flock */
    }
    o->nonblock |= f->nonblock->count > 0;
    a->shell_cmd = f->command->count ? f->command->sval[0] : NULL;
    a->verbose = f->verbose->count > 0;
    return RB_OK;
}

static int parse_flags(const lock_flags *f, rb_lock_opts *o, lock_args *a,
                       cli_config *cfg, char *default_id, size_t idlen,
                       rb_error *err)
{
    const char *held;

    o->name = f->name->sval[0];
    if (rb_check_name(o->name, "lock name", err) != RB_OK)
        return RB_EINVAL;
    o->max = 1;
    if (f->max->count &&
        cli_parse_long(f->max->sval[0], "--max", 1, RB_LOCK_MAX, &o->max,
                       err) != RB_OK)
        return RB_EINVAL;
    if (f->timeout->count &&
        cli_parse_duration(f->timeout->sval[0], "--timeout", 0,
                           CLI_TIMEOUT_MAX_MS, &o->timeout_ms, err) != RB_OK)
        return RB_EINVAL;
    if (f->lease->count &&
        cli_parse_duration(f->lease->sval[0], "--lease", CLI_LEASE_MIN_MS,
                           CLI_LEASE_MAX_MS, &o->lease_ms, err) != RB_OK)
        return RB_EINVAL;
    a->kill_after = 0;    /* the runner's default, 10s */
    if (f->kill_after->count &&
        cli_parse_duration(f->kill_after->sval[0], "--kill-after",
                           CLI_KILL_AFTER_MIN_MS, CLI_KILL_AFTER_MAX_MS,
                           &a->kill_after, err) != RB_OK)
        return RB_EINVAL;
    if (parse_flock_flags(f, o, a, err) != RB_OK ||
        cli_run_stall_flags(f->stall_after->count ? f->stall_after->sval[0]
                                                  : NULL,
                            f->progress_file->count
                                ? f->progress_file->sval[0] : NULL,
                            &a->stall_after_ms, &a->progress_file, err))
        return RB_EINVAL;
    if (f->id->count) {
        o->id = f->id->sval[0];
    } else {
        cli_default_id(default_id, idlen);
        o->id = default_id;
    }
    if (rb_check_id(o->id, "--id", err) != RB_OK ||
        cli_config_build(cfg, &f->common, err) != RB_OK)
        return RB_EINVAL;
    o->prefix = cfg->prefix;
    /* Refused rather than re-entrant: the inner command would run on the
     * outer holder's lease without renewing it, and an inner -x inside an
     * outer -s would be an upgrade no other reader agreed to. */
    held = getenv("RBARRIER_LOCK");
    if (held && strcmp(held, o->name) == 0)
        return cli_error(err, "lock %s is already held by this command's own "
                         "holder (RBARRIER_LOCK=%s): a nested lock of it "
                         "would wait for itself; run the inner command "
                         "directly (for a lock of that name elsewhere, unset "
                         "RBARRIER_LOCK)", o->name, held);
    return RB_OK;
}

/* Hold the lock while CMD runs, under the supervisor: each renewal the
 * server took moves the watchdog's deadline, so CMD's whole tree is dead
 * before the slot can pass on, whatever happens to this process. Returns
 * the exit code, or -1 when CMD ended on its own (*cmd_status); err says
 * why when it is not CMD's own status. */
/* The supervisor's settings for CMD, all but what the grant decides. */
static void sup_opts(cli_sup_opts *so, const rb_lock_opts *o, char **cmd,
                     const lock_args *a)
{
    *so = (cli_sup_opts)CLI_SUP_OPTS_INIT;
    so->argv = a->shell_cmd ? NULL : (const char *const *)cmd;
    so->shell_cmd = a->shell_cmd;
    so->kill_after_ms = a->kill_after;
    so->stall_after_ms = a->stall_after_ms;
    so->progress_file = a->progress_file;
    so->lease_ms = o->lease_ms > 0 ? o->lease_ms : 10000;
}

static int hold(rb_lock *l, const rb_lock_opts *o, char **cmd,
                const lock_args *a, cli_sup *s, int *cmd_status,
                rb_error *err)
{
    char token_env[48], name_env[RB_NAME_MAX + 16], id_env[RB_NAME_MAX + 16];
    const char *env[4] = { token_env, name_env, id_env, NULL };
    cli_sup_opts so;
    int rc, st, stopping = 0;

    snprintf(token_env, sizeof(token_env), "RBARRIER_LOCK_TOKEN=%lld",
             rb_lock_token(l));
    snprintf(name_env, sizeof(name_env), "RBARRIER_LOCK=%s", o->name);
    snprintf(id_env, sizeof(id_env), "RBARRIER_ID=%s", o->id);
    sup_opts(&so, o, cmd, a);
    so.env = env;
    so.held_until_ms = cli_now_ms() + rb_lock_lease_left_ms(l);
    if ((s->started ? cli_sup_go(s, &so, err)
                    : cli_sup_start(s, &so, err)) != RB_OK) {
        char why[sizeof(err->msg)];

        /* Nothing ran: the slot goes back now, not with its lease. */
        rb_lock_release(l, NULL);
        snprintf(why, sizeof(why), "%s", err->msg);
        cli_error(err, "lock %s: %.400s; the lock was given back", o->name,
                  why);
        return CLI_EXIT_REDIS;
    }
    for (;;) {
        st = cli_sup_wait(s, rb_lock_renew_in_ms(l));
        if (st == CLI_SUP_ENDED)
            break;
        if (cli_signal_pending()) {
            /* That signal first, as a terminal's would have reached CMD
             * had it been in the foreground group; the lock is renewed
             * while CMD takes its --kill-after grace. A second signal
             * ends the grace. */
            if (stopping) {
                *cmd_status = cli_sup_stop_tree(s, SIGKILL);
                break;
            }
            stopping = cli_signal();
            cli_signal_ack();
            cli_sup_signal(s, stopping);
        }
        if (st == CLI_SUP_STALLED && !stopping) {
            /* A stuck command would hold the lock for ever. */
            *cmd_status = cli_sup_stop_tree(s, SIGTERM);
            cli_error(err, "lock %s: the command made no progress for "
                      "%.1fs; it was stopped", o->name,
                      (double)(cli_now_ms() - cli_sup_progress_ms(s)) /
                          1000);
            return CLI_EXIT_BROKEN;
        }
        if (st == CLI_SUP_EXPIRED) {
            *cmd_status = cli_sup_stop_tree(s, SIGTERM);
            cli_error(err, "lock %s: the lease ran out before this holder "
                      "renewed it (stopped or cut off); the command was "
                      "stopped", o->name);
            return CLI_EXIT_BROKEN;
        }
        if (st == CLI_SUP_LOST) {
            *cmd_status = cli_sup_stop_tree(s, SIGKILL);
            cli_error(err, "lock %s: the command's watchdog died; the "
                      "command was stopped", o->name);
            return CLI_EXIT_REDIS;
        }
        if (rb_lock_renew_in_ms(l) > 0)
            continue;
        rc = rb_lock_renew(l, err);
        if (rc == RB_OK) {
            cli_sup_held(s, cli_now_ms() + rb_lock_lease_left_ms(l));
            continue;
        }
        if (rc == RB_ECANCELED)
            continue;
        /* Stop the work first, then report; the watchdog has been
         * stopping it since the renewal went overdue. */
        *cmd_status = cli_sup_stop_tree(s, SIGTERM);
        return cli_exit_code(rc, 0);
    }
    /* Done; what it left running (its group, escaped daemons) goes now. */
    if (s->started)
        *cmd_status = cli_sup_stop_tree(s, SIGTERM);
    if (stopping) {
        cli_error(err, "lock %s: interrupted by signal %d; the command was "
                  "stopped", o->name, stopping);
        return 128 + stopping;
    }
    return -1;
}

/* --verbose: who holds the lock now, before this request queues. */
static void say_holders(rb_conn *conn, const rb_lock_opts *o)
{
    rb_lock_state st;
    size_t i;

    if (rb_lock_status(&st, conn, o->prefix, o->name, NULL) != RB_OK)
        return;
    for (i = 0; i < st.holders_count; i++)
        cli_message("lock %s: held by %s (%s, for %.1fs)", o->name,
                    st.holders[i].id,
                    st.holders[i].shared ? "shared" : "exclusive",
                    (double)st.holders[i].held_ms / 1000.0);
    if (st.waiters_count)
        cli_message("lock %s: %zu waiting before this request", o->name,
                    st.waiters_count);
    rb_lock_state_clear(&st);
}

/* The one-line progress of a wait on a terminal, as wait's: who holds,
 * for how long, how many are ahead. A status read at most each second,
 * and only on a terminal, where a person is watching. */
typedef struct lock_line {
    rb_conn *conn;
    const rb_lock_opts *o;
    long long shown_at;
    int shown;
} lock_line;

static void lock_progress(long long waited_ms, void *payload)
{
    lock_line *line = payload;
    rb_lock_state st;
    char buf[600], holder[RB_NAME_MAX + 40] = "nobody (a reset's quarantine)";
    size_t i, j = 0, ahead;
    int len;

    (void)waited_ms;
    if (line->shown && cli_now_ms() - line->shown_at < 1000)
        return;
    line->shown_at = cli_now_ms();
    if (rb_lock_status(&st, line->conn, line->o->prefix, line->o->name,
                       NULL) != RB_OK)
        return;
    for (ahead = 0; ahead < st.waiters_count; ahead++)
        if (strcmp(st.waiters[ahead].id, line->o->id) == 0)
            break;
    for (i = 1; i < st.holders_count; i++)
        if (st.holders[i].held_ms > st.holders[j].held_ms)
            j = i;    /* the longest holder is the one to name */
    if (st.holders_count)
        snprintf(holder, sizeof(holder), "%s", st.holders[j].id);
    if (st.holders_count > 1)
        snprintf(holder + strlen(holder), sizeof(holder) - strlen(holder),
                 " and %zu more", st.holders_count - 1);
    len = snprintf(buf, sizeof(buf), "\r\033[K%s: held by %s for %llds, %zu "
                   "ahead", line->o->name, holder,
                   st.holders_count ? st.holders[j].held_ms / 1000 : 0LL,
                   ahead);
    rb_lock_state_clear(&st);
    if (len > 0 && write(STDERR_FILENO, buf, (size_t)len < sizeof(buf)
                                                 ? (size_t)len
                                                 : sizeof(buf) - 1) > 0)
        line->shown = 1;
}

static void lock_progress_erase(lock_line *line)
{
    if (line->shown && write(STDERR_FILENO, "\r\033[K", 4) < 0)
        line->shown = 0;
    line->shown = 0;
}

/* The lock was not had (-n, or a -w or --timeout expiry): flock's exit
 * code, or -E's, or 124 for --timeout alone. */
static int not_had(const lock_args *a, const char *msg, const char *name)
{
    cli_json *j;

    if ((j = cli_out_json()) != NULL)
        cli_json_kbool(j, "held", 0);
    cli_verdict("timeout");    /* a wait that ended unheld; -n waits 0 */
    return cli_fail_as(a->conflict < 0 ? CLI_EXIT_TIMEOUT : a->conflict, NULL,
                       msg, name);
}

int cmd_lock(int argc, char **argv)
{
    lock_flags f;
    void *table[18 + CLI_COMMON_COUNT + 1];
    size_t nt = 0;
    rb_lock_opts o = RB_LOCK_OPTS_INIT;
    lock_args a = { 0, 0, NULL, 0, 0, NULL };
    lock_line line = { NULL, NULL, 0, 0 };
    cli_config cfg = CLI_CONFIG_INIT;
    rb_conn *conn = NULL;
    rb_lock *l = NULL;
    rb_error err;
    cli_sup sup = { .started = 0 };
    cli_sup_opts so;
    char default_id[RB_NAME_MAX + 1];
    char **cmd = NULL;
    long long started;
    int i, code, rc, status = 0, dashes = 0;
    cli_json *j;

    /* The command starts after the first "--"; argtable never sees it. */
    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0)
            break;
    if (i < argc) {
        dashes = 1;
        argv[i] = NULL;
        cmd = i + 1 < argc ? argv + i + 1 : NULL;
        argc = i;
    }

    cli_common_init(&f.common);
    f.name = arg_str1(NULL, "name", "NAME", "lock name (no braces, spaces "
                      "or control characters; up to 200 bytes)");
    f.shared = arg_lit0("s", "shared", "a shared (read) lock: shared "
                        "holders together, none beside an exclusive one");
    f.exclusive = arg_lit0("x", "exclusive", "an exclusive lock (the "
                           "default)");
    f.max = arg_str0(NULL, "max", "K", "slots: K holders at once, 1..100000 "
                     "(default 1); all holders and waiters must agree");
    f.nonblock = arg_lit0("n", "nonblock", "one attempt: if the lock cannot "
                          "be had now, exit 1 (or -E's code) without "
                          "running CMD");
    f.wait = arg_str0("w", "wait", "SEC", "give up after SEC seconds "
                      "(fractions allowed) without running CMD, exit 1 (or "
                      "-E's code); -w 0 is -n");
    f.conflict = arg_str0("E", "conflict-exit-code", "N", "the exit code "
                          "when the lock is not had (-n, -w, --timeout), "
                          "0..255 (default 1; 124 for --timeout)");
    f.command = arg_str0("c", "command", "STRING", "run STRING with /bin/sh "
                         "-c (instead of -- CMD [ARGS])");
    f.id = arg_str0(NULL, "id", "ID", "this holder's id, shown by status "
                    "(default hostname:pid)");
    f.timeout = arg_str0(NULL, "timeout", "DUR", "give up waiting after DUR "
                         "without running CMD (exit 124, as timeout(1)); 0: "
                         "no limit (default). Not flock's --timeout: that "
                         "is -w here");
    f.lease = arg_str0(NULL, "lease", "DUR", "a holder or waiter silent this "
                       "long is presumed dead (default 10s, 0.1s..1d)");
    f.kill_after = arg_str0(NULL, "kill-after", "DUR", "when CMD is to stop "
                            "(the slot was lost, a signal to this holder), "
                            "SIGKILL its process group DUR after SIGTERM "
                            "(default 10s, as timeout -k)");
    f.stall_after = arg_str0(NULL, "stall-after", "DUR", "a command that "
                             "makes no progress for DUR (a touch of "
                             "$RBARRIER_PROGRESS) is stuck: it is stopped "
                             "and the lock given back (exit 3)");
    f.progress_file = arg_str0(NULL, "progress-file", "PATH", "a change of "
                               "PATH (a log CMD writes) is progress too");
    f.verbose = arg_lit0(NULL, "verbose", "say on stderr who held the lock "
                         "up and how long getting it took");
    f.quiet = arg_lit0("q", "quiet", "no progress line and no warnings");
    f.end = arg_end(10);
    table[nt++] = f.name;
    table[nt++] = f.shared;
    table[nt++] = f.exclusive;
    table[nt++] = f.max;
    table[nt++] = f.nonblock;
    table[nt++] = f.wait;
    table[nt++] = f.conflict;
    table[nt++] = f.command;
    table[nt++] = f.id;
    table[nt++] = f.timeout;
    table[nt++] = f.lease;
    table[nt++] = f.kill_after;
    table[nt++] = f.stall_after;
    table[nt++] = f.progress_file;
    table[nt++] = f.verbose;
    table[nt++] = f.quiet;
    table[nt++] = f.no_history = cli_no_history_flag();
    nt += cli_common_table(&f.common, table + nt);
    table[nt++] = f.end;

    code = cli_parse(argc, argv, table, f.end, &f.common, argv[0],
                     lock_description);
    if (code >= 0)
        goto out;
    if (f.command->count && dashes) {
        code = cli_fail(CLI_EXIT_USAGE, "give the command either after '--' "
                        "or with -c STRING, not both");
        goto out;
    }
    if (cmd == NULL && !f.command->count) {
        code = cli_fail(CLI_EXIT_USAGE, "lock needs a command after '--' "
                        "or -c STRING (rbarrier lock --name NAME -- CMD "
                        "[ARGS])");
        goto out;
    }
    if (parse_flags(&f, &o, &a, &cfg, default_id, sizeof(default_id),
                    &err) != RB_OK) {
        code = cli_fail(CLI_EXIT_USAGE, "%s", err.msg);
        goto out;
    }
    if ((j = cli_out_json()) != NULL) {
        cli_json_kstr(j, "name", o.name);
        cli_json_kstr(j, "id", o.id);
        cli_json_kint(j, "max", o.max);
        cli_json_kstr(j, "mode", o.shared ? "shared" : "exclusive");
    }
    if ((code = cli_config_open(&cfg, &conn)) >= 0 ||
        (code = cli_history_off(f.no_history, conn, o.prefix, o.name,
                                0)) >= 0)
        goto out;

    started = cli_now_ms();
    if (a.verbose)
        say_holders(conn, &o);
    if (!f.quiet->count && !cli_out_json() && isatty(STDERR_FILENO)) {
        line.conn = conn;
        line.o = &o;
        o.progress = lock_progress;
        o.payload = &line;
    }
    /* CMD's watchdog is forked while the lock is awaited: the hand-off
     * to CMD is then one message and a birth that copies nothing, not a
     * fork and a cgroup. Not for one
     * attempt (-n), which a busy lock ends at once: hold() starts it. */
    sup_opts(&so, &o, cmd, &a);
    if (!o.nonblock && cli_sup_arm(&sup, &so, &err) != RB_OK) {
        code = cli_fail(CLI_EXIT_REDIS, "%s", err.msg);
        goto out;
    }
    /* A grant pushed while waiting starts CMD at once, on the 2 s the
     * server holds it unconfirmed, and hold()'s first renewal confirms
     * it: the watchdog stops CMD by that short hold's end should the
     * confirmation not come back. */
    o.early_grant = 1;
    rc = rb_lock_acquire(&l, conn, &o, &err);
    lock_progress_erase(&line);
    if (rc == RB_ETIMEOUT && (a.conflict >= 0 || o.nonblock)) {
        code = not_had(&a, err.msg, o.name);
        goto out;
    }
    if (rc == RB_ECANCELED) {
        code = cli_fail(cli_exit_code(rc, cli_signal()), "lock %s: "
                        "interrupted by signal %d while waiting; the command "
                        "did not run", o.name, cli_signal());
        goto out;
    }
    if (rc != RB_OK) {
        code = cli_exit_code(rc, cli_signal());
        cli_fail_as(code, NULL, err.msg, o.name);
        goto out;
    }
    if (a.verbose)
        cli_message("lock %s: getting it took %.3fs (%s, token %lld)",
                    o.name, (double)(cli_now_ms() - started) / 1000.0,
                    o.shared ? "shared" : "exclusive", rb_lock_token(l));
    /* Only an early grant is due for renewal the moment it is had. */
    if (a.verbose && rb_lock_renew_in_ms(l) == 0)
        cli_message("lock %s: granted while waiting; the command starts on "
                    "the grant's %.1fs and the next renewal confirms it",
                    o.name, (double)rb_lock_lease_left_ms(l) / 1000.0);
    if ((j = cli_out_json()) != NULL)
        cli_json_kint(j, "token", rb_lock_token(l));

    code = hold(l, &o, cmd, &a, &sup, &status, &err);
    if (code >= 0) {
        if ((j = cli_out_json()) != NULL)
            cli_json_kint(j, "status", status);
        /* After a revocation too: the release confirms the command has
         * stopped, which lets the reset's quarantine end before the
         * lease does. */
        if (code >= 128 || code == CLI_EXIT_BROKEN)
            rb_lock_release(l, NULL);
        if (code == CLI_EXIT_REDIS && err.code == RB_ELOST)
            cli_verdict("lost");
        cli_fail_as(code, NULL, err.msg, o.name);
        goto out;
    }
    if ((j = cli_out_json()) != NULL)
        cli_json_kint(j, "status", status);
    rc = rb_lock_release(l, &err);
    if (rc == RB_EBROKEN) {
        /* Revoked (a reset) after the last renewal: CMD may have run its
         * end without the lock, and the reset's caller expects exit 3. */
        code = cli_fail(CLI_EXIT_BROKEN, "%s (the command exited %d)",
                        err.msg, status);
        goto out;
    }
    if (rc != RB_OK && !f.quiet->count)
        cli_message("warning: %s (the slot runs out with its lease)",
                    err.msg);
    cli_verdict(status ? "command-failed" : "ok");
    code = cli_done(status, status ? "the command failed" : NULL);
out:
    /* Armed and the lock not had; else the watchdog, done with the tree
     * before the release, now leaves. */
    cli_sup_stop(&sup, SIGKILL);
    rb_lock_free(l);
    rb_conn_free(conn);
    arg_freetable(table, nt);
    cli_config_free(&cfg);
    return code;
}
