# Redis Cluster, 3 masters with a replica each: the master of a barrier is
# killed (kill -9) while 3 of 4 parties wait. Its replica takes over; every
# party passes, or every party gets the same break; none hangs. The waiters
# were given that master's own address: cluster routing must have started
# without any MOVED (the handshake asks CLUSTER SLOTS).
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap kill_spawned EXIT

t0=$(now_ms)
start_cluster fo 3 1 || { not_ok "start a 3+3 cluster"; exit 1; }
diag "a cluster of 3 masters and 3 replicas is up ($(since "$t0") ms)"
n=$(fresh fo)
m=$(cluster_owner "rb:b:{$n}")
url=redis://127.0.0.1:$m
for i in "${!CLUSTER_PORTS[@]}"; do
    [ "${CLUSTER_PORTS[$i]}" = "$m" ] && mpid=${CLUSTER_PIDS[$i]}
done
for p in 1 2 3; do
    spawn "$n.p$p" $RBARRIER wait --name "$n" --n 4 --id "p$p" --timeout 60 --url "$url"
done
wait_until 20 test "$(redis-cli -p "$m" ZCARD "rb:b:{$n}:1:in")" = 3
expect_eq "3 of 4 parties wait on master :$m" 3 "$(redis-cli -p "$m" ZCARD "rb:b:{$n}:1:in")"
# The arrivals reach the replica before the kill (replication is
# asynchronous; WAIT makes that explicit). WAIT waits for this client's own
# last write, so write one first on the same connection: the stream is
# ordered, and the arrivals came before it.
expect_eq "... and reach its replica (a write, then WAIT 1)" 1 \
    "$(printf 'SET %s 1\nWAIT 1 5000\n' "rb:b:{$n}:probe" | redis-cli -p "$m" | tail -1)"
t0=$(now_ms)
kill -9 "$mpid"
promoted() { o=$(cluster_owner "rb:b:{$n}"); [ -n "$o" ] && [ "$o" != "$m" ]; }
wait_until 30 promoted
check "a replica took over the slot ($(since "$t0") ms)" promoted
diag "on the new owner: $(redis-cli -p "$(cluster_owner "rb:b:{$n}")" ZCARD "rb:b:{$n}:1:in") arrived"
for q in "${CLUSTER_PORTS[@]}"; do [ "$q" != "$m" ] && { live=$q; break; }; done
# A seed list whose first seed is dead: the next one is tried.
spawn "$n.p4" $RBARRIER wait --name "$n" --n 4 --id p4 --timeout 60 --url "$url,127.0.0.1:$live"
for p in 1 2 3 4; do await "$n.p$p" 70; done
codes="$(code_of "$n.p1") $(code_of "$n.p2") $(code_of "$n.p3") $(code_of "$n.p4")"
check "none hangs ($codes)" test "${codes#*running}" = "$codes"
for p in 1 2 3 4; do diag "p$p ($(code_of "$n.p$p")): $(err_of "$n.p$p" | tail -1)"; done
if [ "$codes" = "0 0 0 0" ]; then
    ok "all four pass across the failover"
else
    first=${codes%% *}
    expect_eq "... or all four get the same break" "$first $first $first $first" "$codes"
    for p in 1 2 3 4; do
        check "... p$p says why" test -n "$(err_of "$n.p$p")"
    done
fi
for pid in "${CLUSTER_PIDS[@]}"; do stop_redis "$pid"; done
