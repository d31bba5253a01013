# Sentinel: redis-sentinel://host:port#MASTER follows the master the
# sentinels name. SENTINEL FAILOVER while 3 of 4 parties wait with
# --replicas 1: all pass, or all break with a clear reason, none hangs, and
# a new round on the same URL passes. Three workers each train 150 times
# with --replicas 1 across another failover: every call exits 0, the global
# ends at exactly 450 and no global value is printed twice.
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap kill_spawned EXIT

t0=$(now_ms)
start_sentinel_setup s mymaster || { not_ok "start master, replica and sentinel"; exit 1; }
diag "master :$SENT_MASTER_PORT, replica :$SENT_REPLICA_PORT, sentinel :$SENT_PORT ($(since "$t0") ms)"
url="redis-sentinel://127.0.0.1:$SENT_PORT#mymaster"

n=$(fresh sent)
expect_eq "a round through the sentinel URL" 0 \
    "$(rb wait --name "$n" --n 1 --replicas 1 --timeout 20 --url "$url"; echo $?)"

# failover KEY: ask the sentinel for a failover and wait until it names
# another master that answers as one.
failover() {
    local said
    FAILOVER_FROM=$(sentinel_master mymaster)
    wait_until 20 _sentinel_knows mymaster || diag "the sentinel has no fresh word of the replica"
    said=$(redis-cli -p "$SENT_PORT" SENTINEL FAILOVER mymaster 2>&1)
    [ "$said" = OK ] || diag "SENTINEL FAILOVER answered: $said"
    wait_until 30 _failed_over "$FAILOVER_FROM"
}
_failed_over() {
    local now
    now=$(sentinel_master mymaster)
    [ -n "$now" ] && [ "$now" != "$1" ] &&
        redis-cli -p "$now" ROLE 2>/dev/null | head -1 | grep -q master
}

# 1. A failover while 3 of 4 wait with --replicas 1.
for p in 1 2 3; do
    spawn "$n.p$p" $RBARRIER wait --name "$n" --n 4 --id "p$p" --replicas 1 --timeout 60 --url "$url"
done
wait_until 20 test "$(redis-cli -p "$(sentinel_master mymaster)" ZCARD "rb:b:{$n}:2:in")" = 3
expect_eq "3 of 4 parties wait" 3 "$(redis-cli -p "$(sentinel_master mymaster)" ZCARD "rb:b:{$n}:2:in")"
t0=$(now_ms)
failover
check "SENTINEL FAILOVER: a new master ($(since "$t0") ms)" _failed_over "$FAILOVER_FROM"
spawn "$n.p4" $RBARRIER wait --name "$n" --n 4 --id p4 --replicas 1 --timeout 60 --url "$url"
for p in 1 2 3 4; do await "$n.p$p" 70; done
codes="$(code_of "$n.p1") $(code_of "$n.p2") $(code_of "$n.p3") $(code_of "$n.p4")"
check "none hangs ($codes)" test "${codes#*running}" = "$codes"
for p in 1 2 3 4; do diag "p$p ($(code_of "$n.p$p")): $(err_of "$n.p$p" | tail -1)"; done
if [ "$codes" = "0 0 0 0" ]; then
    ok "all four pass across the failover"
else
    expect_eq "... or all four break (exit 3)" "3 3 3 3" "$codes"
    for p in 1 2 3 4; do
        expect_match "... p$p says why" "^rbarrier: .*broken" "$(err_of "$n.p$p")"
    done
fi
for p in 1 2 3 4; do
    spawn "$n.q$p" $RBARRIER wait --name "$n" --n 4 --id "q$p" --replicas 1 --timeout 60 --url "$url"
done
for p in 1 2 3 4; do await "$n.q$p" 70; done
expect_eq "a new round on the same URL passes" "0 0 0 0" \
    "$(code_of "$n.q1") $(code_of "$n.q2") $(code_of "$n.q3") $(code_of "$n.q4")"

# 2. 3 workers x 150 train --replicas 1 across a failover.
p=$(fresh param)
for w in 1 2 3; do
    spawn "$p.w$w" bash -c "for i in \$(seq 150); do $RBARRIER train --param '$p' --worker w$w --replicas 1 --url '$url' || exit \$?; done"
done
_trained() { [ "$(redis-cli -p "$(sentinel_master mymaster)" GET "rb:p:{$p}" 2>/dev/null || echo 0)" -ge "$1" ] 2>/dev/null; }
wait_until 60 _trained 100
failover
check "a failover while they train" _failed_over "$FAILOVER_FROM"
for w in 1 2 3; do await "$p.w$w" 120; done
expect_eq "every train call exits 0" "0 0 0" \
    "$(code_of "$p.w1") $(code_of "$p.w2") $(code_of "$p.w3")"
expect_eq "the global ends at exactly 450" 450 "$(rb get --param "$p" --url "$url")"
printed=$(cat "$RB_TEST_TMP/$p.w1.out" "$RB_TEST_TMP/$p.w2.out" "$RB_TEST_TMP/$p.w3.out" |
          sed -n 's/^local [0-9.-]* global //p')
expect_eq "450 values printed" 450 "$(printf '%s\n' "$printed" | grep -c .)"
expect_eq "... none twice" 450 "$(printf '%s\n' "$printed" | sort -un | grep -c .)"
for pid in "${SENT_PIDS[@]}"; do stop_redis "$pid"; done
