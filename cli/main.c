/* rbarrier: the command table. Each subcommand lives in cmd_<name>.c and
 * gets argv from its own name on. */
#include "../lib/fmacros.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

static const cli_cmd commands[] = {
    { "wait", cmd_wait, "block until N parties have arrived, then release all" },
    { "barrier", cmd_wait, "the same as wait" },
    { "status", cmd_status, "show a barrier's round, members and last outcome" },
    { "reset", cmd_reset, "break a barrier's open round and forget its n" },
    { "sync", cmd_sync, "copy a parameter's global value into a local copy" },
    { "train", cmd_train, "add to a parameter's global value, atomically" },
    { "get", cmd_get, "print a parameter's global value" },
    { "set", cmd_set, "set a parameter's global value" },
    { "worker", cmd_worker, "run one demo worker (barrier, sync, barrier, train)" },
    { "demo", cmd_demo, "run the shared-counters experiment end to end" },
};

static void usage(FILE *f)
{
    size_t i;

    fprintf(f, "usage: rbarrier <command> [options]   (rbarrier <command> "
               "--help for more)\n\n"
               "Barriers and shared counters for jobs on many machines, kept "
               "in Redis.\n\ncommands:\n");
    for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fprintf(f, "\n  --version  print the version\n");
}

#ifdef RB_FAULT_INJECTION
#include <stdlib.h>

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

int main(int argc, char **argv)
{
    size_t i;

#ifdef RB_FAULT_INJECTION
    arm_fault_from_env();
#endif
    if (argc < 2) {
        usage(stderr);
        return CLI_EXIT_USAGE;
    }
    if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_EXIT_OK;
    }
    if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "version") == 0) {
        printf("rbarrier %s\n", RB_VERSION);
        return CLI_EXIT_OK;
    }
    for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].fn(argc - 1, argv + 1);
    return cli_fail(CLI_EXIT_USAGE,
                    "unknown command '%s' (try 'rbarrier --help')", argv[1]);
}
