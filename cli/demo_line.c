/* The demo line: the one format `worker` prints and `demo` (and, through
 * `demo --check`, the tests) check. */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "demo.h"

#define LINE_FMT "worker %2ld, local_param %2ld global_param %2ld"

int cli_demo_line_format(char *buf, size_t len, long worker, long local,
                         long global)
{
    return snprintf(buf, len, LINE_FMT, worker, local, global);
}

int cli_demo_line_parse(const char *line, long *worker, long *local,
                        long *global)
{
    char again[128];
    size_t n = strlen(line);
    long w, l, g;

    if (n > 0 && line[n - 1] == '\n')
        n--;
    if (sscanf(line, "worker %ld, local_param %ld global_param %ld", &w, &l,
               &g) != 3)
        return -1;
    /* sscanf skips blanks anywhere; only the exact format is a line. */
    if (cli_demo_line_format(again, sizeof(again), w, l, g) != (int)n ||
        strncmp(again, line, n) != 0)
        return -1;
    *worker = w;
    *local = l;
    *global = g;
    return 0;
}

static void problem(cli_demo_check *k, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void problem(cli_demo_check *k, const char *fmt, ...)
{
    va_list ap;

    if (k->problem[0])
        return;
    va_start(ap, fmt);
    vsnprintf(k->problem, sizeof(k->problem), fmt, ap);
    va_end(ap);
}

int cli_demo_check_init(cli_demo_check *k, long workers, long iters)
{
    memset(k, 0, sizeof(*k));
    k->workers = workers;
    k->iters = iters;
    k->lines_of = calloc((size_t)workers, sizeof(long));
    k->seen = calloc((size_t)(workers * iters) + 1, 1);
    return k->lines_of && k->seen ? 0 : -1;
}

void cli_demo_check_line(cli_demo_check *k, const char *line)
{
    long w, local, global;

    if (strncmp(line, "worker", 6) != 0)
        return;
    k->lines++;
    if (cli_demo_line_parse(line, &w, &local, &global) != 0 || w < 0 ||
        w >= k->workers) {
        problem(k, "malformed line: %.*s", (int)strcspn(line, "\n"), line);
        return;
    }
    if (local != k->workers * k->lines_of[w])
        problem(k, "worker %ld line %ld: local %ld, expected %ld", w,
                k->lines_of[w], local, k->workers * k->lines_of[w]);
    k->lines_of[w]++;
    if (global < 1 || global > k->workers * k->iters)
        problem(k, "global %ld out of 1..%ld", global,
                k->workers * k->iters);
    else if (k->seen[global]++)
        problem(k, "global %ld printed twice", global);
}

const char *cli_demo_check_result(cli_demo_check *k)
{
    long w;

    if (k->lines != k->workers * k->iters)
        problem(k, "%ld worker lines, expected %ld", k->lines,
                k->workers * k->iters);
    for (w = 0; w < k->workers; w++)
        if (k->lines_of[w] != k->iters)
            problem(k, "worker %ld: %ld lines, expected %ld", w,
                    k->lines_of[w], k->iters);
    return k->problem[0] ? k->problem : NULL;
}

void cli_demo_check_free(cli_demo_check *k)
{
    free(k->lines_of);
    free(k->seen);
    k->lines_of = NULL;
    k->seen = NULL;
}
