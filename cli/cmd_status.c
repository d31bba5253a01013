/* rbarrier status: look at a barrier's open round. */

#include <stdio.h>
#include <string.h>

#include "cli.h"

/* "broken <reason>" -> outcome and reason, as --json gives every outcome. */
static void json_outcome(cli_json *j, const char *text)
{
    const char *space = strchr(text, ' ');

    cli_json_begin_obj(j);
    if (space) {
        cli_json_key(j, "outcome");
        cli_json_strn(j, text, (size_t)(space - text));
        cli_json_kstr(j, "reason", space + 1);
    } else {
        cli_json_kstr(j, "outcome", text);
    }
    cli_json_end_obj(j);
}

static void print_status(const char *name, const rb_status *st)
{
    cli_json *j = cli_out_json();
    size_t i;

    if (j) {
        cli_json_kint(j, "gen", st->gen);
        cli_json_kint(j, "n", st->n);
        cli_json_kint(j, "arrived", (long long)st->members_count);
        cli_json_key(j, "members");
        cli_json_begin_arr(j);
        for (i = 0; i < st->members_count; i++) {
            cli_json_begin_obj(j);
            cli_json_kstr(j, "id", st->members[i].id);
            cli_json_kint(j, "lease_left_ms", st->members[i].lease_left_ms);
            cli_json_end_obj(j);
        }
        cli_json_end_arr(j);
        cli_json_key(j, "last");
        if (st->last_outcome[0])
            json_outcome(j, st->last_outcome);
        else
            cli_json_null(j);
        return;
    }
    if (!st->exists)
        return;
    printf("name          %s\n", name);
    printf("generation    %lld\n", st->gen);
    if (st->members_count)
        printf("arrived       %zu/%ld\n", st->members_count, st->n);
    else
        printf("arrived       0 (idle)\n");
    /* Ids and outcomes come from Redis, where any client may have written
     * them: escaped, so none can move the terminal's cursor. */
    for (i = 0; i < st->members_count; i++) {
        long long left = st->members[i].lease_left_ms;
        char id[4 * RB_NAME_MAX + 1];

        cli_escape(id, sizeof(id), st->members[i].id);
        if (left >= 0)
            printf("  %-30s lease left %lld.%03llds\n", id, left / 1000,
                   left % 1000);
        else
            printf("  %-30s lease EXPIRED %lld.%03llds ago\n", id,
                   -left / 1000, -left % 1000);
    }
    {
        char last[4 * 512];

        cli_escape(last, sizeof(last), st->last_outcome[0]
                                           ? st->last_outcome
                                           : "(none kept)");
        printf("last outcome  %s\n", last);
    }
}

static void print_ms(long long ms)
{
    if (ms >= 0)
        printf("%lld.%03llds", ms / 1000, ms % 1000);
    else
        printf("EXPIRED %lld.%03llds ago", -ms / 1000, -ms % 1000);
}

/* The lock of the same name, when it exists: JSON "lock", or lines after
 * the barrier's. */
static void print_lock(const rb_lock_state *ls)
{
    cli_json *j = cli_out_json();
    size_t i;

    if (j) {
        cli_json_key(j, "lock");
        cli_json_begin_obj(j);
        cli_json_kint(j, "max", ls->max);
        cli_json_kint(j, "token", ls->token);
        cli_json_key(j, "holders");
        cli_json_begin_arr(j);
        for (i = 0; i < ls->holders_count; i++) {
            cli_json_begin_obj(j);
            cli_json_kstr(j, "id", ls->holders[i].id);
            cli_json_kint(j, "token", ls->holders[i].token);
            cli_json_kint(j, "lease_left_ms", ls->holders[i].lease_left_ms);
            cli_json_kint(j, "held_ms", ls->holders[i].held_ms);
            cli_json_kstr(j, "mode", ls->holders[i].shared ? "shared"
                                                           : "exclusive");
            cli_json_end_obj(j);
        }
        cli_json_end_arr(j);
        cli_json_key(j, "waiters");
        cli_json_begin_arr(j);
        for (i = 0; i < ls->waiters_count; i++) {
            cli_json_begin_obj(j);
            cli_json_kstr(j, "id", ls->waiters[i].id);
            cli_json_kint(j, "lease_left_ms", ls->waiters[i].lease_left_ms);
            cli_json_kstr(j, "mode", ls->waiters[i].shared ? "shared"
                                                           : "exclusive");
            cli_json_end_obj(j);
        }
        cli_json_end_arr(j);
        cli_json_end_obj(j);
        return;
    }
    if (ls->max == 0)
        printf("lock          free (last token %lld)\n", ls->token);
    else
        printf("lock          %zu/%ld held, %zu waiting (last token %lld)\n",
               ls->holders_count, ls->max, ls->waiters_count, ls->token);
    for (i = 0; i < ls->holders_count; i++) {
        char id[4 * RB_NAME_MAX + 1];

        cli_escape(id, sizeof(id), ls->holders[i].id);
        printf("  holder %-23s token %lld, %s, held %lld.%03llds, lease "
               "left ", id, ls->holders[i].token,
               ls->holders[i].shared ? "shared" : "exclusive",
               ls->holders[i].held_ms / 1000, ls->holders[i].held_ms % 1000);
        print_ms(ls->holders[i].lease_left_ms);
        printf("\n");
    }
    for (i = 0; i < ls->waiters_count; i++) {
        char id[4 * RB_NAME_MAX + 1];

        cli_escape(id, sizeof(id), ls->waiters[i].id);
        printf("  waiter %-23s #%zu in line, %s, lease left ", id, i + 1,
               ls->waiters[i].shared ? "shared" : "exclusive");
        print_ms(ls->waiters[i].lease_left_ms);
        printf("\n");
    }
}

int cmd_status(int argc, char **argv)
{
    cli_common common;
    struct arg_str *name;
    struct arg_end *end;
    void *table[1 + CLI_COMMON_COUNT + 1];
    rb_conn *conn = NULL;
    rb_status st = { 0, 0, 0, NULL, 0, NULL };
    rb_lock_state ls;
    rb_error err;
    cli_config cfg = CLI_CONFIG_INIT;
    int code, rc, job = 0;

    memset(&ls, 0, sizeof(ls));
    cli_common_init(&common);
    name = arg_str1(NULL, "name", "NAME", "barrier, job or lock name");
    end = arg_end(10);
    table[0] = name;
    table[1 + cli_common_table(&common, table + 1)] = end;
    code = cli_parse(argc, argv, table, end, &common, argv[0],
                     "Show a barrier's open generation, its party count, who "
                     "has arrived with\nthe lease each has left, and the last "
                     "round's outcome; the job of that\nname (rbarrier run), "
                     "if there is one: each member's rank, state,\nlease left "
                     "and exit status, the ids missing and the reason of a "
                     "break;\nand the lock of that name, if there is one: its "
                     "holders (token, lease\nleft) and its waiters in line. "
                     "Read-only.");
    if (code >= 0)
        goto out;
    cli_json_kstr(cli_out_json(), "name", name->sval[0]);
    code = cli_open_barrier(&common, name->sval[0], &cfg, &conn);
    if (code >= 0)
        goto out;
    rc = rb_barrier_status(&st, conn, cfg.prefix, name->sval[0], &err);
    if (rc == RB_OK)
        rc = rb_lock_status(&ls, conn, cfg.prefix, name->sval[0], &err);
    code = cli_exit_code(rc, cli_signal());
    if (rc != RB_OK) {
        cli_fail_as(code, NULL, err.msg, name->sval[0]);
    } else {
        int has_lock = ls.max > 0 || ls.token > 0;

        print_status(name->sval[0], &st);
        if (!st.exists && has_lock && !cli_out_json())
            printf("name          %s\n", name->sval[0]);
        if (has_lock)
            print_lock(&ls);
        rc = cli_job_status(conn, cfg.prefix, name->sval[0], &job, &err);
        code = cli_exit_code(rc, cli_signal());
        if (rc != RB_OK)
            cli_fail_as(code, NULL, err.msg, name->sval[0]);
        else if (cli_out_json())
            cli_json_kbool(cli_out_json(), "exists",
                           st.exists || job || has_lock);
        else if (!st.exists && !job && !has_lock)
            cli_message("%s: unknown (no barrier, job or lock of that name: "
                        "never used, or expired)", name->sval[0]);
        if (rc == RB_OK)
            cli_done(code, NULL);
    }
out:
    rb_lock_state_clear(&ls);
    rb_status_clear(&st);
    rb_conn_free(conn);
    cli_config_free(&cfg);
    arg_freetable(table, sizeof(table) / sizeof(table[0]));
    return code;
}
