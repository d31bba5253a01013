# examples/rbarrier.py, a Python party speaking the Lua protocol: its
# scripts are byte for byte the ones the C build embeds (same SHA1s); two C
# parties and one Python party pass 20 rounds; a Python party killed with
# SIGKILL breaks the round for the C parties within the lease; Python and C
# trains interleaved lose no update; its exit codes are the CLI's.
. "$RB_TESTS_DIR/lib.sh"

root=$(cd "$RB_TESTS_DIR/.." && pwd)
pyex=$root/examples/rbarrier.py
py=""
for p in python3 /usr/bin/python3; do
    if "$p" -c 'import redis' 2>/dev/null; then py=$p; break; fi
done
if [ -z "$py" ]; then
    skip "no python3 with the redis module (python3-redis): Python party not tested"
    exit 0
fi
pyrb() { "$py" "$pyex" "$@"; }

# 1. The same scripts: each expanded text's SHA1 is one the C build embedded.
gen_c=${RB_BUILD:-$root/build}/gen/rb_scripts.c
shas=$(PYTHONPATH=$root/examples "$py" -c '
import rbarrier
for name, (k, text) in sorted(rbarrier.load_scripts(rbarrier._default_lua_dir()).items()):
    import hashlib; print(name, hashlib.sha1(text.encode()).hexdigest())')
missing=""
while read -r name sha; do
    grep -q "\"$sha\"" "$gen_c" || missing="$missing $name"
done <<<"$shas"
check "Python loads every script ($(wc -l <<<"$shas"))" test "$(wc -l <<<"$shas")" -ge 6
expect_eq "each script's SHA1 in Python is the C build's (includes expanded alike)" "" "$missing"

# 2. Two C parties and one Python party, 20 rounds.
name=$(fresh py20)
# (Each party stops at its first failure, so a broken round ends the test
# rather than 20 timeouts.)
pyrb wait --name "$name" --n 3 --id py --rounds 20 --timeout 30 2> "$RB_TEST_TMP/py20.err" &
ppid=$!
cpids=""
for c in c0 c1; do
    ( for i in $(seq 20); do rb wait --name "$name" --n 3 --id "$c" --timeout 30 || exit; done
    ) 2> "$RB_TEST_TMP/py20.$c.err" &
    cpids="$cpids $!"
done
codes=""
for p in $ppid $cpids; do wait "$p"; codes="$codes$?"; done
expect_eq "20 rounds of 2 C + 1 Python party: all exit 0" 000 "$codes"
expect_eq "20 rounds: the barrier is at round 21" 21 "$(rcli HGET "rb:b:{$name}" gen)"
expect_eq "20 rounds: nothing on stderr" "" "$(cat "$RB_TEST_TMP"/py20*.err)"

# 3. The Python party killed with SIGKILL while the C parties wait: they
#    exit 3 naming it, within its lease (2 s) plus one slice and margin.
name=$(fresh pykill)
"$py" "$pyex" wait --name "$name" --n 4 --id py --lease 2 &   # no function: $! is python
ppid=$!
cpids=""
for c in c0 c1; do
    rb wait --name "$name" --n 4 --id "$c" --lease 2 --timeout 30 2> "$RB_TEST_TMP/pykill.$c.err" &
    cpids="$cpids $!"
done
wait_arrived "$name" 3
t0=$(now_ms)
kill -9 "$ppid"
codes=""
for p in $cpids; do wait "$p"; codes="$codes$?"; done
elapsed=$(( $(now_ms) - t0 ))
wait "$ppid" 2>/dev/null
expect_eq "Python party killed: both C parties exit 3" 33 "$codes"
check "... within 4 s of the kill (lease 2 s; took ${elapsed} ms)" test "$elapsed" -le 4000
expect_match "... naming the dead party" "lease of py expired" "$(cat "$RB_TEST_TMP"/pykill.c0.err)"

# 4. Python and C trains interleaved: 3 C workers and one Python worker,
#    40 trains each; the global ends at 160 and no global value is seen twice.
param=$(fresh pytrain)
out=$RB_TEST_TMP/$param
pids=""
for w in 0 1 2; do
    ( for i in $(seq 40); do rb train --param "$param" --worker "c$w" || exit 1; done ) > "$out.c$w" &
    pids="$pids $!"
done
PYTHONPATH=$root/examples "$py" -c '
import sys, rbarrier
c = rbarrier.Client()
for i in range(40):
    print("local %s global %s" % c.train(sys.argv[1], "py"))' "$param" > "$out.py" &
pids="$pids $!"
codes=""
for p in $pids; do wait "$p"; codes="$codes$?"; done
expect_eq "interleaved trains: all exit 0" 0000 "$codes"
expect_eq "interleaved trains: the global is 160" 160 "$(rb get --param "$param")"
expect_eq "interleaved trains: 160 distinct globals 1..160 printed" \
    "$(seq 160 | tr '\n' ' ')" "$(cat "$out".* | awk '{print $4}' | sort -n | tr '\n' ' ')"
expect_eq "Python sync copies the global" 160 "$(pyrb sync --param "$param" --worker py)"

# 5. Outcomes and exit codes as the CLI's.
name=$(fresh pyto)
rb wait --name "$name" --n 3 --id c0 --timeout 30 2> "$RB_TEST_TMP/pyto.err" &
cpid=$!
wait_arrived "$name" 1
pyrb wait --name "$name" --n 3 --id py --timeout 0.5 2> "$RB_TEST_TMP/pyto.py.err"
expect_eq "Python party's own timeout: exit 124" 124 $?
wait "$cpid"
expect_eq "... and the C party exits 3" 3 $?
expect_match "... told that py timed out" "py timed out after 0.5s" "$(cat "$RB_TEST_TMP/pyto.err")"

name=$(fresh pyint)
"$py" "$pyex" wait --name "$name" --n 2 --id py --timeout 30 2> /dev/null &
ppid=$!
wait_arrived "$name" 1
kill -TERM "$ppid"; wait "$ppid"
expect_eq "Python party on SIGTERM: exit 143" 143 $?
rb wait --name "$name" --n 2 --id c0 --timeout 1 2> /dev/null
expect_eq "... and it abandoned: the next party starts a fresh round (exit 124, not a pass)" 124 $?

keys_before=$(cmdstats)
pyrb wait --name 'bad{name' --n 2 2> "$RB_TEST_TMP/pybad.err"
expect_eq "Python party, bad name: exit 2" 2 $?
pyrb wait --name ok --n 0 2> /dev/null
expect_eq "Python party, n=0: exit 2" 2 $?
expect_eq "... nothing sent to Redis" "$keys_before" "$(cmdstats)"
pyrb --url redis://127.0.0.1:1/0 wait --name x --n 2 2> /dev/null
expect_eq "Python party, Redis unreachable: exit 4" 4 $?

# lua/README.md describes every script under its name and key count.
undocumented=""
for f in "$root"/lua/*-*.lua; do
    b=$(basename "$f" .lua); s=${b%-*}; k=${b##*-}
    grep -Eq "(^### |, )$s \($k keys?\)|^\| \`$s\` \($k\)" "$root/lua/README.md" ||
        undocumented="$undocumented $s($k)"
done
expect_eq "lua/README.md documents every script with its key count" "" "$undocumented"
