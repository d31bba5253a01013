/* rbarrier lock --name NAME [--max K] -- CMD [ARGS]: flock(1) across
 * machines. The library queues, blocks and renews; this file runs CMD in
 * a process group of its own while the slot is held, renews the lease
 * between waits for CMD, and stops CMD's group when the slot is lost or a
 * signal arrives. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "clock.h"
#include "supervise.h"

static const char lock_description[] =
    "rbarrier lock [options] -- CMD [ARGS...]\n"
    "\n"
    "Run CMD while holding one of --max slots of lock NAME (1: a mutex;\n"
    "more: a counting semaphore), shared by every machine using the same\n"
    "Redis. Waiters are served first come, first served; a release wakes\n"
    "the next one at once. The lease is renewed every third of --lease\n"
    "while CMD runs; a holder that dies frees its slot within its lease\n"
    "and a second. A holder that loses its slot (Redis unreachable past\n"
    "the lease, or `rbarrier reset --name NAME --lock`) sends SIGTERM to\n"
    "CMD's process group, SIGKILL after --kill-after, and exits 3.\n"
    "CMD sees RBARRIER_LOCK (the name), RBARRIER_ID and RBARRIER_LOCK_TOKEN,\n"
    "a fencing token that grows with every grant of NAME (a store can\n"
    "refuse a write carrying a token lower than one it has seen). The exit\n"
    "status is CMD's (126/127 as the shell: not executable, not found).\n"
    "\n"
    "Durations take 90, 1.5, 30s, 5m, 2h or 1d; --timeout 0 means no limit.";

typedef struct lock_flags {
    struct arg_str *name, *max, *id, *timeout, *lease, *kill_after;
    struct arg_lit *quiet, *no_history;
    cli_common common;
    struct arg_end *end;
} lock_flags;

static int parse_flags(const lock_flags *f, rb_lock_opts *o,
                       long long *kill_after, cli_config *cfg,
                       char *default_id, size_t idlen, rb_error *err)
{
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
    *kill_after = 0;    /* the runner's default, 10s */
    if (f->kill_after->count &&
        cli_parse_duration(f->kill_after->sval[0], "--kill-after",
                           CLI_KILL_AFTER_MIN_MS, CLI_KILL_AFTER_MAX_MS,
                           kill_after, err) != RB_OK)
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
    return RB_OK;
}

/* Hold the lock while CMD runs, under the supervisor: each renewal the
 * server took moves the watchdog's deadline, so CMD's whole tree is dead
 * before the slot can pass on, whatever happens to this process. Returns
 * the exit code, or -1 when CMD ended on its own (*cmd_status); err says
 * why when it is not CMD's own status. */
static int hold(rb_lock *l, const rb_lock_opts *o, char **cmd,
                long long kill_after, int *cmd_status, rb_error *err)
{
    char token_env[48], name_env[RB_NAME_MAX + 16], id_env[RB_NAME_MAX + 16];
    const char *env[4] = { token_env, name_env, id_env, NULL };
    cli_sup_opts so = CLI_SUP_OPTS_INIT;
    cli_sup s;
    int rc, st, stopping = 0;

    snprintf(token_env, sizeof(token_env), "RBARRIER_LOCK_TOKEN=%lld",
             rb_lock_token(l));
    snprintf(name_env, sizeof(name_env), "RBARRIER_LOCK=%s", o->name);
    snprintf(id_env, sizeof(id_env), "RBARRIER_ID=%s", o->id);
    so.argv = (const char *const *)cmd;
    so.env = env;
    so.kill_after_ms = kill_after;
    so.lease_ms = o->lease_ms > 0 ? o->lease_ms : 10000;
    so.held_until_ms = cli_now_ms() + rb_lock_lease_left_ms(l);
    if (cli_sup_start(&s, &so, err) != RB_OK)
        return CLI_EXIT_REDIS;
    for (;;) {
        st = cli_sup_wait(&s, rb_lock_renew_in_ms(l));
        if (st == CLI_SUP_ENDED)
            break;
        if (cli_signal_pending()) {
            /* That signal first, as a terminal's would have reached CMD
             * had it been in the foreground group; the lock is renewed
             * while CMD takes its --kill-after grace. A second signal
             * ends the grace. */
            if (stopping) {
                *cmd_status = cli_sup_stop(&s, SIGKILL);
                break;
            }
            stopping = cli_signal();
            cli_signal_ack();
            cli_sup_signal(&s, stopping);
        }
        if (st == CLI_SUP_EXPIRED) {
            *cmd_status = cli_sup_stop(&s, SIGTERM);
            cli_error(err, "lock %s: the lease ran out before this holder "
                      "renewed it (stopped or cut off); the command was "
                      "stopped", o->name);
            return CLI_EXIT_BROKEN;
        }
        if (st == CLI_SUP_LOST) {
            *cmd_status = cli_sup_stop(&s, SIGKILL);
            cli_error(err, "lock %s: the command's watchdog died; the "
                      "command was stopped", o->name);
            return CLI_EXIT_REDIS;
        }
        if (rb_lock_renew_in_ms(l) > 0)
            continue;
        rc = rb_lock_renew(l, err);
        if (rc == RB_OK) {
            cli_sup_held(&s, cli_now_ms() + rb_lock_lease_left_ms(l));
            continue;
        }
        if (rc == RB_ECANCELED)
            continue;
        /* Stop the work first, then report; the watchdog has been
         * stopping it since the renewal went overdue. */
        *cmd_status = cli_sup_stop(&s, SIGTERM);
        return cli_exit_code(rc, 0);
    }
    /* Done; what it left running (its group, escaped daemons) goes now. */
    if (s.started)
        *cmd_status = cli_sup_stop(&s, SIGTERM);
    if (stopping) {
        cli_error(err, "lock %s: interrupted by signal %d; the command was "
                  "stopped", o->name, stopping);
        return 128 + stopping;
    }
    return -1;
}

int cmd_lock(int argc, char **argv)
{
    lock_flags f;
    void *table[8 + CLI_COMMON_COUNT + 1];
    size_t nt = 0;
    rb_lock_opts o = RB_LOCK_OPTS_INIT;
    cli_config cfg = CLI_CONFIG_INIT;
    rb_conn *conn = NULL;
    rb_lock *l = NULL;
    rb_error err;
    char default_id[RB_NAME_MAX + 1];
    char **cmd = NULL;
    long long kill_after = 0;
    int i, code, rc, status = 0;
    cli_json *j;

    /* The command starts after the first "--"; argtable never sees it. */
    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0)
            break;
    if (i + 1 < argc) {
        argv[i] = NULL;
        cmd = argv + i + 1;
        argc = i;
    }

    cli_common_init(&f.common);
    f.name = arg_str1(NULL, "name", "NAME", "lock name (no braces, spaces "
                      "or control characters; up to 200 bytes)");
    f.max = arg_str0(NULL, "max", "K", "slots: K holders at once, 1..100000 "
                     "(default 1); all holders and waiters must agree");
    f.id = arg_str0(NULL, "id", "ID", "this holder's id, shown by status "
                    "(default hostname:pid)");
    f.timeout = arg_str0(NULL, "timeout", "DUR", "give up waiting after DUR "
                         "without running CMD (exit 124); 0: no limit "
                         "(default)");
    f.lease = arg_str0(NULL, "lease", "DUR", "a holder or waiter silent this "
                       "long is presumed dead (default 10s, 0.1s..1d)");
    f.kill_after = arg_str0(NULL, "kill-after", "DUR", "when CMD is to stop "
                            "(the slot was lost, a signal to this holder), "
                            "SIGKILL its process group DUR after SIGTERM "
                            "(default 10s, as timeout -k)");
    f.quiet = arg_lit0("q", "quiet", "no warnings");
    f.end = arg_end(10);
    table[nt++] = f.name;
    table[nt++] = f.max;
    table[nt++] = f.id;
    table[nt++] = f.timeout;
    table[nt++] = f.lease;
    table[nt++] = f.kill_after;
    table[nt++] = f.quiet;
    table[nt++] = f.no_history = cli_no_history_flag();
    nt += cli_common_table(&f.common, table + nt);
    table[nt++] = f.end;

    code = cli_parse(argc, argv, table, f.end, &f.common, argv[0],
                     lock_description);
    if (code >= 0)
        goto out;
    if (cmd == NULL) {
        code = cli_fail(CLI_EXIT_USAGE, "lock needs a command after '--' "
                        "(rbarrier lock --name NAME -- CMD [ARGS])");
        goto out;
    }
    if (parse_flags(&f, &o, &kill_after, &cfg, default_id,
                    sizeof(default_id), &err) != RB_OK) {
        code = cli_fail(CLI_EXIT_USAGE, "%s", err.msg);
        goto out;
    }
    if ((j = cli_out_json()) != NULL) {
        cli_json_kstr(j, "name", o.name);
        cli_json_kstr(j, "id", o.id);
        cli_json_kint(j, "max", o.max);
    }
    if ((code = cli_config_open(&cfg, &conn)) >= 0 ||
        (code = cli_history_off(f.no_history, conn, o.prefix, o.name,
                                0)) >= 0)
        goto out;

    rc = rb_lock_acquire(&l, conn, &o, &err);
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
    if ((j = cli_out_json()) != NULL)
        cli_json_kint(j, "token", rb_lock_token(l));

    code = hold(l, &o, cmd, kill_after, &status, &err);
    if (code >= 0) {
        if ((j = cli_out_json()) != NULL)
            cli_json_kint(j, "status", status);
        if (code >= 128)
            rb_lock_release(l, NULL);
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
    rb_lock_free(l);
    rb_conn_free(conn);
    arg_freetable(table, nt);
    cli_config_free(&cfg);
    return code;
}
