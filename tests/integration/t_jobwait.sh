# Inside a job (rbarrier run), a wait is bound to the job: the job's break
# ends a wait blocked in it at once, a wait started in a broken job fails at
# once, and after a restart no arrival of the broken attempt counts.
. "$RB_TESTS_DIR/lib.sh"

T=$RB_TEST_TMP
ms() { date +%s%3N; }

has() { [ -s "$1" ]; }
setup() { job_setup "$1"; bar=$(fresh x); }

# members BAR: the parties in the rounds of barrier BAR (its name is fresh,
# so whatever its keys look like, only its own match).
members() {
    local k sum=0 c
    for k in $(rcli --scan --pattern "*$1*:in"); do
        c=$(rcli ZCARD "$k"); sum=$((sum + c))
    done
    echo "$sum"
}
members_are() { [ "$(members "$1")" = "$2" ]; }

# An in-job wait deaf to SIGTERM (ignored at its start, so it stays
# ignored: the runner's SIGTERM to its command's tree does not end it, and
# what ends it is the break; SIGKILL comes only --kill-after later).
# inwait TAG [flags]: the wait's exit code in $d/TAG.wcode, its stderr in
# $d/TAG.werr.
inwait() {
    local tag=$1; shift
    echo "sh -c 'trap \"\" TERM; $RBARRIER wait --name $bar $* 2> \"$d/$tag.werr\"; echo \$? > \"$d/$tag.wcode\"' &"
}

# 1. Member 0's command exits 7 while member 1 is blocked in an in-job wait
#    (no --n, no --id): that wait exits 3 at once with the job's reason.
setup blocked
start_member w0 --n 2 --lease 30s --timeout 30 -- \
    sh -c "while [ ! -e '$d/go' ]; do sleep 0.05; done; exit 7"
start_member w1 --n 2 --lease 30s --timeout 30 -- \
    sh -c "$(inwait w1 --timeout 60) wait"
check "in-job wait: member 1 arrived at the job's barrier" wait_until 30 members_are "$bar" 1
t0=$(ms)
touch "$d/go"
check "... its wait ends when member 0's command exits 7" wait_until 30 has "$d/w1.wcode"
t1=$(ms)
wait
expect_eq "... the wait exits 3" 3 "$(cat "$d/w1.wcode" 2>/dev/null)"
expect_match "... naming the job's reason" "w0's command exited 7" "$(cat "$d/w1.werr" 2>/dev/null)"
diag "break to the wait's exit: $((t1 - t0)) ms"
if [ $((t1 - t0)) -lt 5000 ]; then ok "... well under the 30 s lease ($((t1 - t0)) ms)"
else not_ok "... well under the 30 s lease ($((t1 - t0)) ms)"; fi
expect_eq "... the runners exit 7 and 3" "7 3" "$(runner_code w0) $(runner_code w1)"

# 2. A wait started in a broken job fails at once (exit 3, the reason).
setup broken
start_member w0 --n 2 --timeout 30 -- sh -c "echo \$RBARRIER_GEN > '$d/epoch'; exit 7"
start_member w1 --n 2 --timeout 30 -- sh -c 'sleep 1000 & wait'
wait
expect_eq "a broken job: its runners exit 7 and 3" "7 3" "$(runner_code w0) $(runner_code w1)"
t0=$(ms)
RBARRIER_JOB=$name RBARRIER_GEN=$(cat "$d/epoch") RBARRIER_RESTART=0 \
RBARRIER_N=2 RBARRIER_ID=w1 rb wait --name "$bar" --timeout 20 2> "$d/late.err"
code=$?
t1=$(ms)
expect_eq "a wait started in the broken job exits 3" 3 "$code"
expect_match "... naming the job's reason" "w0's command exited 7" "$(cat "$d/late.err")"
if [ $((t1 - t0)) -lt 5000 ]; then ok "... at once ($((t1 - t0)) ms)"
else not_ok "... at once ($((t1 - t0)) ms)"; fi
expect_eq "... and was not counted" 0 "$(members "$bar")"

# 3. With --restarts 1: member 0 arrives at the barrier in attempt 0, then
#    the attempt breaks (member 1's command exits 7). In attempt 1 member 1
#    alone waits at the same name: member 0's old arrival does not count, so
#    it times out (124) rather than passing.
setup restart
start_member w0 --n 2 --restarts 1 --timeout 30 -- sh -c "
    if [ \$RBARRIER_RESTART = 0 ]; then $(inwait w0a0 --timeout 60) wait
    else while [ ! -e '$d/w1a1.wcode' ]; do sleep 0.05; done; fi"
start_member w1 --n 2 --restarts 1 --timeout 30 -- sh -c "
    if [ \$RBARRIER_RESTART = 0 ]; then
        while [ ! -e '$d/go' ]; do sleep 0.05; done; exit 7
    fi
    $RBARRIER wait --name $bar --timeout 3 2> '$d/w1a1.werr'; echo \$? > '$d/w1a1.wcode'"
check "restart: member 0 arrived in attempt 0" wait_until 30 members_are "$bar" 1
touch "$d/go"
wait
expect_eq "... the job passes in attempt 1" "0 0" "$(runner_code w0) $(runner_code w1)"
expect_eq "... attempt 1's wait does not count attempt 0's arrival (times out)" \
    124 "$(cat "$d/w1a1.wcode" 2>/dev/null)"
check "... attempt 0's wait ended with the break" wait_until 30 has "$d/w0a0.wcode"
expect_eq "... exit 3" 3 "$(cat "$d/w0a0.wcode" 2>/dev/null)"

# 4. :bar (the attempt's set of its barriers' rounds, which the break
#    reaches) keeps only the open rounds: after 40 rounds of an in-job
#    barrier it holds just the one a member still waits in, that round
#    stays through a later prune, and the break still reaches it.
setup bar
rounds="for i in \$(seq 40); do $RBARRIER wait --name $bar --timeout 60 || exit 9; done"
start_member w0 --n 2 --lease 2s --timeout 30 -- sh -c "$rounds
    while [ ! -e '$d/go' ]; do sleep 0.05; done; exit 7"
start_member w1 --n 2 --lease 2s --timeout 30 -- sh -c "$rounds
    $(inwait w1 --timeout 120) wait"
jbase="rb:j:{$name}"
# count PATTERN: members of the one key matching PATTERN (0: none yet).
count() { local k; k=$(rcli --scan --pattern "$1" | head -n 1); [ -n "$k" ] && rcli ZCARD "$k" || echo 0; }
count_is() { [ "$(count "$1")" = "$2" ]; }
prune_moved() { [ "$(rcli HGET "$jbase" prune)" != "$1" ]; }
check "bar: member 1 waits in round 41" wait_until 60 count_is "*:$bar:41:in" 1
check "... :bar comes down to the open round alone" wait_until 60 count_is "$jbase:*:bar" 1
p=$(rcli HGET "$jbase" prune)
check "... a later prune runs" wait_until 60 prune_moved "$p"
expect_eq "... and keeps the open round" 1 "$(count "$jbase:*:bar")"
t0=$(ms)
touch "$d/go"
check "... whose wait the break still ends" wait_until 30 has "$d/w1.wcode"
t1=$(ms)
wait
expect_eq "... with exit 3" 3 "$(cat "$d/w1.wcode" 2>/dev/null)"
if [ $((t1 - t0)) -lt 5000 ]; then ok "... at once ($((t1 - t0)) ms)"
else not_ok "... at once ($((t1 - t0)) ms)"; fi
expect_eq "... the runners exit 7 and 3" "7 3" "$(runner_code w0) $(runner_code w1)"
