/* Strict options: `--name value` pairs from a measurement's table; an
 * unknown option, a missing value or a bad count is a usage error (exit 2)
 * rather than a figure measured with defaults nobody asked for. */
#include "fmacros.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

void bench_usage_error(const bench_ctx *ctx, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "rb_bench %s: ", ctx->cmd->name);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (usage: rb_bench %s %s)\n", ctx->cmd->name,
            ctx->cmd->usage);
    exit(2);
}

static const bench_opt *find(const bench_opt *opts, const char *name)
{
    for (; opts->name; opts++)
        if (strcmp(opts->name, name) == 0)
            return opts;
    return NULL;
}

void bench_parse(bench_ctx *ctx, int argc, char **argv,
                 const bench_opt *opts)
{
    const bench_opt *o;
    char why[300];
    int i;

    for (i = 1; i < argc; i += 2) {
        int url = strcmp(argv[i], "--url") == 0;

        if (!url && (o = find(opts, argv[i])) == NULL)
            bench_usage_error(ctx, "unknown option '%s'", argv[i]);
        if (i + 1 >= argc)
            bench_usage_error(ctx, "%s needs a value", argv[i]);
        if (url) {
            ctx->url_text = argv[i + 1];
        } else if (o->str) {
            *o->str = argv[i + 1];
        } else {
            char *end;
            long v = strtol(argv[i + 1], &end, 10);

            if (argv[i + 1][0] == '\0' || *end != '\0' || v < 0)
                bench_usage_error(ctx, "%s: not a count: '%s'", argv[i],
                                  argv[i + 1]);
            *o->num = v;
        }
    }
    if (ctx->url_text == NULL)
        bench_usage_error(ctx, "--url is needed");
    if (bench_addr_parse(&ctx->addr, ctx->url_text, why, sizeof(why)) != 0)
        bench_usage_error(ctx, "--url: %s", why);
    for (o = opts; o->name; o++)
        if (o->required && o->str && *o->str == NULL)
            bench_usage_error(ctx, "%s is needed", o->name);
}
