# CLIENT PAUSE 3000 while parties wait with --lease 10: heartbeats and the
# last arrival are held for 3 s, nobody's lease runs out, nobody breaks the
# round, and it passes once the pause ends.
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap kill_spawned EXIT

use_own_redis pause
name=$(fresh pause)
for i in 0 1 2; do
    spawn "$name.w$i" $RBARRIER wait --name "$name" --n 4 --id "w$i" --lease 10 --timeout 60
done
wait_arrived "$name" 3 || not_ok "3 parties arrived"
t0=$(now_ms)
expect_eq "CLIENT PAUSE 3000 accepted" OK "$(rcli CLIENT PAUSE 3000)"
# The last party arrives during the pause: its arrival is held until the end.
spawn "$name.w3" $RBARRIER wait --name "$name" --n 4 --id w3 --lease 10 --timeout 60
for i in 0 1 2 3; do await "$name.w$i" 30; done
expect_eq "all four pass after the pause" "0 0 0 0" \
    "$(code_of "$name.w0") $(code_of "$name.w1") $(code_of "$name.w2") $(code_of "$name.w3")"
for i in 0 1 2 3; do
    ms=$(took_ms "$name.w$i" "$t0")
    check "w$i was held by the pause, released after it (2.8..10 s; $ms ms)" test "$ms" -ge 2800 -a "$ms" -le 10000
done
expect_eq "no message on stderr" "" "$(cat "$RB_TEST_TMP/$name".w?.err)"
expect_eq "the round's outcome is ok" ok "$(rcli LRANGE "$(rkey "$name" 1 out)" 0 -1)"

# A pause longer than a wait slice: with --lease 7.5 (slices of 2.5 s) every
# waiter's slice ends inside the 3 s pause, so its heartbeat is held; the
# renewal lands when the pause ends, before any lease runs out.
name=$(fresh pause2)
for i in 0 1; do
    spawn "$name.w$i" $RBARRIER wait --name "$name" --n 3 --id "w$i" --lease 7.5 --timeout 60
done
wait_arrived "$name" 2 || not_ok "2 parties arrived"
rcli CLIENT PAUSE 3000 >/dev/null
t0=$(now_ms)
rcli PING >/dev/null   # held until the pause ends
check "the pause held a PING for 3 s ($(since "$t0") ms)" test "$(since "$t0")" -ge 2800
expect_eq "after the pause both still wait" "running running" "$(code_of "$name.w0") $(code_of "$name.w1")"
rb wait --name "$name" --n 3 --id w2 --lease 7.5 --timeout 10
expect_eq "the last party passes the round after the pause" 0 $?
await "$name.w0" 10; await "$name.w1" 10
expect_eq "both waiters pass too" "0 0" "$(code_of "$name.w0") $(code_of "$name.w1")"

# A server that stops answering altogether (SIGSTOP: connections stay open,
# nothing replies). A party with --timeout 1.5 gives up soon after its
# timeout, not after the 5 s reply timeout (plus retries); one without
# --timeout gives up after about its lease. Both exit 4 in one line.
name=$(fresh hung)
spawn "$name.t" $RBARRIER wait --name "$name" --n 3 --id t --lease 10 --timeout 1.5
spawn "$name.l" $RBARRIER wait --name "$name" --n 3 --id l --lease 2
wait_arrived "$name" 2 || not_ok "2 parties arrived"
t0=$(now_ms)
kill -STOP "$REDIS_PID"
await "$name.t" 15; await "$name.l" 15
kill -CONT "$REDIS_PID"
expect_eq "hung server: the party with --timeout 1.5 exits 4" 4 "$(code_of "$name.t")"
ms=$(took_ms "$name.t" "$t0")
check "... soon after its timeout (<= 3.5 s; $ms ms)" test "$ms" -le 3500
expect_match "... saying Redis did not answer" "^rbarrier: no reply from Redis at unix://" "$(err_of "$name.t")"
expect_eq "... in one line" 1 "$(err_of "$name.t" | wc -l)"
expect_eq "hung server: the party with --lease 2 exits 4" 4 "$(code_of "$name.l")"
ms=$(took_ms "$name.l" "$t0")
check "... after about its lease (<= 4.5 s; $ms ms)" test "$ms" -le 4500
expect_match "... saying Redis did not answer" "^rbarrier: no reply from Redis at unix://" "$(err_of "$name.l")"
expect_eq "the server answers again after SIGCONT" PONG "$(rcli PING)"
