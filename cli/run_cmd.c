/* run's command (run_cmd.h): its environment, and its start and stop
 * under the supervisor, whose watchdog holds this member's lease
 * deadline, so no copy of this rank outlives the membership. */
#include <signal.h>
#include <stdio.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "clock.h"
#include "run_cmd.h"

static void env_str(cli_runner *r, int i, const char *name, const char *v)
{
    snprintf(r->env_text[i], sizeof(r->env_text[i]), "%s=%s", name, v);
    r->env[i] = r->env_text[i];
}

static void env_int(cli_runner *r, int i, const char *name, long long v)
{
    snprintf(r->env_text[i], sizeof(r->env_text[i]), "%s=%lld", name, v);
    r->env[i] = r->env_text[i];
}

/* CMD's environment; the URL without its password (that goes as
 * REDISCLI_AUTH, as redis-cli takes it: in no argv, and in no URL a log
 * may show). */
static int build_env(cli_runner *r)
{
    char text[sizeof(r->env_text[0]) - 32];
    int i = 0;

    if (cli_config_child_url(&r->cfg, text, sizeof(text)) != 0)
        return -1;
    env_str(r, i++, "RBARRIER_JOB", r->o.name);
    env_str(r, i++, "RBARRIER_ID", r->o.id);
    env_int(r, i++, "RBARRIER_N", r->o.n);
    env_int(r, i++, "RBARRIER_RANK", rb_job_rank(r->job));
    env_int(r, i++, "RBARRIER_RESTART", rb_job_attempt(r->job));
    env_str(r, i++, "RBARRIER_URL", text);
    env_str(r, i++, "RBARRIER_NAME", r->o.name);
    env_int(r, i++, "RBARRIER_GEN", rb_job_epoch(r->job));
    env_int(r, i++, "RBARRIER_INDEX", rb_job_rank(r->job));
    if (cli_config_password(&r->cfg))
        env_str(r, i++, "REDISCLI_AUTH", cli_config_password(&r->cfg));
    i += cli_torch_env_build(&r->torch, r->job, &r->o, r->o.master_addr,
                             r->o.master_port, r->env + i);
    r->env[i] = NULL;
    return 0;
}

void cli_run_watch(cli_runner *r, int fd, int on)
{
    struct epoll_event ev = { .events = EPOLLIN };

    if (fd < 0)
        return;
    ev.data.fd = fd;
    epoll_ctl(r->wake, on ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, fd, &ev);
}

/* The supervisor's settings for CMD, all but what the entry decides. */
static void sup_opts(const cli_runner *r, cli_sup_opts *o)
{
    *o = (cli_sup_opts)CLI_SUP_OPTS_INIT;
    o->argv = (const char *const *)r->argv;
    o->kill_after_ms = r->kill_after_ms;
    o->lease_ms = r->o.lease_ms > 0 ? r->o.lease_ms : 10000;
    o->stall_after_ms = r->stall_after_ms;
    o->progress_file = r->progress_file;
    /* Under --json stdout carries only the result. */
    if (cli_out_json())
        o->stdout_fd = STDERR_FILENO;
}

/* CMD's watchdog, forked while the job is entered: once the members are
 * in, every one of a host starts its CMD at once, and a fork and a
 * cgroup each then would queue on the same CPUs. */
int cli_run_cmd_arm(cli_runner *r, rb_error *err)
{
    cli_sup_opts o;

    sup_opts(r, &o);
    return cli_sup_arm(&r->sup, &o, err);
}

void cli_run_cmd_disarm(cli_runner *r)
{
    if (!r->running && r->sup.started)
        cli_sup_stop(&r->sup, SIGKILL);
}

int cli_run_cmd_start(cli_runner *r, rb_error *err)
{
    cli_sup_opts o;

    if (build_env(r) != 0) {
        cli_run_cmd_disarm(r);
        return cli_error(err, "the URL is too long to hand on to CMD");
    }
    sup_opts(r, &o);
    o.env = r->env;
    o.held_until_ms = cli_now_ms() + rb_job_lease_left_ms(r->job);
    if (cli_sup_go(&r->sup, &o, err) != RB_OK)
        return RB_EINVAL;
    r->running = 1;
    /* The end of CMD and a Ctrl-Z wake the library's blocking read. */
    cli_run_watch(r, cli_sup_fd(&r->sup), 1);
    cli_run_watch(r, cli_jobctl_fd(), 1);
    return RB_OK;
}

/* CMD's whole tree gets sig (0: SIGTERM), SIGKILL --kill-after later (or
 * sooner: before the lease can pass). Returns CMD's status. */
int cli_run_cmd_stop(cli_runner *r, int sig)
{
    if (!r->running)
        return r->sup.status;
    cli_run_watch(r, cli_sup_fd(&r->sup), 0);
    cli_run_watch(r, cli_jobctl_fd(), 0);
    r->running = 0;
    return cli_sup_stop(&r->sup, sig);
}

