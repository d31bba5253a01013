#!/usr/bin/env bash
# Shell barriers: N shell loops pass R rounds of one barrier, each loop a
# party, every call a process, as a script on N machines would.
#
#   shellbarrier.sh rbarrier|redis-cli HOST PORT N ROUNDS NAME
#
# rbarrier:  `rbarrier wait --name NAME --n N --id pK` per round ($RBARRIER).
# redis-cli: the barrier a shell user would write with redis-cli: INCR the
#            round's count; the party that makes it N RPUSHes one token per
#            waiter, the others BLPOP one. Keys are per round, as in
#            bench/arrive.lua; the counts stay behind (db 3: run.sh flushes
#            it).
# Prints `shell_rounds_per_s_MODE.N RATE`, wall time of all the loops from
# their start; exits 1 when a party failed.
set -u
mode=$1 host=$2 port=$3 n=$4 rounds=$5 name=$6

party_rbarrier() {
    local p=$1 r
    for ((r = 0; r < rounds; r++)); do
        "$RBARRIER" wait --url "redis://$host:$port/3" --name "$name" \
            --n "$n" --id "p$p" || return 1
    done
}

party_redis_cli() {
    local r c out tokens
    tokens=$(printf 'ok %.0s' $(seq $((n - 1))))
    for ((r = 0; r < rounds; r++)); do
        c=$(redis-cli -h "$host" -p "$port" -n 3 INCR "bench-sh:{$name}:$r:count") ||
            return 1
        if [ "$c" -eq "$n" ]; then
            # shellcheck disable=SC2086  # one argument per token
            redis-cli -h "$host" -p "$port" -n 3 RPUSH \
                "bench-sh:{$name}:$r:release" $tokens >/dev/null || return 1
        else
            out=$(redis-cli -h "$host" -p "$port" -n 3 BLPOP \
                "bench-sh:{$name}:$r:release" 30) || return 1
            [ -n "$out" ] || return 1
        fi
    done
}

case $mode in
rbarrier) fn=party_rbarrier ;;
redis-cli) fn=party_redis_cli ;;
*) echo "shellbarrier.sh: mode rbarrier or redis-cli" >&2; exit 2 ;;
esac

pids=()
t0=$(date +%s%N)
for ((p = 0; p < n; p++)); do
    "$fn" "$p" &
    pids+=($!)
done
failed=0
for pid in "${pids[@]}"; do
    wait "$pid" || failed=1
done
t1=$(date +%s%N)
if [ "$failed" = 1 ]; then
    echo "shellbarrier.sh: a $mode party failed" >&2
    exit 1
fi
awk -v m="$mode" -v n="$n" -v r="$rounds" -v ns=$((t1 - t0)) \
    'BEGIN { printf "shell_rounds_per_s_%s.%d %.1f\n", m, n, r * 1e9 / ns }'
