# Jobs (rbarrier run): every way a member fails stops every member, each
# with the reason; nothing a command started outlives its runner; restarts
# meet again; status shows a running, a broken and an unknown job; PID 1;
# a Redis restarted empty mid-job is an error (1), never a pass.
. "$RB_TESTS_DIR/lib.sh"

T=$RB_TEST_TMP
ms() { date +%s%3N; }

# A member's command: records its pid and a background grandchild's in
# $d/<id>.child and $d/<id>.grand, then runs "$1" (default: block).
member() {
    echo "sleep 1000 & echo \$! > '$d'/\$RBARRIER_ID.grand; echo \$\$ > '$d'/\$RBARRIER_ID.child; ${1:-wait}"
}
ended() { [ -s "$d/$1.code" ]; }
all_gone() { local id; for id in "$@"; do pid_gone "$(cat "$d/$id.child")" && pid_gone "$(cat "$d/$id.grand")" || return 1; done; }
started() { local id; for id in "$@"; do [ -s "$d/$id.grand" ] && [ -s "$d/$id.child" ] || return 1; done; }

# 1. A job that passes: everyone exits 0; ranks are 0..N-1 (the place in
#    --expect), and CMD sees the job's variables, the URL without password.
job_setup pass
for id in c a b; do
    start_member $id --expect a,b,c --timeout 30 -- \
        sh -c 'echo "$RBARRIER_JOB $RBARRIER_N $RBARRIER_RANK $RBARRIER_RESTART $RBARRIER_INDEX" > "'"$d"'/$RBARRIER_ID.env"; env | grep -c "^RBARRIER_URL=" >> "'"$d"'/$RBARRIER_ID.env"'
done
wait
expect_eq "a job that passes: every runner exits 0" "0 0 0" "$(runner_code a) $(runner_code b) $(runner_code c)"
expect_eq "... ranks follow --expect; RBARRIER_JOB, _N, _RESTART, _INDEX set" \
    "$name 3 0 0 0|$name 3 1 0 1|$name 3 2 0 2" \
    "$(head -1 "$d/a.env")|$(head -1 "$d/b.env")|$(head -1 "$d/c.env")"
expect_eq "... RBARRIER_URL is handed on" 1 "$(tail -1 "$d/a.env")"

# 2. The leaving round: a member whose command is done waits while the
#    others run, and all leave together.
job_setup leave
start_member w0 --n 2 -- true
start_member w1 --n 2 -- sh -c "sleep 2; touch '$d/w1.done'"
wait
expect_eq "leaving: both exit 0" "0 0" "$(runner_code w0) $(runner_code w1)"

# 3. A command exits non-zero: its runner exits with its status, every other
#    runner exits 3 at once with the reason, and no command of any member
#    (nor a grandchild) is left.
job_setup fail
for id in w0 w1 w2; do start_member $id --n 3 --timeout 30 -- sh -c "$(member)"; done
check "exit 7: every command started" wait_until 30 started w0 w1 w2
t0=$(ms)
kill -TERM "$(cat "$d/w1.child")" 2>/dev/null   # the shell ends ...
wait
t1=$(ms)
# (sh -c's wait is interrupted by TERM: the command is killed by signal 15.)
expect_eq "a command killed by SIGTERM: its runner exits 143" 143 "$(runner_code w1)"
expect_eq "... the others exit 3" "3 3" "$(runner_code w0) $(runner_code w2)"
expect_match "... naming the member and the signal" "job broken: w1's command was killed by signal 15" "$(cat "$d/w0.err")"
check "... no command or grandchild of any member is left" all_gone w0 w1 w2
diag "failure to last exit: $((t1 - t0)) ms"
if [ $((t1 - t0)) -lt 3000 ]; then ok "... within 3 s of the failure ($((t1 - t0)) ms; target 0.5 s)"
else not_ok "... within 3 s of the failure ($((t1 - t0)) ms)"; fi

# w1's command exits 7 by itself (its grandchild stays behind: the runner
# ends it).
job_setup exit7
start_member w0 --n 2 --timeout 30 -- sh -c "$(member)"
start_member w1 --n 2 --timeout 30 -- sh -c "$(member 'sleep 0.5; exit 7')"
wait
expect_eq "a command exits 7: its runner exits 7, the other 3" "7 3" "$(runner_code w1) $(runner_code w0)"
expect_match "... with the reason" "rbarrier: $name: job broken: w1's command exited 7" "$(cat "$d/w0.err")"
check "... every command and grandchild is gone" all_gone w0 w1

# 4. The runner gets SIGTERM or SIGINT while its command runs: the job
#    stops (t_preempt.sh has the rest): 128+sig, the others exit 3 with
#    "job stopped: w1 was ..."; the group of each is gone.
for sig in TERM INT; do
    job_setup "sig$sig"
    for id in w0 w1; do start_member $id --n 2 --timeout 30 -- sh -c "$(member)"; done
    check "$sig: commands started" wait_until 30 started w0 w1
    kill -$sig "$(cat "$d/w1.pid")"
    wait
    want=$([ $sig = TERM ] && echo 143 || echo 130)
    expect_eq "runner got SIG$sig: it exits $want, the other 3" "$want 3" "$(runner_code w1) $(runner_code w0)"
    what=$([ $sig = TERM ] && echo "terminated \\(SIGTERM\\)" || echo "interrupted \\(SIGINT\\)")
    expect_match "... reason: w1 was $what" "job stopped: w1 was $what" "$(cat "$d/w0.err")"
    check "... every command and grandchild is gone" all_gone w0 w1
done

# 5. Runner and command killed with -9: the lease runs out and the others
#    exit 3 within lease + margin, naming the member.
job_setup kill9
for id in w0 w1 w2; do start_member $id --n 3 --lease 2 --timeout 30 -- sh -c "$(member)"; done
check "kill -9: commands started" wait_until 30 started w0 w1 w2
t0=$(ms)
kill -9 "$(cat "$d/w1.pid")" "$(cat "$d/w1.child")" "$(cat "$d/w1.grand")"
wait
t1=$(ms)
expect_eq "runner and command kill -9'd: the others exit 3" "3 3" "$(runner_code w0) $(runner_code w2)"
expect_match "... reason: its lease expired" "job broken: lease of w1 expired" "$(cat "$d/w0.err")"
diag "silent death to last exit: $((t1 - t0)) ms (lease 2 s)"
if [ $((t1 - t0)) -lt 5000 ]; then ok "... within lease + 3 s ($((t1 - t0)) ms)"
else not_ok "... within lease + 3 s ($((t1 - t0)) ms)"; fi
check "... the others' commands are gone" all_gone w0 w2

# 6. The runner alone killed with -9: its guard ends the command's whole
#    group within a second (margin: 3 s); the others then break by lease.
job_setup guard
for id in w0 w1; do start_member $id --n 2 --lease 2 --timeout 30 -- sh -c "$(member)"; done
check "guard: commands started" wait_until 30 started w0 w1
kill -9 "$(cat "$d/w1.pid")"
t0=$(ms)
check "a runner kill -9'd alone: its command's group is ended" wait_until 10 all_gone w1
t1=$(ms)
if [ $((t1 - t0)) -lt 3000 ]; then ok "... within 3 s ($((t1 - t0)) ms; target 1 s)"
else not_ok "... within 3 s ($((t1 - t0)) ms)"; fi
wait
expect_eq "... the other member exits 3" 3 "$(runner_code w0)"

# 7. A command that ignores SIGTERM in a broken job is killed --kill-after
#    later; the runner exits 3 after it is gone.
job_setup ignore
start_member w0 --n 2 --kill-after 1 --timeout 30 -- sh -c "trap '' TERM; $(member)"
start_member w1 --n 2 --timeout 30 -- sh -c "$(member)"
check "ignoring TERM: commands started" wait_until 30 started w0 w1
t0=$(ms)
kill -9 "$(cat "$d/w1.child")"
wait
t1=$(ms)
expect_eq "a command ignoring SIGTERM: its runner exits 3 after --kill-after" 3 "$(runner_code w0)"
check "... the command and its grandchild are gone" all_gone w0
if [ $((t1 - t0)) -ge 900 ]; then ok "... not before --kill-after ($((t1 - t0)) ms)"
else not_ok "... not before --kill-after ($((t1 - t0)) ms)"; fi

# 8. status: a running job, a broken one, an unknown name.
job_setup status
for id in w0 w1; do start_member $id --expect w0,w1 --timeout 30 -- sh -c "$(member)"; done
check "status: commands started" wait_until 30 started w0 w1
out=$(rb status --name "$name")
expect_match "status of a running job: running, each member with rank and lease" \
    "running.*w0 +rank 0 +running +lease left.*w1 +rank 1 +running" "$(echo $out)"
js=$(rb status --name "$name" --json)
expect_match "... --json: a job object with its members" \
    '"job":\{"epoch":[0-9]+,"state":"run".*"id":"w0","rank":0,"state":"running","lease_left_ms":[0-9]+' "$js"
kill "$(cat "$d/w0.child")"
wait
out=$(rb status --name "$name")
expect_match "status of a broken job: the reason and the member's exit status" \
    "w0 +rank 0 +failed +exit 143.*broken +w0's command was killed by signal 15" "$(echo $out)"
js=$(rb status --name "$name" --json)
expect_match "... --json: state over, the reason" '"state":"over".*"reason":"w0.s command was killed by signal 15"' "$js"
js=$(rb status --name "$(fresh unknown)" --json)
expect_match "status of an unknown name: --json has no job" '^\{"name":"[^"]*","gen":0,[^j]*"outcome":"ok"' "$js"
out=$(rb status --name "$(fresh unknown)" 2>&1)
expect_match "... and says unknown" "unknown" "$out"

# 9. reset --job: every member stops, exits 3 with "reset".
job_setup reset
for id in w0 w1; do start_member $id --n 2 --restarts 3 --timeout 30 -- sh -c "$(member)"; done
check "reset: commands started" wait_until 30 started w0 w1
rb reset --name "$name" --job > /dev/null
wait
expect_eq "reset --job: both members exit 3 (restarts notwithstanding)" "3 3" "$(runner_code w0) $(runner_code w1)"
expect_match "... reason: reset" "job broken: reset" "$(cat "$d/w1.err")"
check "... commands gone" all_gone w0 w1

# 10. --restarts: a member fails once; every member meets again and reruns
#     with RBARRIER_RESTART 1; all exit 0.
job_setup restart
for id in w0 w1 w2; do
    start_member $id --n 3 --restarts 2 --timeout 30 -- sh -c \
        'echo "$RBARRIER_RESTART" >> "'"$d"'/$RBARRIER_ID.runs"; if [ "$RBARRIER_ID$RBARRIER_RESTART" = w10 ]; then exit 9; fi; sleep 0.5'
done
wait
expect_eq "restarts: a member failing once, then everyone exits 0" "0 0 0" "$(runner_code w0) $(runner_code w1) $(runner_code w2)"
# (Another member may learn of the break before its command started: then
# it runs only the second time.)
expect_eq "... the failing command ran twice, RBARRIER_RESTART 0 then 1" "0 1" "$(echo $(cat "$d/w1.runs"))"
expect_eq "... every command's last run was restart 1" "1 1 1" \
    "$(tail -1 "$d/w0.runs") $(tail -1 "$d/w1.runs") $(tail -1 "$d/w2.runs")"
expect_match "... the others said why they restarted" "w1's command exited 9; restart 1 of 2" "$(cat "$d/w0.err")"

# Restarts used up: the failing runner exits with its command's status.
job_setup restart2
start_member w0 --n 2 --restarts 1 --timeout 30 -- sh -c "$(member)"
start_member w1 --n 2 --restarts 1 --timeout 30 -- sh -c 'exit 4'
wait
expect_eq "restarts used up: the failing runner exits 4, the other 3" "4 3" "$(runner_code w1) $(runner_code w0)"

# A runner killed -9 and started again with the same id rejoins the epoch.
job_setup rejoin
start_member w0 --n 2 --lease 2 --restarts 1 --timeout 30 -- sh -c \
    "echo \$RBARRIER_RESTART >> '$d/w0.runs'; [ \$RBARRIER_RESTART = 1 ] && exit 0; $(member)"
start_member w1 --n 2 --lease 2 --restarts 1 --timeout 30 -- sh -c \
    "echo \$RBARRIER_RESTART >> '$d/w1.runs'; [ \$RBARRIER_RESTART = 1 ] && exit 0; $(member)"
check "rejoin: commands started" wait_until 30 started w0 w1
kill -9 "$(cat "$d/w1.pid")"
wait_until 10 all_gone w1
mv "$d/w1.code" "$d/w1.first" 2>/dev/null
start_member w1 --n 2 --lease 2 --restarts 1 --timeout 30 -- sh -c \
    "echo \$RBARRIER_RESTART >> '$d/w1.runs'; [ \$RBARRIER_RESTART = 1 ] && exit 0; $(member)"
wait
expect_eq "a member's runner started again: both exit 0" "0 0" "$(runner_code w0) $(runner_code w1)"
expect_eq "... the new runner ran attempt 1" "0 1" "$(echo $(cat "$d/w1.runs"))"

# A process the failed command moved out of its process group (setsid) is
# ended with the command, before its runner enters the next attempt (the
# supervisor holds the whole tree, not only the group), and its end is no
# signal to the runner, which enters and reruns (the other member's
# command takes 2 s to stop, so the entering round is still open).
job_setup leftover
start_member w0 --n 2 --restarts 1 --timeout 30 -- sh -c \
    "[ \$RBARRIER_RESTART = 1 ] && exit 0; trap 'sleep 2; exit 0' TERM; while :; do sleep 0.05; done"
start_member w1 --n 2 --restarts 1 --timeout 30 -- sh -c \
    "[ \$RBARRIER_RESTART = 1 ] && exit 0
     setsid sh -c 'echo \$\$ > $d/away.tmp; mv $d/away.tmp $d/away; sleep 5; touch $d/left' &
     while [ ! -e '$d/away' ]; do sleep 0.01; done; exit 9"
wait
expect_eq "a leftover of the failed command: both exit 0" "0 0" "$(runner_code w0) $(runner_code w1)"
check "... the leftover (setsid) was ended with its command" \
    sh -c "! kill -0 $(cat "$d/away" 2>/dev/null || echo 999999999) 2>/dev/null"
check "... and never finished its work" test ! -e "$d/left"

# 11. Bad input: exit 2, one line, nothing sent.
before=$(cmdstats)
out=$(rb run --name "$(fresh bad)" --n 2 2>&1); code=$?
expect_eq "run without a command: exit 2" 2 "$code"
out=$(rb run --name "$(fresh bad)" --n 2 --restarts -1 -- true 2>&1); code=$?
expect_eq "run --restarts -1: exit 2" "2 1" "$code $(echo "$out" | wc -l)"
out=$(rb run --name "$(fresh bad)" --expect a,b --id c -- true 2>&1); code=$?
expect_eq "run --id not in --expect: exit 2" 2 "$code"
expect_eq "... nothing was sent to Redis" "$before" "$(cmdstats)"

# 12. As PID 1: the job runs, its command's status comes back.
if unshare --pid --fork --mount-proc true 2>/dev/null; then
    out=$(unshare --pid --fork --mount-proc $RBARRIER run --name "$(fresh pid1)" --n 1 \
          -- sh -c 'sleep 5 & echo ran; exit 6' 2>&1)
    expect_eq "PID 1: run runs its command, reaps, and exits with its status" "6 ran" "$? $(echo "$out" | head -1)"
else
    skip "PID 1: unshare --pid --fork --mount-proc is not permitted here"
fi

# 13. Redis restarted without persistence mid-job: the state is gone, each
#     runner stops its command and exits 1; never 0.
if start_redis jobrestart; then
    job_setup lostjob
    url=redis://127.0.0.1:$REDIS_PORT
    for id in w0 w1; do
        ( RBARRIER_URL=$url $RBARRIER run --name "$name" --id $id --n 2 --lease 2 --timeout 30 \
              -- sh -c "$(member)" 2> "$d/$id.err"; echo $? > "$d/$id.code" ) &
    done
    check "lost: commands started" wait_until 30 started w0 w1
    stop_redis "$REDIS_PID"
    REDIS_PORT_WANT=$REDIS_PORT start_redis jobrestart
    wait
    expect_eq "Redis restarted empty mid-job: both runners exit 1" "1 1" "$(runner_code w0) $(runner_code w1)"
    expect_match "... saying the state was lost" "state lost" "$(cat "$d/w0.err")"
    check "... their commands are gone" all_gone w0 w1
    stop_redis "$REDIS_PID"
else
    not_ok "a private redis-server for the restart test"
fi

# 14. Inside a job, wait takes --n and --id from the job, and sync/train
#     take --worker from RBARRIER_RANK; outside one, --worker is required.
job_setup injob
for id in w0 w1; do
    start_member $id --expect w0,w1 --timeout 30 -- sh -c \
        "$RBARRIER wait --name '$name-b' --timeout 20 && $RBARRIER train --param '$name-p' > /dev/null && $RBARRIER sync --param '$name-p' > '$d/'\$RBARRIER_ID.sync"
done
wait
expect_eq "in a job: wait, train and sync without --n/--id/--worker" "0 0" "$(runner_code w0) $(runner_code w1)"
expect_eq "... train counted each member once, sync used the rank" "1 1 2" \
    "$(rcli EXISTS "$(pkey "$name-p"):local:0") $(rcli EXISTS "$(pkey "$name-p"):local:1") $(rcli GET "$(pkey "$name-p")")"
out=$(env -u RBARRIER_JOB $RBARRIER sync --param "$name-p" 2>&1)
expect_eq "outside a job sync needs --worker (exit 2)" 2 $?
