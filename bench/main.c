/* rb_bench MEASUREMENT [--option value]...: one measurement per run (see
 * bench.h; bench/run.sh runs them all and prints the table). */
#include "fmacros.h"

#include <stdio.h>
#include <string.h>

#include "bench.h"

static const bench_cmd measurements[] = {
    { "rtt", bench_rtt, "--url U [--count 10000] [--key rtt_p50_us]" },
    { "evalsha", bench_evalsha, "--url U [--count 20000]" },
    { "rounds", bench_rounds,
      "--url U [--n 4] [--rounds 2000] [--warmup 50] [--ttl S] [--name NAME] "
      "[--suffix S] [--impl library|floor] [--script arrive.lua] "
      "[--cacert FILE] [--admin PLAIN-URL]" },
    { "cli", bench_cli,
      "--url U --rbarrier PATH [--redis-cli PATH] [--count 200]" },
    { "fanout", bench_fanout, "--url U [--parties 1000] [--reps 5]" },
    { "idle", bench_idle,
      "--url U [--parties 200] [--seconds 20] [--windows 3] [--spread 10]" },
    { "memory", bench_memory,
      "--url U [--barriers 1000] [--n 5] [--arrived 4] [--reps 3] "
      "[--procs 8]" },
    { "tls", bench_tls,
      "--url rediss://... --plain U --cacert FILE --rbarrier PATH "
      "[--count 100]" },
    { "lock", bench_lock,
      "--url U --mode pairs|handoff|idle [--count 2000] [--procs 8] "
      "[--waiters 20] [--seconds 10]" },
};

static void usage(FILE *f)
{
    size_t i;

    fputs("usage: rb_bench MEASUREMENT [options]\n", f);
    for (i = 0; i < sizeof(measurements) / sizeof(measurements[0]); i++)
        fprintf(f, "  %-8s %s\n", measurements[i].name, measurements[i].usage);
}

int main(int argc, char **argv)
{
    size_t i;

    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc == 2 && (strcmp(argv[1], "--help") == 0 ||
                      strcmp(argv[1], "-h") == 0)) {
        usage(stdout);
        return 0;
    }
    if (argc < 2) {
        fputs("rb_bench: which measurement? (rb_bench --help lists them)\n",
              stderr);
        return 2;
    }
    for (i = 0; i < sizeof(measurements) / sizeof(measurements[0]); i++)
        if (strcmp(argv[1], measurements[i].name) == 0) {
            bench_ctx ctx = { .cmd = &measurements[i] };

            return measurements[i].fn(&ctx, argc - 1, argv + 1);
        }
    fprintf(stderr, "rb_bench: unknown measurement '%s' (rb_bench --help "
            "lists them)\n", argv[1]);
    return 2;
}
