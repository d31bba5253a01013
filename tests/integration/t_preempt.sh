# Preemption (rbarrier run): a runner signalled while its command runs
# stops the job; every command gets SIGTERM once and the job's barriers
# keep passing, so the members agree on a step and save it; a member that
# leaves without joining breaks the save round for the others at once; the
# grace (--kill-after) ends in SIGKILL; a stopped job is not restarted.
. "$RB_TESTS_DIR/lib.sh"

T=$RB_TEST_TMP
ms() { date +%s%3N; }

ready() { local id; for id in "$@"; do [ -s "$d/$id.ready" ] || return 1; done; }

# A training loop that steps until it gets SIGTERM, then agrees on a step
# with the others (the largest) and saves it: the README's example. The
# step counts are made to differ between members (m1 steps twice as fast).
# $1: how many seconds each step takes.
train() {
    cat <<EOF
STEP=0; STOP=0
trap 'STOP=1' TERM
echo \$\$ > '$d'/\$RBARRIER_ID.ready
while [ \$STOP = 0 ]; do STEP=\$((STEP + 1)); sleep $1 & wait \$!; done
S=\$($RBARRIER wait --name save --value "\$STEP" --reduce max --timeout 20) || exit 9
echo "\$S" > '$d'/\$RBARRIER_ID.saved
EOF
}

# 1. One runner is preempted (SIGTERM): every member saves the same step,
#    the signalled runner exits 143, the others 3 with the reason.
job_setup one
start_member m0 --n 3 --timeout 30 --kill-after 20s -- sh -c "$(train 0.2)"
start_member m1 --n 3 --timeout 30 --kill-after 20s -- sh -c "$(train 0.1)"
start_member m2 --n 3 --timeout 30 --kill-after 20s -- sh -c "$(train 0.3)"
check "preempt one: every command runs" wait_until 30 ready m0 m1 m2
sleep 1
kill -TERM "$(cat "$d/m0.pid")"
wait
expect_eq "... the signalled runner exits 143, the others 3" "143 3 3" \
    "$(runner_code m0) $(runner_code m1) $(runner_code m2)"
s0=$(cat "$d/m0.saved" 2>/dev/null); s1=$(cat "$d/m1.saved" 2>/dev/null); s2=$(cat "$d/m2.saved" 2>/dev/null)
expect_match "... every member saved a step" '^[0-9]+$' "$s0"
expect_eq "... the same step on every member" "$s0 $s0 $s0" "$s0 $s1 $s2"
expect_match "... the others say the job stopped and why" \
    "rbarrier: $name: job stopped: m0 was terminated \(SIGTERM\)" "$(cat "$d/m1.err")"
st=$($RBARRIER status --name "$name")
expect_match "... status: the job stopped" "stopped" "$st"

# 2. Every runner is preempted at once (the whole job): the same step
#    everywhere, every runner exits 143.
job_setup all
for id in m0 m1 m2; do
    start_member $id --n 3 --timeout 30 --kill-after 20s -- sh -c "$(train 0.1)"
done
check "preempt all: every command runs" wait_until 30 ready m0 m1 m2
sleep 1
kill -TERM "$(cat "$d/m0.pid")" "$(cat "$d/m1.pid")" "$(cat "$d/m2.pid")"
wait
expect_eq "... every runner exits 143" "143 143 143" "$(runner_code m0) $(runner_code m1) $(runner_code m2)"
s0=$(cat "$d/m0.saved" 2>/dev/null); s1=$(cat "$d/m1.saved" 2>/dev/null); s2=$(cat "$d/m2.saved" 2>/dev/null)
expect_match "... every member saved a step" '^[0-9]+$' "$s0"
expect_eq "... the same step on every member" "$s0 $s0 $s0" "$s0 $s1 $s2"

# 3. A member whose command exits on SIGTERM without saving breaks the save
#    round for the others at once (they learn who left), whether they
#    arrived before it left or after.
job_setup gone
start_member m0 --n 3 --timeout 30 --kill-after 20s -- sh -c "$(train 0.1)"
start_member m1 --n 3 --timeout 30 --kill-after 20s -- sh -c "$(train 0.1)"
start_member m2 --n 3 --timeout 30 --kill-after 20s -- \
    sh -c "echo \$\$ > '$d'/m2.ready; trap 'sleep 1; exit 0' TERM; while :; do sleep 0.1; done"
check "a member leaves: every command runs" wait_until 30 ready m0 m1 m2
sleep 0.5
t0=$(ms)
kill -TERM "$(cat "$d/m0.pid")"
wait
t1=$(ms)
expect_eq "... the runners exit 143, 3, 3" "143 3 3" "$(runner_code m0) $(runner_code m1) $(runner_code m2)"
expect_eq "... no member saved" "" "$(cat "$d"/*.saved 2>/dev/null)"
if [ $((t1 - t0)) -lt 10000 ]; then ok "... nobody waited for the member that left ($((t1 - t0)) ms; the grace is 20 s)"
else not_ok "... nobody waited for the member that left ($((t1 - t0)) ms)"; fi

# 4. A command that ignores SIGTERM is killed at the end of the grace; the
#    others, done saving, have left; nothing is restarted by --restarts.
job_setup grace
start_member m0 --n 2 --timeout 30 --kill-after 2s --restarts 2 -- \
    sh -c "echo \$\$ > '$d'/m0.ready; echo x >> '$d'/m0.runs; trap '' TERM; while :; do sleep 0.1; done"
start_member m1 --n 2 --timeout 30 --kill-after 2s --restarts 2 -- \
    sh -c "echo \$\$ > '$d'/m1.ready; echo x >> '$d'/m1.runs; trap '' TERM; while :; do sleep 0.1; done"
check "grace: every command runs" wait_until 30 ready m0 m1
t0=$(ms)
kill -TERM "$(cat "$d/m1.pid")"
wait
t1=$(ms)
expect_eq "... the runners exit 3 and 143" "3 143" "$(runner_code m0) $(runner_code m1)"
if [ $((t1 - t0)) -ge 1900 ] && [ $((t1 - t0)) -lt 12000 ]; then
    ok "... SIGKILL at the end of the 2 s grace ($((t1 - t0)) ms)"
else not_ok "... SIGKILL at the end of the 2 s grace ($((t1 - t0)) ms)"; fi
check "... no command is left" pid_gone "$(cat "$d/m0.ready")"
check "... nor the other's" pid_gone "$(cat "$d/m1.ready")"
expect_eq "... a stopped job is not restarted" "1 1" "$(wc -l < "$d/m0.runs") $(wc -l < "$d/m1.runs")"
