# One live runner per member id (rbarrier run): a second runner with a
# held id waits up to one lease and is refused (exit 2) while the holder
# renews, or takes the place once the holder's lease has passed; the old
# holder, back, finds its place taken and never runs its command. A job
# whose state vanishes (FLUSHALL) ends every runner with exit 1 after its
# command stopped.
. "$RB_TESTS_DIR/lib.sh"

T=$RB_TEST_TMP
ms() { date +%s%3N; }

ended() { [ -s "$d/$1.code" ]; }
has() { [ -s "$d/$1" ]; }
entered() { [ "$(rcli ZCARD "rb:j:{$name}:$(rcli HGET "rb:j:{$name}" epoch):0:in")" = "$1" ]; }

# 1. Two runners with one id while the job enters: the second waits about
#    a lease and is refused (exit 2, naming the id); nothing of it counts.
job_setup dup
start_runner a --id w0 --n 2 --lease 1.5 --timeout 30 -- sh -c "echo a >> '$d/ran'; sleep 1"
check "dup: the first runner entered" wait_until 20 entered 1
t0=$(ms)
start_runner b --id w0 --n 2 --lease 1.5 --timeout 30 -- sh -c "echo b >> '$d/ran'; sleep 1"
wait_until 30 ended b
t1=$(ms)
expect_eq "... the second runner with the id is refused (exit 2)" 2 "$(runner_code b)"
expect_match "... naming the id and the live runner" "id 'w0' is held by a live runner" "$(cat "$d/b.err")"
if [ $((t1 - t0)) -ge 500 ] && [ $((t1 - t0)) -lt 10000 ]; then
    ok "... after waiting about one lease ($((t1 - t0)) ms; lease 1.5 s)"
else not_ok "... after waiting about one lease ($((t1 - t0)) ms; lease 1.5 s)"; fi
expect_eq "... it was not counted as a member" 1 "$(rcli ZCARD "rb:j:{$name}:$(rcli HGET "rb:j:{$name}" epoch):0:in")"
start_runner c --id w1 --n 2 --lease 1.5 --timeout 30 -- sh -c "echo c >> '$d/ran'; sleep 1"
wait
expect_eq "... the job then runs with the real second member" "0 0" "$(runner_code a) $(runner_code c)"
expect_eq "... and each command ran once" "a c" "$(sort "$d/ran" | tr '\n' ' ' | sed 's/ $//')"

# 2. The holder is stopped (SIGSTOP) while entering: past its lease the
#    newcomer takes the place; the old one, continued, finds it taken and
#    exits 1 without running its command.
job_setup takeover
start_runner a --id w0 --n 2 --lease 1.5 --timeout 30 -- sh -c "echo a >> '$d/ran'"
check "takeover: the first runner entered" wait_until 20 entered 1
kill -STOP "$(cat "$d/a.pid")"
nonce_of_w0() { rcli HGET "rb:j:{$name}:$(rcli HGET "rb:j:{$name}" epoch):m" nonce:w0; }
first=$(nonce_of_w0)
taken() { [ "$(nonce_of_w0)" != "$first" ]; }
start_runner b --id w0 --n 2 --lease 1.5 --timeout 30 -- sh -c "echo b >> '$d/ran'; sleep 1"
check "... the newcomer takes the place once the lease passed" wait_until 20 taken
start_runner c --id w1 --n 2 --lease 1.5 --timeout 30 -- sh -c "echo c >> '$d/ran'; sleep 1"
wait_until 30 ended b
wait_until 30 ended c
expect_eq "... the job runs with it (both exit 0)" "0 0" "$(runner_code b) $(runner_code c)"
kill -CONT "$(cat "$d/a.pid")"
wait
expect_eq "... the old runner, continued, exits 1" 1 "$(runner_code a)"
expect_match "... saying another runner took its place" "another runner took the place of id 'w0'" "$(cat "$d/a.err")"
expect_eq "... and its command never ran" "b c" "$(sort "$d/ran" | tr '\n' ' ' | sed 's/ $//')"

# 3. The job's state vanishes while it runs (FLUSHALL, on a server of its
#    own): every runner stops its command and exits 1 ("state lost").
if start_redis jobflush; then
    job_setup flush
    for id in w0 w1; do
        RBARRIER_URL=redis://127.0.0.1:$REDIS_PORT start_runner $id --id $id --n 2 --lease 1.5 \
            --timeout 30 -- sh -c "echo \$\$ > '$d/$id.child'; exec sleep 60"
    done
    check "flush: both commands run" wait_until 20 has w0.child
    wait_until 20 has w1.child
    redis-cli -p "$REDIS_PORT" FLUSHALL >/dev/null
    wait
    expect_eq "FLUSHALL while running: both runners exit 1" "1 1" "$(runner_code w0) $(runner_code w1)"
    expect_match "... saying the state was lost" "state lost" "$(cat "$d/w0.err")"
    check "... their commands were stopped" pid_gone "$(cat "$d/w0.child")"
    check "... both" pid_gone "$(cat "$d/w1.child")"
    stop_redis "$REDIS_PID"
else
    skip "flush: no redis-server of its own could start"
fi

# 4. No new run while a lost run's members may still run. The state
#    vanishes (FLUSHALL, or the job's keys deleted as an eviction would)
#    while both members work, each in a grandchild that takes a second to
#    stop and logs every 50 ms; a new run of the name starts at once. Its
#    commands must start after the old work's last line, with the old
#    commands gone, and within the old lease's class (4.1 s, a FLUSHALL)
#    or a lease and a half (4.5 s: the keeper's record of a job stands up
#    to half a lease past the last renewal) plus margin.
slow_worker "$T/jobwork.sh"
# new_run URL W0 W1: a new run of the name (neww0 and neww1; URL '' for
# the test server). Member wI's command first writes to $d/wI.saw whether
# the old work logging to $d/WI.log still runs ("overlap") or not
# ("clear"), then stamps "new" in $d/wI.log.
new_run() {
    local url=${1:-$RBARRIER_URL} id
    local -A watch=([w0]=$2 [w1]=$3)
    for id in w0 w1; do
        RBARRIER_URL=$url start_runner "new$id" --id $id --n 2 --lease 3 --timeout 30 -- \
            sh -c "if kill -0 \$(cat '$d/${watch[$id]}.log.pid') 2>/dev/null; then echo overlap; else echo clear; fi > '$d/$id.saw'; echo \"new \$(date +%s%N)\" >> '$d/$id.log'"
    done
}
# saw_clear LABEL: both new commands found the old work gone.
saw_clear() {
    expect_eq "$1" "clear clear" "$(cat "$d/w0.saw" "$d/w1.saw" 2>/dev/null | tr '\n' ' ' | sed 's/ $//')"
}
# after_by_clocks LABEL ID: by the commands' own clocks, wI's new command
# stamped after the old work's last line in $d/ID.log.
after_by_clocks() {
    local last first
    last=$(last_ns "$d/$2.log" old) first=$(last_ns "$d/$2.log" new)
    check "$1 (old last worked ${last:-never}, new started ${first:-never})" \
        test -n "$last" -a -n "$first" -a "${first:-0}" -gt "${last:-0}"
}
new_run_after_loss() {   # new_run_after_loss flush|evict
    job_setup "loss-$1"
    local id url=redis://127.0.0.1:$REDIS_PORT t0
    for id in w0 w1; do
        RBARRIER_URL=$url start_runner "old$id" --id $id --n 2 --lease 3 --kill-after 5 \
            --timeout 30 -- sh -c "sh '$T/jobwork.sh' '$d/$id.log' old; true"
    done
    wait_until 20 has w0.log.pid && wait_until 20 has w1.log.pid ||
        not_ok "$1: the old run's commands run"
    case $1 in
    flush) redis-cli -p "$REDIS_PORT" FLUSHALL >/dev/null ;;
    evict) redis-cli -p "$REDIS_PORT" --scan --pattern "rb:j:{$name}*" |
               xargs redis-cli -p "$REDIS_PORT" DEL >/dev/null ;;
    esac
    t0=$(ms)
    new_run "$url" w0 w1
    wait
    local took=$(($(ms) - t0))
    expect_eq "$1 while running: the old runners exit 1" "1 1" "$(runner_code oldw0) $(runner_code oldw1)"
    expect_eq "... a new run started at once passes (exit 0)" "0 0" "$(runner_code neww0) $(runner_code neww1)"
    saw_clear "... its commands start once the old ones are gone"
    for id in w0 w1; do
        after_by_clocks "... $id by the commands' own clocks" $id
    done
    check "... within the old lease's class (4.1 s) or a lease and a half (4.5 s), plus margin ($took ms)" test "$took" -le 9500
}
# 5. No new run while the members of one that broke still stop: w1 fails,
#    w0's work takes a second to stop; a new run of the name started as
#    soon as w1's runner exits starts its commands only after w0's old
#    work is gone.
job_setup rerun
start_runner oldw0 --id w0 --n 2 --lease 3 --kill-after 5 --timeout 30 -- \
    sh -c "sh '$T/jobwork.sh' '$d/w0.log' old; true"
start_runner oldw1 --id w1 --n 2 --lease 3 --timeout 30 -- sh -c 'sleep 0.5; exit 7'
check "rerun: the first run's w1 fails" wait_until 30 ended oldw1
t0=$(ms)
new_run '' w0 w0
wait
expect_eq "rerun: the broken run's runners exit 3 and 7" "3 7" "$(runner_code oldw0) $(runner_code oldw1)"
expect_eq "... the new run passes" "0 0" "$(runner_code neww0) $(runner_code neww1)"
saw_clear "... its commands start once the old w0's work is gone"
after_by_clocks "... by the commands' own clocks, old w0" w0
check "... within a lease and a half, 4.5 s, plus margin ($(($(ms) - t0)) ms)" test $(($(ms) - t0)) -le 9500

# 6. Members of different leases: the keeper's record of the job must
#    cover the longest. w0 renews every third of 1 s, w1 every 2 s of 6 s;
#    once w1 has renewed twice, its runner is stopped (SIGSTOP: it learns
#    of nothing) and the job's keys are deleted. A new run started at once
#    must not start its commands before w1's watchdog has ended the old
#    work, near the end of w1's lease (its last renewal + 6 s): a record
#    that w1's renewals did not raise (w0's raises, w1's entry) ends about
#    4 s before that.
mixed_leases_after_loss() {
    job_setup loss-mixed
    local url=redis://127.0.0.1:$REDIS_PORT t0 took entered inkey
    own() { redis-cli -p "$REDIS_PORT" "$@"; }
    RBARRIER_URL=$url start_runner oldw0 --id w0 --n 2 --lease 1 --timeout 30 -- \
        sh -c "sh '$T/jobwork.sh' '$d/w0.log' old; true"
    RBARRIER_URL=$url start_runner oldw1 --id w1 --n 2 --lease 6 --kill-after 5 --timeout 30 -- \
        sh -c "sh '$T/jobwork.sh' '$d/w1.log' old; true"
    wait_until 20 has w0.log.pid && wait_until 20 has w1.log.pid ||
        not_ok "mixed leases: the old run's commands run"
    inkey="rb:j:{$name}:$(own HGET "rb:j:{$name}" epoch):0:in"
    entered=$(own ZSCORE "$inkey" w1)
    renewed_twice() { [ "$(own ZSCORE "$inkey" w1)" -ge $((entered + 4000)) ]; }
    check "mixed leases: w1 renews its lease twice" wait_until 20 renewed_twice
    kill -STOP "$(cat "$d/oldw1.pid")"
    own --scan --pattern "rb:j:{$name}*" | xargs redis-cli -p "$REDIS_PORT" DEL >/dev/null
    t0=$(ms)
    new_run "$url" w0 w1
    wait_until 30 ended neww0 && wait_until 30 ended neww1 ||
        not_ok "mixed leases: the new run ends"
    took=$(($(ms) - t0))
    kill -CONT "$(cat "$d/oldw1.pid")"
    wait
    expect_eq "... the new run passes (exit 0)" "0 0" "$(runner_code neww0) $(runner_code neww1)"
    saw_clear "... its commands start once the old ones are gone"
    after_by_clocks "... w1 by the commands' own clocks" w1
    expect_eq "... the old w0 exits 1 (state lost)" 1 "$(runner_code oldw0)"
    check "... the old w1, stopped through it, does not exit 0 ($(runner_code oldw1))" \
        test "$(runner_code oldw1)" != 0
    check "... within the long lease and a half, 9 s, plus margin ($took ms)" test "$took" -le 14000
}

if start_redis jobloss; then
    new_run_after_loss flush
    new_run_after_loss evict
    mixed_leases_after_loss
    stop_redis "$REDIS_PID"
else
    skip "a new run after a loss: no redis-server of its own could start"
fi
