/* Strict options: `--name value` pairs from a measurement's table; an
 * unknown option, a missing value or a bad count is a usage error (exit 2)
 * rather than a figure measured with defaults nobody asked for. */
#include "fmacros.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

void bench_usage_error(const bench_cmd *self, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "rb_bench %s: ", self->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (usage: rb_bench %s %s)\n", self->name, self->usage);
    exit(2);
}

static const bench_opt *find(const bench_opt *opts, const char *name)
{
    for (; opts->name; opts++)
        if (strcmp(opts->name, name) == 0)
            return opts;
    return NULL;
}

void bench_parse(const bench_cmd *self, int argc, char **argv,
                 const bench_opt *opts)
{
    const bench_opt *o;
    int i;

    for (i = 1; i < argc; i += 2) {
        if ((o = find(opts, argv[i])) == NULL)
            bench_usage_error(self, "unknown option '%s'", argv[i]);
        if (i + 1 >= argc)
            bench_usage_error(self, "%s needs a value", argv[i]);
        if (o->str) {
            *o->str = argv[i + 1];
        } else {
            char *end;
            long v = strtol(argv[i + 1], &end, 10);

            if (argv[i + 1][0] == '\0' || *end != '\0' || v < 0)
                bench_usage_error(self, "%s: not a count: '%s'", argv[i],
                                  argv[i + 1]);
            *o->num = v;
        }
    }
    for (o = opts; o->name; o++)
        if (o->required && o->str && *o->str == NULL)
            bench_usage_error(self, "%s is needed", o->name);
}
