# Barrier basics: staggered arrivals, 100 reusable rounds, timeout and the
# broken round it leaves, duplicate ids, a different n, status, reset.
. "$RB_TESTS_DIR/lib.sh"

# 1. Four parties arrive at 0, 0.3, 0.6, 0.9 s; nobody leaves early.
name=$(fresh stagger)
t0=$(now_ms)
for i in 0 1 2 3; do
    ( sleep "0.$((i * 3))"; rb wait --name "$name" --n 4 --id "w$i" --timeout 30
      echo "$? $(now_ms)" > "$RB_TEST_TMP/$name.$i" ) &
done
wait
fourth=0; early=0; codes=""
for i in 0 1 2 3; do
    read -r code at < "$RB_TEST_TMP/$name.$i"
    codes="$codes$code"
    [ $((at - t0)) -lt 900 ] && early=$((early + 1))
done
expect_eq "4 staggered parties all exit 0" "0000" "$codes"
expect_eq "no party released before the fourth arrived (0.9 s)" 0 "$early"

# ... and the same name then passes 100 rounds of 4, none mixed up: each
# party's round numbers (from --json gen) must be consecutive and equal.
for i in 0 1 2 3; do
    ( for r in $(seq 1 100); do
          rb wait --name "$name" --n 4 --id "w$i" --timeout 60 --json || exit 1
      done > "$RB_TEST_TMP/$name.rounds.$i" ) &
done
fails=0
for job in $(jobs -p); do wait "$job" || fails=$((fails + 1)); done
expect_eq "100 further rounds of 4: every party exits 0" 0 "$fails"
g0=$(grep -o '"gen":[0-9]*' "$RB_TEST_TMP/$name.rounds.0" | cut -d: -f2 | tr '\n' ' ')
same=1
for i in 1 2 3; do
    gi=$(grep -o '"gen":[0-9]*' "$RB_TEST_TMP/$name.rounds.$i" | cut -d: -f2 | tr '\n' ' ')
    [ "$gi" = "$g0" ] || same=0
done
expect_eq "all four saw the same 100 rounds" 1 "$same"
expect_eq "rounds 2..101, consecutive" "$(seq 2 101 | tr '\n' ' ')" "$g0"
expect_eq "each round completed by exactly one party" 100 \
    "$(cat "$RB_TEST_TMP/$name".rounds.* | grep -c '"completed":true')"

# 2. A lone party with --timeout 1 exits 124 after about 1 s; a partner that
#    was waiting with n=3 in that round exits 3 naming who had arrived.
name=$(fresh timeout)
rb wait --name "$name" --n 3 --id partner --timeout 30 2> "$RB_TEST_TMP/partner.err" &
ppid=$!
wait_arrived "$name" 1
t0=$(now_ms)
rb wait --name "$name" --n 3 --id lone --timeout 1 2> "$RB_TEST_TMP/lone.err"
code=$?
elapsed=$(( $(now_ms) - t0 ))
wait $ppid; pcode=$?
expect_eq "lone party times out with 124" 124 "$code"
check "timeout took about 1 s (0.9..5 s; was ${elapsed} ms)" test "$elapsed" -ge 900 -a "$elapsed" -le 5000
expect_eq "partner of a timed-out party exits 3" 3 "$pcode"
expect_match "partner names who had arrived" \
    "lone timed out after 1s \(2/3 arrived: partner,lone\)" "$(cat "$RB_TEST_TMP/partner.err")"
expect_match "the timed-out party says so" "timed out after 1s" "$(cat "$RB_TEST_TMP/lone.err")"
expect_eq "one line on stderr" 1 "$(wc -l < "$RB_TEST_TMP/lone.err")"

# A lone --n 2 --timeout 1: 124 too.
rb wait --name "$(fresh lone2)" --n 2 --timeout 1 2>/dev/null
expect_eq "lone --n 2 --timeout 1 exits 124" 124 $?

# 3. The same id twice in one round counts once.
name=$(fresh dup)
rb wait --name "$name" --n 2 --id same --timeout 3 2>/dev/null &
a=$!
wait_arrived "$name" 1
rb wait --name "$name" --n 2 --id same --timeout 1 2>/dev/null
b=$?
wait $a; a=$?
check "a repeated id does not complete a round of 2 (exits $a and $b)" test "$a" -ne 0 -a "$b" -ne 0

# 4. A different n for an open round is refused with exit 2, naming both.
name=$(fresh badn)
rb wait --name "$name" --n 3 --id first --timeout 20 2>/dev/null &
first=$!
wait_arrived "$name" 1
err=$(rb wait --name "$name" --n 5 --id second --timeout 5 2>&1)
expect_eq "different --n refused with exit 2" 2 $?
expect_match "message names both values" "n=3.*n=5" "$err"
expect_eq "refused party was not counted" 1 "$(arrived "$name")"

# 5. status shows the round; reset breaks it (exit 3 for the waiter).
st=$(rb status --name "$name")
expect_match "status shows 1/3 arrived" "arrived +1/3" "$st"
expect_match "status lists the member with its lease" "first +lease left" "$st"
js=$(rb status --name "$name" --json)
expect_match "status --json" '"n":3,"arrived":1,"members":\[\{"id":"first","lease_left_ms":[0-9]+\}\]' "$js"
rb reset --name "$name" >/dev/null
expect_eq "reset exits 0" 0 $?
wait $first
expect_eq "a waiter of a reset round exits 3" 3 $?
expect_match "status shows the reset outcome" "last outcome +broken reset" "$(rb status --name "$name")"
# After a reset, any n may be used.
rb wait --name "$name" --n 1 --id solo
expect_eq "after reset a new n is accepted" 0 $?

# 6. n=1 passes at once, and --version / --help work.
rb wait --name "$(fresh one)" --n 1
expect_eq "--n 1 passes at once" 0 $?
expect_match "--version" "^rbarrier [0-9]+\.[0-9]+\.[0-9]+" "$(rb --version)"
for cmd in wait status reset sync train get set worker demo; do
    out=$(rb $cmd --help); code=$?
    [ $code -eq 0 ] && printf '%s' "$out" | grep -q "^usage: rbarrier $cmd" || { not_ok "$cmd --help"; continue; }
    ok "$cmd --help prints usage and exits 0"
done
expect_match "wait --help lists exit codes" "124 +this party's own --timeout" "$(rb wait --help)"
