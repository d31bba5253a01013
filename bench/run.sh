#!/usr/bin/env bash
# make bench: measure rbarrier against a private redis-server and print one
# table (figure, median, min-max over repetitions, floor, ratio, target,
# PASS/MISS); the same numbers go to $BUILD/bench.json, every raw sample and
# detail line to $BUILD/bench-raw.txt.
#
# $RBARRIER  the CLI binary; $RB_BENCH  the rb_bench binary; $BUILD  absolute
# build directory. Optional: RB_BENCH_REPS (default 5), RB_BENCH_ROUNDS
# (2000), RB_BENCH_IDLE_S (20), RB_BENCH_TTL_WAIT=0 to skip the one-minute
# TTL check (it then reports -1).
#
# Floors, measured in the same run: the Redis round trip (p50 of 10,000
# PINGs on one connection), the EVALSHA rate of a one-INCR script on one
# connection, and the wall time of one `redis-cli PING` process. All of it
# runs over TCP loopback except the two rows marked "unix".
#
# Definitions (one file per measurement in bench/ has the details;
# `rb_bench --help` lists them): a round's release time is a waiter's return
# from rb_barrier_wait minus the completing party's return (its arrive
# reply), as the issue defines it; "after completer send" uses the moment
# the completing party called rb_barrier_wait instead. Client
# commands are those a script cannot run (COMMAND INFO flag noscript:
# EVALSHA, EVAL, BLMOVE, ...); INFO commandstats also counts every
# redis.call() inside a script, shown as "scripts incl.".
set -euo pipefail

: "${RBARRIER:?set RBARRIER to the rbarrier binary (make bench does)}"
: "${RB_BENCH:?set RB_BENCH to the rb_bench binary (make bench does)}"
: "${BUILD:?set BUILD to the build directory (make bench does)}"
REPS=${RB_BENCH_REPS:-5}
ROUNDS=${RB_BENCH_ROUNDS:-2000}
IDLE_S=${RB_BENCH_IDLE_S:-20}
TTL_WAIT=${RB_BENCH_TTL_WAIT:-1}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rbarrier-bench.XXXXXX")
# The tests' server starter and port picker: one way to run a redis-server.
RB_TEST_TMP=$tmp
. "$(dirname "$0")/../tests/lib.sh"
cleanup() {
    stop_all_redis
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { printf 'bench: %s\n' "$*" >&2; }

# Fan-out and memory open thousands of connections, in this process and in
# the server.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 4500 ]; then
    echo "bench: needs ulimit -n >= 4500 (the hard limit is $(ulimit -Hn))" >&2
    exit 1
fi

start_redis bench --unixsocketperm 700 --maxclients 10000 ||
    { echo "bench: redis-server did not start" >&2; cat "$REDIS_DIR/redis.log" >&2; exit 1; }
redis_pid=$REDIS_PID port=$REDIS_PORT sock=$REDIS_SOCK

tcp=redis://127.0.0.1:$port
raw=$BUILD/bench-raw.txt
json=$BUILD/bench.json
: > "$raw"

cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/^[^:]*: *//')
[ -n "$cpu" ] || cpu=$(uname -m)
cores=$(nproc)
redis_version=$(redis-cli -s "$sock" INFO server | tr -d '\r' |
    sed -n 's/^redis_version://p')
hiredis_version=$(pkg-config --modversion hiredis 2>/dev/null || echo '?')
date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)
machine="$cpu, $cores cores, Redis $redis_version, hiredis $hiredis_version, $(uname -sr)"
echo "machine: $machine"
echo "date: $date_utc; figures over TCP loopback; $REPS repetitions unless noted"

bench() { "$RB_BENCH" "$@" >> "$raw"; }
started=$(date +%s)

# (5b) First, so its minute runs while the rest is measured: a few rounds
# with --ttl 30 on a database of their own; the keys are counted at the end.
say "ttl rounds (db 1, ttl 30 s)"
bench rounds --url "$tcp/1" --n 2 --rounds 200 --warmup 10 --ttl 30 \
    --name bench-ttl --suffix _ttl
ttl_end=$(date +%s)

# Floors and figures interleaved, one repetition at a time, so that a
# load change on the machine moves both alike.
for rep in $(seq "$REPS"); do
    say "repetition $rep/$REPS: floors; rounds N = 2, 4, 16 (processes, $ROUNDS rounds); cli (200 processes each)"
    bench rtt --url "$tcp/0" --count 10000
    bench rtt --url "unix://$sock" --count 10000 --key rtt_unix_p50_us
    bench evalsha --url "$tcp/0" --count 20000
    # The loopback round trip of a VM is bimodal: client and server on one
    # core, or waking each other across cores. Pin both ways to show it.
    if [ "$cores" -ge 2 ] && command -v taskset >/dev/null; then
        mask=$(taskset -p "$redis_pid" | sed 's/.*: *//')
        taskset -p 1 "$redis_pid" >/dev/null
        taskset 1 "$RB_BENCH" rtt --url "$tcp/0" --count 10000 \
            --key rtt_same_core_p50_us >> "$raw"
        taskset 2 "$RB_BENCH" rtt --url "$tcp/0" --count 10000 \
            --key rtt_cross_core_p50_us >> "$raw"
        taskset -p "$mask" "$redis_pid" >/dev/null
    fi
    for n in 2 4 16; do
        bench rounds --url "$tcp/0" --n "$n" --rounds "$ROUNDS" \
            --name "bench-rounds-$n-$rep"
    done
    bench rounds --url "unix://$sock" --n 4 --rounds "$ROUNDS" \
        --name "bench-rounds-unix-$rep" --suffix _unix
    bench cli --url "$tcp/0" --rbarrier "$RBARRIER" --count 200
done

say "fan-out: 1000 parties (threads)"
bench fanout --url "$tcp/0" --parties 1000 --reps "$REPS"

say "memory: 1000 open barriers with 4 of 5 in (db 2)"
bench memory --url "$tcp/2" --barriers 1000 --n 5 --arrived 4 --reps 3

say "idle: 200 parties waiting, 3 windows of $IDLE_S s"
bench idle --url "$tcp/0" --parties 200 --seconds "$IDLE_S" --windows 3

say "tls: one server over plain TCP and over TLS (2-party rounds, wait processes)"
RB_TESTS_DIR=${RB_TESTS_DIR:-$(cd "$(dirname "$0")/../tests" && pwd)}
plain_port=$(free_port)
if start_redis_tls benchtls --port "$plain_port"; then
    bench tls --plain "redis://127.0.0.1:$plain_port/0" \
        --url "rediss://127.0.0.1:$REDIS_PORT/0" --cacert "$RB_CERTS/ca.crt" \
        --rbarrier "$RBARRIER" --rounds 1000 --count 100
else
    say "tls: the TLS redis-server did not start; no TLS figures"
fi

if [ "$TTL_WAIT" = 1 ]; then
    left=$(( ttl_end + 60 - $(date +%s) ))
    if [ "$left" -gt 0 ]; then
        say "waiting ${left}s more for the ttl check"
        sleep "$left"
    fi
    keys=$(redis-cli -s "$sock" -n 1 DBSIZE)
    if [ "$keys" != 0 ]; then
        echo "# keys left in db 1:" >> "$raw"
        redis-cli -s "$sock" -n 1 --scan | sed 's/^/#   /' >> "$raw"
    fi
    echo "keys_left_after_ttl $keys" >> "$raw"
else
    echo "keys_left_after_ttl -1" >> "$raw"
fi
echo "# total ${SECONDS}s, figures $(( $(date +%s) - started ))s" >> "$raw"

# ---- table and JSON ---------------------------------------------------------
awk -f "$(dirname "$0")/report.awk" -v json="$json" -v machine="$machine" \
    -v date_utc="$date_utc" -v cpu="$cpu" -v cores="$cores" \
    -v redis="$redis_version" -v reps="$REPS" "$raw"
echo "total ${SECONDS}s"
