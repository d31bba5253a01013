#ifndef RB_CLI_PROCTREE_H
#define RB_CLI_PROCTREE_H

/* A command's process tree as the kernel shows it (proctree.c): the /proc
 * walk that finds what a subreaper has below it, and the cgroup v2 that
 * holds a command's tree where one can be made. The watchdog keeps the
 * tree with these; the runner uses them when the watchdog died first. */

#include <stddef.h>
#include <sys/types.h>

/* The processes below root (by parent pid): *out (free it) and their
 * count. stopped_only: just those in a job-control stop (state T). */
size_t cli_ptree_below(pid_t root, int stopped_only, pid_t **out);

/* sig to every process below us (stopped_only as above). */
void cli_ptree_signal(int sig, int stopped_only);

/* 1 when every process of group pgid is stopped (state T or t). */
int cli_ptree_group_halted(pid_t pgid);

/* Make, in the caller's cgroup, a cgroup named for the caller's pid, and
 * prove the caller may move into it (and back): 0 with its path in out,
 * or -1 (not root, no cgroup2 mount, no permission): use the walk. */
int cli_cgroup_make(char *out, size_t len);

/* The path cli_cgroup_make gives when called by owner, a child forked
 * from this process: 0, or -1. */
int cli_cgroup_path_of(pid_t owner, char *out, size_t len);

/* Write text to the cgroup's file (cgroup.kill, cgroup.freeze, ...):
 * 0, or -1. */
int cli_cgroup_write(const char *cgroup, const char *file, const char *text);

/* 1 once cgroup.events says the whole cgroup is frozen (or cannot say). */
int cli_cgroup_frozen(const char *cgroup);

#endif
