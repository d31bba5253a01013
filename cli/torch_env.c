/* torchrun's environment (DESIGN.md "Frameworks"): the variables its
 * elastic agent gives each worker (local_elastic_agent.py, _start_workers),
 * so a program written for torchrun runs under `rbarrier run` unchanged.
 * One role ("default"), so ROLE_* equal the global ones, as torchrun's
 * for a single role. Where torchrun's agents exchange the rest through
 * their own store, the job's entering round hands it round (rb_job_rdv.c):
 * the members' grouping by host and rank 0's endpoint, fresh per attempt. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "torch_env.h"

/* The first word of a file's first line, if it is a usable id. */
static int read_id_file(const char *path, char *buf, size_t len)
{
    char line[256];
    FILE *f = fopen(path, "r");
    int ok = 0;

    if (f == NULL)
        return 0;
    if (fgets(line, sizeof(line), f)) {
        line[strcspn(line, " \t\r\n")] = '\0';
        ok = line[0] != '\0' && strlen(line) < len &&
             rb_check_id(line, "machine id", NULL) == RB_OK;
        if (ok)
            snprintf(buf, len, "%s", line);
    }
    fclose(f);
    return ok;
}

int cli_host_id(char *buf, size_t len, rb_error *err)
{
    const char *h = getenv("RBARRIER_HOST");

    if (h && h[0]) {
        if (rb_check_id(h, "$RBARRIER_HOST", err) != RB_OK)
            return RB_EINVAL;
        snprintf(buf, len, "%s", h);
        return RB_OK;
    }
    if (read_id_file("/etc/machine-id", buf, len))
        return RB_OK;
    if (gethostname(buf, len) != 0 || buf[0] == '\0' ||
        rb_check_id(buf, "host name", NULL) != RB_OK)
        snprintf(buf, len, "localhost");
    buf[len - 1] = '\0';
    return RB_OK;
}

int cli_check_master_addr(const char *a, rb_error *err)
{
    size_t n = strlen(a);

    /* What job-enter takes as an endpoint's address, and a shell's word. */
    if (n == 0 || n > CLI_MASTER_ADDR_MAX ||
        strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                  "0123456789.:-%") != n)
        return cli_error(err, "--master-addr must be an address or host "
                         "name of 1..%d letters, digits and .:-%%",
                         CLI_MASTER_ADDR_MAX);
    return RB_OK;
}

static int var(cli_torch_env *t, const char **env, int i, const char *name,
               const char *s)
{
    snprintf(t->text[i], sizeof(t->text[i]), "%s=%s", name, s);
    env[i] = t->text[i];
    return i + 1;
}

static int var_int(cli_torch_env *t, const char **env, int i,
                   const char *name, long long v)
{
    char num[24];

    snprintf(num, sizeof(num), "%lld", v);
    return var(t, env, i, name, num);
}
#define VAR_INT(name, v) i = var_int(t, env, i, name, (long long)(v))
#define VAR_STR(name, s) i = var(t, env, i, name, s)

int cli_torch_env_build(cli_torch_env *t, const rb_job *j,
                        const rb_job_opts *o, const char *addr, int port,
                        const char **env)
{
    const char *master = addr ? addr : rb_job_master_addr(j);
    int i = 0;

    VAR_INT("RANK", rb_job_rank(j));
    VAR_INT("WORLD_SIZE", o->n);
    VAR_INT("LOCAL_RANK", rb_job_local_rank(j));
    VAR_INT("LOCAL_WORLD_SIZE", rb_job_local_world(j));
    VAR_INT("GROUP_RANK", rb_job_group_rank(j));
    VAR_INT("GROUP_WORLD_SIZE", rb_job_group_world(j));
    VAR_INT("ROLE_RANK", rb_job_rank(j));
    VAR_INT("ROLE_WORLD_SIZE", o->n);
    VAR_STR("MASTER_ADDR", master ? master : "127.0.0.1");
    VAR_INT("MASTER_PORT", port ? port : rb_job_master_port(j));
    VAR_INT("TORCHELASTIC_RESTART_COUNT", rb_job_attempt(j));
    VAR_INT("TORCHELASTIC_MAX_RESTARTS", o->restarts);
    VAR_STR("TORCHELASTIC_RUN_ID", o->name);
    /* An inherited "True" would make every rank a client of an agent's
     * store that does not exist, and hang: there is no agent store. */
    VAR_STR("TORCHELASTIC_USE_AGENT_STORE", "False");
    return i;
}
