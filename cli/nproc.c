/* --nproc-per-node P: one invocation, P members here. Each member is a
 * runner of its own (this program again, with --id ID.k), so each keeps
 * its own lease, guard and command exactly as a runner started by hand:
 * no second way of being a member. This process only starts them, passes
 * a signal on, and sums their ends up into one exit status. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "torch_env.h"

#define NPROC_ID_MAX (RB_NAME_MAX + 1)

static pid_t kids[RB_N_MAX > 4096 ? 4096 : RB_N_MAX];
static volatile sig_atomic_t nkids, got_signal;

static void member_id(char *buf, size_t len, const char *id, long k)
{
    snprintf(buf, len, "%s.%ld", id, k);
}

int cli_nproc_check(const rb_job_opts *o, long p, rb_error *err)
{
    char id[NPROC_ID_MAX + 32];
    rb_job_opts m = *o;
    rb_job *j;
    long k;

    if (p > (long)(sizeof(kids) / sizeof(kids[0])))
        return cli_error(err, "--nproc-per-node is at most %zu",
                         sizeof(kids) / sizeof(kids[0]));
    for (k = 0; k < p; k++) {
        member_id(id, sizeof(id), o->id, k);
        m.id = id;
        if (rb_check_id(id, "--id with --nproc-per-node", err) != RB_OK ||
            rb_job_new(&j, NULL, &m, err) != RB_OK)
            return RB_EINVAL;
        rb_job_free(j);
    }
    return RB_OK;
}

static void pass_on(int sig)
{
    int i;

    got_signal = sig;
    for (i = 0; i < nkids; i++)
        if (kids[i] > 0)
            kill(kids[i], sig);
}

/* The child: its own process group, so a terminal's Ctrl-C reaches it
 * once (through this process), not twice; and it stops (as a signalled
 * runner does) when this process dies. */
static void exec_member(char **args, pid_t parent)
{
    sigset_t none;

    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        _exit(128 + SIGTERM);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    execv("/proc/self/exe", args);
    fprintf(stderr, "rbarrier: cannot run /proc/self/exe: %s\n",
            strerror(errno));
    _exit(127);
}

int cli_nproc_run(int argc, char **argv, int cmd_at, long p, const char *id)
{
    char member[NPROC_ID_MAX + 32];
    char **args = calloc((size_t)argc + 4, sizeof(*args));
    struct sigaction sa;
    int n = 0, at_id, i, first_own = -1, broke = 0, status;
    long k, ended = 0;
    pid_t parent = getpid();

    if (args == NULL)
        return cli_fail(CLI_EXIT_REDIS, "out of memory");
    args[n++] = (char *)"rbarrier";
    args[n++] = argv[0];
    for (i = 1; i < cmd_at; i++) {
        if (strcmp(argv[i], "--id") == 0 ||
            strcmp(argv[i], "--nproc-per-node") == 0) {
            i++;
            continue;
        }
        if (strncmp(argv[i], "--id=", 5) == 0 ||
            strncmp(argv[i], "--nproc-per-node=", 17) == 0)
            continue;
        args[n++] = argv[i];
    }
    args[n++] = (char *)"--id";
    at_id = n++;
    for (i = cmd_at; i < argc; i++)
        args[n++] = argv[i];
    args[n] = NULL;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = pass_on;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    for (k = 0; k < p && !got_signal; k++) {
        pid_t pid;

        /* fork copies it: one buffer serves every member. */
        member_id(member, sizeof(member), id, k);
        args[at_id] = member;
        if ((pid = fork()) < 0)
            break;
        if (pid == 0)
            exec_member(args, parent);
        kids[k] = pid;
        nkids = (sig_atomic_t)(k + 1);
    }
    if (k < p && !got_signal)
        cli_message("cannot start member %ld: %s", k, strerror(errno));
    if (got_signal)
        pass_on(got_signal);
    while (ended < nkids) {
        pid_t pid = waitpid(-1, &status, 0);
        int code;

        if (pid < 0 && errno == EINTR)
            continue;
        if (pid < 0)
            break;
        for (i = 0; i < nkids && kids[i] != pid; i++)
            ;
        if (i == nkids)
            continue;
        kids[i] = -1;
        ended++;
        code = WIFEXITED(status) ? WEXITSTATUS(status)
                                 : 128 + WTERMSIG(status);
        if (code == CLI_EXIT_BROKEN)
            broke = 1;
        else if (code != 0 && first_own < 0)
            first_own = code;
    }
    free(args);
    if (k < p && first_own < 0)
        return got_signal ? 128 + got_signal : CLI_EXIT_REDIS;
    return first_own >= 0 ? first_own : broke ? CLI_EXIT_BROKEN : 0;
}
