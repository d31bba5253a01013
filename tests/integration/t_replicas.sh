# --replicas K: a state change not acknowledged by K replicas is resent
# until the deadline, then the command exits 1 naming the shortfall (the
# test server has no replica). Bad values are bad input. The Cluster and
# Sentinel behaviour is in tests/cluster (make test-cluster).
. "$RB_TESTS_DIR/lib.sh"

name=$(fresh repl)
url=unix://$RB_TEST_SOCK
t0=$(now_ms)
err=$(rb wait --name "$name" --n 1 --timeout 1.5 --replicas 1 --url "$url" 2>&1)
code=$? ms=$(( $(now_ms) - t0 ))
expect_eq "wait --replicas 1, no replica: exit 1" 1 "$code"
check "... after retrying until its timeout (1.4..4 s; $ms ms)" test "$ms" -ge 1400 -a "$ms" -le 4000
expect_match "... naming the shortfall, in one line" \
    "^rbarrier: .*only 0 of 1 replicas acknowledged the write at unix://" "$err"
expect_eq "... one line" 1 "$(printf '%s\n' "$err" | wc -l)"
expect_eq "--replicas 0 is plain" 0 \
    "$(rb wait --name "$name-0" --n 1 --replicas 0 --url "$url"; echo $?)"
for v in -1 abc "" 1001; do
    rb wait --name "$name" --n 1 --replicas "$v" --url "$url" 2>/dev/null
    expect_eq "--replicas '$v': exit 2" 2 $?
done
