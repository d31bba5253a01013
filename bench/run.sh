#!/usr/bin/env bash
# make bench: measure rbarrier against a private redis-server and print two
# tables: issue #24's yardsticks (the library against the floor and the
# peers, each figure with its target and PASS/MISS) and the details
# (round trips, release times, commands, CPU, memory). The same numbers go
# to $BUILD/bench.json, every raw sample and detail line to
# $BUILD/bench-raw.txt. A missed target is reported, never a failure; the
# run fails when a measurement could not be made (a step failed or printed
# no number).
#
# $RBARRIER  the CLI binary; $RB_BENCH  the rb_bench binary; $BUILD  absolute
# build directory. Optional: RB_BENCH_REPS (default 7), RB_BENCH_ROUNDS
# (1000), RB_BENCH_IDLE_S (10), RB_BENCH_TTL_WAIT=0 to skip the one-minute
# TTL check (it then reports -1), RB_BENCH_PYTHON (/usr/bin/python3: the
# one with Debian's python3-redis). RB_BENCH_SMOKE=1 runs every measurement
# once, briefly (make bench-smoke): it proves they still run, its numbers
# mean nothing. RB_BENCH_ONLY=lock (make bench-lock) runs the lock rows
# alone, in the same repetitions, and prints their rows;
# RB_BENCH_ONLY=jobs runs issue #22's job rows alone
# (bench/jobs.sh; RB_BENCH_JOB_BREAKS, default 20 breaks of each kind;
# RB_BENCH_JOB_BIG, default 1000, the members of the big job, 0 none);
# RB_BENCH_ONLY=scale issue #34's scale rows (bench/scale.sh; a TCPStore
# barrier's too where torch is importable, RB_BENCH_TCPSTORE_SIZES, default
# 16,1024,4096,8192 connections).
#
# Who is measured, all in the same run and interleaved repetition by
# repetition, so a load change on the machine moves them alike:
#   library   rb_barrier_wait, one process per party (rb_bench rounds);
#   floor     the leanest correct hiredis barrier: one EVALSHA of
#             bench/arrive.lua per party, one BLPOP per waiter, the same
#             processes and clock (rb_bench rounds --impl floor);
#   redis-py  the same script and BLPOP from Python processes
#             (bench/pybarrier.py);
#   lock      rb_lock_acquire + rb_lock_release (rb_bench lock) against
#             redis-py's own redis.lock.Lock, timeout=10 and its default
#             retry sleep (bench/pylock.py): pairs uncontended on one
#             connection, and hand-offs among 8 processes on one name;
#   shell     four shell loops of `rbarrier wait` against four loops of
#             redis-cli INCR + BLPOP/RPUSH (bench/shellbarrier.sh);
#   history   the library's N=4 rounds with the name's history off, run
#             after those with it on (the cost of seeing the job);
#   supervised  a `lock -- true`, a lock hand-off to a queued waiter's
#             command and an 8-member job's start, against a process's end
#             and start and 8 bare commands (bench/supervised.sh).
# Plus the Redis round trip (p50 of PINGs on one connection), the EVALSHA
# rate of a one-INCR script, and process start against redis-cli. All of it
# runs over TCP loopback except the rows marked "unix" and "TLS".
#
# Definitions (one file per measurement in bench/ has the details;
# `rb_bench --help` lists them): a round's release time is a waiter's return
# from rb_barrier_wait minus the completing party's return (its arrive
# reply); "after completer send" uses the moment the completing party called
# rb_barrier_wait instead. Client commands are those a script cannot run
# (COMMAND INFO flag noscript: EVALSHA, EVAL, BLMOVE, ...); "Redis commands"
# (INFO commandstats) also counts every redis.call() inside a script.
set -euo pipefail

: "${RBARRIER:?set RBARRIER to the rbarrier binary (make bench does)}"
: "${RB_BENCH:?set RB_BENCH to the rb_bench binary (make bench does)}"
: "${BUILD:?set BUILD to the build directory (make bench does)}"
SMOKE=${RB_BENCH_SMOKE:-0}
ONLY=${RB_BENCH_ONLY:-}
case "$ONLY" in
''|lock|jobs|scale) ;;
*) echo "bench: RB_BENCH_ONLY is lock, jobs, scale or empty, not '$ONLY'" >&2; exit 1 ;;
esac
PYTHON=${RB_BENCH_PYTHON:-/usr/bin/python3}
if [ "$SMOKE" = 1 ]; then
    REPS=1 ROUNDS=100 WARMUP=10 IDLE_S=2 TTL_WAIT=0
    SHELL_ROUNDS=3 PROCS=5 RTT_COUNT=500 EVALSHA_COUNT=500 FANOUT_REPS=1
    BIG_FANOUT=64 MEM_BARRIERS=20 IDLE_PARTIES=10 IDLE_SPREAD=0
    LOCK_PAIRS=50 LOCK_HANDOFFS=5 LOCK_WAITERS=3 LOCK_IDLE_S=1
else
    # More, shorter repetitions rather than fewer, longer ones: on a shared
    # machine the two sides of a ratio then run closer together in time.
    REPS=${RB_BENCH_REPS:-7}
    ROUNDS=${RB_BENCH_ROUNDS:-1000}
    WARMUP=50
    IDLE_S=${RB_BENCH_IDLE_S:-10}
    TTL_WAIT=${RB_BENCH_TTL_WAIT:-1}
    SHELL_ROUNDS=20 PROCS=60 RTT_COUNT=10000 EVALSHA_COUNT=20000
    FANOUT_REPS=3 BIG_FANOUT=1000 MEM_BARRIERS=1000 IDLE_PARTIES=100
    IDLE_SPREAD=10
    LOCK_PAIRS=2000 LOCK_HANDOFFS=200 LOCK_WAITERS=20 LOCK_IDLE_S=10
fi
here=$(cd "$(dirname "$0")" && pwd)

"$PYTHON" -c 'import redis' 2>/dev/null || {
    echo "bench: $PYTHON has no redis module (Debian: apt-get install python3-redis)" >&2
    exit 1
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/rbarrier-bench.XXXXXX")
# The tests' server starter and port picker: one way to run a redis-server.
RB_TEST_TMP=$tmp
RB_TESTS_DIR=${RB_TESTS_DIR:-$(cd "$here/../tests" && pwd)}
. "$here/../tests/lib.sh"
cleanup() {
    stop_all_redis
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

say() { printf 'bench: %s\n' "$*" >&2; }

# Fan-out and memory open thousands of connections, in this process and in
# the server (the smoke run, a few dozen).
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
if [ "$SMOKE" != 1 ] && [ "$(ulimit -n)" != unlimited ] && [ "$(ulimit -n)" -lt 4500 ]; then
    echo "bench: needs ulimit -n >= 4500 (the hard limit is $(ulimit -Hn))" >&2
    exit 1
fi

start_redis bench --unixsocketperm 700 --maxclients 10000 ||
    { echo "bench: redis-server did not start" >&2; cat "$REDIS_DIR/redis.log" >&2; exit 1; }
redis_pid=$REDIS_PID port=$REDIS_PORT sock=$REDIS_SOCK
# A second server for TLS, reached over TLS and over plain TCP alike, so
# the two differ by TLS alone.
tls_port= tls_sock= tls_plain_port=
if [ -z "$ONLY" ]; then
    tls_plain_port=$(free_port)
    start_redis_tls benchtls --port "$tls_plain_port" ||
        { echo "bench: the TLS redis-server did not start" >&2; exit 1; }
    tls_port=$REDIS_PORT tls_sock=$REDIS_SOCK
fi

tcp=redis://127.0.0.1:$port
tls_url=rediss://127.0.0.1:$tls_port/0
tls_plain=redis://127.0.0.1:$tls_plain_port/0
raw=$BUILD/bench-raw.txt
json=$BUILD/bench.json
: > "$raw"

cpu=$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | sed 's/^[^:]*: *//')
[ -n "$cpu" ] || cpu=$(uname -m)
cores=$(nproc)
redis_version=$(redis-cli -s "$sock" INFO server | tr -d '\r' |
    sed -n 's/^redis_version://p')
hiredis_version=$(pkg-config --modversion hiredis 2>/dev/null || echo '?')
redis_py_version=$("$PYTHON" -c 'import redis; print(redis.__version__)')
date_utc=$(date -u +%Y-%m-%dT%H:%M:%SZ)
machine="$cpu, $cores cores, Redis $redis_version, hiredis $hiredis_version, redis-py $redis_py_version, $(uname -sr)"
echo "machine: $machine"
echo "date: $date_utc; $REPS repetitions unless noted; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
[ "$SMOKE" = 1 ] && echo "smoke run: every measurement once, briefly; the numbers mean nothing"

# One measurement step: its lines go to the raw log; a step that fails or
# prints no `key number` line fails the run (the figure could not be made).
step() {
    local out=$tmp/step.out
    if ! "$@" > "$out"; then
        echo "bench: failed: $*" >&2
        exit 1
    fi
    cat "$out" >> "$raw"
    if ! grep -Eq '^[A-Za-z0-9_.-]+ -?[0-9.]+$' "$out"; then
        echo "bench: printed no number: $*" >&2
        exit 1
    fi
}
bench() { step "$RB_BENCH" "$@"; }
started=$(date +%s)

# ---- jobs (issue #22): bench/jobs.sh ----------------------------------------
. "$here/jobs.sh"
if [ "${RB_BENCH_ONLY:-}" = jobs ]; then
    jobs_rows
    echo "# total ${SECONDS}s, figures $(( $(date +%s) - started ))s" >> "$raw"
    awk -f "$here/report.awk" -v json="$json" -v machine="$machine" \
        -v date_utc="$date_utc" -v cpu="$cpu" -v cores="$cores" \
        -v redis="$redis_version" -v reps=1 -v only=jobs "$raw"
    echo "total ${SECONDS}s"
    exit 0
fi

# ---- scale (issue #34): bench/scale.sh ---------------------------------------
. "$here/scale.sh"
if [ "${RB_BENCH_ONLY:-}" = scale ]; then
    scale_rows
    echo "total ${SECONDS}s"
    exit 0
fi

# (5b) First, so its minute runs while the rest is measured: a few rounds
# with --ttl 30 on a database of their own; the keys are counted at the end.
[ -n "$ONLY" ] && TTL_WAIT=0
if [ "$TTL_WAIT" = 1 ]; then
    say "ttl rounds (db 1, ttl 30 s)"
    bench rounds --url "$tcp/1" --n 2 --rounds 200 --warmup 10 --ttl 30 \
        --name bench-ttl --suffix _ttl
fi
ttl_end=$(date +%s)

arrive=$here/arrive.lua
# The lock against redis-py's Lock: pairs, then hand-offs among 8.
lock_rows() {
    bench lock --url "$tcp/0" --mode pairs --count "$LOCK_PAIRS"
    step "$PYTHON" "$here/pylock.py" --url "$tcp/0" --mode pairs --count "$LOCK_PAIRS"
    bench lock --url "$tcp/0" --mode handoff --procs 8 --count "$LOCK_HANDOFFS"
    step "$PYTHON" "$here/pylock.py" --url "$tcp/0" --mode handoff --procs 8 \
        --count "$LOCK_HANDOFFS"
    # A read-write lock: 8 readers and 1 writer (redis-py has none).
    [ "$ONLY" = lock ] &&
        bench lock --url "$tcp/0" --mode rw --procs 9 --count "$LOCK_HANDOFFS"
    return 0
}
for rep in $(seq "$REPS"); do
    if [ "$ONLY" = lock ]; then
        say "repetition $rep/$REPS: lock pairs and hand-offs, library and redis-py"
        lock_rows
        continue
    fi
    say "repetition $rep/$REPS: floors; rounds N = 2, 4, 16: library, floor, redis-py ($ROUNDS rounds); TLS; shell loops; processes; fan-out 64"
    bench rtt --url "$tcp/0" --count "$RTT_COUNT"
    bench rtt --url "unix://$sock" --count "$RTT_COUNT" --key rtt_unix_p50_us
    bench evalsha --url "$tcp/0" --count "$EVALSHA_COUNT"
    # The loopback round trip of a VM is bimodal: client and server on one
    # core, or waking each other across cores. Pin both ways to show it.
    if [ "$cores" -ge 2 ] && command -v taskset >/dev/null; then
        mask=$(taskset -p "$redis_pid" | sed 's/.*: *//')
        taskset -p 1 "$redis_pid" >/dev/null
        step taskset 1 "$RB_BENCH" rtt --url "$tcp/0" --count "$RTT_COUNT" \
            --key rtt_same_core_p50_us
        step taskset 2 "$RB_BENCH" rtt --url "$tcp/0" --count "$RTT_COUNT" \
            --key rtt_cross_core_p50_us
        taskset -p "$mask" "$redis_pid" >/dev/null
    fi
    bench rounds --url "$tcp/0" --n 2 --rounds "$ROUNDS" --warmup "$WARMUP" \
        --name "bench-rounds-2-$rep"
    for n in 4 16; do
        bench rounds --url "$tcp/0" --n "$n" --rounds "$ROUNDS" --warmup "$WARMUP" \
            --name "bench-rounds-$n-$rep"
        bench rounds --url "$tcp/0" --n "$n" --rounds "$ROUNDS" --warmup "$WARMUP" \
            --name "bench-floor-$n-$rep" --impl floor --script "$arrive" --suffix _floor
        step "$PYTHON" "$here/pybarrier.py" --url "$tcp/0" --script "$arrive" \
            --n "$n" --rounds "$ROUNDS" --warmup "$WARMUP" --name "bench-py-$n-$rep"
    done
    # The same rounds with the name's history off (issue #35: its cost),
    # right after the rounds with it on.
    redis-cli -s "$sock" SET "rb:h:{bench-nohist-$rep}" off EX 3600 >/dev/null
    bench rounds --url "$tcp/0" --n 4 --rounds "$ROUNDS" --warmup "$WARMUP" \
        --name "bench-nohist-$rep" --suffix _nohist
    bench rounds --url "unix://$sock" --n 4 --rounds "$ROUNDS" --warmup "$WARMUP" \
        --name "bench-rounds-unix-$rep" --suffix _unix
    # TLS rounds: connections made before the clock starts, so the
    # handshakes are outside the timing; the bench reads INFO over the
    # plain socket of the same server.
    bench rounds --url "$tls_plain" --n 4 --rounds "$ROUNDS" --warmup "$WARMUP" \
        --name "bench-tlsplain-$rep" --suffix _tlsplain
    bench rounds --url "$tls_url" --n 4 --rounds "$ROUNDS" --warmup "$WARMUP" \
        --name "bench-tls-$rep" --suffix _tls --cacert "$RB_CERTS/ca.crt" \
        --admin "unix://$tls_sock"
    bench tls --plain "$tls_plain" --url "$tls_url" --cacert "$RB_CERTS/ca.crt" \
        --rbarrier "$RBARRIER" --count "$PROCS"
    step env RBARRIER="$RBARRIER" bash "$here/shellbarrier.sh" rbarrier \
        127.0.0.1 "$port" 4 "$SHELL_ROUNDS" "bench-sh-$rep"
    step bash "$here/shellbarrier.sh" redis-cli 127.0.0.1 "$port" 4 \
        "$SHELL_ROUNDS" "bench-sh-$rep"
    bench cli --url "$tcp/0" --rbarrier "$RBARRIER" --count "$PROCS"
    step env RBARRIER="$RBARRIER" SUP_ROUNDS="$([ "$SMOKE" = 1 ] && echo 1 || echo 5)" \
        bash "$here/supervised.sh" "$tcp/0" "bench-sup-$rep"
    bench fanout --url "$tcp/0" --parties 64 --reps "$FANOUT_REPS"
    lock_rows
done
redis-cli -s "$sock" -n 3 FLUSHDB >/dev/null

if [ -z "$ONLY" ]; then
    say "fan-out: $BIG_FANOUT parties (threads)"
    bench fanout --url "$tcp/0" --parties "$BIG_FANOUT" --reps "$FANOUT_REPS"

    say "memory: $MEM_BARRIERS open barriers with 4 of 5 in (db 2)"
    bench memory --url "$tcp/2" --barriers "$MEM_BARRIERS" --n 5 --arrived 4 \
        --reps "$([ "$SMOKE" = 1 ] && echo 1 || echo 3)"

    say "idle: $IDLE_PARTIES parties waiting (default lease), 3 windows of $IDLE_S s"
    bench idle --url "$tcp/0" --parties "$IDLE_PARTIES" --seconds "$IDLE_S" --windows 3 \
        --spread "$IDLE_SPREAD"

fi

say "lock idle: one holder, $LOCK_WAITERS waiters (default lease), a window of $LOCK_IDLE_S s"
bench lock --url "$tcp/0" --mode idle --waiters "$LOCK_WAITERS" --seconds "$LOCK_IDLE_S"

jobs_rows

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
[ -z "$ONLY" ] && scale_rows
echo "# total ${SECONDS}s, figures $(( $(date +%s) - started ))s" >> "$raw"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine moves every figure)"

# ---- tables and JSON --------------------------------------------------------
awk -f "$here/report.awk" -v json="$json" -v machine="$machine" \
    -v date_utc="$date_utc" -v cpu="$cpu" -v cores="$cores" \
    -v redis="$redis_version" -v reps="$REPS" -v only="$ONLY" "$raw"
echo "total ${SECONDS}s"
