# Redis restarts under waiting parties.
# Without persistence the round is gone: the waiters reconnect, find their
# entry missing and exit 1 ("barrier state lost") - within a lease of the
# drop, whether Redis comes back at once or only after most of a lease. If
# it stays away longer than the lease they exit 4. With AOF the state
# survives: the round completes when the last party arrives afterwards.
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap kill_spawned EXIT

use_own_redis restart

# lost AWAY [LATE]: two parties wait (n=3, --lease 3, so 1 s wait slices);
# LATE seconds after they arrived (into their first slice) Redis is
# stopped, stays away AWAY seconds, and comes back empty on the same socket.
lost() {
    local away=$1 late=${2:-0} name t0 i ms what
    what="away ${away}s"
    [ "$late" = 0 ] || what="$what, ${late}s into a slice"
    name=$(fresh lost)
    for i in 0 1; do
        spawn "$name.w$i" $RBARRIER wait --name "$name" --n 3 --id "w$i" --lease 3
    done
    wait_arrived "$name" 2 || not_ok "2 parties arrived"
    [ "$late" = 0 ] || sleep "$late"   # the drop comes late in a slice
    t0=$(now_ms)
    stop_own_redis
    [ "$away" = 0 ] || sleep "$away"   # Redis is away this long
    restart_own_redis || not_ok "restart redis-server"
    echo "# $what: back after $(since "$t0") ms"
    await "$name.w0" 15; await "$name.w1" 15
    for i in 0 1; do
        expect_eq "$what: w$i exits 1" 1 "$(code_of "$name.w$i")"
        ms=$(took_ms "$name.w$i" "$t0")
        check "$what: w$i exits within the lease and a margin (<= 4.5 s; $ms ms)" test "$ms" -le 4500
        expect_match "$what: w$i says the state was lost" \
            "^rbarrier: $name: barrier state lost \(round 1 and its members are gone" "$(err_of "$name.w$i")"
        expect_eq "$what: w$i prints one line" 1 "$(err_of "$name.w$i" | wc -l)"
    done
    expect_eq "$what: the waiters did not recreate the round" 0 \
        "$(rcli EXISTS "$(bkey "$name")" "$(rkey "$name" 1 in)" "$(rkey "$name" 1 out)")"
}

# 1. Back at once, and back after 2 and 2.5 s of a 3 s lease; and after 2.3 s
#    when the drop cuts a wait slice near its end (the time left to
#    reconnect counts from the drop, not from the start of the slice).
lost 0
lost 2
lost 2.5
lost 2.3 0.8
rb wait --name "$(fresh after)" --n 1 --id w0
expect_eq "the barrier works on the new server" 0 $?

# 2. Redis stays away for longer than the lease: exit 4.
name=$(fresh away)
spawn "$name.w0" $RBARRIER wait --name "$name" --n 2 --id w0 --lease 2
wait_arrived "$name" 1 || not_ok "the party arrived"
t0=$(now_ms)
stop_own_redis
await "$name.w0" 15
expect_eq "Redis gone for good: the waiter exits 4" 4 "$(code_of "$name.w0")"
ms=$(took_ms "$name.w0" "$t0")
check "... after retrying for about the lease (1.5..4 s; $ms ms)" test "$ms" -ge 1500 -a "$ms" -le 4000
expect_match "... saying Redis cannot be reached" "^rbarrier: .*(cannot reach|lost connection to) Redis at unix://" "$(err_of "$name.w0")"
expect_eq "... in one line" 1 "$(err_of "$name.w0" | wc -l)"

# 3. With AOF (fsync always): killed hard and restarted, the state survives.
use_own_redis aof --appendonly yes --appendfsync always
name=$(fresh aof)
for i in 0 1; do
    spawn "$name.w$i" $RBARRIER wait --name "$name" --n 3 --id "w$i" --lease 5 --timeout 60
done
wait_arrived "$name" 2 || not_ok "2 parties arrived"
t0=$(now_ms)
stop_own_redis KILL
restart_own_redis --appendonly yes --appendfsync always || not_ok "restart redis-server"
echo "# AOF: back after $(since "$t0") ms"
expect_eq "AOF: the round survived the restart with both parties" 2 "$(arrived "$name")"
expect_eq "AOF: both waiters are still waiting" "running running" "$(code_of "$name.w0") $(code_of "$name.w1")"
rb wait --name "$name" --n 3 --id w2 --lease 5 --timeout 10
expect_eq "AOF: the last party completes the round" 0 $?
await "$name.w0" 10; await "$name.w1" 10
expect_eq "AOF: both waiters pass" "0 0" "$(code_of "$name.w0") $(code_of "$name.w1")"
expect_eq "AOF: no message on stderr" "" "$(err_of "$name.w0")$(err_of "$name.w1")"

# a client other than the one asking: the waiter
waiter_connected() { [ "$(rcli CLIENT LIST TYPE normal | grep -vc 'cmd=client')" -ge 1 ]; }

# 4. AOF, away for 2 s of a 5 s lease, twice in one wait: the waiter keeps
#    its round (its lease renewed in between) and passes.
name=$(fresh aof2)
spawn "$name.w0" $RBARRIER wait --name "$name" --n 2 --id w0 --lease 5 --timeout 60
wait_arrived "$name" 1 || not_ok "the party arrived"
for round in 1 2; do
    stop_own_redis KILL
    sleep 2   # Redis is away
    restart_own_redis --appendonly yes --appendfsync always || not_ok "restart redis-server"
    wait_until 5 waiter_connected ||
        not_ok "AOF: the waiter reconnected after restart $round"
done
rb wait --name "$name" --n 2 --id w1 --lease 5 --timeout 10
expect_eq "AOF, two restarts: the round completes" 0 $?
await "$name.w0" 10
expect_eq "AOF, two restarts: the waiter passes" 0 "$(code_of "$name.w0")"
