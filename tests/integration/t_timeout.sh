# --timeout is exact to milliseconds, as timeout(1)'s is (Redis' own
# blocking timeouts tick at 100 ms, so the client cuts the last slice), and
# durations take timeout(1)'s forms.
. "$RB_TESTS_DIR/lib.sh"

min_of() { printf '%s\n' "$@" | sort -n | head -1; }
# waited_ms of a lone party's --json: from the start of its wait to its
# end, the break included (the process's own start-up is not the wait's).
waited() {
    rb wait --name "$(fresh t)" --n 2 --timeout "$1" --json 2>/dev/null |
        grep -o '"waited_ms":[0-9]*' | cut -d: -f2
}
# The machine may be loaded by other work: the best of three runs is the
# tool's precision, a scheduling delay is not.
for t in 0.3 0.45 1; do
    want=$(awk -v t="$t" 'BEGIN { print int(t * 1000) }')
    d1=$(waited "$t"); d2=$(waited "$t"); d3=$(waited "$t")
    d=$(min_of "$d1" "$d2" "$d3")
    check "--timeout $t ends within 20 ms after ${want} ms (waited $d1, $d2, $d3 ms)" \
        test "$d" -ge "$want" -a "$d" -le $((want + 20))
done
rb wait --name "$(fresh t)" --n 2 --timeout 0.3 2>/dev/null
expect_eq "... and exits 124" 124 $?

# Durations: 1m is 60 s; a fraction of a unit is exact (0.02m = 1.2 s).
rb wait --name "$(fresh d)" --n 1 --timeout 1m
expect_eq "--timeout 1m is accepted" 0 $?
err=$(rb wait --name "$(fresh d)" --n 2 --timeout 0.02m 2>&1)
expect_match "--timeout 0.02m is 1.2 s" "timed out after 1.2s" "$err"
rb wait --name "$(fresh d)" --n 1 --timeout 0
expect_eq "--timeout 0 means no limit" 0 $?
for bad in 5x 1.5.2 -1s 1e3 " 5" 5s5 ""; do
    err=$(rb wait --name "$(fresh d)" --n 1 --timeout "$bad" 2>&1)
    code=$?
    expect_eq "--timeout '$bad' exits 2" 2 "$code"
    expect_eq "... with one line" 1 "$(printf '%s\n' "$err" | wc -l)"
done
rb wait --name "$(fresh d)" --n 1 --lease 2h --ttl 1d
expect_eq "--lease 2h --ttl 1d are accepted" 0 $?
