# A party killed with SIGKILL cannot say goodbye: its lease runs out and the
# others' next heartbeat breaks the round, naming it.
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap kill_spawned EXIT

name=$(fresh lease)
for i in 0 1 2; do
    spawn "$name.w$i" $RBARRIER wait --name "$name" --n 4 --id "w$i" --lease 2 --timeout 60
done
wait_arrived "$name" 3 || not_ok "3 parties arrived"
victim=$(pid_of "$name.w1")
t0=$(now_ms)
kill -9 "$victim"
await "$name.w0" 15; await "$name.w2" 15; await "$name.w1" 5
expect_eq "the killed party died of SIGKILL" 137 "$(code_of "$name.w1")"
for i in 0 2; do
    expect_eq "w$i exits 3 when w1 is killed" 3 "$(code_of "$name.w$i")"
    ms=$(took_ms "$name.w$i" "$t0")
    check "w$i exits within 4 s of the kill (lease 2 s; took $ms ms)" test "$ms" -le 4000
    check "w$i was not released before w1's lease could expire (took $ms ms)" test "$ms" -ge 1000
    expect_match "w$i names the dead party" "round [0-9]+ broken: lease of w1 expired" "$(err_of "$name.w$i")"
    expect_eq "w$i prints one line" 1 "$(err_of "$name.w$i" | wc -l)"
done

# The round is over: the next arrivals start a fresh one and are not told
# about the dead party again.
st=$(rb status --name "$name" --json)
expect_match "status: nobody in the next round, the break kept as last outcome" \
    '"arrived":0,"members":\[\],"last":\{"outcome":"broken","reason":"lease of w1 expired"\}' "$st"
rb wait --name "$name" --n 1 --id w0 --lease 2
expect_eq "the barrier is usable again" 0 $?

# A dead party is found by an arrival too, when nobody is left waiting: the
# last party killed alone, then a newcomer some seconds later.
name=$(fresh lease-alone)
spawn "$name.a" $RBARRIER wait --name "$name" --n 2 --id gone --lease 0.5
wait_arrived "$name" 1 || not_ok "the lone party arrived"
kill -9 "$(pid_of "$name.a")"
await "$name.a" 5
# Await the killed party's 0.5 s lease running out, by Redis's own clock.
lease_expired() {
    local score now
    score=$(rcli ZSCORE "$(rkey "$1" 1 in)" "$2")
    now=$(rcli TIME | awk 'NR == 1 { s = $1 } NR == 2 { printf "%.0f", s * 1000 + int($1 / 1000) }')
    [ -n "$score" ] && [ "${score%.*}" -lt "$now" ]
}
wait_until 10 lease_expired "$name" gone || not_ok "the dead party's lease expired"
spawn "$name.b" $RBARRIER wait --name "$name" --n 2 --id newcomer --lease 2 --timeout 1.5
await "$name.b" 10
expect_eq "a newcomer is not counted with a dead party (it times out alone)" 124 "$(code_of "$name.b")"
expect_eq "the dead party's round was broken by the newcomer's arrival" \
    "broken lease of gone expired" "$(rcli LRANGE "$(rkey "$name" 1 out)" 0 -1)"
