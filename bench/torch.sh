#!/usr/bin/env bash
# make bench-torch: a 4-member torch.distributed (gloo) job launched by
# `rbarrier run` and by torchrun (python3 -m torch.distributed.run, c10d
# rendezvous, 4 agents of one worker each, as 4 hosts would run it), on
# this machine, interleaved in one run:
#   start   from launching the 4 launchers to the last member past
#           init_process_group (each stamps the time, bench/torch_member.py)
#   fail    from rank 1 (not the store's host) exiting 1 to the last other
#           launcher's exit; torchrun's agents let the others run on, so
#           its row says how long they were seen running (FAIL_WAIT_S)
# Medians of RB_BENCH_TORCH_REPS (default 5) runs each; RB_BENCH_SMOKE=1
# runs each once with a short FAIL_WAIT_S. torchrun gets --redirects 2
# --tee 1: with Python 3.11 its default "0" parses to None and the agent
# fails before starting a worker (Std.from_str finds no flag of value 0).
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
: "${RBARRIER:?set RBARRIER to the rbarrier binary (make bench-torch does)}"
py=/usr/bin/python3
reps=${RB_BENCH_TORCH_REPS:-5}
fail_wait=${FAIL_WAIT_S:-20}
if [ "${RB_BENCH_SMOKE:-}" = 1 ]; then reps=1 fail_wait=5; fi
RB_TEST_TMP=$(mktemp -d "${TMPDIR:-/tmp}/rbarrier-bench-torch.XXXXXX")
export RB_TEST_TMP
. "$root/tests/lib.sh"
cleanup() { stop_all_redis; rm -rf "$RB_TEST_TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM
"$py" -c 'import torch.distributed' 2>/dev/null ||
    { echo "bench-torch: torch is not installed for $py (tools/install-torch.sh)" >&2; exit 1; }
start_redis torchbench || { echo "bench-torch: cannot start redis-server" >&2; exit 1; }
url=redis://127.0.0.1:$REDIS_PORT
member=$here/torch_member.py
n=4

# launch KIND DIR [FAIL]: start n launchers (own process groups), pids in
# DIR/pids; a launcher's exit time (ns) in DIR/exit.I.
launch() {
    local kind=$1 dir=$2 fail=${3:-} i port
    port=$(free_port)
    for i in $(seq 0 $((n - 1))); do
        if [ "$kind" = rbarrier ]; then
            set -- "$RBARRIER" run --url "$url" --name "$(basename "$dir")" --n $n \
                --id "m$i" --timeout 120 -- "$py" "$member"
        else
            set -- "$py" -m torch.distributed.run --nnodes $n --nproc_per_node 1 \
                --rdzv_backend c10d --rdzv_endpoint "127.0.0.1:$port" \
                --rdzv_id "$(basename "$dir")" --max_restarts 0 \
                --redirects 2 --tee 1 --log_dir "$dir/logs" "$member"
        fi
        env OUT="$dir" ${fail:+FAIL_RANK=$fail} setsid bash -c \
            '"$@" >/dev/null 2>&1; date +%s%N > "$OUT/exit.'"$i"'"' _ "$@" &
        echo $! >> "$dir/pids"
    done
}
count() { local c=0 f; for f in "$1"/$2; do [ -e "$f" ] && c=$((c + 1)); done; echo $c; }
all_in() { [ "$(count "$1" 'init.*')" -ge $n ]; }
others_out() { [ "$(count "$1" 'exit.*')" -ge $n ]; }
stop_group() { local p; for p in $(cat "$1/pids"); do kill -TERM -- -"$p" 2>/dev/null; done
               wait_until 15 others_out "$1" ||
                   for p in $(cat "$1/pids"); do kill -KILL -- -"$p" 2>/dev/null; done; }
max_of() { sort -n "$@" | tail -1; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }

declare -A start_ms fail_ms
run_start() {  # KIND REP
    local dir=$RB_TEST_TMP/s-$1-$2 t0
    mkdir -p "$dir"
    t0=$(date +%s%N)
    launch "$1" "$dir"
    if wait_until 120 others_out "$dir" && all_in "$dir"; then
        start_ms[$1]+="$(( ($(cat "$dir"/init.* | max_of) - t0) / 1000000 )) "
        return 0
    else
        echo "bench-torch: $1 did not start 4 members (rep $2)" >&2
        stop_group "$dir"
        return 1
    fi
}
run_fail() {  # KIND REP
    local dir=$RB_TEST_TMP/f-$1-$2 at last
    mkdir -p "$dir"
    launch "$1" "$dir" 1
    wait_until 120 test -e "$dir/fail" || { echo "bench-torch: $1: no failure seen" >&2; stop_group "$dir"; return 1; }
    at=$(cat "$dir/fail")
    if wait_until "$fail_wait" others_out "$dir"; then
        last=$(cat "$dir"/exit.* | max_of)
        fail_ms[$1]+="$(( (last - at) / 1000000 )) "
    else
        fail_ms[$1]+="never "
        stop_group "$dir"
    fi
    return 0
}

status=0
for rep in $(seq 1 "$reps"); do
    for kind in rbarrier torchrun; do
        run_start "$kind" "$rep" || status=1
        run_fail "$kind" "$rep" || status=1
    done
done
echo "bench-torch: $n members, gloo, $(nproc) CPUs, $(date -u +%Y-%m-%d), torch $("$py" -c 'import torch; print(torch.__version__)'), $reps runs each (ms, median [runs])"
for kind in rbarrier torchrun; do
    s=$(tr ' ' '\n' <<<"${start_ms[$kind]:-}" | grep -E '^[0-9]+$' | median)
    f=$(tr ' ' '\n' <<<"${fail_ms[$kind]:-}" | grep -E '^[0-9]+$' | median)
    never=$(tr ' ' '\n' <<<"${fail_ms[$kind]:-}" | grep -c '^never$')
    printf '%-9s start %6s ms [%s]  failure to last exit %6s ms [%s]%s\n' "$kind" "$s" \
        "${start_ms[$kind]:-}" "$f" "${fail_ms[$kind]:-}" \
        "$( [ "$never" -gt 0 ] && echo "  ($never of $reps: the others still ran ${fail_wait} s after)")"
done
[ -n "${start_ms[rbarrier]:-}" ] && [ -n "${start_ms[torchrun]:-}" ] || status=1
exit $status
