#!/usr/bin/env bash
# make bench-start: only the rows of `make bench` that process start decides,
# made the same way (the same rb_bench and shellbarrier.sh steps, the same
# sizes), in a minute or two instead of six:
#   process start   `rbarrier get` / `redis-cli GET`, p50 of 60 processes
#                   each (rb_bench cli);
#   shell loops     four loops of `rbarrier wait` / four redis-cli loops,
#                   20 rounds (bench/shellbarrier.sh);
#   TLS process     `rbarrier get` over rediss:// / over redis:// to one
#                   server, p50 of 60 each (rb_bench tls);
#   supervised      a lock hand-off to a queued waiter's command and the
#                   start of an 8-member job's commands, against a
#                   process's end and start and 8 bare commands, and a
#                   whole `lock -- true` (bench/supervised.sh): with a
#                   baseline, the supervisor's cost against a build before
#                   it (issue #30: no more than before).
# Each ratio is taken within a repetition and its median over
# RB_BENCH_REPS (default 7) repetitions printed with min..max.
#
# RB_BENCH_BASELINE=/path/to/an/older/rbarrier measures that binary too,
# interleaved with $RBARRIER step by step, so a change is compared under
# the same load: its rows are marked "baseline".
#
# $RBARRIER  the CLI binary; $RB_BENCH  the rb_bench binary (make does).
set -euo pipefail

: "${RBARRIER:?set RBARRIER to the rbarrier binary (make bench-start does)}"
: "${RB_BENCH:?set RB_BENCH to the rb_bench binary (make bench-start does)}"
REPS=${RB_BENCH_REPS:-7}
PROCS=60 SHELL_ROUNDS=20
here=$(cd "$(dirname "$0")" && pwd)

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rbarrier-bench-start.XXXXXX")
RB_TEST_TMP=$tmp
RB_TESTS_DIR=${RB_TESTS_DIR:-$(cd "$here/../tests" && pwd)}
. "$here/../tests/lib.sh"
cleanup() {
    stop_all_redis
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

start_redis start ||
    { echo "bench-start: redis-server did not start" >&2; exit 1; }
port=$REDIS_PORT sock=$REDIS_SOCK
tls_plain_port=$(free_port)
start_redis_tls starttls --port "$tls_plain_port" ||
    { echo "bench-start: the TLS redis-server did not start" >&2; exit 1; }
tls_port=$REDIS_PORT

bins=("now=$RBARRIER")
[ -n "${RB_BENCH_BASELINE:-}" ] && bins+=("baseline=$RB_BENCH_BASELINE")
raw=$tmp/raw.txt
: > "$raw"
# run LABEL CMD...: CMD's `key number` lines, as "LABEL key number".
run() {
    local label=$1 out
    shift
    out=$("$@") || { echo "bench-start: failed: $*" >&2; exit 1; }
    printf '%s\n' "$out" | grep -E '^[A-Za-z0-9_.-]+ -?[0-9.]+$' |
        sed "s/^/$label /" >> "$raw"
}
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for rep in $(seq "$REPS"); do
    printf 'bench-start: repetition %d/%d\n' "$rep" "$REPS" >&2
    for b in "${bins[@]}"; do
        label=${b%%=*} bin=${b#*=}
        run "$rep $label" "$RB_BENCH" cli --url "redis://127.0.0.1:$port/0" \
            --rbarrier "$bin" --count "$PROCS"
        run "$rep $label" env RBARRIER="$bin" bash "$here/shellbarrier.sh" \
            rbarrier 127.0.0.1 "$port" 4 "$SHELL_ROUNDS" "start-sh-$label-$rep"
        run "$rep $label" "$RB_BENCH" tls --url "rediss://127.0.0.1:$tls_port/0" \
            --plain "redis://127.0.0.1:$tls_plain_port/0" \
            --cacert "$RB_CERTS/ca.crt" --rbarrier "$bin" --count "$PROCS"
        run "$rep $label" env RBARRIER="$bin" bash "$here/supervised.sh" \
            "redis://127.0.0.1:$port/0" "sup-$label-$rep"
    done
    run "$rep -" bash "$here/shellbarrier.sh" redis-cli 127.0.0.1 "$port" 4 \
        "$SHELL_ROUNDS" "start-sh-rc-$rep"
done
redis-cli -s "$sock" -n 3 FLUSHDB >/dev/null
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"

# Per repetition: the ratios of each binary; then median, min, max.
awk -v reps="$REPS" '
function med(a, n,    i, j, t) {
    for (i = 2; i <= n; i++) {
        t = a[i]
        for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
        a[j + 1] = t
    }
    return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{ v[$1, $2, $3] = $4; if ($2 != "-") who[$2] = 1 }
function show(label, b, num, den, dwho,    r, n, x, lo, hi, a) {
    n = 0
    for (r = 1; r <= reps; r++) {
        if (!((r, b, num) in v) || !((r, dwho, den) in v)) continue
        x = v[r, b, num] / v[r, dwho, den]
        a[++n] = x
        if (n == 1 || x < lo) lo = x
        if (n == 1 || x > hi) hi = x
    }
    if (n == 0) { printf "%-52s %s\n", label, "NO NUMBER"; bad = 1; return }
    printf "%-52s %6.2fx  %5.2f..%-5.2f (%d reps)\n", label, med(a, n), lo, hi, n
}
function p50(b, k,    r, n, a) {
    n = 0
    for (r = 1; r <= reps; r++) if ((r, b, k) in v) a[++n] = v[r, b, k]
    return n ? med(a, n) : -1
}
END {
    for (b in who) {
        printf "\n%s:\n", b
        show("process start: rbarrier get / redis-cli GET (<=0.3)", b, "cli_get_ms",
             "redis_cli_get_ms", b)
        show("CLI/redis-cli shell barrier, 4 loops (>=5)", b,
             "shell_rounds_per_s_rbarrier.4", "shell_rounds_per_s_redis-cli.4", "-")
        show("TLS: one get process, rediss:// / plain (<=1.5)", b, "tls_cli_ms",
             "tls_cli_plain_ms", b)
        show("lock hand-off / a process end and start (supervised)", b,
             "lock_handoff_ms", "lock_handoff_floor_ms", b)
        show("job start, 8 members / 8 bare commands (supervised)", b,
             "job_start_ms", "job_start_floor_ms", b)
        if (b != "baseline" && ("baseline" in who)) {
            show("lock -- true, this build / baseline (<=1)", b,
                 "lock_true_ms", "lock_true_ms", "baseline")
            show("lock hand-off, this build / baseline (<=1)", b,
                 "lock_handoff_ms", "lock_handoff_ms", "baseline")
            show("job start, this build / baseline (<=1)", b,
                 "job_start_ms", "job_start_ms", "baseline")
        }
        printf "  supervised medians: lock -- true %.2f ms, hand-off %.2f ms" \
               " (floor %.2f), job start %.2f ms (floor %.2f)\n",
            p50(b, "lock_true_ms"), p50(b, "lock_handoff_ms"),
            p50(b, "lock_handoff_floor_ms"), p50(b, "job_start_ms"),
            p50(b, "job_start_floor_ms")
        printf "  medians: get %.1f ms, wait --n 1 %.1f ms, redis-cli GET %.1f ms;" \
               " shell %.1f/s vs redis-cli %.1f/s; get rediss:// %.1f ms, redis:// %.1f ms\n",
            p50(b, "cli_get_ms"), p50(b, "cli_wait_ms"), p50(b, "redis_cli_get_ms"),
            p50(b, "shell_rounds_per_s_rbarrier.4"), p50("-", "shell_rounds_per_s_redis-cli.4"),
            p50(b, "tls_cli_ms"), p50(b, "tls_cli_plain_ms")
    }
    exit bad
}' "$raw"
