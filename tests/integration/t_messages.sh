# One error, one line, one write: every message line goes out with a single
# write(2) (so lines of parties sharing a log never mix), and --json's
# object likewise; three parties timing out at once into one log give three
# whole lines.
. "$RB_TESTS_DIR/lib.sh"

# writes_to FD TRACE: the write(2) calls on FD in an strace -f log.
writes_to() { grep -cE "^[0-9]+ +write\($1, " "$2"; }

if strace -f -o /dev/null true 2>/dev/null; then
    tr=$RB_TEST_TMP/msg.trace
    # $RBARRIER may carry a valgrind prefix: trace the plain binary.
    # LeakSanitizer refuses to run under ptrace (and says so on stderr).
    bin=${RBARRIER##* }
    asan_saved=${ASAN_OPTIONS-}
    export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
    strace -f -e trace=write -o "$tr" "$bin" wait --name "$(fresh one)" --n 2 --timeout 0.2 2>/dev/null
    expect_eq "a timeout message is one write to stderr" 1 "$(writes_to 2 "$tr")"
    strace -f -e trace=write -o "$tr" "$bin" wait --name "$(fresh one)" --n 2 --timeout 0.2 --json >/dev/null 2>&1
    expect_eq "... and its --json object one write to stdout" "1 1" "$(writes_to 1 "$tr") $(writes_to 2 "$tr")"
    strace -f -e trace=write -o "$tr" "$bin" wait --name $'a\nb' --n 2 2>/dev/null
    expect_eq "a usage error is one write" 1 "$(writes_to 2 "$tr")"
    strace -f -e trace=write -o "$tr" "$bin" train --param "$(fresh w)" --worker a,b --json >/dev/null 2>&1
    expect_eq "a usage error under --json: one write each" "1 1" "$(writes_to 1 "$tr") $(writes_to 2 "$tr")"
    ASAN_OPTIONS=$asan_saved
else
    echo "skip - strace cannot trace here (ptrace not permitted)"
fi

# Three parties time out at once, their stderr appended to one log.
for round in 1 2 3; do
    name=$(fresh three)
    log=$RB_TEST_TMP/$name.log
    : > "$log"
    for i in 0 1 2; do
        rb wait --name "$name" --n 4 --id "p$i" --timeout 0.5 2>> "$log" &
    done
    wait
    bad=$(grep -cvE "^rbarrier: $name: .*(timed out|broken)" "$log")
    expect_eq "round $round: three parties, three whole lines in one log" "3 0" "$(wc -l < "$log" | tr -d ' ') $bad"
    expect_eq "round $round: no line holds two messages" 0 "$(grep -c 'rbarrier: .*rbarrier: ' "$log")"
done
