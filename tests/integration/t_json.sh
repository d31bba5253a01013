# One JSON schema for every subcommand: each --json output, in success and
# in each failure, is one JSON object per line (RFC 8259, as python3's
# json module takes it) that uses only the field names the "JSON output" table of
# doc/REFERENCE.md documents, with an outcome, an exit that matches the exit
# status, and a reason (without a "rbarrier:" or name prefix) exactly when
# the outcome is not ok.
. "$RB_TESTS_DIR/lib.sh"

readme=$RB_TESTS_DIR/../doc/REFERENCE.md
fields=$(awk '/^## JSON output/ { on = 1; next } on && /^#/ { on = 0 }
              on && /^\| `[a-z_]+` \|/ { split($0, c, "`"); print c[2] }' "$readme" | tr '\n' ' ')
check "doc/REFERENCE.md documents the JSON fields (${fields})" test "$(wc -w <<<"$fields")" -ge 10

# schema_ok WHAT EXPECTED-EXIT EXPECTED-OUTCOME CMD...: run CMD, check its
# stdout lines and its exit status.
schema_ok() {
    local what=$1 want_exit=$2 want_outcome=$3; shift 3
    local out code verdict
    out=$("$@" 2>/dev/null)
    code=$?
    verdict=$(printf '%s\n' "$out" | python3 -c '
import json, sys
fields = set(sys.argv[1].split())
want_exit, want_outcome = int(sys.argv[2]), sys.argv[3]
lines = sys.stdin.read().split("\n")
if lines and lines[-1] == "":
    lines.pop()
if not lines:
    sys.exit("no output")
for i, line in enumerate(lines):
    try:
        obj = json.loads(line)
    except ValueError as e:
        sys.exit("line %d is not JSON (%s): %r" % (i + 1, e, line[:200]))
    if not isinstance(obj, dict):
        sys.exit("line %d is not an object" % (i + 1))
    unknown = sorted(set(obj) - fields)
    if unknown:
        sys.exit("undocumented fields %s in %s" % (unknown, line[:200]))
    if "members" in obj and not (isinstance(obj["members"], list) and
                                 all(isinstance(m, dict) for m in obj["members"])):
        sys.exit("members is not an array of objects")
last = json.loads(lines[-1])
if last.get("outcome") != want_outcome:
    sys.exit("outcome %r, expected %r" % (last.get("outcome"), want_outcome))
if last.get("exit") != want_exit:
    sys.exit("exit field %r, expected %d" % (last.get("exit"), want_exit))
if (want_outcome == "ok") == ("reason" in last):
    sys.exit("reason present: %r with outcome %r" % ("reason" in last, want_outcome))
reason = last.get("reason", "")
if not isinstance(reason, str) or reason.startswith("rbarrier") or "\n" in reason:
    sys.exit("bad reason %r" % reason)
for k in ("name", "param"):
    if isinstance(last.get(k), str) and last[k] and reason.startswith(last[k] + ":"):
        sys.exit("reason starts with the %s: %r" % (k, reason))
print("ok")
' "$fields" "$want_exit" "$want_outcome" 2>&1)
    if [ "$code" -ne "$want_exit" ]; then
        not_ok "$what: exit $want_exit (got $code: $(head -c 300 <<<"$out"))"
    elif [ "$verdict" != ok ]; then
        not_ok "$what: $verdict"
    else
        ok "$what: exit $want_exit, outcome $want_outcome, documented fields"
    fi
}

down="unix://$RB_TEST_TMP/nobody.sock"
b=$(fresh jb)
p=$(fresh jp)

# status and reset
schema_ok "status of an unknown barrier"   0 ok        rb status --name "$b" --json
rb wait --name "$b" --n 1 >/dev/null
schema_ok "status after a round"           0 ok        rb status --name "$b" --json
schema_ok "status: bad usage"              2 error     rb status --name "a b" --json
schema_ok "status: Redis unreachable"      4 error     rb status --name "$b" --url "$down" --json
schema_ok "reset"                          0 ok        rb reset --name "$b" --json
schema_ok "reset: bad usage"               2 error     rb reset --json
schema_ok "reset: Redis unreachable"       4 error     rb reset --name "$b" --url "$down" --json

# locks
schema_ok "lock"                           0 ok        rb lock --name "$b" --json -- true
schema_ok "lock: the command's status"     7 command-failed rb lock --name "$b" --json -- sh -c 'exit 7'
# A command's status that looks like one of rbarrier's own codes is still
# the command's: the outcome is rbarrier's verdict, not read from the code.
schema_ok "lock: a command exiting 3"      3 command-failed rb lock --name "$b" --json -- sh -c 'exit 3'
schema_ok "lock: a command exiting 124"    124 command-failed rb lock --name "$b" --json -- sh -c 'exit 124'
schema_ok "lock: a command exiting 130"    130 command-failed rb lock --name "$b" --json -- sh -c 'exit 130'
schema_ok "run: a command exiting 4"       4 command-failed rb run --name "$b" --n 1 --json -- sh -c 'exit 4'
schema_ok "wait --once: command exiting 3" 3 command-failed rb wait --name "$b" --n 1 --json --once 'exit 3'
schema_ok "lock: bad usage"                2 error     rb lock --name "$b" --max 0 --json -- true
schema_ok "lock: Redis unreachable"        4 error     rb lock --name "$b" --url "$down" --json -- true
schema_ok "status of a name with a lock"   0 ok        rb status --name "$b" --json
schema_ok "reset --lock"                   0 ok        rb reset --name "$b" --lock --json

# parameters
schema_ok "set"                            0 ok        rb set --param "$p" --value 41 --json
schema_ok "get"                            0 ok        rb get --param "$p" --json
schema_ok "sync"                           0 ok        rb sync --param "$p" --worker w --json
schema_ok "train"                          0 ok        rb train --param "$p" --worker w --json
schema_ok "train --by 0.5"                 0 ok        rb train --param "$p" --worker w --by 0.5 --json
schema_ok "get of a never-set param"       0 ok        rb get --param "$(fresh never)" --json
schema_ok "set: bad usage"                 2 error     rb set --param "$p" --value 007 --json
schema_ok "train: bad usage"               2 error     rb train --param "$p" --json
schema_ok "get: Redis unreachable"         4 error     rb get --param "$p" --url "$down" --json
rb set --param "$p" --value 9223372036854775807
schema_ok "train: overflow (Redis error)"  1 error     rb train --param "$p" --worker w --json
rcli SET "rb:p:{$p}" $'\xff\x01"\\' >/dev/null
schema_ok "get of a hostile value"         0 ok        rb get --param "$p" --json
rcli DEL "rb:p:{$p}" >/dev/null
rcli RPUSH "rb:p:{$p}" x >/dev/null
schema_ok "sync of a wrong type (Redis error)" 1 error rb sync --param "$p" --worker w --json
schema_ok "get of a wrong type (Redis error)"  1 error rb get --param "$p" --json

# worker and demo
r=$(fresh jw)
schema_ok "worker"                         0 ok        rb worker --worker 0 --workers 1 --iters 3 --run "$r" --json
schema_ok "worker: bad usage"              2 error     rb worker --worker 2 --workers 2 --json
schema_ok "worker: its timeout"            124 timeout rb worker --worker 0 --workers 2 --iters 1 --run "$(fresh jt)" --timeout 0.3 --json
schema_ok "demo"                           0 ok        rb demo --workers 2 --iters 3 --url "$RB_URL" --json
schema_ok "demo: bad usage"                2 error     rb demo --workers 0 --json
printf 'worker  0, local_param  0 global_param  1\n' > "$RB_TEST_TMP/json-check"
schema_ok "demo --check: ok"               0 ok        rb demo --check "$RB_TEST_TMP/json-check" --workers 1 --iters 1 --json
schema_ok "demo --check: a problem"        1 error     rb demo --check "$RB_TEST_TMP/json-check" --workers 2 --iters 1 --json

# wait and run: their own tests cover each outcome; here one success and
# the usage error every subcommand shares.
schema_ok "wait"                           0 ok        rb wait --name "$(fresh jwait)" --n 1 --json
schema_ok "wait: bad usage"                2 error     rb wait --name x --n 0 --json
schema_ok "wait: own timeout"             124 timeout rb wait --name "$(fresh jwto)" --n 2 --timeout 0.2 --json
schema_ok "run: bad usage"                 2 error     rb run --name x --n 0 --json -- true
schema_ok "unknown option, any command"    2 error     rb get --param x --bogus --json
