# No call costs Redis more as a round grows: a break's outcome, which every
# waiter reads, names counts and the first few ids, not every member; an
# --expect list of 20,000 ids reaches Redis once, in parts, not with every
# arrival.
# The round's many parties are script calls sent pipelined, as the library
# sends them (one host cannot hold thousands of blocking parties), with
# real rbarrier parties among them. On a private server.
. "$RB_TESTS_DIR/lib.sh"

root=$(cd "$RB_TESTS_DIR/.." && pwd)
start_redis scale || { not_ok "start a private redis-server"; exit 1; }
sock=$REDIS_SOCK scale_pid=$REDIS_PID
pcli() { redis-cli -s "$sock" "$@"; }
sha_of() { sh "$root/tools/embed-lua.sh" --expand "$root/lua/$1" | pcli -x SCRIPT LOAD; }
ARRIVE=$(sha_of arrive-2.lua)
BEAT=$(sha_of heartbeat-4.lua)

# Tab-separated commands on stdin (empty fields allowed) to RESP, sent in
# one pipeline; prints redis-cli --pipe's summary.
pipe_calls() {
    awk -F'\t' '{ printf "*%d\r\n", NF
                  for (i = 1; i <= NF; i++) printf "$%d\r\n%s\r\n", length($i), $i }' |
        pcli --pipe
}

# 1. A round of 2,000: 1,997 parties arrive by script (10-minute leases:
#    nobody's lease runs out here), then two rbarrier parties (one short of
#    n); one times out. Every waiter learns one outcome, of bounded size.
N=2000 M=1997
name=$(fresh big); b=$(bkey "$name")
t=$(printf '\t')
seq 1 $M | awk -v sha="$ARRIVE" -v b="$b" -v n=$N -v t="$t" '
    { print "EVALSHA" t sha t 2 t b t b ":nonce" t "p" $1 t "x" $1 t n t 600000 t 600 t 300 t 0 t "" t "" t "" }' |
    pipe_calls >"$RB_TEST_TMP/scale.pipe" 2>&1
expect_match "1,997 arrivals sent in one pipeline" "errors: 0, replies: $M" "$(cat "$RB_TEST_TMP/scale.pipe")"
expect_eq "... all in round 1" $M "$(pcli ZCARD "$b:1:in")"
u=unix://$sock
rb wait --url "$u" --name "$name" --n $N --id waiter --timeout 60 \
    2>"$RB_TEST_TMP/scale.waiter" & wpid=$!
members_are() { [ "$(pcli ZCARD "$1")" = "$2" ]; }
check "the waiting rbarrier party arrives" wait_until 30 members_are "$b:1:in" $((M + 1))
rb wait --url "$u" --name "$name" --n $N --id quitter --timeout 1 2>"$RB_TEST_TMP/scale.quitter"
expect_eq "the party that times out exits 124" 124 $?
wait "$wpid"; expect_eq "the waiting party exits 3 (broken)" 3 $?
out=$(pcli LINDEX "$b:1:out" 0)
expect_match "the outcome counts everyone and names the first few" \
    "^broken quitter timed out after 1s \(1999/2000 arrived: ([^, ]+,){7}[^, ]+ and 1991 more\)$" "$out"
check "... in a bounded size (${#out} bytes)" [ "${#out}" -lt 300 ]
expect_match "the waiting party says it" "quitter timed out after 1s \(1999/2000 arrived: .* and 1991 more\)" \
    "$(cat "$RB_TEST_TMP/scale.waiter")"
# Each scripted party's next heartbeat answers the same outcome.
seq 1 $M | sed "s/.*/EVALSHA $BEAT 4 $b $b:1:in $b:1:out $b:nonce 1 p& 600000 300 600/" |
    pcli >"$RB_TEST_TMP/scale.beats" 2>&1
expect_eq "... every one of them: the round's one outcome" "$M $out" \
    "$(grep -v '^out$' "$RB_TEST_TMP/scale.beats" | sort | uniq -c | sed 's/^ *//')"

# 2. A job of 2,000 whose last runner never comes: 1,998 enter by script,
#    one rbarrier runner times out entering. The reason names counts and
#    the first few.
# The parties do what a client must before the keeper records their
# lease class (20: 600 s): load its markers (lua/README.md "The keeper").
JOBENTER=$(sha_of job-enter-2.lua)
job=$(fresh bigjob); j="rb:j:{$job}"; k=$(keeper_key "$j")
pcli EVAL "return 'rbarrier keeper marker: $k'" 1 "$k" >/dev/null
pcli EVAL "return 'rbarrier keeper marker: $k, leases up to 2^20 ms'" 1 "$k" >/dev/null
seq 1 1998 | awk -v sha="$JOBENTER" -v j="$j" -v k="$k" -v n=$N -v t="$t" '
    { print "EVALSHA" t sha t 2 t j t k t "m" $1 t n t 600000 t 600 t 300 t 0 t "new" t 0 t "" t "h" t "127.0.0.1 29500" t "n" $1 t "20 -1" }' |
    pipe_calls >"$RB_TEST_TMP/scale.enter" 2>&1
expect_match "1,998 members enter in one pipeline" "errors: 0, replies: 1998" "$(cat "$RB_TEST_TMP/scale.enter")"
rb run --url "$u" --name "$job" --n $N --id late --timeout 1 -- true 2>"$RB_TEST_TMP/scale.late"
expect_eq "the runner that times out entering exits 124" 124 $?
r=$(pcli HGET "$j" reason)
expect_match "the job's reason counts everyone and names the first few" \
    "\(1999/2000 entered: ([^, ]+,){7}[^, ]+ and 1991 more\)$" "$r"
check "... in a bounded size (${#r} bytes)" [ "${#r}" -lt 300 ]

# 3. --expect with 20,000 ids: more than one argument holds (@FILE), stored
#    in Redis once, in parts of 1,024 ids (expect-store: no call holds the
#    server for long), and a round of them passes; parties send the list's
#    digest, the SHA1 of its parts' SHA1s.
E=20000
ids=$RB_TEST_TMP/ids.txt
seq -f 'party-%05g' 1 $E >"$ids"
list=$(paste -sd, "$ids")
check "the list is longer than one argument may be (${#list} bytes)" [ "${#list}" -gt 131072 ]
split -l 1024 -d -a 3 "$ids" "$RB_TEST_TMP/part."
# part_of K: the K-th part (from 1), comma-separated
part_of() { paste -sd, "$RB_TEST_TMP/part.$(printf %03d $(($1 - 1)))"; }
sums=$(for k in $(seq 20); do part_of "$k" | tr -d '\n' | sha1sum | cut -c1-40; done | tr -d '\n')
sha=$(printf '%s' "$sums" | sha1sum | cut -d' ' -f1)
expect_eq "... in twenty parts" 800 "${#sums}"
STORE=$(sha_of expect-store-1.lua)
name=$(fresh expect); b=$(bkey "$name")
# xarrive ID: an arrival with the list's digest alone
xarrive() { pcli EVALSHA "$ARRIVE" 2 "$b" "$b:nonce" "$1" "n$1" $E 600000 600 300 0 '' "$sha" ''; }
# store K [SUMS [PART]]: expect-store of part K
store() { pcli EVALSHA "$STORE" 1 "$b" "$sha" "$1" "${2:-$sums}" "${3:-$(part_of "$1")}" 600 600000 2>&1 | paste -sd' '; }
expect_eq "an arrival with the digest of a list Redis does not hold is asked for it" needlist "$(xarrive party-00003)"
expect_eq "... having written nothing" 0 "$(pcli EXISTS "$b")"
expect_eq "the first part is stored; the server asks for the second" "part 2" "$(store 1)"
expect_eq "an arrival does not see a list in part" needlist "$(xarrive party-00003)"
expect_eq "the same part again: still the second asked for" "part 2" "$(store 1)"
expect_eq "... stored once" 1024 "$(pcli SCARD "$b:x:$sha:n")"
expect_match "a part that is not its SHA1's is refused" "bad argument 4" "$(store 2 "$sums" "$(part_of 3)")"
expect_match "... parts' SHA1s that are not the digest's" "bad argument 3" "$(store 2 "${sums%?}0")"
expect_match "... a part past the last" "bad argument 2" "$(store 21 "$sums" "$(part_of 20)")"
expect_eq "... having written nothing" "1024 1" "$(pcli SCARD "$b:x:$sha:n") $(pcli HLEN "$b:x:$sha:p")"
rb wait --url "$u" --name "$name" --expect @"$ids" --id party-00003 --timeout 60 2>"$RB_TEST_TMP/scale.x3" & x3pid=$!
check "an rbarrier party stores the other parts and arrives" wait_until 30 members_are "$b:1:in" 1
expect_eq "... the whole list is stored once" $E "$(pcli SCARD "$b:x:$sha")"
expect_eq "... and nothing of its making is left" 0 "$(pcli EXISTS "$b:x:$sha:n" "$b:x:$sha:p")"
expect_match "an id not on it is refused" "^badexpect" "$(xarrive intruder | head -1)"
tail -n +4 "$ids" | awk -v sha="$ARRIVE" -v b="$b" -v n=$E -v d="$sha" -v t="$t" '
    { print "EVALSHA" t sha t 2 t b t b ":nonce" t $1 t "n" $1 t n t 600000 t 600 t 300 t 0 t "" t d t "" }' |
    pipe_calls >"$RB_TEST_TMP/scale.x" 2>&1
expect_match "19,997 more arrivals with the digest alone" "errors: 0, replies: $((E - 3))" "$(cat "$RB_TEST_TMP/scale.x")"
expect_eq "... all counted" $((E - 2)) "$(pcli ZCARD "$b:1:in")"
rb wait --url "$u" --name "$name" --expect @"$ids" --id party-00001 --timeout 60 2>"$RB_TEST_TMP/scale.x1" & xpid=$!
check "an rbarrier party with --expect @FILE arrives" wait_until 30 members_are "$b:1:in" $((E - 1))
in0=$(pcli INFO stats | tr -d '\r' | sed -n 's/^total_net_input_bytes://p')
rb wait --url "$u" --name "$name" --expect @"$ids" --id party-00002 --timeout 60 2>"$RB_TEST_TMP/scale.x2"
expect_eq "the last one completes the round (exit 0)" 0 $?
in1=$(pcli INFO stats | tr -d '\r' | sed -n 's/^total_net_input_bytes://p')
check "... without sending the list ($((in1 - in0)) bytes in, the list is ${#list})" [ $((in1 - in0)) -lt 50000 ]
wait "$xpid"; c1=$?; wait "$x3pid"; c3=$?
expect_eq "... and the waiting ones pass too" "0 0" "$c1 $c3"
expect_eq "the round passed" ok "$(pcli LINDEX "$b:1:out" 0)"
expect_eq "the list's first 16 ids are kept, in its order, for a break to name" \
    "$(head -16 "$ids" | paste -sd,)" "$(pcli GET "$b:x:$sha:f")"
# A round of the list without party-00002 and party-00005 breaks: it names
# them, the first missing in the list's order (not a sample of 20,000).
grep -v -e '^party-00002$' -e '^party-00005$' "$ids" |
    awk -v sha="$ARRIVE" -v b="$b" -v n=$E -v d="$sha" -v t="$t" '
    { print "EVALSHA" t sha t 2 t b t b ":nonce" t $1 t "r2" $1 t n t 600000 t 600 t 300 t 0 t "" t d t "" }' |
    pipe_calls >"$RB_TEST_TMP/scale.x" 2>&1
expect_eq "round 2: all but two arrive" $((E - 2)) "$(pcli ZCARD "$b:2:in")"
ABANDON=$(sha_of abandon-3.lua)
out=$(pcli EVALSHA "$ABANDON" 3 "$b" "$b:2:in" "$b:2:out" 2 party-00001 'timed out after 1s' 300 arrivals | sed -n 2p)
expect_match "... a timeout's break names the two missing, in the list's order" \
    "missing: party-00002,party-00005\)$" "$out"

# 4. Bad --expect files exit 2 with one line, and nothing reaches Redis.
before=$(pcli INFO commandstats | tr -d '\r' | grep '^cmdstat_' | grep -v '^cmdstat_info:')
rb wait --url "$u" --name "$(fresh bad)" --expect @"$RB_TEST_TMP/no-such-file" --id a 2>"$RB_TEST_TMP/scale.bad1"
expect_eq "--expect @ a missing file: exit 2" 2 $?
expect_match "... saying so in one line" "^rbarrier: .*no-such-file: No such file or directory$" "$(cat "$RB_TEST_TMP/scale.bad1")"
{ cat "$ids"; echo party-00017; } >"$RB_TEST_TMP/dup.txt"
rb wait --url "$u" --name "$(fresh bad)" --expect @"$RB_TEST_TMP/dup.txt" --id party-00001 2>"$RB_TEST_TMP/scale.bad2"
expect_eq "--expect @FILE naming an id twice among 20,001: exit 2" 2 $?
expect_match "... naming it" "lists 'party-00017' twice" "$(cat "$RB_TEST_TMP/scale.bad2")"
after=$(pcli INFO commandstats | tr -d '\r' | grep '^cmdstat_' | grep -v '^cmdstat_info:')
expect_eq "... and nothing was sent" "$before" "$after"

# 5. The barrier hash holds no per-party state: five rounds of 300 fresh
#    ids each (as the default id, host:pid, is fresh on every run) leave
#    it as small as one round does; each id's record is a key of its own
#    that expires by itself.
name=$(fresh fresh); b=$(bkey "$name")
for r in 1 2 3 4 5; do
    seq 1 300 | awk -v sha="$ARRIVE" -v b="$b" -v r=$r -v t="$t" '
        { print "EVALSHA" t sha t 2 t b t b ":nonce" t "r" r "-" $1 t "n" r "-" $1 t 300 t 10000 t 600 t 300 t 0 t "" t "" t "" }' |
        pipe_calls >"$RB_TEST_TMP/scale.fresh" 2>&1
    [ "$(pcli LINDEX "$b:$r:out" 0)" = ok ] || not_ok "round $r of fresh ids passed"
    [ $r = 1 ] && fields1=$(pcli HLEN "$b")
done
expect_eq "five rounds passed" 6 "$(pcli HGET "$b" gen)"
fields=$(pcli HLEN "$b")
check "the barrier hash has as many fields after 1,500 ids as after 300 ($fields, $fields1)" [ "$fields" -le "$fields1" ]
check "... a handful ($fields)" [ "$fields" -le 12 ]
ttl=$(pcli TTL "$b:i:r5-300")
check "an id's record expires by itself, within a minute ($ttl s)" [ "$ttl" -gt 0 -a "$ttl" -le 60 ]

# 6. status of a round of 2,500 lists every member, read in pages of at
#    most 1,000 (no call holds Redis long), each once.
name=$(fresh status); b=$(bkey "$name")
seq 1 2500 | awk -v sha="$ARRIVE" -v b="$b" -v t="$t" '
    { print "EVALSHA" t sha t 2 t b t b ":nonce" t "s" $1 t "n" $1 t 3000 t 600000 t 600 t 300 t 0 t "" t "" t "" }' |
    pipe_calls >"$RB_TEST_TMP/scale.status" 2>&1
expect_match "2,500 arrivals in one pipeline" "errors: 0, replies: 2500" "$(cat "$RB_TEST_TMP/scale.status")"
pcli CONFIG RESETSTAT >/dev/null
rb status --url "$u" --name "$name" --json >"$RB_TEST_TMP/status.json"
expect_eq "status exits 0" 0 $?
got=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); m=[x["id"] for x in d["members"]]; print(len(m), len(set(m)))' "$RB_TEST_TMP/status.json")
expect_eq "... listing each of the 2,500 members once" "2500 2500" "$got"
calls=$(pcli INFO commandstats | tr -d '\r' | sed -n 's/^cmdstat_evalsha:calls=\([0-9]*\),.*/\1/p')
check "... in pages: 3 or more calls ($calls)" [ "${calls:-0}" -ge 3 ]

stop_redis "$scale_pid"
