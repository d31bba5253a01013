# A reply lost on the wire after the script ran (fault build: the library
# drops the connection before reading it, then reconnects and retries).
# The retry must neither count the arrival twice, nor move it into the next
# round, nor add a train step twice.
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap kill_spawned EXIT

FAULTY=$RBARRIER_FAULT_BIN
conns() { rcli INFO stats | tr -d '\r' | sed -n 's/^total_connections_received://p'; }
gen_of() { rcli HGET "$(bkey "$1")" gen; }

# 1. The completing arrival (the 4th) loses its reply.
name=$(fresh lost-arrive)
for i in 0 1 2; do
    spawn "$name.w$i" $RBARRIER wait --name "$name" --n 4 --id "w$i" --timeout 30 --json
done
wait_arrived "$name" 3 || not_ok "3 parties arrived"
c0=$(conns)
out=$(RBARRIER_FAULT=arrive-reply:1 $FAULTY wait --name "$name" --n 4 --id w3 --timeout 30 --json 2>&1)
code=$?
c1=$(conns)
expect_eq "the party whose reply was lost exits 0" 0 "$code"
expect_eq "its connection was cut once and remade (2 connects)" 2 $((c1 - c0 - 1))
for i in 0 1 2; do await "$name.w$i" 10; done
expect_eq "every waiter exits 0" "0 0 0" "$(code_of "$name.w0") $(code_of "$name.w1") $(code_of "$name.w2")"
expect_match "the retried arrival reports its own round" '"gen":1,.*"outcome":"ok","exit":0' "$out"
expect_match "... and that it completed it" '"completed":true' "$out"
expect_eq "the waiters report the same round, none completed it" "3 3" \
    "$(cat "$RB_TEST_TMP/$name".w[012].out | grep -c '"gen":1,') $(cat "$RB_TEST_TMP/$name".w[012].out | grep -c '"completed":false')"
expect_eq "exactly one outcome pushed for the round" "ok" "$(rcli LRANGE "$(rkey "$name" 1 out)" 0 -1)"
expect_eq "the round was counted once (4 members)" 4 "$(rcli ZCARD "$(rkey "$name" 1 in)")"
st=$(rb status --name "$name" --json)
expect_match "status: the next round is empty, last outcome ok" '"gen":2,"n":0,"arrived":0,"members":\[\],"last":\{"outcome":"ok"\}' "$st"
expect_eq "the next round's in-set is empty" 0 "$(rcli ZCARD "$(rkey "$name" "$(gen_of "$name")" in)")"

# The next round really needs four fresh arrivals: three are not enough.
for i in 0 1 2; do
    spawn "$name.r2w$i" $RBARRIER wait --name "$name" --n 4 --id "w$i" --timeout 30
done
wait_arrived "$name" 3 || not_ok "round 2: 3 parties arrived"
expect_eq "round 2: three parties are still waiting" "running running running" \
    "$(code_of "$name.r2w0") $(code_of "$name.r2w1") $(code_of "$name.r2w2")"
rb wait --name "$name" --n 4 --id w3 --timeout 30
expect_eq "round 2: the fourth passes it" 0 $?
for i in 0 1 2; do await "$name.r2w$i" 10; done
expect_eq "round 2: all pass" "0 0 0" "$(code_of "$name.r2w0") $(code_of "$name.r2w1") $(code_of "$name.r2w2")"
expect_eq "round 2 was gen 2" "ok" "$(rcli LRANGE "$(rkey "$name" 2 out)" 0 -1)"

# 2. A waiting (non-completing) arrival loses its reply three times.
name=$(fresh lost-first)
c0=$(conns)
spawn "$name.a" env RBARRIER_FAULT=arrive-reply:3 $FAULTY wait --name "$name" --n 2 --id a --timeout 30 --json
wait_arrived "$name" 1 || not_ok "the first party arrived"
expect_eq "the first party is still waiting" running "$(code_of "$name.a")"
rb wait --name "$name" --n 2 --id b --timeout 30 --json > "$RB_TEST_TMP/$name.b.out"
expect_eq "the second party passes" 0 $?
await "$name.a" 10
c1=$(conns)
expect_eq "the party that lost 3 replies passes" 0 "$(code_of "$name.a")"
# a: 1 + 3 reconnects; b: 1; rcli for wait_arrived polls and these: >= 1
check "its arrival was retried 3 times (>= 5 connects; $((c1 - c0)))" test $((c1 - c0)) -ge 5
expect_match "it reports round 1, not completed" '"gen":1,"n":2,("index":[0-9]+,)?"completed":false' "$(cat "$RB_TEST_TMP/$name.a.out")"
expect_match "b completed round 1" '"gen":1,"n":2,("index":[0-9]+,)?"completed":true' "$(cat "$RB_TEST_TMP/$name.b.out")"
expect_eq "round 1 had a and b once each" "a b" "$(rcli ZRANGE "$(rkey "$name" 1 in)" 0 -1 | sort | tr '\n' ' ' | sed 's/ $//')"
expect_eq "round 2 is empty" 0 "$(rcli ZCARD "$(rkey "$name" 2 in)")"

# 3. train loses its reply: applied once, and the retry prints the result of
#    the call that ran.
p=$(fresh lost-train)
rb set --param "$p" --value 41 >/dev/null
expect_eq "sync copies 41" 41 "$(rb sync --param "$p" --worker w)"
c0=$(conns)
out=$(RBARRIER_FAULT=train-reply:1 $FAULTY train --param "$p" --worker w 2>&1)
code=$?
c1=$(conns)
expect_eq "train whose reply was lost exits 0" 0 "$code"
expect_eq "its connection was cut once and remade (2 connects)" 2 $((c1 - c0 - 1))
expect_eq "the retried call prints the first call's result" "local 41 global 42" "$out"
expect_eq "global went up by exactly 1" 42 "$(rb get --param "$p")"
out=$(RBARRIER_FAULT=train-reply:2 $FAULTY train --param "$p" --worker w --by 5 --json 2>&1)
expect_match "two lost replies: still one step (json)" '^\{"param":"[^"]*","id":"w","local":41,"value":47,"outcome":"ok","exit":0\}$' "$out"
expect_eq "global went up by exactly 5" 47 "$(rb get --param "$p")"
out=$(RBARRIER_FAULT=train-reply:1 $FAULTY train --param "$p" --worker w --by 0.5 2>&1)
expect_eq "a float step, reply lost: applied once" "local 41 global 47.5" "$out"
expect_eq "global is 47.5" 47.5 "$(rb get --param "$p")"
out=$(rb train --param "$p" --worker w --by 2.5)
expect_eq "a later train is a new step" "local 41 global 50" "$out"
