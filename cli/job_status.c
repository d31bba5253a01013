/* The job part of `rbarrier status --name J` and `reset --name J --job`:
 * each member with its rank, state, lease and exit status, the ids
 * missing, and the reason of the last break. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

/* Ids of --expect that are not members of the epoch ("" none). */
static void missing_ids(const rb_job_status *st, char *buf, size_t len)
{
    const char *p = st->expect;
    size_t used = 0, i;

    buf[0] = '\0';
    while (*p) {
        size_t l = strcspn(p, ",");
        int found = 0;

        for (i = 0; i < st->members_count; i++)
            if (strlen(st->members[i].id) == l &&
                memcmp(st->members[i].id, p, l) == 0)
                found = 1;
        if (!found && used + l + 2 < len) {
            used += (size_t)snprintf(buf + used, len - used, "%s%.*s",
                                     used ? "," : "", (int)l, p);
        }
        p += l + (p[l] == ',');
    }
}

static void json_job(cli_json *j, const rb_job_status *st,
                     const char *missing)
{
    size_t i;

    cli_json_key(j, "job");
    cli_json_begin_obj(j);
    cli_json_kint(j, "epoch", st->epoch);
    cli_json_kstr(j, "state", st->state);
    cli_json_kint(j, "restart", st->attempt);
    cli_json_kint(j, "restarts", st->restarts);
    cli_json_kint(j, "n", st->n);
    cli_json_key(j, "members");
    cli_json_begin_arr(j);
    for (i = 0; i < st->members_count; i++) {
        const rb_job_member *m = &st->members[i];

        cli_json_begin_obj(j);
        cli_json_kstr(j, "id", m->id);
        cli_json_kint(j, "rank", m->rank);
        cli_json_kstr(j, "state", m->state);
        cli_json_key(j, "lease_left_ms");
        if (m->lease_left_ms >= 0)
            cli_json_int(j, m->lease_left_ms);
        else
            cli_json_null(j);
        cli_json_key(j, "exit");
        if (m->exit_status >= 0)
            cli_json_int(j, m->exit_status);
        else
            cli_json_null(j);
        cli_json_key(j, "progress_age_ms");
        if (m->progress_age_ms >= 0)
            cli_json_int(j, m->progress_age_ms);
        else
            cli_json_null(j);
        cli_json_end_obj(j);
    }
    cli_json_end_arr(j);
    cli_json_key(j, "missing");
    cli_json_begin_arr(j);
    for (i = 0; missing[i]; i += strcspn(missing + i, ",") +
                               (missing[i + strcspn(missing + i, ",")] == ','))
        cli_json_strn(j, missing + i, strcspn(missing + i, ","));
    cli_json_end_arr(j);
    cli_json_key(j, "reason");
    if (st->reason[0])
        cli_json_str(j, st->reason);
    else
        cli_json_null(j);
    cli_json_end_obj(j);
}

int cli_job_status(rb_conn *conn, const char *prefix, const char *name,
                   int *exists, rb_error *err)
{
    rb_job_status st;
    cli_json *j = cli_out_json();
    char missing[1024], text[4 * 512 + 1];
    size_t i;
    int rc;

    *exists = 0;
    if ((rc = rb_job_status_get(&st, conn, prefix, name, err)) != RB_OK)
        return rc;
    if (st.epoch == 0)
        return RB_OK;
    *exists = 1;
    missing_ids(&st, missing, sizeof(missing));
    if (j) {
        json_job(j, &st, missing);
        rb_job_status_clear(&st);
        return RB_OK;
    }
    printf("job           epoch %lld, %s", st.epoch,
           strcmp(st.state, "enter") == 0 ? "entering"
           : strcmp(st.state, "run") == 0 ? "running"
           : strcmp(st.state, "done") == 0 ? "done (everyone left)"
           : strcmp(st.state, "stop") == 0 ? "stopping (commands save and exit)"
           : strcmp(st.state, "stopped") == 0 ? "stopped"
                                            : "over (broken)");
    if (st.restarts)
        printf(", restart %ld of %ld", st.attempt, st.restarts);
    printf("\n");
    for (i = 0; i < st.members_count; i++) {
        const rb_job_member *m = &st.members[i];

        cli_escape(text, sizeof(text), m->id);
        printf("  %-30s rank %-4ld %-9s", text, m->rank, m->state);
        if (m->lease_left_ms >= 0)
            printf(" lease left %lld.%03llds", m->lease_left_ms / 1000,
                   m->lease_left_ms % 1000);
        if (m->exit_status >= 0)
            printf(" exit %d", m->exit_status);
        if (m->progress_age_ms >= 0)
            printf(" progress %lld.%llds ago", m->progress_age_ms / 1000,
                   m->progress_age_ms % 1000 / 100);
        printf("\n");
    }
    if (missing[0]) {
        cli_escape(text, sizeof(text), missing);
        printf("missing       %s\n", text);
    } else if ((long)st.members_count < st.n) {
        printf("missing       %ld of %ld\n", st.n - (long)st.members_count,
               st.n);
    }
    if (st.reason[0]) {
        cli_escape(text, sizeof(text), st.reason);
        printf("%s %s\n", st.state[0] == 's' ? "stopped      " : "broken       ",
               text);
    }
    rb_job_status_clear(&st);
    return RB_OK;
}
