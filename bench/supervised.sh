#!/usr/bin/env bash
# What the supervisor (issue #30) costs where a user meets it: a command
# started by `lock` and by `run`, each against a floor measured in the
# same call. For bench/start.sh, which runs it per binary and repetition:
#
#   supervised.sh URL NAME
#
# Prints, each the median of $SUP_ROUNDS (default 5) samples, in ms:
#   lock_true_ms           one `rbarrier lock --name L -- true`, the whole
#                          process
#   lock_handoff_ms        a holder's CMD stamps its last line, the waiter
#                          queued behind it stamps its CMD's first: the
#                          release, the grant and the start between
#   lock_handoff_floor_ms  the same two stamps one after the other in one
#                          shell: a process's end and the next one's start
#   job_start_ms           from starting 8 `rbarrier run --n 8` members at
#                          once to the last CMD's first stamp
#   job_start_floor_ms     the same for 8 bare CMDs started the same way
# A stamp is a `date +%s%N` process, the floors' too, so what the stamp
# costs is on both sides.
set -euo pipefail
url=$1 name=$2
: "${RBARRIER:?set RBARRIER to the rbarrier binary}"
rounds=${SUP_ROUNDS:-5}
dir=$(mktemp -d "${TMPDIR:-/tmp}/rbarrier-bench-sup.XXXXXX")
trap 'rm -rf "$dir"' EXIT

ns() { date +%s%N; }
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
# ms A B: (B - A) in ms, from two stamps in ns.
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", (b - a) / 1e6 }'; }

lock_true() {
    local t0 t1
    t0=$(ns)
    "$RBARRIER" lock --url "$url" --name "$name.t" -- true
    t1=$(ns)
    ms "$t0" "$t1"
}

# The holder's work outlasts the waiter's queueing by far (0.3 s against
# a few ms), so the waiter is in line when the holder lets go.
lock_handoff() {
    local i
    rm -f "$dir/a" "$dir/b" "$dir/held"
    "$RBARRIER" lock --url "$url" --name "$name.h" -- \
        sh -c ": > '$dir/held'; sleep 0.3; date +%s%N > '$dir/a'" &
    for ((i = 0; i < 1000; i++)); do
        [ -e "$dir/held" ] && break
        sleep 0.01
    done
    "$RBARRIER" lock --url "$url" --name "$name.h" -- \
        sh -c "date +%s%N > '$dir/b'" &
    wait
    ms "$(cat "$dir/a")" "$(cat "$dir/b")"
}

handoff_floor() {
    rm -f "$dir/a" "$dir/b"
    sh -c "sh -c \"sleep 0.3; date +%s%N > '$dir/a'\"; date +%s%N > '$dir/b'"
    ms "$(cat "$dir/a")" "$(cat "$dir/b")"
}

# job_start JOB|"": 8 members of JOB (or 8 bare CMDs) at once.
job_start() {
    local job=$1 t0 j last
    rm -f "$dir"/o.*
    t0=$(ns)
    for j in 0 1 2 3 4 5 6 7; do
        if [ -n "$job" ]; then
            "$RBARRIER" run --url "$url" --name "$job" --n 8 --id "w$j" \
                -- date +%s%N > "$dir/o.$j" &
        else
            date +%s%N > "$dir/o.$j" &
        fi
    done
    wait
    last=$(cat "$dir"/o.* | sort -n | tail -1)
    ms "$t0" "$last"
}

for ((r = 0; r < rounds; r++)); do lock_true; done | median |
    sed 's/^/lock_true_ms /'
for ((r = 0; r < rounds; r++)); do lock_handoff; done | median |
    sed 's/^/lock_handoff_ms /'
for ((r = 0; r < rounds; r++)); do handoff_floor; done | median |
    sed 's/^/lock_handoff_floor_ms /'
for ((r = 0; r < rounds; r++)); do job_start "$name.j$r"; done | median |
    sed 's/^/job_start_ms /'
for ((r = 0; r < rounds; r++)); do job_start ""; done | median |
    sed 's/^/job_start_floor_ms /'
