# Hostile clients calling the barrier scripts directly (EVALSHA with bad
# ARGV, mismatched KEYS, keys of the wrong type), the TTL of an open round,
# and reset as the repair of damaged state. After each attack a
# well-behaved round on the same barrier still passes, and only with all
# of its parties.
. "$RB_TESTS_DIR/lib.sh"

root=$(cd "$RB_TESTS_DIR/.." && pwd)
sha_of() { sh "$root/tools/embed-lua.sh" --expand "$root/lua/$1" | rcli -x SCRIPT LOAD; }
ARRIVE=$(sha_of arrive-2.lua)
BEAT=$(sha_of heartbeat-4.lua)
ABANDON=$(sha_of abandon-3.lua)
RELEASE=$(sha_of release-3.lua)
RESET=$(sha_of reset-2.lua)

keys_of() { rcli --scan --pattern "rb:b:{$1}*" | sort | tr '\n' ' '; }

# refused WHAT NAME SCRIPT-ARGS...: an error reply, and no key of barrier
# NAME changed (the key set and each key's dump are the same after).
refused() {
    local what=$1 name=$2; shift 2
    local before after out
    before=$(for k in $(keys_of "$name"); do echo "$k $(rcli DUMP "$k" | od -An -tx1 | tr -d ' \n')"; done)
    out=$(rcli "$@" 2>&1)
    after=$(for k in $(keys_of "$name"); do echo "$k $(rcli DUMP "$k" | od -An -tx1 | tr -d ' \n')"; done)
    if ! printf '%s' "$out" | grep -q '^ERR'; then not_ok "$what: error reply (got: $out)"; return; fi
    if [ "$before" != "$after" ]; then not_ok "$what: nothing written"; return; fi
    ok "$what: error reply, nothing written"
}

# round_passes_only_with_all NAME N: N-1 parties block (still running once
# all have arrived), the N-th releases all; every exit 0.
round_passes_only_with_all() {
    local name=$1 n=$2 i pids="" fails=0 alive=0
    for i in $(seq 1 $((n - 1))); do
        rb wait --name "$name" --n "$n" --id "good$i" --timeout 20 & pids="$pids $!"
    done
    wait_arrived "$name" $((n - 1))
    for p in $pids; do kill -0 "$p" 2>/dev/null && alive=$((alive + 1)); done
    rb wait --name "$name" --n "$n" --id "good$n" --timeout 20 || fails=$((fails + 1))
    for p in $pids; do wait "$p" || fails=$((fails + 1)); done
    [ "$alive" -eq $((n - 1)) ] && [ "$fails" -eq 0 ]
}

name=$(fresh hostile)
b="$(bkey "$name")"
# 1. arrive: a bad ARGV is refused before any write (a non-numeric n used to
#    leave a phantom member and let a lone party pass).
for bad in "n=abc:abc" "n=empty:" "n=0:0" "n=-1:-1" "n=2 :2 " "n=1e3:1e3" \
           "n=0x3:0x3" "n=100001:100001"; do
    refused "arrive with ${bad%%:*}" "$name" EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" evil nonce1 "${bad#*:}" 10000 60 60 0 '' '' ''
done
refused "arrive with lease abc"   "$name" EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" evil nonce1 2 abc 60 60 0 '' '' ''
refused "arrive with ttl 0"       "$name" EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" evil nonce1 2 1000 0 60 0 '' '' ''
refused "arrive with linger -5"   "$name" EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" evil nonce1 2 1000 60 -5 0 '' '' ''
refused "arrive with an empty id" "$name" EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" "" nonce1 2 1000 60 60 0 '' '' ''
refused "arrive with id 'a b'"    "$name" EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" "a b" nonce1 2 1000 60 60 0 '' '' ''
refused "arrive with id 'a,b'"    "$name" EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" "a,b" nonce1 2 1000 60 60 0 '' '' ''
refused "arrive with once=yes"    "$name" EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" evil nonce1 2 1000 60 60 yes '' '' ''
refused "arrive without ARGV[7]"  "$name" EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" evil nonce1 2 1000 60 60
refused "arrive with a value holding a newline" "$name" EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" evil nonce1 2 1000 60 60 0 $'1\n2'
refused "arrive with another key as KEYS[2]" "$name" EVALSHA "$ARRIVE" 2 "$b" "$b:other" evil nonce1 2 1000 60 60 0 '' '' ''
expect_eq "after the refused arrivals the barrier has no keys" "" "$(keys_of "$name")"
check "a well-behaved round of 3 then passes only with all 3" round_passes_only_with_all "$name" 3

# 2. heartbeat, abandon, release with a party in the round.
# A long lease: no heartbeat of its own changes the round during the checks.
rb wait --name "$name" --n 2 --id member --lease 1h --timeout 300 2>"$RB_TEST_TMP/member.err" &
member=$!
wait_arrived "$name" 1
gen=$(rcli HGET "$b" gen)
in="$b:$gen:in" out="$b:$gen:out"
refused "heartbeat with gen abc"  "$name" EVALSHA "$BEAT" 4 "$b" "$in" "$out" "$b:nonce" abc member 1000 60 60
refused "heartbeat with another round's keys" "$name" EVALSHA "$BEAT" 4 "$b" "$b:999:in" "$b:999:out" "$b:nonce" "$gen" member 1000 60 60
refused "heartbeat with lease 0"  "$name" EVALSHA "$BEAT" 4 "$b" "$in" "$out" "$b:nonce" "$gen" member 0 60 60
refused "heartbeat with list=2"   "$name" EVALSHA "$BEAT" 4 "$b" "$in" "$out" "$b:nonce" "$gen" member 1000 60 60 2
refused "abandon with the old verbatim form" "$name" EVALSHA "$ABANDON" 3 "$b" "$in" "$out" "$gen" member ok 60 1
refused "abandon with a newline in its reason" "$name" EVALSHA "$ABANDON" 3 "$b" "$in" "$out" "$gen" member $'x\nok' 60 plain
refused "abandon with mismatched KEYS" "$name" EVALSHA "$ABANDON" 3 "$b" "$in" "$b:1:out" "$gen" member x 60 plain
refused "release by a party that did not run --once" "$name" EVALSHA "$RELEASE" 3 "$b" "$in" "$out" "$gen" member 60
expect_eq "an abandon by a non-member is told 'lost' and writes nothing" "lost" \
    "$(rcli EVALSHA "$ABANDON" 3 "$b" "$in" "$out" "$gen" stranger ok 60 plain | head -1)"
expect_eq "... the out list is still empty" 0 "$(rcli LLEN "$out")"
check "the member is still waiting" kill -0 "$member"
# The plain form cannot push 'ok': whatever it is given becomes a break.
rcli EVALSHA "$ABANDON" 3 "$b" "$in" "$out" "$gen" member ok 60 plain >/dev/null
expect_eq "abandon 'ok' pushes 'broken ok', never 'ok'" "broken ok" "$(rcli LRANGE "$out" 0 -1)"
wait "$member"
expect_eq "... and the waiting member exits 3" 3 $?
check "a well-behaved round of 2 then passes only with both" round_passes_only_with_all "$name" 2
refused "reset with linger abc" "$name" EVALSHA "$RESET" 2 "$b" "$b:nonce" abc 60

# 3. Keys of the wrong type: every wait exits 1 naming the key and saying a
#    reset repairs it, and leaves the key as it found it;
#    reset removes them, says which, and the barrier works again.
for victim in base in out; do
    name=$(fresh wrongtype); b="$(bkey "$name")"
    rb wait --name "$name" --n 2 --timeout 0.3 2>/dev/null   # gen 1 broken
    gen=$(rcli HGET "$b" gen)
    case $victim in
        base)  k=$b ;;
        in)    k="$b:$gen:in" ;;
        out)   k="$b:$gen:out" ;;
    esac
    rcli DEL "$k" >/dev/null; rcli SET "$k" garbage >/dev/null
    err=$(rb wait --name "$name" --n 1 --timeout 5 2>&1)
    code=$?
    expect_eq "$victim of the wrong type: wait exits 1" 1 "$code"
    expect_match "... naming the key" "key $(printf '%s' "$k" | sed 's/[{}]/\\&/g') holds a string" "$err"
    expect_match "... and says a reset repairs it" "reset" "$err"
    expect_eq "... and the key is not overwritten" garbage "$(rcli GET "$k")"
    msg=$(rb reset --name "$name")
    expect_eq "reset of a damaged barrier ($victim) exits 0" 0 $?
    expect_match "... and names what it removed" "removed damaged state.*$(printf '%s' "$k" | sed 's/[{}]/\\&/g')" "$msg"
    check "... after which a round of 2 passes only with both" round_passes_only_with_all "$name" 2
done
# An arrival that does not end its round never reads the out key: its wait
# finds one of another type, names it and exits 1; the arrival that would
# end the round is refused and leaves the round as it was.
name=$(fresh wrongout); b="$(bkey "$name")"
rb wait --name "$name" --n 2 --timeout 0.3 2>/dev/null   # gen 1 broken
gen=$(rcli HGET "$b" gen)
rcli SET "$b:$gen:out" garbage >/dev/null
err=$(rb wait --name "$name" --n 2 --id first --timeout 5 2>&1)
expect_eq "out of the wrong type, met by a waiting party: wait exits 1" 1 $?
expect_match "... naming the key" "key $(printf '%s' "$b:$gen:out" | sed 's/[{}]/\\&/g') holds a string" "$err"
err=$(rb wait --name "$name" --n 2 --id second --timeout 5 2>&1)
expect_eq "... and the arrival that would end the round exits 1 too" 1 $?
expect_eq "... leaving one member in the round" 1 "$(rcli ZCARD "$b:$gen:in")"
expect_eq "... and the key as it was" garbage "$(rcli GET "$b:$gen:out")"

# The nonce key is never read (each party's last arrival is kept in the
# barrier hash): a string there is only replaced by the marker that keeps
# parties of the previous build out.
name=$(fresh oldnonce); b="$(bkey "$name")"
rcli SET "$b:nonce" garbage >/dev/null
check "a string at the nonce key: a round of 2 passes only with both" round_passes_only_with_all "$name" 2
expect_match "... and the key holds the marker" "barrier hash" "$(rcli GET "$b:nonce")"
name=$(fresh badgen); b="$(bkey "$name")"
rcli HSET "$b" gen "1; x" n 2 >/dev/null
err=$(rb wait --name "$name" --n 1 --timeout 5 2>&1)
expect_eq "a non-numeric gen field: wait exits 1" 1 $?
expect_match "... saying the state is damaged" "damaged barrier state" "$err"
expect_match "reset names the field" "rb:b:\{$name\} gen" "$(rb reset --name "$name")"
check "... after which a round of 2 passes" round_passes_only_with_all "$name" 2
name=$(fresh badcount); b="$(bkey "$name")"
rb wait --name "$name" --n 2 --timeout 0.3 2>/dev/null
rcli HSET "$b" c "2x" >/dev/null
err=$(rb wait --name "$name" --n 1 --timeout 5 2>&1)
expect_eq "a non-numeric count field: wait exits 1" 1 $?
expect_match "... saying the state is damaged" "damaged barrier state" "$err"
expect_match "reset names the field" "rb:b:\{$name\} c" "$(rb reset --name "$name")"
check "... after which a round of 2 passes" round_passes_only_with_all "$name" 2

# 4. --ttl is for idle state: a round open three times longer than --ttl
#    keeps its keys while a party waits (it used to fail with "barrier
#    state lost"); ended rounds linger, then vanish.
name=$(fresh ttl); b="$(bkey "$name")"
rb wait --name "$name" --n 2 --id early --ttl 1 --lease 0.3 --timeout 20 2>"$RB_TEST_TMP/ttl.err" &
early=$!
wait_arrived "$name" 1
sleep_until=$(( $(now_ms) + 3000 ))
# Not a sleep standing in for a condition: the condition is the passing
# of time itself (three TTLs), during which the waiter must stay in.
while [ "$(now_ms)" -lt "$sleep_until" ]; do
    [ "$(arrived "$name")" = 1 ] || break
    sleep 0.1
done
expect_eq "after 3 s (3 x --ttl 1) the waiting party is still in the round" 1 "$(arrived "$name")"
rb wait --name "$name" --n 2 --id late --ttl 1 --lease 0.3 --timeout 20
expect_eq "the late party passes" 0 $?
wait "$early"
expect_eq "the early party passes too" 0 $?
ttl_in=$(rcli TTL "$b:1:in")
check "the ended round lingers for at most --ttl (TTL $ttl_in)" test "$ttl_in" -ge 0 -a "$ttl_in" -le 1
gone() { [ -z "$(keys_of "$1")" ]; }
check "... then every key of the barrier vanishes" wait_until 5 gone "$name"

# 5. --once at the script level: the party whose arrival completed the
#    round must claim the run, and a claim in a round that already has an
#    outcome (another party timed out between the arrival and the start)
#    says so instead of letting the command start; release without a
#    claim is refused.
CLAIM=$(sha_of claim-3.lua)
WITHDRAW=$(sha_of withdraw-2.lua)
name=$(fresh claim); b="$(bkey "$name")"
rcli EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" a n1 2 10000 60 60 0 '' '' '' >/dev/null
expect_eq "the completing --once arrival is told to run" run \
    "$(rcli EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" r n2 2 10000 60 60 1 '' '' '' | head -1)"
rcli EVALSHA "$ABANDON" 3 "$b" "$b:1:in" "$b:1:out" 1 a "timed out after 1s" 60 arrivals >/dev/null
expect_eq "a claim after another party broke the round gives the break" \
    "out broken a timed out after 1s (2/2 arrived: a,r)" \
    "$(rcli EVALSHA "$CLAIM" 3 "$b" "$b:1:in" "$b:1:out" 1 r 10000 60 60 | tr '\n' ' ' | sed 's/ $//')"
name=$(fresh claim); b="$(bkey "$name")"
rcli EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" a n1 2 10000 60 60 0 '' '' '' >/dev/null
rcli EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" r n2 2 10000 60 60 1 '' '' '' >/dev/null
refused "release without a claim" "$name" EVALSHA "$RELEASE" 3 "$b" "$b:1:in" "$b:1:out" 1 r 60
refused "a claim by another party" "$name" EVALSHA "$CLAIM" 3 "$b" "$b:1:in" "$b:1:out" 1 a 10000 60 60
expect_eq "the runner's claim" run "$(rcli EVALSHA "$CLAIM" 3 "$b" "$b:1:in" "$b:1:out" 1 r 10000 60 60)"
expect_eq "... then its release passes the round" "out ok" \
    "$(rcli EVALSHA "$RELEASE" 3 "$b" "$b:1:in" "$b:1:out" 1 r 60 | tr '\n' ' ' | sed 's/ $//')"

# 6. withdraw: an arrival found by its nonce breaks its round; another
#    nonce finds nothing and writes nothing.
name=$(fresh withdraw); b="$(bkey "$name")"
rcli EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" a n1 2 10000 60 60 0 '' '' '' >/dev/null
expect_eq "withdraw with another nonce: none" none \
    "$(rcli EVALSHA "$WITHDRAW" 2 "$b" "$b:nonce" a other "lost" 60)"
expect_eq "withdraw with its nonce breaks the round" "broken broken a lost" \
    "$(rcli EVALSHA "$WITHDRAW" 2 "$b" "$b:nonce" a n1 "lost" 60 | tr '\n' ' ' | sed 's/ $//')"
check "... after which a round of 2 passes only with both" round_passes_only_with_all "$name" 2
