/* rbarrier reset: break a barrier's open round and bring it back to a
 * usable state. */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The damaged keys as one line, whole however many there were. */
static char *join_removed(const rb_reset_result *rr)
{
    size_t i, len = 1;
    char *out;

    for (i = 0; i < rr->removed_count; i++)
        len += strlen(rr->removed[i]) + 2;
    if (!(out = malloc(len)))
        return NULL;
    out[0] = '\0';
    for (i = 0; i < rr->removed_count; i++) {
        if (i)
            strcat(out, ", ");
        strcat(out, rr->removed[i]);
    }
    return out;
}

/* A name with no barrier may still have a lock or a job: say which flag
 * resets it (best effort: a failed look-up adds nothing). */
static const char *other_kinds(rb_conn *conn, const char *prefix,
                               const char *name)
{
    rb_lock_state ls;
    rb_job_status js;
    int lock = 0, job = 0;

    if (rb_lock_status(&ls, conn, prefix, name, NULL) == RB_OK) {
        lock = ls.holders_count + ls.waiters_count > 0;
        rb_lock_state_clear(&ls);
    }
    memset(&js, 0, sizeof(js));
    if (rb_job_status_get(&js, conn, prefix, name, NULL) == RB_OK) {
        job = js.epoch != 0;
        rb_job_status_clear(&js);
    }
    if (lock && job)
        return " (but a lock and a job of that name are in use: --lock or "
               "--job resets them)";
    if (lock)
        return " (but a lock of that name is in use: --lock resets it)";
    if (job)
        return " (but a job of that name exists: --job resets it)";
    return "";
}

int cmd_reset(int argc, char **argv)
{
    cli_common common;
    struct arg_str *name;
    struct arg_lit *job, *lock;
    struct arg_end *end;
    void *table[3 + CLI_COMMON_COUNT + 1];
    rb_conn *conn = NULL;
    rb_error err;
    rb_reset_result rr = { 0, 0, NULL, 0 };
    char *removed = NULL;
    cli_config cfg = CLI_CONFIG_INIT;
    int code, rc;

    cli_common_init(&common);
    name = arg_str1(NULL, "name", "NAME", "barrier name (with --job or "
                    "--lock: the job's or the lock's)");
    job = arg_lit0(NULL, "job", "reset the job NAME instead: every member "
                   "stops its command and exits 3, restarts used up");
    lock = arg_lit0(NULL, "lock", "reset the lock NAME instead: revoke "
                    "every holder (each stops its command and exits 3) and "
                    "send every waiter away (exit 3)");
    end = arg_end(10);
    table[0] = name;
    table[1] = job;
    table[2] = lock;
    table[3 + cli_common_table(&common, table + 3)] = end;
    code = cli_parse(argc, argv, table, end, &common, argv[0],
                     "Break the barrier's open round with 'broken reset' "
                     "(its waiters exit 3)\nand forget its party count, so "
                     "the next round may use any --n.\n"
                     "With --job: stop the job NAME. With --lock: reset the "
                     "lock NAME (its fencing\ntoken goes on growing).");
    if (code >= 0)
        goto out;
    if (job->count && lock->count) {
        code = cli_fail(CLI_EXIT_USAGE, "--job and --lock name different "
                        "things: give one of them");
        goto out;
    }
    cli_json_kstr(cli_out_json(), "name", name->sval[0]);
    code = cli_open_barrier(&common, name->sval[0], &cfg, &conn);
    if (code >= 0)
        goto out;
    if (lock->count) {
        long holders = 0, waiters = 0;

        rc = rb_lock_reset(&holders, &waiters, conn, cfg.prefix, name->sval[0],
                           &err);
        code = cli_exit_code(rc, cli_signal());
        if (rc != RB_OK) {
            cli_fail_as(code, NULL, err.msg, name->sval[0]);
        } else if (cli_out_json()) {
            cli_json_kint(cli_out_json(), "holders", holders);
            cli_json_kint(cli_out_json(), "waiters", waiters);
            cli_done(code, NULL);
        } else {
            printf("%s: lock reset: %ld holder%s revoked, %ld waiter%s sent "
                   "away\n", name->sval[0], holders, holders == 1 ? "" : "s",
                   waiters, waiters == 1 ? "" : "s");
        }
        goto out;
    }
    if (job->count) {
        long long epoch = 0;

        rc = rb_job_reset(&epoch, conn, cfg.prefix, name->sval[0], &err);
        code = cli_exit_code(rc, cli_signal());
        if (rc != RB_OK) {
            cli_fail_as(code, NULL, err.msg, name->sval[0]);
        } else if (cli_out_json()) {
            cli_json_kint(cli_out_json(), "epoch", epoch);
            cli_done(code, NULL);
        } else if (epoch == 0) {
            printf("%s: no job running; nothing to reset\n", name->sval[0]);
        } else {
            printf("%s: job epoch %lld broken (reset)\n", name->sval[0],
                   epoch);
        }
        goto out;
    }
    rc = rb_barrier_reset(&rr, conn, cfg.prefix, name->sval[0], 0, &err);
    code = cli_exit_code(rc, cli_signal());
    if (rc == RB_OK && !(removed = join_removed(&rr))) {
        code = cli_exit_code(RB_ENOMEM, 0);
        cli_fail_as(code, NULL, "out of memory", name->sval[0]);
        goto out;
    }
    if (rc != RB_OK) {
        cli_fail_as(code, NULL, err.msg, name->sval[0]);
    } else if (cli_out_json()) {
        cli_json_kint(cli_out_json(), "gen", rr.gen);
        cli_json_kint(cli_out_json(), "arrived", rr.members);
        cli_json_kstr(cli_out_json(), "removed", removed);
        cli_done(code, NULL);
    } else {
        if (removed[0])
            printf("%s: removed damaged state (wrong type): %s\n",
                   name->sval[0], removed);
        if (rr.gen == 0 && !removed[0])
            printf("%s: no such barrier; nothing to reset%s\n",
                   name->sval[0], other_kinds(conn, cfg.prefix,
                                              name->sval[0]));
        else if (rr.gen != 0)
            printf("%s: round %lld broken (%ld arrived)\n", name->sval[0],
                   rr.gen, rr.members);
    }
out:
    free(removed);
    rb_reset_result_clear(&rr);
    rb_conn_free(conn);
    cli_config_free(&cfg);
    arg_freetable(table, sizeof(table) / sizeof(table[0]));
    return code;
}
