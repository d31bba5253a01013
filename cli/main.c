/* rbarrier: the command table. Each subcommand lives in cmd_<name>.c and
 * gets argv from its own name on. */

#include <stdio.h>
#include <string.h>

#include "cli.h"

#define X_PARAM (CLI_X_OK | CLI_X_REDIS | CLI_X_USAGE | CLI_X_UNREACHABLE | \
                 CLI_X_SIGNAL)
#define X_WAIT (X_PARAM | CLI_X_BROKEN | CLI_X_TIMEOUT)

const cli_cmd cli_commands[] = {
    { "wait", cmd_wait, "block until N parties have arrived, then release all",
      "rbarrier wait --name ckpt --n 4 --timeout 5m --once 'save-checkpoint'\n"
      "step=$(rbarrier wait --name ckpt --expect w0,w1,w2,w3 --id \"$ID\" "
      "--value \"$STEP\" --reduce max)", X_WAIT | CLI_X_CMD },
    { "run", cmd_run, "run a command as one member of a job: one fails, all stop",
      "rbarrier run --name train --n 4 --timeout 10m -- python train.py\n"
      "rbarrier run --name shards --expect a,b,c --id \"$ID\" --restarts 2 "
      "-- sh -c 'make -j4 all'", X_WAIT | CLI_X_CMD },
    { "lock", cmd_lock, "run a command holding one of K slots of a lock",
      "rbarrier lock --name migrate --timeout 10m -- ./migrate.sh\n"
      "rbarrier lock --name mirror --max 2 -- sh -c 'curl -sO \"$URL\"'",
      X_WAIT | CLI_X_CMD },
    { "barrier", cmd_wait, "the same as wait",
      "rbarrier barrier --name ckpt --n 4 --timeout 5m", X_WAIT },
    { "status", cmd_status, "show a barrier's round and members, and a lock's holders",
      "rbarrier status --name ckpt\n"
      "rbarrier status --name ckpt --json", X_PARAM },
    { "reset", cmd_reset, "break a barrier's open round and forget its n",
      "rbarrier reset --name ckpt", X_PARAM },
    { "report", cmd_report, "who the rounds wait for: stragglers, lateness, "
      "durations", "rbarrier report --name ckpt\n"
      "rbarrier report --name ckpt --last 100 --json", X_PARAM },
    { "trace", cmd_trace, "the rounds as a Chrome trace (Perfetto, "
      "chrome://tracing)", "rbarrier trace --name ckpt > ckpt.json", X_PARAM },
    { "plot", cmd_plot, "the rounds as an SVG picture: parties down, time "
      "across", "rbarrier plot --name ckpt > ckpt.svg\n"
      "rbarrier plot --name ckpt --last 20 > last20.svg", X_PARAM },
    { "metrics", cmd_metrics, "rounds, breaks, waits and locks as "
      "Prometheus text", "rbarrier metrics --name ckpt > /var/lib/node_exporter/"
      "rbarrier.prom\nrbarrier metrics --name ckpt --name train", X_PARAM },
    { "sync", cmd_sync, "copy a parameter's global value into a local copy",
      "rbarrier sync --param lr --worker w0", X_PARAM },
    { "train", cmd_train, "add to a parameter's global value, atomically",
      "rbarrier train --param steps --worker w0\n"
      "rbarrier train --param loss --worker w0 --by -0.25 --json", X_PARAM },
    { "get", cmd_get, "print a parameter's global value",
      "rbarrier get --param steps\n"
      "rbarrier get --param head_up --until-set --timeout 60s\n"
      "RBARRIER_URL=redis://redis.internal:6379/0 rbarrier get --param steps "
      "--json", X_PARAM | CLI_X_TIMEOUT },
    { "set", cmd_set, "set a parameter's global value",
      "rbarrier set --param steps --value 0", X_PARAM },
    { "worker", cmd_worker, "run one demo worker (barrier, sync, barrier, train)",
      "rbarrier worker --worker 0 --workers 4 --iters 10 --run exp1 &\n"
      "rbarrier worker --worker 1 --workers 2 --run exp1 --json", X_WAIT },
    { "demo", cmd_demo, "run the shared-counters experiment end to end",
      "rbarrier demo\n"
      "rbarrier demo --workers 8 --iters 100 --url redis://127.0.0.1:6379/0",
      CLI_X_OK | CLI_X_REDIS | CLI_X_USAGE | CLI_X_UNREACHABLE |
      CLI_X_SIGNAL },
};
const size_t cli_ncommands = sizeof(cli_commands) / sizeof(cli_commands[0]);

#ifdef RB_FAULT_INJECTION
#include <stdlib.h>

/* The test build only (rbarrier-fault): the library's fault hook, which
 * the shipped binary and the public header do not have. */
#include "rb_support.h"

/* Test builds: RBARRIER_FAULT=arrive-reply:N or train-reply:N makes the
 * library lose the reply of that script N times. */
static void arm_fault_from_env(void)
{
    const char *spec = getenv("RBARRIER_FAULT");
    rb_fault_point point = RB_FAULT_NONE;
    rb_error err;

    if (spec == NULL)
        return;
    if (strncmp(spec, "arrive-reply:", 13) == 0)
        point = RB_FAULT_ARRIVE_REPLY;
    else if (strncmp(spec, "train-reply:", 12) == 0)
        point = RB_FAULT_TRAIN_REPLY;
    if (point != RB_FAULT_NONE)
        rb_fault_arm(point, atoi(strchr(spec, ':') + 1), &err);
}
#endif

static int run_command(int argc, char **argv)
{
    size_t i;

    if (argc < 2) {
        cli_usage(stderr);
        return CLI_EXIT_USAGE;
    }
    /* Top-level words take nothing after them: a stray argument is bad
     * input, never a silent exit 0. */
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0 ||
        strcmp(argv[1], "version") == 0) {
        if (argc > 2)
            return cli_fail(CLI_EXIT_USAGE, "%s takes no arguments",
                            argv[1]);
        if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
            cli_usage(stdout);
        else
            printf("rbarrier %s\n", RB_VERSION);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "help") == 0)
        return cli_help_command(argc - 1, argv + 1);
    for (i = 0; i < cli_ncommands; i++)
        if (strcmp(argv[1], cli_commands[i].name) == 0)
            return cli_commands[i].fn(argc - 1, argv + 1);
    return cli_unknown_command(argv[1]);
}

int main(int argc, char **argv)
{
    /* First: what was ignored at start (nohup) must be known before
     * anything is changed. */
    cli_signals_init();
    cli_std_fds();
#ifdef RB_FAULT_INJECTION
    arm_fault_from_env();
#endif
    return cli_finish(run_command(argc, argv));
}
