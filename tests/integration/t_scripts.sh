# The embedded scripts: SHA1s match what Redis computes, and SCRIPT FLUSH in
# the middle of a run never breaks a wait (EVALSHA falls back to EVAL).
. "$RB_TESTS_DIR/lib.sh"

root=$(cd "$RB_TESTS_DIR/.." && pwd)
# What is sent is the script with its includes expanded.
expanded() { sh "$root/tools/embed-lua.sh" --expand "$1"; }
for f in "$root"/lua/*.lua; do
    expect_eq "SCRIPT LOAD of $(basename "$f") (expanded) gives its SHA1" \
        "$(expanded "$f" | sha1sum | cut -d' ' -f1)" "$(expanded "$f" | rcli -x SCRIPT LOAD)"
done

arrive_sha=$(expanded "$root/lua/arrive-2.lua" | sha1sum | cut -d' ' -f1)
rcli SCRIPT FLUSH >/dev/null
expect_eq "after SCRIPT FLUSH the arrive script is gone" 0 "$(rcli SCRIPT EXISTS "$arrive_sha")"
rb wait --name "$(fresh flush1)" --n 1
expect_eq "a wait right after SCRIPT FLUSH passes" 0 $?
expect_eq "... and has cached the script again under its SHA" 1 "$(rcli SCRIPT EXISTS "$arrive_sha")"

# Four parties x 40 rounds, short leases so heartbeats run too, while
# another process flushes the script cache every 20 ms.
name=$(fresh flushrun)
( while :; do rcli SCRIPT FLUSH >/dev/null; sleep 0.02; done ) &
flusher=$!
for i in 0 1 2 3; do
    ( for r in $(seq 1 40); do
          rb wait --name "$name" --n 4 --id "w$i" --lease 0.3 --timeout 30 || exit $?
      done ) &
done
fails=0
for job in $(jobs -p); do
    [ "$job" = "$flusher" ] && continue
    wait "$job" || fails=$((fails + 1))
done
kill "$flusher"; wait "$flusher" 2>/dev/null
expect_eq "40 rounds of 4 pass under SCRIPT FLUSH every 20 ms" 0 "$fails"
expect_match "status after the run: round 41 open, last ok" "generation +41" "$(rb status --name "$name")"

# A party blocked mid-wait across a flush: its heartbeat (after a slice of
# lease/3) must reload the script, and the round must still pass.
name=$(fresh flushwait)
rb wait --name "$name" --n 2 --id first --lease 0.6 --timeout 20 &
first=$!
wait_arrived "$name" 1
rcli SCRIPT FLUSH >/dev/null
hb_sha=$(expanded "$root/lua/heartbeat-4.lua" | sha1sum | cut -d' ' -f1)
script_cached() { [ "$(rcli SCRIPT EXISTS "$1")" = 1 ]; }
wait_until 10 script_cached "$hb_sha"
expect_eq "the waiting party's heartbeat reloaded its script" 0 $?
rb wait --name "$name" --n 2 --id second --timeout 20
expect_eq "the second party passes" 0 $?
wait $first
expect_eq "the party that waited across the flush passes" 0 $?
