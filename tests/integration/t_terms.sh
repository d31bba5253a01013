# A round's terms and one keyspace. n, --expect and --reduce are fixed by a
# round's first arrival: a party that differs is refused (exit 2, a message
# naming both, nothing written) and never counts. Every kind has its own key
# family: a barrier called param:P never touches parameter P, and a key of
# the wrong type is refused with exit 1 naming it, never overwritten.
# status of a name never used says it is unknown.
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap kill_spawned EXIT

# refused_join NAME WHAT EXPECT-IN-MSG ARGS...: with a first party waiting
# in NAME's round, a party given ARGS exits 2 naming EXPECT-IN-MSG, and the
# round's members are unchanged.
refused_join() {
    local name=$1 what=$2 msg=$3 err code before; shift 3
    before=$(rcli ZRANGE "$(rkey "$name" 1 in)" 0 -1 | tr '\n' ' ')
    err=$(rb wait --name "$name" --timeout 2 "$@" 2>&1)
    code=$?
    expect_eq "$what: exit 2" 2 "$code"
    expect_match "... naming both" "$msg" "$err"
    expect_eq "... and it did not count" "$before" \
        "$(rcli ZRANGE "$(rkey "$name" 1 in)" 0 -1 | tr '\n' ' ')"
}

# 1. --expect: the first arrival's list (or none) is the round's.
name=$(fresh expect)
spawn "$name.a" $RBARRIER wait --name "$name" --n 2 --id a --expect a,b --timeout 60
wait_arrived "$name" 1 || not_ok "a arrived"
refused_join "$name" "no --expect against a list" \
    "open round has an --expect list \(sha1 [0-9a-f]{12}\); this party said \(none\)" --n 2 --id b
refused_join "$name" "another list" \
    "open round has another --expect list \(sha1 [0-9a-f]{12}\); this party said b,a" --n 2 --id b --expect b,a
refused_join "$name" "an intruder with its own list" \
    "open round has another --expect list \(sha1 [0-9a-f]{12}\); this party said a,x" --n 2 --id x --expect a,x
rb wait --name "$name" --n 2 --id b --expect a,b --timeout 10
expect_eq "the expected party passes" 0 $?
await "$name.a" 10
expect_eq "... and so does the first" 0 "$(code_of "$name.a")"

name=$(fresh noexpect)
spawn "$name.a" $RBARRIER wait --name "$name" --n 2 --id a --timeout 60
wait_arrived "$name" 1 || not_ok "a arrived"
refused_join "$name" "a list against none" \
    "open round has --expect \(none\); this party said a,b" --n 2 --id b --expect a,b
rb wait --name "$name" --n 2 --id b --timeout 10
expect_eq "a party without a list passes with the first" 0 $?
await "$name.a" 10

# 2. --reduce: the first arrival's op is the round's.
name=$(fresh reduce)
spawn "$name.a" $RBARRIER wait --name "$name" --n 2 --id a --value 3 --reduce sum --timeout 60
wait_arrived "$name" 1 || not_ok "a arrived"
refused_join "$name" "another --reduce" \
    "open round has --reduce sum; this party said max" --n 2 --id b --value 4 --reduce max
refused_join "$name" "no --reduce against one (values listed)" \
    "open round has --reduce sum; this party said all" --n 2 --id b --value 4
out=$(rb wait --name "$name" --n 2 --id b --value 4 --reduce sum --timeout 10)
expect_eq "the same --reduce passes with the agreed sum" 7 "$out"
await "$name.a" 10
expect_eq "... and so does the first" 0 "$(code_of "$name.a")"
expect_eq "... which printed the same" 7 "$(cat "$RB_TEST_TMP/$name.a.out")"

# 3. One keyspace: a barrier called param:P and parameter P never share a
#    key, and a reset of one leaves the other.
p=$(fresh kp)
rb set --param "$p" --value 5
rb wait --name "param:$p" --n 1 --id w0 --timeout 5
expect_eq "a barrier named param:P passes" 0 $?
rb reset --name "param:$p" >/dev/null
expect_eq "... and neither it nor its reset touched parameter P" 5 "$(rb get --param "$p")"
expect_eq "... whose key is rb:p:{P}" 5 "$(rcli GET "$(pkey "$p")")"
check "... and the barrier's keys are under rb:b:" test "$(rcli EXISTS "$(bkey "param:$p")")" = 1

# 4. A parameter key of the wrong type: every command exits 1 naming it,
#    and nothing is overwritten.
p=$(fresh kwrong)
rcli HSET "$(pkey "$p")" field x >/dev/null
for cmd in "set --value 3" "get" "sync --worker w0" "train --worker w0 --by 1"; do
    err=$(rb $cmd --param "$p" 2>&1)
    code=$?
    expect_eq "$cmd on a parameter key holding a hash: exit 1" 1 "$code"
    expect_match "... naming the key" "key rb:p:\{$p\} holds a" "$err"
done
expect_eq "... and the hash is as it was" "field x" "$(rcli HGETALL "$(pkey "$p")" | tr '\n' ' ' | sed 's/ $//')"

# 5. status of a name never used: unknown, exit 0; --json "exists": false.
name=$(fresh never)
err=$(rb status --name "$name" 2>&1)
expect_eq "status of a name never used: exit 0" 0 $?
expect_match "... says it is unknown" "^rbarrier: $name: unknown" "$err"
expect_match "... --json: exists false" '"exists":false' "$(rb status --name "$name" --json)"
rb wait --name "$name" --n 1 --timeout 5
expect_match "after a round: exists true" '"exists":true' "$(rb status --name "$name" --json)"
