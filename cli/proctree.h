#ifndef RB_CLI_PROCTREE_H
#define RB_CLI_PROCTREE_H

/* A command's process tree as the kernel shows it (proctree.c): the /proc
 * walk that finds what a subreaper has below it, and the cgroup v2 that
 * holds a command's tree where one can be made. The watchdog keeps the
 * tree with these; the runner uses them when the watchdog died first. */

#include <stddef.h>
#include <sys/types.h>

/* SIGKILL to the processes below root whose environment holds entry
 * (NAME=value); how many there were. */
size_t cli_ptree_kill_marked(pid_t root, const char *entry);

/* sig to every process of the tree: of cgroup when given (not ""), which
 * costs the tree, else every process below us, found by a walk of all of
 * /proc. then_cont_stopped: then SIGCONT to those that were in a
 * job-control stop (state T), and only to them, so that they act on sig. */
void cli_ptree_signal(const char *cgroup, int sig, int then_cont_stopped);

/* 1 when every process of group pgid is stopped (state T or t); cgroup
 * (when given) holds them all. */
int cli_ptree_group_halted(const char *cgroup, pid_t pgid);

/* Learn our own cgroup now (when root: only root makes cgroups), so
 * that the members' starts, and the watchdogs forked then, need not. */
void cli_cgroup_warm(void);

/* Make, in the caller's cgroup, a cgroup named for the caller's pid: 0
 * with its path in out, or -1 (not root, no cgroup2 mount, no
 * permission): use the walk. Whether a process may go into it is learnt
 * when the command is born there (cli_proc_opts.cgroup_fd), or proved first
 * (cli_cgroup_prove) where the kernel cannot do that. */
int cli_cgroup_make(char *out, size_t len);

/* Move the caller into cgroup and back home: 0 when both moves worked.
 * Each move of a process between cgroups waits for an RCU grace period
 * (birth.c), so this is the fallback, not the way. */
int cli_cgroup_prove(const char *cgroup);


/* The path cli_cgroup_make gives when called by owner, a child forked
 * from this process: 0, or -1. */
int cli_cgroup_path_of(pid_t owner, char *out, size_t len);

/* Write text to the cgroup's file (cgroup.kill, cgroup.freeze, ...):
 * 0, or -1. */
int cli_cgroup_write(const char *cgroup, const char *file, const char *text);

/* Remove cgroup and the cgroups below it (depth levels): 0 once it is
 * gone, -1 while processes are in it. */
int cli_cgroup_remove(const char *cgroup, int depth);

/* 1 once cgroup.events says the whole cgroup is frozen (or cannot say). */
int cli_cgroup_frozen(const char *cgroup);

#endif
