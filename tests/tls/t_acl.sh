# ACL users and least privilege, against a private server:
#  - a user made with exactly the README's ACL line runs every subcommand
#    (a two-party wait with --timeout and heartbeats, status, reset, sync,
#    train, get, set, run, worker, demo --url), again after SCRIPT FLUSH;
#  - --user with the password in $REDISCLI_AUTH authenticates as that user
#    (CLIENT LIST says so), and no process's argv holds the password;
#  - CLIENT LIST during a wait shows the party's connection name;
#  - a user without the keys gets exit 1 and one line naming ~rb:* to grant.
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap kill_spawned EXIT

start_redis acl || { not_ok "start a private redis-server"; exit 1; }
RB_TEST_SOCK=$REDIS_SOCK
port=$REDIS_PORT
pw="pw-$RANDOM$RANDOM-S3cr3t"
line=$(acl_readme_line)
check "the README has an ACL line" test -n "$line"
# Word splitting is wanted: the line is a list of ACL rules.
# shellcheck disable=SC2086
expect_eq "the README's ACL line is accepted" OK \
    "$(rcli ACL SETUSER rbarrier ${line/>PASSWORD/>$pw})"
commands=$(printf '%s\n' "$line" | grep -oE '(-@all|\+[a-z|]+)' | tr '\n' ' ')
# shellcheck disable=SC2086
rcli ACL SETUSER nokeys on ">$pw" resetkeys '~other:*' $commands >/dev/null
# rcli as an admin, and the default user off: nothing passes by accident.
rcli ACL SETUSER admin on '>adminpw' '~*' '&*' '+@all' >/dev/null
rcli() { redis-cli -s "$RB_TEST_SOCK" --user admin --pass adminpw --no-auth-warning "$@"; }
rcli ACL SETUSER default off >/dev/null
expect_eq "the default user is off" "" "$(redis-cli -s "$RB_TEST_SOCK" PING 2>/dev/null | grep PONG)"
url=redis://127.0.0.1:$port/0

# as USER SUBCOMMAND ARGS...: run rbarrier as USER, password from the env
as() {
    local user=$1 cmd=$2; shift 2
    REDISCLI_AUTH=$pw RBARRIER_URL=$url $RBARRIER "$cmd" --user "$user" "$@"
}

every_subcommand() {
    local pass=$1 b p r score0 t clients
    b=$(fresh acl-b) p=$(fresh acl-p) r=$(fresh acl-run)

    spawn "$b.p1" env REDISCLI_AUTH="$pw" RBARRIER_URL="$url" \
        $RBARRIER wait --user rbarrier --name "$b" --n 2 --id p1 --timeout 30 --lease 1
    wait_arrived "$b" 1 || not_ok "$pass: the first party arrived"
    score0=$(rcli ZSCORE "rb:b:{$b}:$(rcli HGET "rb:b:{$b}" gen):in" p1)
    # A heartbeat renews the lease: the party's score moves forward.
    t=$(wait_until 10 _score_moved "$b" p1 "$score0" && echo yes)
    expect_eq "$pass: wait with --lease 1 sends heartbeats as the ACL user" yes "$t"
    if [ "$2" = 1 ]; then
        clients=$(rcli CLIENT LIST | grep -v 'user=admin ')
        expect_match "CLIENT LIST: the waiting party is logged in as rbarrier" \
            "user=rbarrier " "$clients"
        expect_match "CLIENT LIST: the waiting party's connection has its name" \
            "name=rbarrier:wait:$b:p1 .*user=rbarrier " "$clients"
        ps -eo args > "$RB_TEST_TMP/acl.ps"
        check "no process's command line holds the password" \
            test "$(grep -cF -- "$pw" "$RB_TEST_TMP/acl.ps")" = 0
        check "ps shows the waiting party" grep -q "wait --user rbarrier --name $b" "$RB_TEST_TMP/acl.ps"
    fi
    as rbarrier wait --name "$b" --n 2 --id p2 --timeout 30
    expect_eq "$pass: the second party passes" 0 $?
    await "$b.p1" 10
    expect_eq "$pass: the first party passes" 0 "$(code_of "$b.p1")"

    # --expect: a list of 3,000 ids is stored in two parts (expect-store).
    seq -f 'x%g' 3000 > "$RB_TEST_TMP/acl.ids"
    as rbarrier wait --name "$b-x" --n 3000 --expect @"$RB_TEST_TMP/acl.ids" --id x1 --timeout 1 2>/dev/null
    code=$? x=$(rcli --scan --pattern "rb:b:{$b-x}:x:*" | grep -v ":f$")
    expect_eq "$pass: wait --expect stores its list, then times out alone (124)" "124 3000" \
        "$code $(rcli SCARD "${x:-none}")"
    as rbarrier status --name "$b" >/dev/null
    expect_eq "$pass: status" 0 $?
    as rbarrier reset --name "$b" >/dev/null
    expect_eq "$pass: reset" 0 $?
    as rbarrier set --param "$p" --value 5 >/dev/null
    expect_eq "$pass: set" 0 $?
    expect_eq "$pass: get" 5 "$(as rbarrier get --param "$p")"
    expect_eq "$pass: sync" 5 "$(as rbarrier sync --param "$p" --worker w0)"
    as rbarrier train --param "$p" --worker w0 --by 2 >/dev/null
    expect_eq "$pass: train" 7 "$(as rbarrier get --param "$p")"
    expect_eq "$pass: run" ran "$(as rbarrier run --name "$b-run" --n 1 -- echo ran)"
    as rbarrier worker --worker 0 --workers 1 --iters 2 --run "$r" >/dev/null
    expect_eq "$pass: worker" 0 $?
    out=$(REDISCLI_AUTH=$pw $RBARRIER demo --user rbarrier --url "$url" --workers 2 --iters 3)
    expect_eq "$pass: demo --url, workers included" 0 $?
    expect_eq "$pass: demo lines" ok "$(demo_lines_check <(printf '%s\n' "$out") 2 3)"
}
_score_moved() {
    local s
    s=$(rcli ZSCORE "rb:b:{$1}:$(rcli HGET "rb:b:{$1}" gen):in" "$2")
    [ -n "$s" ] && [ "$s" != "$3" ]
}

every_subcommand "README line" 1
rcli SCRIPT FLUSH >/dev/null
every_subcommand "after SCRIPT FLUSH" 0

# A user who may run every command but not touch rbarrier's keys.
err=$(as nokeys wait --name "$(fresh acl-nokeys)" --n 1 2>&1 >/dev/null)
expect_eq "a user without the keys: wait exits 1" 1 $?
expect_eq "one line" 1 "$(printf '%s\n' "$err" | wc -l)"
expect_match "it names the key pattern to grant" 'grant the user ~rb:\*' "$err"
err=$(as nokeys get --param x 2>&1 >/dev/null)
expect_eq "a user without the keys: get exits 1" 1 $?
expect_match "get names the key pattern to grant" '^rbarrier: .*grant the user ~rb:\*$' "$err"
err=$(as nokeys get --param x --prefix jobs 2>&1 >/dev/null)
expect_match "with --prefix jobs: ~jobs:*" 'grant the user ~jobs:\*' "$err"

# A user without one command the scripts need.
# shellcheck disable=SC2086
rcli ACL SETUSER nozadd on ">$pw" resetkeys '~rb:*' $commands -zadd >/dev/null
err=$(as nozadd wait --name "$(fresh acl-nozadd)" --n 1 2>&1 >/dev/null)
expect_eq "a user without +zadd: exit 1" 1 $?
expect_match "it names what to grant" 'grant the user .*\+zadd' "$err"

# --user with a wrong password: Redis refuses, and the password is not shown.
err=$(REDISCLI_AUTH=wrong-S3cr3t RBARRIER_URL=$url $RBARRIER get --user rbarrier --param x 2>&1)
expect_eq "a wrong password: exit 1" 1 $?
case $err in *S3cr3t*) not_ok "the wrong password is not echoed ($err)" ;; *) ok "the wrong password is not echoed" ;; esac
err=$(env -u REDISCLI_AUTH RBARRIER_URL=$url $RBARRIER get --user rbarrier --param x 2>&1)
expect_eq "--user without any password: exit 2" 2 $?
expect_match "it says where a password goes" 'REDISCLI_AUTH' "$err"

# No message, JSON or not, quotes a password, wherever the URL came from.
leaks=""
for u in "user:S3cr3tPw@host" "redis://user:S3cr3tPw" "redis://user:S3cr3tPw@" \
         "redis://u:S3cr3tPw@h:x" "redis://u:S3cr3tPw@h/x" "redis://u:%zzS3cr3tPw@h" \
         "http://u:S3cr3tPw@h" "redis-sentinel://u:S3cr3tPw@h"; do
    for how in flag env json; do
        case $how in
            flag) err=$(rb get --param x --url "$u" 2>&1) ;;
            env)  err=$(RBARRIER_URL=$u rb get --param x 2>&1) ;;
            json) err=$(rb get --param x --url "$u" --json 2>&1) ;;
        esac
        code=$?
        [ "$code" = 2 ] || leaks="$leaks [$how $u: exit $code]"
        case $err in *S3cr3tPw*|*cr3tP*) leaks="$leaks [$how $u: $err]" ;; esac
    done
done
expect_eq "bad URLs: exit 2 and no password in any message (--url, \$RBARRIER_URL, --json)" "" "$leaks"
