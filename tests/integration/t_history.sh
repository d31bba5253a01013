# Seeing the job: the history the scripts append, and its four readers.
# 4 parties x 20 rounds where w3 arrives last in every round (it waits
# until the other three are in before it arrives: no race decides who is
# last); report names it, trace has 80 wait slices on 4 tracks (checked by
# a JSON parser), plot renders to a PNG of the size it promises, metrics
# passes promtool. The history stays within its cap after 50,000 events;
# --no-history leaves no history; the readers write nothing.
. "$RB_TESTS_DIR/lib.sh"

root=$(cd "$RB_TESTS_DIR/.." && pwd)
hkey() { echo "rb:h:{$1}"; }

# A tool the check needs: in CI its absence is a failure, elsewhere a skip.
need() {
    command -v "$1" >/dev/null && return 0
    if [ "${CI:-}" = true ]; then
        not_ok "$2 needs $1 (Debian: $3)"
    else
        skip "$2: $1 not installed (Debian: $3)"
    fi
    return 1
}

name=$(fresh hist)
party() {
    local id=$1 r
    for r in $(seq 1 20); do
        # w3 arrives once the other three are in the open round.
        if [ "$id" = w3 ]; then wait_arrived "$name" 3 60 || return 1; fi
        rb wait --name "$name" --n 4 --id "$id" --timeout 60 || return 1
    done
}
pids=()
for id in w0 w1 w2 w3; do party "$id" & pids+=($!); done
fails=0
for p in "${pids[@]}"; do wait "$p" || fails=$((fails + 1)); done
expect_eq "4 parties x 20 rounds passed" 0 "$fails"

# --- report -----------------------------------------------------------------
json=$(rb report --name "$name" --json)
expect_eq "report --json exits 0" 0 $?
summary=$(python3 -c '
import json, sys
d = json.loads(sys.argv[1])
p = d["parties"]
print(d["rounds"], d["passed"], d["broken"], p[0]["id"],
      " ".join(sorted("%s:%d:%d" % (x["id"], x["rounds"], x["last"]) for x in p)),
      all(set(x["late_ms"]) >= {"p50", "p95", "max"} for x in p))
' "$json")
expect_eq "report: 20 rounds, all passed, w3 first, its counts" \
    "20 20 0 w3 w0:20:0 w1:20:0 w2:20:0 w3:20:20 True" "$summary"
text=$(rb report --name "$name")
expect_match "report (text) names the straggler" "straggler: w3 \(last in 20 of 20 passed rounds\)" "$text"
last=$(rb report --name "$name" --last 5 --json | python3 -c '
import json, sys; d = json.load(sys.stdin); print(d["rounds"], d["parties"][0]["rounds"])')
expect_eq "report --last 5: the last 5 rounds" "5 5" "$last"

# --- trace ------------------------------------------------------------------
rb trace --name "$name" > "$RB_TEST_TMP/trace.json"
expect_eq "trace exits 0" 0 $?
shape=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
x = [e for e in ev if e["ph"] == "X"]
ok = all(isinstance(e["ts"], int) and isinstance(e["dur"], int) and
         e["dur"] >= 0 and e["pid"] == 1 for e in x)
names = sorted(e["args"]["name"] for e in ev
               if e["ph"] == "M" and e["name"] == "thread_name")
print(len(x), len({e["tid"] for e in x}), " ".join(names), ok,
      sum(1 for e in x if e["args"]["last"]),
      {e["tid"] for e in x if e["args"]["last"]} ==
      {e["tid"] for e in ev if e["ph"] == "M" and e["args"]["name"] == "w3"})
' "$RB_TEST_TMP/trace.json" 2>&1)
expect_eq "trace: 80 wait slices on 4 named tracks, each round's last on w3's" \
    "80 4 w0 w1 w2 w3 True 20 True" "$shape"

# --- plot -------------------------------------------------------------------
rb plot --name "$name" > "$RB_TEST_TMP/plot.svg"
expect_eq "plot exits 0" 0 $?
if need rsvg-convert "plot renders" librsvg2-bin; then
    rsvg-convert "$RB_TEST_TMP/plot.svg" -o "$RB_TEST_TMP/plot.png"
    expect_eq "rsvg-convert renders plot's SVG" 0 $?
    size=$(python3 -c '
import struct, sys
d = open(sys.argv[1], "rb").read(24)
print(d[:8] == b"\x89PNG\r\n\x1a\n", *struct.unpack(">II", d[16:24]))
' "$RB_TEST_TMP/plot.png")
    # 1180 wide; 80 + 4 parties x 20 high (cmd_plot.c, doc/SEEING.md).
    expect_eq "the PNG is 1180 x 160" "True 1180 160" "$size"
fi

# --- metrics ----------------------------------------------------------------
rb metrics --name "$name" > "$RB_TEST_TMP/metrics.prom"
expect_eq "metrics exits 0" 0 $?
expect_match "metrics counts the 20 passed rounds" \
    "^rbarrier_rounds_passed_total\{name=\"$name\"\} 20$" "$(cat "$RB_TEST_TMP/metrics.prom")"
expect_match "metrics: 80 waits in the histogram" \
    "^rbarrier_recent_wait_seconds_count\{name=\"$name\"\} 80$" "$(cat "$RB_TEST_TMP/metrics.prom")"
if need promtool "metrics passes promtool check metrics" prometheus; then
    out=$(promtool check metrics < "$RB_TEST_TMP/metrics.prom" 2>&1)
    expect_eq "promtool check metrics: no complaint" "0:" "$?:$out"
fi

# --- a job and a lock ---------------------------------------------------------
job=$(fresh hjob)
rb run --name "$job" --n 2 --id a --restarts 1 --timeout 60 -- false 2>/dev/null &
jp=$!
rb run --name "$job" --n 2 --id b --restarts 1 --timeout 60 -- true 2>/dev/null
wait "$jp"
lock=$(fresh hlock)
rb lock --name "$lock" --id h1 -- true
rb lock --name "$lock" --id h2 -- true
jl=$(python3 -c '
import json, subprocess, sys
def rep(n): return json.loads(subprocess.check_output(sys.argv[1].split() + ["report", "--name", n, "--json"]))
j, l = rep(sys.argv[2])["job"], rep(sys.argv[3])["lock"]
print(len(j["attempts"]), j["restarts"], j["attempts"][0]["cause"],
      l["grants"], " ".join(h["id"] for h in l["holders"]))
' "$RBARRIER" "$job" "$lock" 2>&1)
expect_eq "report: the job's 2 attempts, 1 restart, broken by a command; 2 lock grants" \
    "2 1 command 2 h1 h2" "$jl"
if command -v promtool >/dev/null; then
    rb metrics --name "$job" --name "$lock" --name "$name" | promtool check metrics
    expect_eq "metrics of a job, a lock and a barrier passes promtool" "0" "${PIPESTATUS[1]}"
fi

# --- read only --------------------------------------------------------------
before=$(cmdstats)
for c in report trace plot; do rb "$c" --name "$name" >/dev/null; done
rb metrics --name "$name" --name "$job" >/dev/null
writes=$(diff <(echo "$before") <(cmdstats) | sed -n 's/^> cmdstat_\([a-z|]*\):calls.*/\1/p' |
         grep -vxE 'type|xrevrange|hgetall|client\|setname|select|ping|auth|hello' | tr '\n' ' ')
expect_eq "the readers send only reads" "" "$writes"

# --- the cap: 50,000 events, by calling arrive directly, pipelined --------------
cap=$(sed -n 's/^local HISTORY_CAP = \([0-9]*\)$/\1/p' "$root/lua/includes/history.lua")
sha=$(sh "$root/tools/embed-lua.sh" --expand "$root/lua/arrive-2.lua" | rcli -x SCRIPT LOAD)
big=$(fresh hcap)
# n = 1: each call is a round of its own, one event each (a fresh nonce,
# so none is a resend).
python3 -c '
import sys
sha, base = sys.argv[1], "rb:b:{%s}" % sys.argv[2]
def cmd(*a):
    return "*%d\r\n" % len(a) + "".join("$%d\r\n%s\r\n" % (len(x.encode()), x) for x in a)
out = sys.stdout
for i in range(50000):
    out.write(cmd("EVALSHA", sha, "2", base, base + ":nonce", "p", "n%d" % i,
                  "1", "10000", "3600", "60", "0", "", "", ""))
' "$sha" "$big" > "$RB_TEST_TMP/cap.resp"
piped=$(rcli --pipe < "$RB_TEST_TMP/cap.resp" 2>&1 | tail -1)
expect_match "50,000 arrivals sent, no error" "errors: 0, replies: 50000" "$piped"
len=$(rcli XLEN "$(hkey "$big")")
# MAXLEN ~ trims whole stream nodes: at most one node (100 entries by
# default) over the cap, and never less than the cap.
check "the history holds its cap ($cap), at most one node more: $len" \
    test "$len" -ge "$cap" -a "$len" -le $((cap + 100))
expect_eq "the counter kept all 50,000 passes" 50000 "$(rcli HGET "$(hkey "$big"):n" passed)"
ttl=$(rcli TTL "$(hkey "$big")")
check "the history expires with the name (ttl $ttl)" test "$ttl" -gt 0 -a "$ttl" -le 3600
t0=$(now_ms)
rounds=$(rb report --name "$big" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["rounds"])')
expect_eq "report reads the whole capped history" "$len" "$rounds"
diag "report of $len events took $(( $(now_ms) - t0 )) ms"

# --- --no-history -------------------------------------------------------------
quiet=$(fresh hoff)
rb wait --name "$quiet" --n 2 --id a --no-history --timeout 60 &
qp=$!
rb wait --name "$quiet" --n 2 --id b --no-history --timeout 60
wait "$qp"
expect_eq "--no-history: the rounds passed" 0 $?
expect_eq "--no-history leaves no history stream, no counters" "string 0" \
    "$(rcli TYPE "$(hkey "$quiet")") $(rcli EXISTS "$(hkey "$quiet"):n")"
expect_match "report says the history is off" "history is off" "$(rb report --name "$quiet")"
