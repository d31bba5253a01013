# Real torch.distributed programs under `rbarrier run` (make test-torch,
# which installs Debian's python3-torch first): a gloo all-reduce written
# for torchrun, unchanged; a member that fails stops the others at once
# (however long their step); a restart meets on a fresh MASTER_PORT;
# --nproc-per-node on two hosts. Without torch the checks are skipped, but
# under CI (CI=true) that is a failure: CI must run them.
. "$RB_TESTS_DIR/lib.sh"

py=/usr/bin/python3
root=$(cd "$RB_TESTS_DIR/.." && pwd)
if ! "$py" -c 'import torch.distributed' 2>/dev/null; then
    if [ "${CI:-}" = true ]; then
        not_ok "torch is installed for $py (CI=true: make test-torch installs it)"
    else
        skip "torch is not installed for $py (make test-torch installs it)"
    fi
    exit 0
fi
dir=$RB_TEST_TMP/torch.$$
mkdir -p "$dir"
# A generous bound for every wait: importing torch takes seconds on a busy
# machine; nothing here should take a minute.
T=120s

# 1. Three members of a program written for torchrun, with an inherited
# RANK that must not leak.
j=$(fresh tr)
for i in 0 1 2; do
    ( RANK=5 LOCAL_RANK=5 rb run --name "$j" --n 3 --id "m$i" --timeout $T \
          -- "$py" "$root/examples/torch_allreduce.py" >"$dir/a$i.out" 2>"$dir/a$i.err"
      echo $? >"$dir/a$i.rc" ) &
done
wait
expect_eq "three gloo members under rbarrier run exit 0" "0 0 0" \
    "$(cat "$dir"/a?.rc | tr '\n' ' ' | sed 's/ $//')"
expect_eq "ranks 0..2, LOCAL_RANK = rank on one host, every sum 6" \
    "rank 0 local_rank 0 group_rank 0 world 3 sum 6
rank 1 local_rank 1 group_rank 0 world 3 sum 6
rank 2 local_rank 2 group_rank 0 world 3 sum 6" "$(cat "$dir"/a?.out | sort)"
for i in 0 1 2; do [ -s "$dir/a$i.err" ] && diag "m$i: $(head -c 300 "$dir/a$i.err")"; done

# 2. Rank 1 exits 9 right after init while the others compute on: the
# others are stopped and exit 3 naming it.
j=$(fresh tf)
for i in 0 1 2; do
    ( FAIL_RANK=1 FAIL_AT=$dir/fail_at rb run --name "$j" --n 3 --id "f$i" --timeout $T \
          --expect f0,f1,f2 --kill-after 5s -- "$py" "$RB_TESTS_DIR/torch/member.py" \
          >"$dir/f$i.out" 2>"$dir/f$i.err"
      echo "$? $(date +%s%N)" >"$dir/f$i.rc" ) &
done
wait
expect_eq "the failing member's runner exits 9, the others 3" "3 9 3" \
    "$(for i in 0 1 2; do cut -d' ' -f1 "$dir/f$i.rc"; done | tr '\n' ' ' | sed 's/ $//')"
for i in 0 2; do
    expect_match "f$i says why" "job broken: f1's command exited 9" "$(cat "$dir/f$i.err")"
done
if [ -s "$dir/fail_at" ]; then
    at=$(cat "$dir/fail_at")
    last=$(for i in 0 2; do cut -d' ' -f2 "$dir/f$i.rc"; done | sort -n | tail -1)
    ms=$(( (last - at) / 1000000 ))
    diag "failure to the last runner's exit: $ms ms (target 0.5 s)"
    # The mechanism is asserted above; the bound here only says "stopped",
    # not "waited out gloo's timeout", with room for a loaded machine.
    check "the others stop within 10 s of the failure ($ms ms), not after their 600 s step" \
        test "$ms" -lt 10000
else
    not_ok "the failing member wrote when it failed"
fi

# 3. --restarts 1: rank 2 fails on the first attempt; the members meet again
# on a fresh MASTER_PORT and finish.
j=$(fresh tre)
for i in 0 1 2; do
    ( FAIL_RANK=2 FAIL_FIRST_ONLY=1 FAIL_AT=$dir/fail_at2 rb run --name "$j" --n 3 \
          --id "r$i" --expect r0,r1,r2 --timeout $T --restarts 1 --kill-after 5s -q \
          -- sh -c 'echo "$TORCHELASTIC_RESTART_COUNT $MASTER_PORT" >>"$0.ports"; exec "$@"' \
          "$dir/r$i" "$py" "$RB_TESTS_DIR/torch/member.py" >"$dir/r$i.out" 2>"$dir/r$i.err"
      echo $? >"$dir/r$i.rc" ) &
done
wait
expect_eq "a --restarts 1 torch job finishes after its first attempt failed" "0 0 0" \
    "$(cat "$dir"/r?.rc | tr '\n' ' ' | sed 's/ $//')"
expect_eq "... every rank sums 6 on the second attempt" "sum 6 restart 1
sum 6 restart 1
sum 6 restart 1" "$(cat "$dir"/r?.out | grep -o 'sum.*' | sed 's/ port [0-9]*//' | sort)"
p0=$(grep -h '^0 ' "$dir"/r?.ports | cut -d' ' -f2 | sort -u)
p1=$(grep -h '^1 ' "$dir"/r?.ports | cut -d' ' -f2 | sort -u)
check "... on a fresh MASTER_PORT ($p0, then $p1)" \
    test -n "$p0" -a -n "$p1" -a "$(echo "$p0" | wc -l)$(echo "$p1" | wc -l)" = 11 -a "$p0" != "$p1"

# 4. --nproc-per-node 2 on two hosts: four gloo members from two commands.
j=$(fresh tn)
for h in hosta hostb; do
    ( RBARRIER_HOST=$h rb run --name "$j" --n 4 --nproc-per-node 2 --id "$h" --timeout $T \
          -- "$py" "$root/examples/torch_allreduce.py" >"$dir/n$h.out" 2>"$dir/n$h.err"
      echo $? >"$dir/n$h.rc" ) &
done
wait
expect_eq "--nproc-per-node 2 on two hosts: both exit 0" "0 0" \
    "$(cat "$dir"/nhost?.rc | tr '\n' ' ' | sed 's/ $//')"
# Two members of one invocation share its stdout, and Python may write a
# line's text and its newline apart: count matches, not lines.
expect_eq "... every one of 4 ranks sums 10" "4" "$(cat "$dir"/nhost?.out | grep -o 'world 4 sum 10' | wc -l)"
bad=""
for h in hosta hostb; do
    lr=$(grep -o 'local_rank [0-9]*' "$dir/n$h.out" | cut -d' ' -f2 | sort | tr '\n' ' ')
    gr=$(grep -o 'group_rank [0-9]*' "$dir/n$h.out" | cut -d' ' -f2 | sort -u)
    [ "$lr" = "0 1 " ] || bad="$bad $h:local($lr)"
    [ "$(echo "$gr" | wc -l)" = 1 ] || bad="$bad $h:groups($gr)"
    eval "g_$h=\$gr"
done
[ "$(printf '%s\n' "$g_hosta" "$g_hostb" | sort | tr '\n' ' ')" = "0 1 " ] || bad="$bad group_ranks($g_hosta,$g_hostb)"
expect_eq "... LOCAL_RANK 0/1 on each host, GROUP_RANK 0 and 1" "" "$bad"
