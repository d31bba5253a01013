# Stuck members (rbarrier run --stall-after): a member whose command makes
# no progress breaks the job, and the reason names the member most likely
# stuck (its processes stopped, else the oldest progress), not the first
# runner to notice; progress is a touch of $RBARRIER_PROGRESS, a change of
# --progress-file, or an in-job rbarrier call; --restarts reruns a stall.
. "$RB_TESTS_DIR/lib.sh"

T=$RB_TEST_TMP
ms() { date +%s%3N; }

has() { [ -s "$d/$1" ]; }

# A member's loop: steps of 0.2 s, each touching $RBARRIER_PROGRESS; after
# $1 steps it runs $2 (e.g. stops itself); $3 steps in all, then exits 0.
steps() {
    echo "echo \$\$ > '$d'/\$RBARRIER_ID.sh; i=0; while [ \$i -lt $3 ]; do i=\$((i+1)); touch \"\$RBARRIER_PROGRESS\"; if [ \$i = $1 ]; then $2; fi; sleep 0.2; done"
}
hang_self() { echo "ms=\$(date +%s%3N); echo \$ms > '$d'/\$RBARRIER_ID.stuck; kill -STOP \$\$"; }

# 1. A shell job where one member stops itself (SIGSTOP) and the others go
#    on: the stopped one is named, every runner exits 3 within
#    stall-after + lease/3 + 1 s, and nothing of any command is left.
job_setup one
start_member m0 --n 3 --lease 1.5 --stall-after 2s --kill-after 2s --timeout 30 -- sh -c "$(steps 0 : 100)"
start_member m1 --n 3 --lease 1.5 --stall-after 2s --kill-after 2s --timeout 30 -- sh -c "$(steps 5 "$(hang_self)" 100)"
start_member m2 --n 3 --lease 1.5 --stall-after 2s --kill-after 2s --timeout 30 -- sh -c "$(steps 0 : 100)"
check "one stops itself: it does" wait_until 30 has m1.stuck
wait
t1=$(ms)
expect_eq "... every runner exits 3, the stuck one's too" "3 3 3" "$(runner_code m0) $(runner_code m1) $(runner_code m2)"
expect_match "... the stopped member is named" \
    "rbarrier: $name: job broken: m1 made no progress for [0-9.]+s \(its processes are stopped\)" "$(cat "$d/m0.err")"
expect_match "... by every runner" "m1 made no progress" "$(cat "$d/m2.err") $(cat "$d/m1.err")"
took=$((t1 - $(cat "$d/m1.stuck")))
diag "stop to last exit: $took ms (stall-after 2 s, lease 1.5 s: bound 3.5 s)"
# The bound is 3.5 s; the check allows a loaded machine 2 s more.
if [ $took -lt 5500 ]; then ok "... stop to last exit within the bound ($took ms)"
else not_ok "... stop to last exit within the bound ($took ms; bound 3.5 s)"; fi
check "... the stopped command is gone" pid_gone "$(cat "$d/m1.sh")"
check "... the others' too" pid_gone "$(cat "$d/m0.sh")"

# 2. Every member hangs, one after the other (a collective hang): the
#    member whose progress is oldest is named, though another runner (with
#    a shorter --stall-after) noticed first.
job_setup all
start_member m0 --n 3 --lease 1.5 --stall-after 4s --kill-after 2s --timeout 30 -- sh -c "$(steps 3 'sleep 60' 100)"
start_member m1 --n 3 --lease 1.5 --stall-after 2s --kill-after 2s --timeout 30 -- sh -c "$(steps 10 'sleep 60' 100)"
start_member m2 --n 3 --lease 1.5 --stall-after 4s --kill-after 2s --timeout 30 -- sh -c "$(steps 10 'sleep 60' 100)"
wait
expect_eq "all hang: every runner exits 3" "3 3 3" "$(runner_code m0) $(runner_code m1) $(runner_code m2)"
expect_match "... the oldest progress (m0) is named" "job broken: m0 made no progress for" "$(cat "$d/m1.err")"

# 3. --progress-file: a log the command writes is its progress (it never
#    touches $RBARRIER_PROGRESS); the member whose log stops is named.
job_setup log
logger() { echo "i=0; while [ \$i -lt $1 ]; do i=\$((i+1)); echo step \$i >> '$d'/\$RBARRIER_ID.log; sleep 0.2; done; $2"; }
start_member m0 --n 2 --lease 1.5 --stall-after 1.5s --progress-file "$d/m0.log" --timeout 30 -- sh -c "$(logger 30 'sleep 60')"
start_member m1 --n 2 --lease 1.5 --stall-after 1.5s --progress-file "$d/m1.log" --timeout 30 -- sh -c "$(logger 5 'sleep 60')"
wait
expect_eq "progress file: both runners exit 3" "3 3" "$(runner_code m0) $(runner_code m1)"
expect_match "... the member whose log stopped is named" "job broken: m1 made no progress" "$(cat "$d/m0.err")"
expect_match "... the other, writing its log past the stall time, was not taken for stuck" "step ([89]|[1-9][0-9])" "$(tail -1 "$d/m0.log")"

# 4. An in-job wait counts as progress: m0 waits at a barrier for m1 (who
#    works longer than the stall time) and touches nothing itself.
job_setup wait
start_member m0 --n 2 --lease 1.5 --stall-after 1.5s --timeout 30 -- \
    sh -c "$RBARRIER wait --name x --timeout 20"
start_member m1 --n 2 --lease 1.5 --stall-after 1.5s --timeout 30 -- \
    sh -c "$(steps 0 : 20); $RBARRIER wait --name x --timeout 20"
wait
expect_eq "an in-job wait is progress: both exit 0" "0 0" "$(runner_code m0) $(runner_code m1)"

# 5. With --restarts a stall is restarted like a failure: the stuck member
#    hangs only in the first attempt; the second passes.
job_setup restart
for id in m0 m1; do
    start_member $id --n 2 --lease 1.5 --stall-after 1.5s --kill-after 1s --restarts 1 --timeout 30 -- \
        sh -c "echo \$RBARRIER_RESTART >> '$d'/\$RBARRIER_ID.runs; if [ \$RBARRIER_ID\$RBARRIER_RESTART = m10 ]; then sleep 60; fi; $(steps 0 : 5)"
done
wait
expect_eq "stall with --restarts: both exit 0 after the restart" "0 0" "$(runner_code m0) $(runner_code m1)"
expect_match "... the restart note names the stall" "m1 made no progress for [0-9.]+s; restart 1 of 1" "$(cat "$d/m0.err")"
expect_eq "... m1 ran twice" "0 1" "$(echo $(cat "$d/m1.runs"))"
