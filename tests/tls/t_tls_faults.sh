# The faults that matter, over TLS: a TLS connection must be retried,
# reconnected and timed out exactly as a plain one.
#  1. kill -9 of a party: the others break the round, naming it;
#  2. CLIENT KILL storm under the demo loop: every round passes once and
#     every train step lands once (the counter exact);
#  3. Redis restarts: without persistence the waiters report the lost
#     state; with AOF the round completes after the restart.
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
killer=
trap 'kill_spawned; [ -n "$killer" ] && kill "$killer" 2>/dev/null' EXIT

tls_certs || { not_ok "make the test certificates with openssl"; exit 1; }
start_redis_tls faults || { not_ok "start a TLS redis-server"; exit 1; }
RB_TEST_SOCK=$REDIS_SOCK
export RBARRIER_URL=rediss://127.0.0.1:$REDIS_PORT RBARRIER_CACERT=$RB_CERTS/ca.crt

# 1. kill -9 of a party.
name=$(fresh tls-lease)
for i in 0 1 2; do
    spawn "$name.w$i" $RBARRIER wait --name "$name" --n 4 --id "w$i" --lease 2 --timeout 60
done
wait_arrived "$name" 3 || not_ok "3 parties arrived"
t0=$(now_ms)
kill -9 "$(pid_of "$name.w1")"
await "$name.w0" 15; await "$name.w2" 15; await "$name.w1" 5
for i in 0 2; do
    expect_eq "kill -9: w$i exits 3" 3 "$(code_of "$name.w$i")"
    ms=$(took_ms "$name.w$i" "$t0")
    check "kill -9: w$i exits within 4 s of the kill (lease 2 s; $ms ms)" test "$ms" -le 4000
    expect_match "kill -9: w$i names the dead party" "round [0-9]+ broken: lease of w1 expired" "$(err_of "$name.w$i")"
done

# 2. CLIENT KILL storm: 4 workers x 300 iterations, kills every 50 ms.
workers=4 iters=300 run=$(fresh tls-storm)
( while :; do
      redis-cli -s "$REDIS_SOCK" CLIENT KILL TYPE normal SKIPME yes 2>/dev/null
      sleep 0.05
  done > "$RB_TEST_TMP/$run.kills" ) &
killer=$!
# The storm may kill a worker's very first connection, before any command
# got through; a handle that never connected makes one attempt unless told
# how long to keep trying (so that a wrong URL fails at once).
for i in $(seq 0 $((workers - 1))); do
    spawn "$run.w$i" timeout 150 $RBARRIER worker --worker "$i" --workers "$workers" \
        --iters "$iters" --run "$run" --connect-timeout 30
done
codes=""
for i in $(seq 0 $((workers - 1))); do
    await "$run.w$i" 160
    codes="$codes$(code_of "$run.w$i") "
done
kill "$killer"; wait "$killer" 2>/dev/null; killer=
expect_eq "storm: all workers exit 0" "0 0 0 0 " "$codes"
killed=$(awk '{ s += $1 } END { print s + 0 }' "$RB_TEST_TMP/$run.kills")
check "storm: connections were killed ($killed)" test "$killed" -ge 5
cat "$RB_TEST_TMP/$run".w*.out > "$RB_TEST_TMP/$run.all"
expect_eq "storm: globals 1..$((workers * iters)) once each, local = N*k" ok \
    "$(demo_lines_check "$RB_TEST_TMP/$run.all" "$workers" "$iters")"
expect_eq "storm: the counter is exact" $((workers * iters)) \
    "$(rb get --param "$run")"

# 3. Restarts on the same TLS port.
restart_tls() { REDIS_PORT_WANT=${RBARRIER_URL##*:} start_redis_tls faults "$@"; }
name=$(fresh tls-lost)
for i in 0 1; do
    spawn "$name.w$i" $RBARRIER wait --name "$name" --n 3 --id "w$i" --lease 3
done
wait_arrived "$name" 2 || not_ok "2 parties arrived"
t0=$(now_ms)
stop_redis "$REDIS_PID"
restart_tls || not_ok "restart the TLS redis-server"
await "$name.w0" 15; await "$name.w1" 15
for i in 0 1; do
    expect_eq "restart, no persistence: w$i exits 1" 1 "$(code_of "$name.w$i")"
    ms=$(took_ms "$name.w$i" "$t0")
    check "restart: w$i exits within the lease and a margin ($ms ms)" test "$ms" -le 4500
    expect_match "restart: w$i says the state was lost" "barrier state lost" "$(err_of "$name.w$i")"
done

stop_redis "$REDIS_PID"
restart_tls --appendonly yes --appendfsync always || not_ok "start with AOF"
name=$(fresh tls-aof)
for i in 0 1; do
    spawn "$name.w$i" $RBARRIER wait --name "$name" --n 3 --id "w$i" --lease 5 --timeout 60
done
wait_arrived "$name" 2 || not_ok "2 parties arrived"
stop_redis "$REDIS_PID"
restart_tls --appendonly yes --appendfsync always || not_ok "restart with AOF"
rb wait --name "$name" --n 3 --id w2 --timeout 30
expect_eq "restart with AOF: the last party passes" 0 $?
await "$name.w0" 15; await "$name.w1" 15
expect_eq "restart with AOF: the waiters pass" "0 0" "$(code_of "$name.w0") $(code_of "$name.w1")"
