/* A command's process tree (proctree.h): /proc and cgroup v2, read and
 * written; no policy of when to signal what (that is the watchdog's). */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proctree.h"

/* ---- /proc ---- */

typedef struct proc_stat {
    pid_t pid, ppid, pgrp;
    char state;
    char below;    /* marked by cli_ptree_below */
} proc_stat;

/* Every process /proc shows: *out (free it) and the count. A process that
 * ends while we read is simply not there. */
static size_t proc_all(proc_stat **out)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    proc_stat *all = NULL;
    size_t n = 0, cap = 0;

    *out = NULL;
    if (d == NULL)
        return 0;
    while ((e = readdir(d)) != NULL) {
        char path[64], buf[512], *close_paren, state;
        long p, pp, grp;
        ssize_t got;
        int fd;

        if ((p = strtol(e->d_name, NULL, 10)) <= 0)
            continue;
        snprintf(path, sizeof(path), "/proc/%ld/stat", p);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            continue;
        got = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (got <= 0)
            continue;
        buf[got] = '\0';
        /* "pid (comm) S ppid pgrp": comm may hold spaces and parentheses,
         * but its last ')' ends it. */
        if ((close_paren = strrchr(buf, ')')) == NULL ||
            sscanf(close_paren + 1, " %c %ld %ld", &state, &pp, &grp) != 3)
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 256;
            proc_stat *grown = realloc(all, ncap * sizeof(*grown));

            if (grown == NULL)
                break;
            all = grown;
            cap = ncap;
        }
        all[n].pid = (pid_t)p;
        all[n].ppid = (pid_t)pp;
        all[n].pgrp = (pid_t)grp;
        all[n].state = state;
        all[n++].below = 0;
    }
    closedir(d);
    *out = all;
    return n;
}

size_t cli_ptree_below(pid_t root, int stopped_only, pid_t **out)
{
    proc_stat *all;
    size_t n = proc_all(&all), k = 0, i;
    pid_t *mine = n ? calloc(n, sizeof(*mine)) : NULL;
    int grew;

    *out = NULL;
    if (mine == NULL) {
        free(all);
        return 0;
    }
    /* Mark children of marked processes until a pass adds nothing (the
     * tree is shallow: a few passes). A process the filter leaves out
     * still links its children in. */
    do {
        grew = 0;
        for (i = 0; i < n; i++) {
            size_t j;

            if (all[i].below)
                continue;
            if (all[i].ppid == root)
                all[i].below = 1;
            for (j = 0; !all[i].below && j < n; j++)
                if (all[j].below && all[j].pid == all[i].ppid)
                    all[i].below = 1;
            grew |= all[i].below;
        }
    } while (grew);
    for (i = 0; i < n; i++)
        if (all[i].below && (!stopped_only || all[i].state == 'T'))
            mine[k++] = all[i].pid;
    free(all);
    *out = mine;
    return k;
}

void cli_ptree_signal(int sig, int stopped_only)
{
    pid_t *p;
    size_t n = cli_ptree_below(getpid(), stopped_only, &p), i;

    for (i = 0; i < n; i++)
        kill(p[i], sig);
    free(p);
}

int cli_ptree_group_halted(pid_t pgid)
{
    proc_stat *all;
    size_t n, i;
    int seen = 0, running = 0;

    if (pgid <= 0)
        return 0;
    n = proc_all(&all);
    for (i = 0; i < n && !running; i++)
        if (all[i].pgrp == pgid) {
            seen = 1;
            running = all[i].state != 'T' && all[i].state != 't';
        }
    free(all);
    return seen && !running;
}

/* ---- cgroup v2 ---- */

/* The cgroup2 mount point, from mountinfo's fifth field on a line whose
 * type (after " - ") is cgroup2. */
static int cgroup2_mount(char *out, size_t len)
{
    FILE *f = fopen("/proc/self/mountinfo", "r");
    char line[1024];
    int found = 0;

    if (f == NULL)
        return 0;
    while (!found && fgets(line, sizeof(line), f)) {
        char *sep = strstr(line, " - "), *p = line, *mnt;
        int field;

        if (sep == NULL || strncmp(sep + 3, "cgroup2 ", 8) != 0)
            continue;
        for (field = 1; field < 5 && p; field++)
            p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
        if (p == NULL)
            continue;
        mnt = p;
        p = strchr(mnt, ' ');
        if (p == NULL || (size_t)(p - mnt) >= len)
            continue;
        memcpy(out, mnt, (size_t)(p - mnt));
        out[p - mnt] = '\0';
        found = 1;
    }
    fclose(f);
    return found;
}

/* Our own group in the unified hierarchy ("0::/path"). */
static int own_cgroup(char *out, size_t len)
{
    FILE *f = fopen("/proc/self/cgroup", "r");
    char line[1024];
    int found = 0;

    if (f == NULL)
        return 0;
    while (!found && fgets(line, sizeof(line), f))
        if (strncmp(line, "0::", 3) == 0) {
            line[strcspn(line, "\n")] = '\0';
            found = snprintf(out, len, "%s", line + 3) < (int)len;
        }
    fclose(f);
    return found;
}

/* The directory of our own cgroup. */
static int home_cgroup(char *out, size_t len)
{
    char mnt[256], own[256];

    if (!cgroup2_mount(mnt, sizeof(mnt)) || !own_cgroup(own, sizeof(own)))
        return -1;
    return snprintf(out, len, "%s%s", mnt, strcmp(own, "/") ? own : "") <
           (int)len ? 0 : -1;
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

int cli_cgroup_make(char *out, size_t len)
{
    char home[520], pid[32];

    if (geteuid() != 0 || home_cgroup(home, sizeof(home)) != 0 ||
        cli_cgroup_path_of(getpid(), out, len) != 0 || mkdir(out, 0755) != 0) {
        out[0] = '\0';
        return -1;
    }
    snprintf(pid, sizeof(pid), "%ld", (long)getpid());
    if (cli_cgroup_write(out, "cgroup.procs", pid) != 0 ||
        cli_cgroup_write(home, "cgroup.procs", pid) != 0) {
        cli_cgroup_write(home, "cgroup.procs", pid);
        rmdir(out);
        out[0] = '\0';
        return -1;
    }
    return 0;
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
