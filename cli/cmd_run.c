/* rbarrier run -- CMD [ARGS]: a job supervisor (DESIGN.md "Jobs"). The N
 * runners enter together, each runs CMD in its own process group while it
 * holds its membership, and all leave together; a member that fails or
 * vanishes stops every member's CMD. The library does the protocol; this
 * file watches CMD (run_cmd.c runs it under the supervisor) and says what
 * happened.
 *
 * One wait for two things: the library blocks on the job's outcome list
 * and returns early when its cancel fd is readable. That fd is an epoll fd
 * over the signal pipe and the SIGCHLD pipe, so a signal to the runner and
 * the end of CMD both wake it at once, and a break wakes it through Redis:
 * nothing polls. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "cli.h"
#include "config.h"
#include "clock.h"
#include "proctree.h"
#include "run_cmd.h"
#include "run_stop.h"
#include "supervise.h"
#include "torch_env.h"

static const char run_description[] =
    "rbarrier run [options] -- CMD [ARGS...]\n"
    "\n"
    "Run CMD as one member of job NAME: the N members enter together, each\n"
    "runs CMD in a process group of its own while its lease is renewed\n"
    "(every lease/3), and all leave together; the exit status is then 0.\n"
    "A member fails when its CMD exits non-zero or is killed by a signal,\n"
    "or when its lease runs out (runner killed, host cut off). Then the job\n"
    "breaks: every other runner sends SIGTERM to its CMD's group (SIGKILL\n"
    "--kill-after later) and exits 3 with the reason; the failing runner\n"
    "exits with CMD's status. A runner that gets SIGTERM, SIGINT or SIGHUP\n"
    "while CMD runs stops the job: every CMD gets SIGTERM once, in-job waits\n"
    "keep passing (to agree on a step to save) and each member leaves when\n"
    "its CMD exits or --kill-after ends; that runner exits 128+N, the others\n"
    "3. With --restarts K, after a break (not a stop) every member meets\n"
    "again and reruns CMD, up to K times. --timeout bounds each entering\n"
    "round, not CMD (a re-entering one ends after 5 minutes even with 0).\n"
    "CMD sees RBARRIER_JOB, RBARRIER_ID, RBARRIER_N, RBARRIER_RANK (0..N-1:\n"
    "the place in --expect, else the order of entry), RBARRIER_RESTART,\n"
    "RBARRIER_URL (its password, if any, as REDISCLI_AUTH), and\n"
    "RBARRIER_NAME, RBARRIER_GEN (the epoch), RBARRIER_INDEX (the rank),\n"
    "and torchrun's variables (RANK, WORLD_SIZE, LOCAL_RANK, ...,\n"
    "MASTER_ADDR, MASTER_PORT: rank 0's address and a port free on its\n"
    "host, fresh per restart; doc/FRAMEWORKS.md). Members are grouped by\n"
    "host: /etc/machine-id, else the host name; $RBARRIER_HOST overrides.\n"
    "Nothing CMD started outlives its runner, even one killed with -9.";

typedef struct run_flags {
    cli_common common;
    struct arg_str *name, *n, *id, *expect, *timeout, *lease, *ttl,
                   *restarts, *kill_after, *nproc, *master_addr,
                   *master_port, *stall_after, *progress_file;
    struct arg_lit *quiet, *no_history;
    struct arg_end *end;
} run_flags;


/* ---- flags ---- */

static int parse_flags(run_flags *f, cli_runner *r, char *default_id,
                       size_t idlen, rb_error *err)
{
    long long ms;
    long expected = 0, k = 0;
    const char *p;

    r->o.name = f->name->sval[0];
    if (rb_check_name(r->o.name, "job name", err) != RB_OK)
        return RB_EINVAL;
    if (f->expect->count) {
        r->o.expect = f->expect->sval[0];
        for (p = r->o.expect; ; p += strcspn(p, ",") + 1) {
            expected++;
            if (p[strcspn(p, ",")] == '\0')
                break;
        }
    }
    if (f->n->count) {
        if (cli_parse_count(f->n->sval[0], "--n", &r->o.n, err) != RB_OK)
            return RB_EINVAL;
        if (expected && r->o.n != expected)
            return cli_error(err, "--n %ld but --expect lists %ld ids",
                             r->o.n, expected);
    } else if (expected) {
        r->o.n = expected;
    } else {
        return cli_error(err, "--n is required (or --expect with the ids)");
    }
    if (f->timeout->count &&
        cli_parse_duration(f->timeout->sval[0], "--timeout", 0,
                           CLI_TIMEOUT_MAX_MS, &r->o.timeout_ms, err))
        return RB_EINVAL;
    if (f->lease->count &&
        cli_parse_duration(f->lease->sval[0], "--lease", CLI_LEASE_MIN_MS,
                           CLI_LEASE_MAX_MS, &r->o.lease_ms, err))
        return RB_EINVAL;
    if (f->ttl->count &&
        cli_parse_duration(f->ttl->sval[0], "--ttl", CLI_TTL_MIN_MS,
                           CLI_TTL_MAX_MS, &r->o.ttl_ms, err))
        return RB_EINVAL;
    if (f->restarts->count &&
        cli_parse_long(f->restarts->sval[0], "--restarts", 0, 1000000, &k,
                       err))
        return RB_EINVAL;
    r->o.restarts = k;
    if (f->nproc->count &&
        cli_parse_long(f->nproc->sval[0], "--nproc-per-node", 1, r->o.n,
                       &r->nproc, err))
        return RB_EINVAL;
    if (f->master_addr->count) {
        if (cli_check_master_addr(f->master_addr->sval[0], err) != RB_OK)
            return RB_EINVAL;
        r->o.master_addr = f->master_addr->sval[0];
    }
    if (f->master_port->count) {
        if (cli_parse_long(f->master_port->sval[0], "--master-port", 1,
                           65535, &k, err))
            return RB_EINVAL;
        r->o.master_port = (int)k;
    }
    if (cli_host_id(r->host, sizeof(r->host), err) != RB_OK)
        return RB_EINVAL;
    r->o.host = r->host;
    if (f->kill_after->count) {
        if (cli_parse_duration(f->kill_after->sval[0], "--kill-after",
                               CLI_KILL_AFTER_MIN_MS, CLI_KILL_AFTER_MAX_MS,
                               &ms, err) != RB_OK)
            return RB_EINVAL;
        r->kill_after_ms = ms;
    }
    if (cli_run_stall_flags(f->stall_after->count ? f->stall_after->sval[0]
                                                  : NULL,
                            f->progress_file->count
                                ? f->progress_file->sval[0] : NULL,
                            &r->stall_after_ms, &r->progress_file, err))
        return RB_EINVAL;
    if (f->id->count) {
        r->o.id = f->id->sval[0];
    } else if (getenv("RBARRIER_JOB") == NULL && r->o.expect) {
        return cli_error(err, "--expect needs --id (one of %.200s)",
                         r->o.expect);
    } else {
        cli_default_id(default_id, idlen);
        r->o.id = default_id;
    }
    if (rb_check_id(r->o.id, "--id", err) != RB_OK)
        return RB_EINVAL;
    if (cli_config_build(&r->cfg, &f->common, err) != RB_OK)
        return RB_EINVAL;
    r->o.prefix = r->cfg.prefix;
    return RB_OK;
}

/* ---- the run ---- */

/* A break with restarts left: said once this member has entered again. */
static int note_break(cli_runner *r, const rb_error *err)
{
    snprintf(r->last_break, sizeof(r->last_break), "%s", err->msg);
    return -1;
}

static int interrupted(cli_runner *r, rb_error *err)
{
    char what[RB_NAME_MAX + 32];
    int sig = cli_signal();

    /* The others first: CMD may take its --kill-after to stop, and they
     * must not wait for that, nor take it for a silent death. */
    snprintf(what, sizeof(what), "%s interrupted", r->o.id);
    rb_job_fail(r->job, what, -1, err);
    cli_run_cmd_stop(r, sig);
    return cli_fail(cli_exit_code(RB_ECANCELED, sig), "%s: %s", r->o.name,
                    what);
}

/* ---- preemption: the job stops (run_stop.c) ---- */

static int cmd_end(void *p) { return cli_run_cmd_stop(p, SIGKILL); }

static int hold_stop(cli_runner *r, rb_error *err)
{
    cli_run_stop s = { r->job, &r->sup, r->o.name, r->o.id,
                       r->kill_after_ms, cmd_end, r };

    cli_run_watch(r, cli_signal_fd(), 0);
    return cli_run_hold_stop(&s, err);
}

/* CMD made no progress for --stall-after: the job breaks (every runner,
 * this one too, exits 3; --restarts reruns it), then CMD stops. */
static int stalled(cli_runner *r, rb_error *err)
{
    int rc = cli_run_stall(r->job, &r->sup, err);

    cli_run_cmd_stop(r, SIGTERM);
    if (rc == RB_EBROKEN && rb_job_can_restart(r->job))
        return note_break(r, err);
    return cli_fail_as(cli_exit_code(rc == RB_OK ? RB_EBROKEN : rc, 0), NULL,
                       err->msg, r->o.name);
}

/* CMD ended with status: leave (0) or fail. Returns -1 to go on with the
 * next attempt (restarts), else the exit code. */
static int cmd_ended(cli_runner *r, int status, rb_error *err)
{
    char what[RB_NAME_MAX + 64];
    int rc, done = 0;

    if (status != 0) {
        if (status > 128)
            snprintf(what, sizeof(what), "%s's command was killed by signal "
                     "%d", r->o.id, status - 128);
        else
            snprintf(what, sizeof(what), "%s's command exited %d", r->o.id,
                     status);
        rc = rb_job_fail(r->job, what, status, err);
        if (rc == RB_EBROKEN && rb_job_can_restart(r->job))
            return note_break(r, err);
        /* Its own failure is no news to this runner's caller (CMD said
         * what it had to, as under timeout(1)); the others say it. */
        if (rc == RB_EBROKEN || rc == RB_OK) {
            cli_json *j = cli_out_json();

            if (j)
                cli_json_kint(j, "status", status);
            cli_verdict("command-failed");
            return cli_done(status, cli_reason(err->msg, r->o.name));
        }
        return cli_fail(cli_exit_code(rc, 0), "%s", err->msg);
    }
    rc = rb_job_leave(r->job, &done, err);
    while (rc == RB_OK && !done) {
        rc = rb_job_keep(r->job, -1, &done, err);
        if (rc == RB_ECANCELED && !cli_signal()) {
            cli_reap();
            rc = RB_OK;
        }
    }
    if (rc == RB_OK)
        return cli_done(CLI_EXIT_OK, NULL);
    if (rc == RB_ECANCELED)
        return interrupted(r, err);
    if (rc == RB_EBROKEN && rb_job_can_restart(r->job))
        return note_break(r, err);
    return cli_fail_as(cli_exit_code(rc, 0), NULL, err->msg, r->o.name);
}

/* CMD was ended under this runner, not by itself: the watchdog's
 * deadline came without a renewal (the runner was stopped or cut off), or
 * the watchdog died. The others may already have taken this member for
 * dead; tell them, and take the job's word. */
static int lost_right(cli_runner *r, int st, rb_error *err)
{
    char what[RB_NAME_MAX + 96];
    int status = cli_run_cmd_stop(r, SIGKILL), rc;

    snprintf(what, sizeof(what), st == CLI_SUP_EXPIRED
             ? "%s's lease ran out before its runner renewed it (stopped or "
               "cut off)"
             : "%s's command lost its watchdog", r->o.id);
    rc = rb_job_fail(r->job, what, status, err);
    if (rc == RB_EBROKEN && rb_job_can_restart(r->job))
        return note_break(r, err);
    if (rc == RB_OK) {
        /* It had ended well before: still, this member's CMD did not. */
        snprintf(err->msg, sizeof(err->msg), "%s: %s", r->o.name, what);
        rc = RB_EBROKEN;
    }
    return cli_fail_as(rc == RB_EBROKEN ? CLI_EXIT_BROKEN
                                        : cli_exit_code(rc, 0),
                       NULL, err->msg, r->o.name);
}

/* One attempt: enter, run CMD while keeping the lease, leave. -1: run
 * the next attempt; else the exit code. */
static int attempt(cli_runner *r)
{
    rb_error err;
    int rc, done = 0;

    if (cli_run_cmd_arm(r, &err) != RB_OK)
        return cli_fail(CLI_EXIT_REDIS, "%s", err.msg);
    rc = rb_job_enter(r->job, &err);
    if (rc != RB_OK)
        cli_run_cmd_disarm(r);
    if (rc == RB_ECANCELED) {
        char what[RB_NAME_MAX + 32];

        snprintf(what, sizeof(what), "%s interrupted", r->o.id);
        rb_job_fail(r->job, what, -1, NULL);
        return cli_fail(cli_exit_code(rc, cli_signal()), "%s: %s",
                        r->o.name, what);
    }
    if (rc == RB_EBROKEN && rb_job_can_restart(r->job))
        return note_break(r, &err);
    if (rc != RB_OK)
        return cli_fail_as(cli_exit_code(rc, 0), NULL, err.msg, r->o.name);
    if (rb_job_attempt(r->job) > 0 && !r->quiet)
        cli_message("%s; restart %ld of %ld",
                    r->last_break[0] ? r->last_break
                                     : "joined a job that had broken before "
                                       "this runner started",
                    rb_job_attempt(r->job), r->o.restarts);
    if (cli_run_cmd_start(r, &err) != RB_OK) {
        char what[RB_NAME_MAX + 64];

        snprintf(what, sizeof(what), "%s's command could not start",
                 r->o.id);
        rb_job_fail(r->job, what, 127, NULL);
        return cli_fail(CLI_EXIT_REDIS, "%s", err.msg);
    }
    for (;;) {
        int st;

        rc = rb_job_keep(r->job, cli_run_progress(r->job, &r->sup), &done,
                         &err);
        if (rc == RB_OK)
            cli_sup_held(&r->sup, cli_now_ms() + rb_job_lease_left_ms(r->job));
        if (rc == RB_ECANCELED || rc == RB_OK) {
            if (cli_signal())   /* preempted: the job stops */
                return cli_run_stop_job(r->job, r->o.id, &err) != RB_OK
                           ? interrupted(r, &err) : hold_stop(r, &err);
            if (rb_job_stopping(r->job))
                return hold_stop(r, &err);
            cli_reap();
            cli_sup_job_control(&r->sup);
            st = cli_sup_check(&r->sup);
            if (st == CLI_SUP_RUNNING)
                continue;
            if (st == CLI_SUP_STALLED)
                return stalled(r, &err);
            if (st == CLI_SUP_ENDED)
                /* Ended: what it left (its group, escaped daemons) goes
                 * now. */
                return cmd_ended(r, cli_run_cmd_stop(r, SIGTERM), &err);
            return lost_right(r, st, &err);
        }
        /* Broken, lost, or this member's lease could not be renewed: CMD
         * stops first, so a restart never runs two copies of one rank. */
        cli_run_cmd_stop(r, SIGTERM);
        if (rc == RB_EBROKEN && rb_job_can_restart(r->job))
            return note_break(r, &err);
        return cli_fail_as(cli_exit_code(rc, 0), NULL, err.msg, r->o.name);
    }
}

int cmd_run(int argc, char **argv)
{
    run_flags f;
    void *table[16 + CLI_COMMON_COUNT + 1];
    size_t nt = 0;
    cli_runner r;
    rb_error err;
    rb_conn *conn = NULL;
    char default_id[192];
    int code, i, cmd_at;

    memset(&r, 0, sizeof(r));
    r.o = (rb_job_opts)RB_JOB_OPTS_INIT;
    r.wake = -1;
    /* The command starts after the first "--"; argtable never sees it. */
    for (cmd_at = 1; cmd_at < argc; cmd_at++)
        if (strcmp(argv[cmd_at], "--") == 0)
            break;
    cli_common_init(&f.common);
    f.name = arg_str1(NULL, "name", "NAME", "the job's name (no braces, "
                      "spaces or control characters; up to 200 bytes)");
    f.n = arg_str0(NULL, "n", "N", "members, 1..100000 (may be left out "
                   "with --expect)");
    f.id = arg_str0(NULL, "id", "ID", "this member's id (default "
                    "hostname:pid); a runner started again for a lost "
                    "member gives its id");
    f.expect = arg_str0(NULL, "expect", "ID,ID,..", "the members' ids: "
                        "RBARRIER_RANK is the place in this list");
    f.timeout = arg_str0(NULL, "timeout", "DUR", "give up entering after "
                         "DUR (exit 124; the job breaks); 0: no limit "
                         "(default)");
    f.lease = arg_str0(NULL, "lease", "DUR", "a member silent this long is "
                       "presumed dead and breaks the job (default 10s, "
                       "0.1s..1d)");
    f.ttl = arg_str0(NULL, "ttl", "DUR", "idle job state expires after "
                     "DUR (default 1d, 1s..365d)");
    f.restarts = arg_str0(NULL, "restarts", "K", "after a break, meet "
                          "again and rerun CMD, up to K times (default 0)");
    f.kill_after = arg_str0(NULL, "kill-after", "DUR", "when CMD is to "
                            "stop, SIGKILL its process group DUR after "
                            "SIGTERM (default 10s, as timeout -k)");
    f.nproc = arg_str0(NULL, "nproc-per-node", "P", "start P members here "
                       "(ids ID.0..ID.P-1), each a full member; exit with "
                       "the job's outcome (--n counts all members)");
    f.master_addr = arg_str0(NULL, "master-addr", "A", "MASTER_ADDR for "
                             "every member (default: the address rank 0 "
                             "reaches Redis from)");
    f.master_port = arg_str0(NULL, "master-port", "PORT", "MASTER_PORT for "
                             "every member (default: a port free on rank "
                             "0's host, fresh per restart)");
    f.quiet = arg_lit0("q", "quiet", "no notes on stderr about restarts");
    f.stall_after = arg_str0(NULL, "stall-after", "DUR", "a command that "
                             "makes no progress for DUR is stuck: the job "
                             "breaks, naming the member most likely stuck "
                             "(DUR must exceed CMD's start-up time)");
    f.progress_file = arg_str0(NULL, "progress-file", "PATH", "a change of "
                               "PATH (a log CMD writes) is progress, as a "
                               "touch of $RBARRIER_PROGRESS is");
    f.end = arg_end(10);
    table[nt++] = f.name;
    table[nt++] = f.n;
    table[nt++] = f.id;
    table[nt++] = f.expect;
    table[nt++] = f.timeout;
    table[nt++] = f.lease;
    table[nt++] = f.ttl;
    table[nt++] = f.restarts;
    table[nt++] = f.kill_after;
    table[nt++] = f.nproc;
    table[nt++] = f.master_addr;
    table[nt++] = f.master_port;
    table[nt++] = f.stall_after;
    table[nt++] = f.progress_file;
    table[nt++] = f.quiet;
    table[nt++] = f.no_history = cli_no_history_flag();
    nt += (size_t)cli_common_table(&f.common, table + nt);
    table[nt++] = f.end;

    if (cmd_at >= argc - 1 && !(cli_help_flag(argc, argv) && argc == 2)) {
        code = cli_fail(CLI_EXIT_USAGE, "run needs a command after '--' "
                        "(rbarrier run --name NAME --n N -- CMD [ARGS])");
        goto out;
    }
    code = cli_parse(cmd_at < argc ? cmd_at : argc, argv, table, f.end,
                     &f.common, argv[0], run_description);
    if (code >= 0)
        goto out;
    r.argv = argv + cmd_at + 1;
    if (parse_flags(&f, &r, default_id, sizeof(default_id), &err) != RB_OK ||
        (r.nproc && cli_nproc_check(&r.o, r.nproc, &err) != RB_OK) ||
        rb_job_new(&r.job, NULL, &r.o, &err) != RB_OK) {
        code = cli_fail(CLI_EXIT_USAGE, "%s", err.msg);
        goto out;
    }
    if (r.nproc) {
        code = cli_nproc_run(argc, argv, cmd_at, r.nproc, r.o.id);
        goto out;
    }
    r.quiet = f.quiet->count > 0;
    if (cli_install_signals() != 0 || (r.wake = epoll_create1(EPOLL_CLOEXEC)) < 0) {
        code = cli_fail(CLI_EXIT_REDIS, "epoll: %s", strerror(errno));
        goto out;
    }
    {
        struct epoll_event ev = { .events = EPOLLIN };

        ev.data.fd = cli_signal_fd();
        epoll_ctl(r.wake, EPOLL_CTL_ADD, cli_signal_fd(), &ev);
    }
    if ((code = cli_config_open_cancel(&r.cfg, r.wake, &conn)) >= 0 ||
        (code = cli_history_off(f.no_history, conn, r.o.prefix, r.o.name,
                                r.o.ttl_ms)) >= 0)
        goto out;
    rb_job_free(r.job);
    if (rb_job_new(&r.job, conn, &r.o, &err) != RB_OK) {
        code = cli_fail(CLI_EXIT_USAGE, "%s", err.msg);
        goto out;
    }
    {
        cli_json *j = cli_out_json();

        if (j) {
            cli_json_kstr(j, "name", r.o.name);
            cli_json_kstr(j, "id", r.o.id);
            cli_json_kint(j, "n", r.o.n);
        }
    }
    while ((code = attempt(&r)) < 0)
        ;
out:
    cli_run_cmd_stop(&r, cli_signal());
    if (r.wake >= 0)
        close(r.wake);
    rb_job_free(r.job);
    rb_conn_free(conn);
    cli_config_free(&r.cfg);
    arg_freetable(table, nt);
    (void)i;
    return code;
}
