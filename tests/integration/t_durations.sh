# Durations at their maxima: each accepted, none overflowing anything
# inside (--lease 7000000 used to overflow the blocking slice: about 14,000
# connections in 3 s). Forms and bounds past the maxima: unit tests
# (test_opts) and t_badinput.sh.
. "$RB_TESTS_DIR/lib.sh"

conns() { rcli INFO stats | tr -d '\r' | sed -n 's/^total_connections_received://p'; }

name=$(fresh max)
rb wait --name "$name" --n 1 --timeout 365d --lease 1d --ttl 365d
expect_eq "wait with --timeout 365d --lease 1d --ttl 365d passes" 0 $?
ttl=$(rcli PTTL "rb:b:{$name}")
check "the barrier's expiry is the 365d ttl, no overflow ($ttl ms)" \
    test "$ttl" -gt 31535000000 -a "$ttl" -le 31536000000

name=$(fresh maxlease)
c0=$(conns)
t0=$(now_ms)
rb wait --name "$name" --n 2 --lease 1d --timeout 1 2>/dev/null
code=$?
elapsed=$(( $(now_ms) - t0 ))
c1=$(conns)
expect_eq "--lease 1d, alone with --timeout 1: exit 124" 124 "$code"
check "... after about 1 s (${elapsed} ms)" test "$elapsed" -ge 950 -a "$elapsed" -lt 3000
check "... on a handful of connections ($((c1 - c0)))" test $((c1 - c0)) -le 5

r=$(fresh maxworker)
rb worker --worker 0 --workers 1 --iters 1 --run "$r" --timeout 365d --lease 1d >/dev/null
expect_eq "worker with --timeout 365d --lease 1d runs" 0 $?
rb worker --worker 0 --workers 1 --iters 1 --run "$r" --timeout 0 >/dev/null
expect_eq "worker --timeout 0 (no limit) runs" 0 $?
