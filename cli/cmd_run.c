/* rbarrier run -- CMD [ARGS]: enter together, run CMD, leave together. */

#include <string.h>

#include "cli.h"
#include "wait.h"

int cmd_run(int argc, char **argv)
{
    int i;

    /* The command starts after the first "--"; argtable never sees it. */
    for (i = 1; i < argc; i++)
        if (strcmp(argv[i], "--") == 0)
            break;
    if (i == argc || i + 1 == argc) {
        if (cli_help_flag(argc, argv) && argc == 2)
            return wait_command(argc, argv, argv + argc);
        return cli_fail(CLI_EXIT_USAGE, "run needs a command after '--' "
                        "(rbarrier run --name NAME --n N -- CMD [ARGS])");
    }
    argv[i] = NULL;
    return wait_command(i, argv, argv + i + 1);
}
