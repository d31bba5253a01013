/* Running a program as a measured step. */
#include "fmacros.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "bench.h"

extern char **environ;

long long spawn_ns(char *const *args, char **env)
{
    posix_spawn_file_actions_t fa;
    pid_t pid;
    int status, rc;
    long long t0, t1;

    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    t0 = now_ns();
    rc = posix_spawnp(&pid, args[0], &fa, NULL, args, env ? env : environ);
    if (rc != 0)
        die("cannot run %s: %s", args[0], strerror(rc));
    if (waitpid(pid, &status, 0) < 0)
        die("waitpid: %s", strerror(errno));
    t1 = now_ns();
    posix_spawn_file_actions_destroy(&fa);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        die("%s %s exited with status %d", args[0], args[1], status);
    return t1 - t0;
}
