# Bad input: each case exits 2 with one clear line on stderr (no raw
# control character in it) and sends nothing to Redis: not one command in
# INFO commandstats (not only an unchanged DBSIZE). Unreachable Redis: exit
# 4, one line.
. "$RB_TESTS_DIR/lib.sh"

long_name=$(printf 'x%.0s' $(seq 1 201))
nl=$'a\nb'
ctl=$'a\001b'
esc=$'\033[2J\033[31m'

cases=0

# expect_usage WHAT EXPECTED-REGEX ARGS...
expect_usage() {
    local what=$1 re=$2; shift 2
    local before after err code
    cases=$((cases + 1))
    before=$(cmdstats)
    err=$(rb "$@" 2>&1 >/dev/null)
    code=$?
    after=$(cmdstats)
    if [ "$code" -ne 2 ]; then not_ok "$what: exit 2 (got $code: $err)"; return; fi
    if [ "$(printf '%s\n' "$err" | wc -l)" -ne 1 ]; then not_ok "$what: one line (got: $err)"; return; fi
    if printf '%s' "$err" | LC_ALL=C grep -q '[[:cntrl:]]'; then not_ok "$what: a raw control character in: $(printf '%q' "$err")"; return; fi
    if ! printf '%s' "$err" | grep -Eq -- "^rbarrier: .*$re"; then not_ok "$what: message /$re/ (got: $err)"; return; fi
    if [ "$before" != "$after" ]; then
        not_ok "$what: no command reached Redis ($(diff <(echo "$before") <(echo "$after") | grep '^>' | head -3 | tr '\n' ' '))"
        return
    fi
    ok "$what: exit 2, one line, no command sent"
}

# The probe can fail: a command that does reach Redis shows up in it.
before=$(cmdstats)
rb get --param "$(fresh probe)" >/dev/null
check "commandstats sees a command that reached Redis" test "$before" != "$(cmdstats)"

# Keys already present must not matter: make DBSIZE non-zero first.
rb wait --name "$(fresh seed)" --n 1

expect_usage "missing --name"        "missing option --name"        wait --n 2
expect_usage "empty --name"          "must not be empty"            wait --name "" --n 2
expect_usage "name with {"           "must not contain '\{'"        wait --name "a{b" --n 2
expect_usage "name with }"           "must not contain '\}'"        wait --name "a}b" --n 2
expect_usage "name with a space"     "whitespace"                   wait --name "a b" --n 2
expect_usage "name with a tab"       "whitespace"                   wait --name $'a\tb' --n 2
expect_usage "name with a newline"   "control"                      wait --name "$nl" --n 2
expect_usage "name with a control"   "control"                      wait --name "$ctl" --n 2
expect_usage "name over 200 bytes"   "201 bytes long; the limit is 200" wait --name "$long_name" --n 2
expect_usage "--n 0"                 "--n must be 1..100000, not '0'" wait --name ok --n 0
expect_usage "--n -3"                "--n must be 1..100000, not '-3'" wait --name ok --n -3
expect_usage "--n abc"               "--n must be a whole number, not 'abc'" wait --name ok --n abc
expect_usage "--n over 100000"       "--n must be 1..100000"         wait --name ok --n 100001
expect_usage "missing --n"           "--n is required"               wait --name ok
expect_usage "--timeout -1"          "--timeout must be a duration"  wait --name ok --n 2 --timeout -1
expect_usage "--timeout abc"         "--timeout must be a duration"  wait --name ok --n 2 --timeout abc
expect_usage "--lease 0"             "--lease must be 0.100s..1d"    wait --name ok --n 2 --lease 0
expect_usage "--ttl 0"               "--ttl must be"                 wait --name ok --n 2 --ttl 0
expect_usage "--id with a comma"     "must not contain ','"          wait --name ok --n 2 --id a,b
expect_usage "unknown flag"          "--bogus"                       wait --name ok --n 2 --bogus
expect_usage "stray argument"        "unexpected argument|invalid"   wait --name ok --n 2 extra
expect_usage "bad URL scheme"        "unsupported URL scheme"        wait --name ok --n 2 --url http://127.0.0.1:6379
expect_usage "port 99999"            "bad port in URL"              wait --name ok --n 2 --url redis://127.0.0.1:99999
expect_usage "bad \$RBARRIER_URL"    "no scheme"                     wait --name ok --n 2 --url localhost
expect_usage "prefix with a brace"   "prefix must not contain"       wait --name ok --n 2 --prefix "a{"
expect_usage "unknown command"       "unknown command 'frobnicate'"  frobnicate
expect_usage "status without name"   "missing option --name"         status
expect_usage "reset bad name"        "must not contain"              reset --name "x y"
expect_usage "train --by abc"        "--by 'abc' is not a decimal number" train --param p --worker 0 --by abc
expect_usage "set --value 1x"        "--value '1x' is not a decimal number" set --param p --value 1x
expect_usage "sync without worker"   "missing option --worker"      sync --param p
expect_usage "worker index too big"  "--worker must be 0..3"         worker --worker 4 --workers 4
expect_usage "demo --workers 0"      "--workers must be 1..1000"     demo --workers 0
# Help passes no barrier: it exits 0 only when it is all that was asked.
expect_usage "help after real options" "-h takes no other arguments" wait --name ok --n 1 -h
expect_usage "--help after real options" "--help takes no other arguments" wait --name ok --n 1 --help
expect_usage "-h HOST (redis-cli habit)" "unexpected argument" wait --name ok --n 1 -h 127.0.0.1
expect_usage "parse error wins over help" "unknown option '--bogus'" wait --name ok --n 1 --bogus -h
expect_usage "no abbreviations: --na=x"  "unknown option '--na'"       wait --na=ok --n 1
expect_usage "no abbreviations: --time"  "unknown option '--time'"     wait --name ok --n 1 --time 5
expect_usage "flag given a value"       "--json takes no value"        wait --name ok --n 1 --json=yes
expect_usage "--n with a leading blank" "--n must be a whole number"   wait --name ok --n " 1"
expect_usage "--n with a trailing blank" "--n must be a whole number"  wait --name ok --n "1 "
expect_usage "help with a stray word"   "help takes one command name"  help wait extra
expect_usage "unknown command suggests" "did you mean 'wait'"          wiat --name ok --n 1
expect_usage "--version with an argument" "takes no arguments"         --version extra
# Numbers: digits only, no blanks, signs, fractions or other bases.
expect_usage "--n 1.5"                 "--n must be a whole number"   wait --name ok --n 1.5
expect_usage "--n 0x10"                "--n must be a whole number"   wait --name ok --n 0x10
expect_usage "--n +2"                  "--n must be a whole number"   wait --name ok --n +2
expect_usage "--n empty"               "--n must not be empty"        wait --name ok --n ""
expect_usage "--n huge"                "--n must be 1..100000"         wait --name ok --n 99999999999999999999
# Durations as timeout(1) takes them, bounds checked where converted.
expect_usage "--timeout 5x"            "--timeout must be a duration"  wait --name ok --n 2 --timeout 5x
expect_usage "--timeout 1.5.2"         "--timeout must be a duration"  wait --name ok --n 2 --timeout 1.5.2
expect_usage "--timeout -1s"           "--timeout must be a duration"  wait --name ok --n 2 --timeout -1s
expect_usage "--timeout ' 5'"          "--timeout must be a duration"  wait --name ok --n 2 --timeout " 5"
expect_usage "--timeout '5 '"          "--timeout must be a duration"  wait --name ok --n 2 --timeout "5 "
expect_usage "--timeout 1e3"           "--timeout must be a duration"  wait --name ok --n 2 --timeout 1e3
expect_usage "--timeout past its maximum" "--timeout must be 0..365d"  wait --name ok --n 2 --timeout 366d
expect_usage "--lease 7000000 (past 1d)" "--lease must be 0.100s..1d"  wait --name ok --n 2 --lease 7000000
expect_usage "--lease 0.05"            "--lease must be 0.100s..1d"    wait --name ok --n 2 --lease 0.05
expect_usage "--ttl 0.5"               "--ttl must be"                 wait --name ok --n 2 --ttl 0.5
expect_usage "--ttl past its maximum"  "--ttl must be"                 wait --name ok --n 2 --ttl 366d
expect_usage "worker --timeout 5x"     "--timeout must be a duration"  worker --worker 0 --workers 2 --timeout 5x
expect_usage "worker --lease 2d"       "--lease must be 0.100s..1d"    worker --worker 0 --workers 2 --lease 2d
# Escaped, one line: nothing echoed can break the line or drive the terminal.
expect_usage "unknown option with a newline" "unknown option '--a[\\]nb'" wait --name ok --n 2 "--$nl"
expect_usage "unknown command with escapes" "unknown command '[\\]x1b\[2J" "$esc"
expect_usage "stray argument with a control" "unexpected argument"     wait --name ok --n 2 "$ctl"
expect_usage "URL with an escape"      "URL"                           wait --name ok --n 2 --url "redis://$esc"
# Parameters: one spelling per number, 64-bit integers.
expect_usage "train --by 007"          "canonical"                     train --param p --worker 0 --by 007
expect_usage "train --by 1e5"          "not a decimal number"          train --param p --worker 0 --by 1e5
expect_usage "train --by past 64 bits" "64-bit integer range"          train --param p --worker 0 --by 9223372036854775808
expect_usage "set --value -0"          "canonical"                     set --param p --value -0
expect_usage "set --value empty"       "--value must not be empty"     set --param p --value ""
expect_usage "set without --value"     "missing option --value"        set --param p
expect_usage "get --param with a space" "whitespace"                   get --param "a b"
expect_usage "sync --worker with a comma" "must not contain ','"       sync --param p --worker a,b
expect_usage "train without --worker"  "missing option --worker"       train --param p
# demo and worker.
expect_usage "demo --workers 1001"     "--workers must be 1..1000"     demo --workers 1001
expect_usage "demo --iters 0"          "--iters must be 1..100000"     demo --iters 0
expect_usage "demo --check of a missing file" "--check: cannot open"   demo --check "$RB_TEST_TMP/nothing-here"
expect_usage "worker --workers 0"      "--workers must be 1..100000"   worker --worker 0 --workers 0
expect_usage "worker --worker -1"      "--worker must be 0..3"         worker --worker -1 --workers 4
expect_usage "worker --run with a brace" "--run must not contain"      worker --worker 0 --workers 1 --run "a{"
# status and reset.
expect_usage "status --name empty"     "must not be empty"             status --name ""
expect_usage "status stray argument"   "unexpected argument"           status --name ok extra
expect_usage "reset without --name"    "missing option --name"         reset
expect_usage "reset --json=1"          "--json takes no value"         reset --name ok --json=1
# The history's readers (report, trace, plot, metrics) and --no-history.
expect_usage "report without --name"   "missing option --name"         report
expect_usage "report --last 0"         "--last must be"                report --name ok --last 0
expect_usage "trace --last x"          "--last must be"                trace --name ok --last x
expect_usage "plot --name with a brace" "must not contain"             plot --name "a}"
expect_usage "metrics without --name"  "missing option --name"         metrics
expect_usage "metrics --name twice"    "--name ok is given twice"      metrics --name ok --name ok
expect_usage "metrics a bad second --name" "whitespace"                metrics --name ok --name "a b"
expect_usage "wait --no-history=1"     "--no-history takes no value"   wait --name ok --n 1 --no-history=1
check "the bad-input table has at least 60 cases ($cases)" test "$cases" -ge 60

# --json: a usage error is one JSON object on stdout too.
js=$(rb wait --name ok --n 0 --json 2>/dev/null)
expect_eq "usage error under --json: exit 2, one JSON object" \
    '{"outcome":"error","reason":"--n must be 1..100000, not '"'0'"'","exit":2}' "$js"

# A word that is one of the command's own options is a forgotten value,
# not a value; a misspelt flag gets a suggestion.
expect_usage "--name --json" "--name needs a value, not the option --json" wait --name --json --n 2
expect_usage "--n -q" "--n needs a value, not the option -q" wait --name x --n -q
expect_usage "--param --worker" "--param needs a value, not the option --worker" sync --param --worker w0
expect_usage "--once --timeout" "--once needs a value, not the option --timeout" wait --name x --n 1 --once --timeout 5
expect_usage "--timout" "unknown option '--timout' \(did you mean --timeout\?\)" wait --name x --n 2 --timout 5
expect_usage "--nmae" "did you mean --name\?" status --nmae x
expect_usage "--kill-after without --once" "--kill-after needs --once" wait --name x --n 1 --kill-after 5
expect_usage "--kill-after 0" "--kill-after must be" run --name x --n 1 --kill-after 0 -- true
# Other words starting with '-' are values.
p=$(fresh neg)
rb set --param "$p" --value -3 >/dev/null
expect_eq "--value -3 is a value" "-3" "$(rb get --param "$p")"
expect_eq "--by -1 is a value" "-4" "$(rb train --param "$p" --worker w0 --by -1 | sed 's/.*global //')"
expect_eq "--name=--json is a value when asked so" 0 "$(rb wait --name=--json --n 1 >/dev/null 2>&1; echo $?)"

# TLS flags naming a missing file or directory: bad input before any
# connection (the URL's port has no TLS listener; no attempt is made).
tls_url="rediss://127.0.0.1:${RB_TEST_PORT:-6379}"
expect_usage "--cacert missing" "--cacert: cannot read '/nonexistent/ca.pem'" get --param x --url "$tls_url" --cacert /nonexistent/ca.pem
expect_usage "--cert missing" "--cert: cannot read" get --param x --url "$tls_url" --cert /nonexistent/c.pem --key /nonexistent/k.pem
expect_usage "--cacertdir not a directory" "--cacertdir: '/etc/hostname' is not a directory" get --param x --url "$tls_url" --cacertdir /etc/hostname
expect_usage "--key is a directory" "--key: '/tmp' is a directory" wait --name x --n 1 --url "$tls_url" --cert /etc/hostname --key /tmp
err=$(RBARRIER_CACERT=/nonexistent/ca.pem rb get --param x --url "$tls_url" 2>&1)
expect_eq "\$RBARRIER_CACERT missing: exit 2" 2 $?
expect_match "... naming the variable" "RBARRIER_CACERT: cannot read" "$err"

# Help alone still exits 0, in each spelling.
for args in "wait --help" "wait -h" "help wait" "help" "--help" "-h"; do
    rb $args >/dev/null 2>&1
    expect_eq "'rbarrier $args' exits 0" 0 $?
done
expect_eq "-V prints the version" "rbarrier $(rb --version | cut -d' ' -f2)" "$(rb -V)"

# No command at all: usage on stderr, exit 2.
rb >/dev/null 2>&1
expect_eq "no command: exit 2" 2 $?

# Unreachable: nothing listening. Exit 4 within the connect timeout.
port=$(free_port)
t0=$(now_ms)
err=$(rb wait --name ok --n 2 --url "redis://127.0.0.1:$port" 2>&1)
code=$?
elapsed=$(( $(now_ms) - t0 ))
expect_eq "unreachable TCP: exit 4" 4 "$code"
expect_match "unreachable: names the address" "^rbarrier: cannot reach Redis at 127\.0\.0\.1:$port: " "$err"
expect_eq "unreachable: one line" 1 "$(printf '%s\n' "$err" | wc -l)"
check "unreachable: within the connect timeout (${elapsed} ms)" test "$elapsed" -lt 2500
err=$(rb status --name ok --url "unix://$RB_TEST_TMP/nothing.sock" 2>&1)
expect_eq "unreachable unix socket: exit 4" 4 $?
expect_match "unreachable unix socket: message" "cannot reach Redis at unix://" "$err"

# A wrong password is Redis's error: exit 1, one line.
err=$(REDISCLI_AUTH=wrong rb wait --name ok --n 1 2>&1)
expect_eq "AUTH refused: exit 1" 1 $?
expect_match "AUTH refused: says so" "Redis refused AUTH" "$err"
