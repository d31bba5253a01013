# get --param P --until-set: a value any shell can wait for. Waiters block
# on the parameter's wake list (no polling); one set wakes them all at once;
# --timeout ends the wait with 124; bad input exits 2 before anything is
# sent.
. "$RB_TESTS_DIR/lib.sh"

dir=$RB_TEST_TMP/until-set.$$
mkdir -p "$dir"
# blocked P: how many rbarrier clients block on P's wake list now.
blocked() { rcli CLIENT LIST | grep -F "cmd=blmove" | grep -cF "name=rbarrier:get:$1"; }
blocked_is() { [ "$(blocked "$1")" = "$2" ]; }

p=$(fresh head)
for i in 1 2 3; do
    ( rb get --param "$p" --until-set --timeout 60s >"$dir/w$i.out" 2>"$dir/w$i.err"
      echo $? >"$dir/w$i.rc" ) &
done
if wait_until 20 blocked_is "$p" 3; then
    ok "three waiters block on the wake list (nothing polls)"
else
    not_ok "three waiters block on the wake list (blocked: $(blocked "$p"))"
fi
t0=$(now_ms)
rb set --param "$p" --value 7
all_done() { [ -s "$dir/w1.rc" ] && [ -s "$dir/w2.rc" ] && [ -s "$dir/w3.rc" ]; }
wait_until 20 all_done
t1=$(now_ms)
wait
for i in 1 2 3; do
    expect_eq "waiter $i exits 0 when set" 0 "$(cat "$dir/w$i.rc")"
    expect_eq "waiter $i prints the value set" 7 "$(cat "$dir/w$i.out")"
done
# The blocking slice is 5 s: a waiter that only looked again at the end of
# a slice would take that long; a woken one takes a process exit.
check "one set wakes every waiter at once ($((t1 - t0)) ms, under 2500)" \
    test $((t1 - t0)) -lt 2500

out=$(rb get --param "$p" --until-set --timeout 1s)
expect_eq "a waiter after the set returns the value at once" 7 "$out"
out=$(rb get --param "$p" --until-set --json)
expect_match "--json carries the value" '"value":7' "$out"

# Made by train (not set): there already, so no wait.
q=$(fresh trained)
rb train --param "$q" --worker w0 --by 2 >/dev/null
out=$(rb get --param "$q" --until-set --timeout 5s)
expect_eq "a value train made is there at once" 2 "$out"

# Never set: exit 124 after the timeout, the reason on stderr.
q=$(fresh never)
t0=$(now_ms)
err=$(rb get --param "$q" --until-set --timeout 0.5s 2>&1)
code=$?
t1=$(now_ms)
expect_eq "--timeout passes: exit 124" 124 "$code"
expect_match "... saying why" "not set within 0.5s" "$err"
check "... not before 0.5 s ($((t1 - t0)) ms)" test $((t1 - t0)) -ge 500
check "... nor long after (under 5 s)" test $((t1 - t0)) -lt 5000

# Without --timeout it waits without limit: still blocked after a slice.
q=$(fresh nolimit)
( rb get --param "$q" --until-set >"$dir/nl.out"; echo $? >"$dir/nl.rc" ) &
wait_until 20 blocked_is "$q" 1
sleep 6
check "without --timeout it still waits after a whole slice" test ! -s "$dir/nl.rc"
rb set --param "$q" --value -3
wait_until 20 test -s "$dir/nl.rc"
wait
expect_eq "... and is woken by set" "0 -3" "$(cat "$dir/nl.rc") $(cat "$dir/nl.out")"

# A set of another value later: a later waiter reads the last one.
rb set --param "$q" --value 2.5
expect_eq "the last value set is the one read" 2.5 "$(rb get --param "$q" --until-set)"

# Bad input: exit 2, one line, nothing sent.
for args in "--timeout 5s" "--until-set --timeout 5x" "--until-set --timeout -1" \
            "--until-set --timeout"; do
    before=$(cmdstats)
    err=$(rb get --param "$(fresh bad)" $args 2>&1)
    code=$?
    after=$(cmdstats)
    expect_eq "get $args exits 2" 2 "$code"
    expect_eq "... with one line" 1 "$(printf '%s\n' "$err" | wc -l)"
    check "... and sends nothing" test "$before" = "$after"
done

# A wake list of the wrong type is refused, naming the key (exit 1).
q=$(fresh wrong)
rcli SET "$(pkey "$q"):set" x >/dev/null
err=$(rb set --param "$q" --value 1 2>&1)
expect_eq "set over a wake key of another type exits 1" "1" "$?"
expect_match "... naming it" "$(pkey "$q"):set" "$err"
