# The seed's experiment (4 workers x 500 iterations of barrier, sync,
# barrier, train) while every client connection is killed every 50 ms:
# every command is retried on a new connection, and still every round
# passes once and every train step lands once. Then a harsher storm (kills
# back to back, as fast as redis-cli runs) over 100 iterations.
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
killer=
trap 'kill_spawned; [ -n "$killer" ] && kill "$killer" 2>/dev/null' EXIT

use_own_redis storm
workers=4

# storm ITERS SLEEP: one run under a killer that sleeps SLEEP between kills
storm() {
    local iters=$1 pause=$2 run t0 elapsed codes i killed total globals bad
    local what="$workers x $iters, kills every ${pause}s"
    run=$(fresh storm)
    ( while :; do
          redis-cli -s "$REDIS_SOCK" CLIENT KILL TYPE normal SKIPME yes 2>/dev/null
          sleep "$pause"
      done > "$RB_TEST_TMP/$run.kills" ) &
    killer=$!
    t0=$(now_ms)
    for i in $(seq 0 $((workers - 1))); do
        spawn "$run.w$i" timeout 150 $RBARRIER worker --worker "$i" --workers "$workers" \
            --iters "$iters" --run "$run"
    done
    codes=""
    for i in $(seq 0 $((workers - 1))); do
        await "$run.w$i" 160
        codes="$codes$(code_of "$run.w$i") "
    done
    elapsed=$(since "$t0")
    kill "$killer"; wait "$killer" 2>/dev/null; killer=
    expect_eq "$what: all workers exit 0" "$(printf '0 %.0s' $(seq 1 $workers))" "$codes"
    for i in $(seq 0 $((workers - 1))); do
        [ "$(code_of "$run.w$i")" = 0 ] || echo "# w$i: $(err_of "$run.w$i" | head -3)"
    done
    killed=$(awk '{ s += $1 } END { print s + 0 }' "$RB_TEST_TMP/$run.kills")
    check "$what: the storm killed connections ($killed)" test "$killed" -ge 5
    echo "# $what: ${elapsed} ms, $killed connections killed"

    total=$((workers * iters))
    cat "$RB_TEST_TMP/$run".w*.out > "$RB_TEST_TMP/$run.all"
    expect_eq "$what: $total lines printed" "$total" "$(wc -l < "$RB_TEST_TMP/$run.all")"
    globals=$(sed -n 's/.*global_param *\([0-9-]*\)$/\1/p' "$RB_TEST_TMP/$run.all" | sort -n | tr '\n' ' ')
    expect_eq "$what: every global value 1..$total printed exactly once" \
        "$(seq 1 "$total" | tr '\n' ' ')" "$globals"
    expect_eq "$what: the global ends at $total" "$total" "$(rb get --param "$run")"
    bad=0
    for i in $(seq 0 $((workers - 1))); do
        # line k (from 0) of each worker saw local = workers * k
        bad=$((bad + $(sed -n 's/.*local_param *\([0-9-]*\) global.*/\1/p' "$RB_TEST_TMP/$run.w$i.out" |
                       awk -v n="$workers" '$1 != n * (NR - 1) { b++ } END { print b + 0 }')))
    done
    expect_eq "$what: each line's local value is $workers x its iteration" 0 "$bad"
    redis-cli -s "$REDIS_SOCK" --scan --pattern "rb:b:{$run}:*:out" > "$RB_TEST_TMP/$run.outs"
    expect_eq "$what: 2 x $iters rounds, each with one outcome" $((2 * iters)) \
        "$(wc -l < "$RB_TEST_TMP/$run.outs")"
    expect_eq "$what: every outcome is ok" "" \
        "$(while read -r k; do echo "LRANGE $k 0 -1"; done < "$RB_TEST_TMP/$run.outs" |
           redis-cli -s "$REDIS_SOCK" | grep -v '^ok$')"
}

storm "${RB_STORM_ITERS:-500}" 0.05
storm 100 0
