# Never a false pass: a round that is reset, whose state is deleted or lost,
# or that breaks while its --once command runs, ends broken for every party
# (exit 3, or 1 for lost state); a failed arrival counts for nobody; a late
# party never passes alone on what is left of a round.
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap kill_spawned EXIT
T=$RB_TEST_TMP

# gone PIDFILE: the process whose pid is in PIDFILE no longer runs
gone() { ! kill -0 "$(cat "$1")" 2>/dev/null; }

# 1. reset while the --once command runs: the waiter and the runner exit 3
#    with "reset", the command is stopped (it would have run 6 s and then
#    passed the round), and nobody exits 0.
name=$(fresh oncereset); p=$T/$name.pid
spawn "$name.w0" $RBARRIER wait --name "$name" --n 2 --id w0 --lease 3 --timeout 60
wait_arrived "$name" 1 || not_ok "w0 arrived"
spawn "$name.w1" $RBARRIER wait --name "$name" --n 2 --id w1 --lease 3 --timeout 60 \
    --once "echo \$\$ > '$p'; exec sleep 6"
wait_until 20 test -s "$p" || not_ok "the once-command started"
t0=$(now_ms)
rb reset --name "$name" >/dev/null
await "$name.w0" 20; await "$name.w1" 20
expect_eq "reset during --once: the waiter exits 3" 3 "$(code_of "$name.w0")"
expect_eq "... the runner exits 3" 3 "$(code_of "$name.w1")"
expect_match "... saying the round was reset" "broken: reset" "$(err_of "$name.w1")"
ms=$(took_ms "$name.w1" "$t0")
check "... before its command could end (< 5 s; $ms ms)" test "$ms" -lt 5000
check "... and the command was stopped" wait_until 10 gone "$p"

# 2. Another party's timeout while the --once command runs: the runner
#    stops the command and exits 3 with the round's reason.
name=$(fresh oncetimeout); p=$T/$name.pid
spawn "$name.w0" $RBARRIER wait --name "$name" --n 2 --id w0 --lease 3 --timeout 3
wait_arrived "$name" 1 || not_ok "w0 arrived"
spawn "$name.w1" $RBARRIER wait --name "$name" --n 2 --id w1 --lease 3 --timeout 60 \
    --once "echo \$\$ > '$p'; exec sleep 30"
await "$name.w0" 20; await "$name.w1" 20
expect_eq "a timeout during --once: the timed-out party exits 124" 124 "$(code_of "$name.w0")"
expect_eq "... the runner exits 3" 3 "$(code_of "$name.w1")"
expect_match "... with the round's reason" "w0 timed out after 3s" "$(err_of "$name.w1")"
check "... and the command was stopped" wait_until 10 gone "$p"

# 3. The barrier hash deleted while a party waits, after round 1 of the
#    same ids passed (its keys linger): the waiter exits 3, and a late
#    party does not pass alone on round 1's members.
name=$(fresh delhash)
rb wait --name "$name" --n 2 --id w0 --timeout 20 & bg=$!
rb wait --name "$name" --n 2 --id w1 --timeout 20
wait $bg
expect_eq "round 1 of w0 and w1 passed" "ok" "$(rcli LRANGE "$(rkey "$name" 1 out)" 0 -1)"
spawn "$name.w0" $RBARRIER wait --name "$name" --n 2 --id w0 --lease 3 --timeout 60
wait_arrived "$name" 1 || not_ok "w0 arrived in round 2"
rcli DEL "$(bkey "$name")" >/dev/null
rb wait --name "$name" --n 2 --id w1 --lease 3 --timeout 3 2>"$T/$name.late.err"
expect_eq "hash deleted mid-round: the late party does not pass alone (exit 124)" 124 $?
await "$name.w0" 20
expect_eq "... and the waiter exits 3" 3 "$(code_of "$name.w0")"
expect_match "... saying the state was deleted" "barrier state deleted" "$(err_of "$name.w0")"

# 4. The round's :in key deleted while two of three wait: they exit 1
#    (their state is lost), and a late third party exits 3 instead of
#    waiting for a round nobody else is in.
name=$(fresh delin)
for i in 0 1; do
    spawn "$name.w$i" $RBARRIER wait --name "$name" --n 3 --id "w$i" --lease 3 --timeout 60
done
wait_arrived "$name" 2 || not_ok "w0 and w1 arrived"
rcli DEL "$(rkey "$name" 1 in)" >/dev/null
spawn "$name.w2" $RBARRIER wait --name "$name" --n 3 --id w2 --lease 3 --timeout 30
for i in 0 1 2; do await "$name.w$i" 20; done
# The first to look finds itself gone (1) and breaks the round; the other
# may read that break first (3).
for i in 0 1; do
    c=$(code_of "$name.w$i")
    check ":in deleted mid-round: w$i exits 1 or 3 (exit $c)" test "$c" = 1 -o "$c" = 3
done
expect_eq "... the late w2 exits 3" 3 "$(code_of "$name.w2")"
expect_match "... saying the round's state was lost" "state of round 1 lost" "$(err_of "$name.w2")"

# 5. The hash deleted while the --once command runs: the runner stops it
#    and exits 3, and so does the waiter.
name=$(fresh delonce); p=$T/$name.pid
spawn "$name.w0" $RBARRIER wait --name "$name" --n 2 --id w0 --lease 3 --timeout 60
wait_arrived "$name" 1 || not_ok "w0 arrived"
spawn "$name.w1" $RBARRIER wait --name "$name" --n 2 --id w1 --lease 3 --timeout 60 \
    --once "echo \$\$ > '$p'; exec sleep 6"
wait_until 20 test -s "$p" || not_ok "the once-command started"
rcli DEL "$(bkey "$name")" >/dev/null
await "$name.w0" 20; await "$name.w1" 20
expect_eq "hash deleted during --once: the runner exits 3" 3 "$(code_of "$name.w1")"
expect_eq "... the waiter exits 3" 3 "$(code_of "$name.w0")"
check "... and the command was stopped" wait_until 10 gone "$p"

# 6. An arrival whose call failed (--replicas 1 on a server without
#    replicas) counts for nobody: a later party does not pass on it.
name=$(fresh failedarrival)
rb wait --name "$name" --n 2 --id w0 --timeout 1.5 --replicas 1 2>"$T/$name.err"
expect_eq "an unacknowledged arrival exits 1" 1 $?
rb wait --name "$name" --n 2 --id w1 --timeout 2 2>/dev/null
expect_eq "... and a later party does not pass on it (exit 124)" 124 $?
expect_match "... its round was broken for it" "^broken w0 could not confirm its arrival" \
    "$(rcli LRANGE "$(rkey "$name" 1 out)" 0 -1)"

# 7. Redis restarts empty while the --once command runs: the runner stops
#    it and exits 1 (state lost); the waiter exits 1.
use_own_redis falsepass
name=$(fresh oncelost); p=$T/$name.pid
spawn "$name.w0" $RBARRIER wait --name "$name" --n 2 --id w0 --lease 3 --timeout 60
wait_arrived "$name" 1 || not_ok "w0 arrived"
spawn "$name.w1" $RBARRIER wait --name "$name" --n 2 --id w1 --lease 3 --timeout 60 \
    --once "echo \$\$ > '$p'; exec sleep 8"
wait_until 20 test -s "$p" || not_ok "the once-command started"
stop_own_redis
restart_own_redis || not_ok "restart redis-server"
await "$name.w0" 20; await "$name.w1" 20
expect_eq "restart during --once: the runner exits 1" 1 "$(code_of "$name.w1")"
expect_eq "... the waiter exits 1" 1 "$(code_of "$name.w0")"
check "... and the command was stopped" wait_until 10 gone "$p"
