/* A command's process tree (proctree.h): /proc and cgroup v2, read and
 * written; no policy of when to signal what (that is the watchdog's). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "proctree.h"

/* ---- /proc ---- */

typedef struct proc_stat {
    pid_t pid, ppid, pgrp;
    char state;
    char below;    /* marked by mark_below */
} proc_stat;

/* pid's line of /proc: 0, or -1 when it is gone. */
static int stat_of(long pid, proc_stat *ps)
{
    char path[64], buf[512], *close_paren, state;
    long pp, grp;
    ssize_t got;
    int fd;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    got = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (got <= 0)
        return -1;
    buf[got] = '\0';
    /* "pid (comm) S ppid pgrp": comm may hold spaces and parentheses, but
     * its last ')' ends it. */
    if ((close_paren = strrchr(buf, ')')) == NULL ||
        sscanf(close_paren + 1, " %c %ld %ld", &state, &pp, &grp) != 3)
        return -1;
    ps->pid = (pid_t)pid;
    ps->ppid = (pid_t)pp;
    ps->pgrp = (pid_t)grp;
    ps->state = state;
    ps->below = 0;
    return 0;
}

/* Append one process to *all (n of cap): 0, or -1 out of memory. */
static int add(proc_stat **all, size_t *n, size_t *cap, const proc_stat *ps)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 256;
        proc_stat *grown = realloc(*all, ncap * sizeof(*grown));

        if (grown == NULL)
            return -1;
        *all = grown;
        *cap = ncap;
    }
    (*all)[(*n)++] = *ps;
    return 0;
}

/* Every process /proc shows: *out (free it) and the count. A process that
 * ends while we read is simply not there. */
static size_t proc_all(proc_stat **out)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    size_t n = 0, cap = 0;
    proc_stat ps;
    long p;

    *out = NULL;
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL)
        if ((p = strtol(e->d_name, NULL, 10)) > 0 && stat_of(p, &ps) == 0 &&
            add(out, &n, &cap, &ps) != 0)
            break;
    closedir(d);
    return n;
}

/* Add the processes of cgroup and of the cgroups below it (a command may
 * make its own, as container runtimes and systemd-run do) to *all;
 * depth bounds the descent. */
static void cgroup_add(const char *cgroup, int depth, proc_stat **all,
                       size_t *n, size_t *cap)
{
    char path[600];
    struct dirent *e;
    proc_stat ps;
    FILE *f;
    DIR *d;
    long p;

    snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup);
    if ((f = fopen(path, "re")) != NULL) {
        while (fscanf(f, "%ld", &p) == 1)
            if (stat_of(p, &ps) == 0 && add(all, n, cap, &ps) != 0)
                break;
        fclose(f);
    }
    if (depth == 0 || (d = opendir(cgroup)) == NULL)
        return;
    while ((e = readdir(d)) != NULL)
        if (e->d_type == DT_DIR && e->d_name[0] != '.' &&
            snprintf(path, sizeof(path), "%s/%s", cgroup, e->d_name) <
                (int)sizeof(path))
            cgroup_add(path, depth - 1, all, n, cap);
    closedir(d);
}

/* The processes of a cgroup and its own cgroups: *out (free it) and the
 * count. Costs the tree, not the machine: a thousand commands' watchdogs
 * on one host do not each read every process of the host. */
static size_t cgroup_all(const char *cgroup, proc_stat **out)
{
    size_t n = 0, cap = 0;

    *out = NULL;
    cgroup_add(cgroup, 8, out, &n, &cap);
    return n;
}

static int by_pid(const void *a, const void *b)
{
    pid_t x = ((const proc_stat *)a)->pid, y = ((const proc_stat *)b)->pid;

    return (x > y) - (x < y);
}

/* Mark (below) the processes of all that descend from root, sorting all by
 * pid: each one's parent is then a binary search away, so a walk of a
 * host's thousands of processes costs n log n a pass, not n squared. */
static void mark_below(proc_stat *all, size_t n, pid_t root)
{
    size_t i;
    int grew;

    qsort(all, n, sizeof(*all), by_pid);
    /* Until a pass marks nothing more: children mostly have higher pids
     * than their parents, so one or two passes. */
    do {
        grew = 0;
        for (i = 0; i < n; i++) {
            proc_stat key, *parent;

            if (all[i].below)
                continue;
            key.pid = all[i].ppid;
            parent = bsearch(&key, all, n, sizeof(*all), by_pid);
            if (all[i].ppid == root || (parent && parent->below))
                grew = all[i].below = 1;
        }
    } while (grew);
}

/* 1 when pid's environment holds the entry (NAME=value) entry. */
static int has_env(pid_t pid, const char *entry)
{
    char path[64], *buf = NULL;
    size_t len = 0, cap = 0, elen = strlen(entry), at;
    ssize_t got;
    int fd, found = 0;

    snprintf(path, sizeof(path), "/proc/%ld/environ", (long)pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return 0;
    do {
        if (len == cap) {
            size_t ncap = cap ? cap * 2 : 4096;
            char *grown = realloc(buf, ncap);

            if (grown == NULL)
                break;
            buf = grown;
            cap = ncap;
        }
        got = read(fd, buf + len, cap - len);
        len += got > 0 ? (size_t)got : 0;
    } while (got > 0);
    close(fd);
    /* NUL-separated NAME=value entries. */
    for (at = 0; !found && at < len; at += strnlen(buf + at, len - at) + 1)
        found = len - at >= elen + 1 && memcmp(buf + at, entry, elen) == 0 &&
                buf[at + elen] == '\0';
    free(buf);
    return found;
}

size_t cli_ptree_kill_marked(pid_t root, const char *entry)
{
    proc_stat *all;
    size_t n = proc_all(&all), k = 0, i;

    mark_below(all, n, root);
    for (i = 0; i < n; i++)
        if (all[i].below && has_env(all[i].pid, entry)) {
            kill(all[i].pid, SIGKILL);
            k++;
        }
    free(all);
    return k;
}

/* The processes of the tree: cgroup's when given, else those below us. */
static size_t tree_all(const char *cgroup, proc_stat **out)
{
    proc_stat *all;
    size_t n, k = 0, i;

    if (cgroup && cgroup[0])
        return cgroup_all(cgroup, out);
    n = proc_all(&all);
    mark_below(all, n, getpid());
    for (i = 0; i < n; i++)
        if (all[i].below)
            all[k++] = all[i];
    *out = all;
    return k;
}

void cli_ptree_signal(const char *cgroup, int sig, int then_cont_stopped)
{
    proc_stat *all;
    size_t n = tree_all(cgroup, &all), i;

    for (i = 0; i < n; i++)
        kill(all[i].pid, sig);
    for (i = 0; i < n && then_cont_stopped; i++)
        if (all[i].state == 'T')
            kill(all[i].pid, SIGCONT);
    free(all);
}

int cli_ptree_group_halted(const char *cgroup, pid_t pgid)
{
    proc_stat *all;
    size_t n, i;
    int seen = 0, running = 0;

    if (pgid <= 0)
        return 0;
    n = cgroup && cgroup[0] ? cgroup_all(cgroup, &all) : proc_all(&all);
    for (i = 0; i < n && !running; i++)
        if (all[i].pgrp == pgid) {
            seen = 1;
            running = all[i].state != 'T' && all[i].state != 't';
        }
    free(all);
    return seen && !running;
}

/* ---- cgroup v2 ---- */

/* The first line of path that take() accepts (it fills out): 1, else 0. */
static int first_line(const char *path,
                      int (*take)(char *line, char *out, size_t len),
                      char *out, size_t len)
{
    FILE *f = fopen(path, "re");
    char line[1024];
    int found = 0;

    if (f == NULL)
        return 0;
    while (!found && fgets(line, sizeof(line), f))
        found = take(line, out, len);
    fclose(f);
    return found;
}

/* A mountinfo line whose type (after " - ") is cgroup2: its mount point,
 * the fifth field. */
static int take_cgroup2_mount(char *line, char *out, size_t len)
{
    char *sep = strstr(line, " - "), *p = line, *mnt;
    int field;

    if (sep == NULL || strncmp(sep + 3, "cgroup2 ", 8) != 0)
        return 0;
    for (field = 1; field < 5 && p; field++)
        p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
    if (p == NULL)
        return 0;
    mnt = p;
    p = strchr(mnt, ' ');
    if (p == NULL || (size_t)(p - mnt) >= len)
        return 0;
    memcpy(out, mnt, (size_t)(p - mnt));
    out[p - mnt] = '\0';
    return 1;
}

/* Our own group in the unified hierarchy: the "0::/path" line. */
static int take_unified(char *line, char *out, size_t len)
{
    if (strncmp(line, "0::", 3) != 0)
        return 0;
    line[strcspn(line, "\n")] = '\0';
    return snprintf(out, len, "%s", line + 3) < (int)len;
}

/* The directory of our own cgroup, read once per process and kept: we
 * never change cgroup, and a watchdog forked from the runner inherits
 * the answer, so a member's start reads no mountinfo (which costs every
 * mount of the host) once the runner has warmed it (cli_cgroup_warm). */
static char home_dir[520];
static int home_known;   /* 1: home_dir holds it; -1: there is none */

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

/* Where the unified hierarchy is mounted: where systemd puts it (the
 * second place on a hybrid system), asked of the file system, else the
 * first cgroup2 mount of mountinfo. Two statfs calls cost some 4 us, a
 * read of mountinfo ten times that, and more with every mount. */
static int cgroup2_mount(char *out, size_t len)
{
    static const char *const usual[] = { "/sys/fs/cgroup",
                                         "/sys/fs/cgroup/unified" };
    struct statfs fs;
    size_t i;

    for (i = 0; i < sizeof(usual) / sizeof(usual[0]); i++)
        if (statfs(usual[i], &fs) == 0 &&
            (unsigned long)fs.f_type == CGROUP2_SUPER_MAGIC)
            return snprintf(out, len, "%s", usual[i]) < (int)len;
    return first_line("/proc/self/mountinfo", take_cgroup2_mount, out, len);
}

static int home_cgroup(char *out, size_t len)
{
    char mnt[256], own[256];

    if (home_known == 0) {
        home_known = -1;
        if (cgroup2_mount(mnt, sizeof(mnt)) &&
            first_line("/proc/self/cgroup", take_unified, own, sizeof(own)) &&
            snprintf(home_dir, sizeof(home_dir), "%s%s", mnt,
                     strcmp(own, "/") ? own : "") < (int)sizeof(home_dir))
            home_known = 1;
    }
    if (home_known < 0)
        return -1;
    return snprintf(out, len, "%s", home_dir) < (int)len ? 0 : -1;
}

void cli_cgroup_warm(void)
{
    char home[sizeof(home_dir)];

    if (geteuid() == 0)
        home_cgroup(home, sizeof(home));
}

int cli_cgroup_path_of(pid_t owner, char *out, size_t len)
{
    char home[520];

    if (home_cgroup(home, sizeof(home)) != 0)
        return -1;
    return snprintf(out, len, "%s/rbarrier-%ld", home, (long)owner) <
           (int)len ? 0 : -1;
}

int cli_cgroup_write(const char *cgroup, const char *file, const char *text)
{
    char path[600];
    int fd, ok;

    snprintf(path, sizeof(path), "%s/%s", cgroup, file);
    if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
        return -1;
    ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    close(fd);
    return ok ? 0 : -1;
}

/* A cgroup is empty between its making and its command's start, which
 * for an armed watchdog is the whole wait for the right; its owner is
 * alive then, and the age keeps one whose owner we cannot see (a process
 * of another PID namespace sharing the cgroup root) from being taken for
 * stale, for a minute: past that it may be. */
#define STALE_CGROUP_S 60

static int stale_cgroup(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && time(NULL) - st.st_mtime > STALE_CGROUP_S;
}

/* The empty cgroups of owners that are gone: a runner killed with -9
 * together with its watchdog leaves its cgroup behind, and nobody else
 * would remove it (one that still holds processes is left alone). */
static void remove_stale(const char *home)
{
    char path[600], *end;
    struct dirent *e;
    long owner;
    DIR *d;

    if ((d = opendir(home)) == NULL)
        return;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "rbarrier-", 9) != 0)
            continue;
        owner = strtol(e->d_name + 9, &end, 10);
        if (*end != '\0' || owner <= 0 || kill((pid_t)owner, 0) == 0 ||
            errno != ESRCH)
            continue;
        if (snprintf(path, sizeof(path), "%s/%s", home, e->d_name) <
                (int)sizeof(path) &&
            stale_cgroup(path))
            rmdir(path);
    }
    closedir(d);
}

int cli_cgroup_make(char *out, size_t len)
{
    char home[520];

    if (geteuid() != 0 || home_cgroup(home, sizeof(home)) != 0 ||
        cli_cgroup_path_of(getpid(), out, len) != 0) {
        out[0] = '\0';
        return -1;
    }
    /* One left by an earlier process of this pid (it is gone: the pid is
     * ours) is taken over if empty. */
    remove_stale(home);
    if (stale_cgroup(out))
        rmdir(out);
    if (mkdir(out, 0755) != 0) {
        out[0] = '\0';
        return -1;
    }
    return 0;
}

int cli_cgroup_prove(const char *cgroup)
{
    char home[520], pid[32];

    if (home_cgroup(home, sizeof(home)) != 0)
        return -1;
    snprintf(pid, sizeof(pid), "%ld", (long)getpid());
    if (cli_cgroup_write(cgroup, "cgroup.procs", pid) != 0 ||
        cli_cgroup_write(home, "cgroup.procs", pid) != 0) {
        cli_cgroup_write(home, "cgroup.procs", pid);
        return -1;
    }
    return 0;
}

int cli_cgroup_remove(const char *cgroup, int depth)
{
    char path[600];
    struct dirent *e;
    DIR *d;

    if (rmdir(cgroup) == 0 || errno == ENOENT)
        return 0;
    /* A cgroup with cgroups below it cannot go: those first, deepest
     * first (a command may have made its own). */
    if (depth <= 0 || (d = opendir(cgroup)) == NULL)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_type == DT_DIR && e->d_name[0] != '.' &&
            snprintf(path, sizeof(path), "%s/%s", cgroup, e->d_name) <
                (int)sizeof(path))
            cli_cgroup_remove(path, depth - 1);
    closedir(d);
    return rmdir(cgroup) == 0 || errno == ENOENT ? 0 : -1;
}

int cli_cgroup_frozen(const char *cgroup)
{
    char path[600], buf[256];
    ssize_t got;
    int fd;

    snprintf(path, sizeof(path), "%s/cgroup.events", cgroup);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return 1;
    got = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (got <= 0)
        return 1;
    buf[got] = '\0';
    return strstr(buf, "frozen 1") != NULL;
}
