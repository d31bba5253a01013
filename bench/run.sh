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
awk -v json="$json" -v machine="$machine" -v date_utc="$date_utc" \
    -v cpu="$cpu" -v cores="$cores" -v redis="$redis_version" -v reps="$REPS" '
function isort(a, n,    i, j, t) {
    for (i = 2; i <= n; i++) {
        t = a[i]
        for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]
        a[j + 1] = t
    }
}
function stats(k,    n, i, v) {
    n = cnt[k]
    for (i = 1; i <= n; i++) v[i] = val[k, i] + 0
    isort(v, n)
    MIN[k] = v[1]; MAX[k] = v[n]
    MED[k] = (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function num(x) {
    if (x == int(x) && (x > 999 || x < -999)) return sprintf("%d", x)
    if (x >= 100 || x <= -100) return sprintf("%.0f", x)
    if (x >= 10 || x <= -10) return sprintf("%.1f", x)
    return sprintf("%.2f", x)
}
function has(k) { return (k in MED) }
function jesc(s) { gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); return s }
# row(label, key, unit, floor text, ratio, target text, verdict)
function row(label, k, unit, ftext, ratio, ttext, verdict,    v, sp) {
    if (!has(k)) return
    v = num(MED[k]) unit
    sp = (cnt[k] > 1) ? num(MIN[k]) ".." num(MAX[k]) : "(1 run)"
    printf "%-44s %12s %15s %16s %8s %12s %s\n", label, v, sp, ftext,
        ratio, ttext, verdict
    if (verdict != "") {
        nchk++
        chk_fig[nchk] = label; chk_val[nchk] = MED[k]
        chk_tgt[nchk] = ttext; chk_ok[nchk] = (verdict == "PASS")
        chk_ratio[nchk] = ratio
    }
}
function verdict(ok) { return ok ? "PASS" : "MISS" }

/^#/ || NF < 2 { next }
{
    k = $1
    if (!(k in cnt)) { order[++nk] = k }
    cnt[k]++; val[k, cnt[k]] = $2
}
END {
    for (i = 1; i <= nk; i++) stats(order[i])
    rtt = MED["rtt_p50_us"]; cli = MED["redis_cli_ping_ms"]
    printf "\n%-44s %12s %15s %16s %8s %12s %s\n", "figure", "value",
        "min..max", "floor", "ratio", "target", "result"
    printf "%-44s %12s %15s %16s %8s %12s %s\n", "------", "-----",
        "--------", "-----", "-----", "------", "------"
    row("floor: Redis round trip p50 (TCP)", "rtt_p50_us", "us", "-", "-", "-", "")
    row("floor: Redis round trip p50 (unix)", "rtt_unix_p50_us", "us", "-", "-", "-", "")
    row("  RTT, client and Redis pinned to one core", "rtt_same_core_p50_us", "us", "-", "-", "-", "")
    row("  RTT, client and Redis on two cores", "rtt_cross_core_p50_us", "us", "-", "-", "-", "")
    row("floor: EVALSHA rate, 1 INCR, 1 conn", "evalsha_per_s", "/s", "-", "-", "-", "")
    row("floor: redis-cli PING process", "redis_cli_ping_ms", "ms", "-", "-", "-", "")
    row("floor: CPU of one PING (client+Redis)", "ping_cpu_us", "us", "-", "-", "-", "")
    pc = MED["ping_cpu_us"]
    fr = sprintf("%s/s =1/RTT", num(1e6 / rtt))
    split("2 4 16", ns, " ")
    for (j = 1; j <= 3; j++) {
        n = ns[j]; k = "rounds_per_s." n
        if (!has(k)) continue
        r = MED[k] * rtt / 1e6
        if (n == 4) row("N=4: rounds/s", k, "/s", fr, sprintf("%.3f", r), ">=0.333", verdict(r >= 1 / 3))
        else if (n == 16) row("N=16: rounds/s", k, "/s", fr, sprintf("%.3f", r), ">=0.100", verdict(r >= 0.1))
        else row("N=" n ": rounds/s", k, "/s", fr, sprintf("%.3f", r), "-", "")
        rs = MED["rtt_same_core_p50_us"]
        if (n != 2 && rs > 0)
            row("  the same against the one-core RTT", k, "/s",
                sprintf("%s/s =1/RTT1", num(1e6 / rs)), sprintf("%.3f", MED[k] * rs / 1e6),
                "-", "")
    }
    for (j = 1; j <= 3; j++) {
        n = ns[j]; k = "release_p50_us." n
        if (!has(k)) continue
        r = MED[k] / rtt
        row("N=" n ": release p50 (after completer reply)", k, "us", num(rtt) "us RTT",
            sprintf("%.2f", r), n == 4 ? "<=2.00" : "-", n == 4 ? verdict(r <= 2) : "")
        k = "release_p99_us." n
        row("N=" n ": release p99 (after completer reply)", k, "us", num(rtt) "us RTT",
            sprintf("%.2f", MED[k] / rtt), "-", "")
        k = "release_send_p50_us." n
        row("N=" n ": release p50 (after completer send)", k, "us", num(rtt) "us RTT",
            sprintf("%.2f", MED[k] / rtt), "-", "")
    }
    for (j = 1; j <= 3; j++) {
        n = ns[j]; k = "cmds_per_round." n
        if (!has(k)) continue
        r = MED[k] / n
        row("N=" n ": client commands per round", k, "", n " (=N)", sprintf("%.2f", r),
            "<=2.00", verdict(MED[k] <= 2 * n))
        row("N=" n ": Redis calls per round, scripts incl.", "calls_per_round." n, "",
            "-", "-", "-", "")
        row("N=" n ": Redis busy time per round", "redis_busy_us_per_round." n, "us",
            "-", "-", "-", "")
        k = "cpu_us_per_round." n
        if (has(k) && pc > 0)
            row("N=" n ": CPU per round (parties+Redis)", k, "us",
                num(MED["cmds_per_round." n] * pc) "us cmds*PING", sprintf("%.2f",
                MED[k] / (MED["cmds_per_round." n] * pc)), "-", "")
        if (has(k)) {
            # The rate the machine allows if every core did nothing but
            # this: cores / CPU per round.
            kk = "cpu_bound_rounds_per_s." n
            MED[kk] = cores * 1e6 / MED[k]; MIN[kk] = cores * 1e6 / MAX[k]
            MAX[kk] = cores * 1e6 / MIN[k]; cnt[kk] = cnt[k]; order[++nk] = kk
            row("N=" n ": rounds/s if CPU-bound on " cores " cores", kk, "/s",
                fr, sprintf("%.3f", MED[kk] * rtt / 1e6), "-", "")
        }
    }
    row("N=4 over unix socket: rounds/s", "rounds_per_s_unix.4", "/s",
        sprintf("%s/s =1/RTTu", num(1e6 / MED["rtt_unix_p50_us"])),
        sprintf("%.3f", MED["rounds_per_s_unix.4"] * MED["rtt_unix_p50_us"] / 1e6), "-", "")
    r = MED["cli_wait_ms"] / cli
    row("rbarrier wait --n 1, one process", "cli_wait_ms", "ms", num(cli) "ms cli PING",
        sprintf("%.2f", r), "<=0.60", verdict(r <= 0.6))
    row("rbarrier train, one process", "cli_train_ms", "ms", num(cli) "ms cli PING",
        sprintf("%.2f", MED["cli_train_ms"] / cli), "-", "")
    k = "fanout_1000_ms"
    row("fan-out 1000: arrival to last release", k, "ms", num(rtt) "us RTT",
        sprintf("%.0f", MED[k] * 1000 / rtt), "<=50ms", verdict(MED[k] <= 50))
    k = "idle_cmds_per_party_s"
    row("idle: client commands/s per party", k, "", "-", "-", "<=1", verdict(MED[k] <= 1))
    row("idle: Redis calls/s per party, scripts incl.", "idle_calls_per_party_s", "",
        "-", "-", "-", "")
    row("memory: bytes per open barrier (4/5 in)", "bytes_per_open_barrier", "B",
        "-", "-", "-", "")
    k = "keys_left_after_ttl"
    if (MED[k] >= 0)
        row("keys left 60 s after last round, ttl 30", k, "", "-", "-", "=0", verdict(MED[k] == 0))
    else
        row("keys left 60 s after last round, ttl 30", k, " (skipped)", "-", "-", "=0", "")
    pass = 0
    for (i = 1; i <= nchk; i++) pass += chk_ok[i]
    printf "\n%d of %d targets met. Raw samples: %s; JSON: %s\n", pass, nchk,
        "bench-raw.txt", "bench.json"

    # JSON: medians at the top level (keys like rounds_per_s.4 grouped into
    # objects keyed by N), the same shape under "min" and "max".
    printf "{\n  \"date\": \"%s\",\n", date_utc > json
    printf "  \"machine\": {\"cpu\": \"%s\", \"cores\": %d, \"redis\": \"%s\", \"line\": \"%s\"},\n",
        jesc(cpu), cores, jesc(redis), jesc(machine) > json
    printf "  \"repetitions\": %d,\n", reps > json
    for (w = 1; w <= 3; w++) {
        if (w > 1) printf "  \"%s\": {\n", (w == 2 ? "min" : "max") > json
        ind = (w == 1) ? "  " : "    "
        ngrp = 0; split("", gseen)
        first = 1
        for (i = 1; i <= nk; i++) {
            k = order[i]
            x = (w == 1) ? MED[k] : (w == 2 ? MIN[k] : MAX[k])
            if (index(k, ".")) {
                g = substr(k, 1, index(k, ".") - 1)
                if (g in gseen) continue
                gseen[g] = 1
                printf "%s%s\"%s\": {", (first ? "" : ",\n"), ind, g > json
                sep = ""
                for (m = i; m <= nk; m++) {
                    kk = order[m]
                    if (substr(kk, 1, length(g) + 1) != g ".") continue
                    xx = (w == 1) ? MED[kk] : (w == 2 ? MIN[kk] : MAX[kk])
                    printf "%s\"%s\": %s", sep, substr(kk, length(g) + 2), xx + 0 > json
                    sep = ", "
                }
                printf "}" > json
            } else {
                printf "%s%s\"%s\": %s", (first ? "" : ",\n"), ind, k, x + 0 > json
            }
            first = 0
        }
        printf "%s", (w == 1) ? ",\n" : "\n  },\n" > json
    }
    printf "  \"targets\": [\n" > json
    for (i = 1; i <= nchk; i++)
        printf "    {\"figure\": \"%s\", \"value\": %s, \"ratio\": \"%s\", \"target\": \"%s\", \"pass\": %s}%s\n",
            jesc(chk_fig[i]), chk_val[i] + 0, jesc(chk_ratio[i]), jesc(chk_tgt[i]),
            chk_ok[i] ? "true" : "false", (i < nchk ? "," : "") > json
    printf "  ]\n}\n" > json
}' "$raw"
echo "total ${SECONDS}s"
