# TLS (rediss://) against a redis-server that speaks only TLS (--port 0
# --tls-port), with certificates this run made (tests/tls/make-certs.sh):
#  1. every subcommand over rediss:// with --cacert (and $RBARRIER_CACERT,
#     --cacertdir, the host name localhost, a seed list); CLIENT LIST names
#     the party;
#  2. tls-auth-clients yes: passes with --cert/--key, exit 4 in one line
#     without them;
#  3. wrong CA, expired certificate, wrong host name: exit 4 with the reason,
#     at once (retrying cannot help); --insecure passes and warns;
#  4. mistakes: a plain URL with TLS flags (exit 2), a plain client on the
#     TLS port (exit 4, one line: use rediss://) and a TLS client on a plain
#     port (exit 4, one line);
#  5. rediss-sentinel://;
#  6. OpenSSL is loaded only for rediss://: neither the binary nor the
#     shared library links it, a plain URL works where libssl cannot be
#     loaded, and rediss:// there is bad input (exit 2, one line).
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
trap kill_spawned EXIT

tls_certs || { not_ok "make the test certificates with openssl"; exit 1; }
start_redis_tls tls || { not_ok "start a TLS redis-server"; exit 1; }
RB_TEST_SOCK=$REDIS_SOCK
port=$REDIS_PORT
export RBARRIER_URL=rediss://127.0.0.1:$port/0
ca=$RB_CERTS/ca.crt

# 1. Every subcommand.
b=$(fresh tls-b) p=$(fresh tls-p)
spawn "$b.p1" $RBARRIER wait --cacert "$ca" --name "$b" --n 2 --id p1 --timeout 30 --lease 1
wait_arrived "$b" 1 || not_ok "the first party arrived over TLS"
expect_match "CLIENT LIST during a wait shows the party's name" \
    "name=rbarrier:wait:$b:p1( |$)" "$(rcli CLIENT LIST)"
rb wait --cacert "$ca" --name "$b" --n 2 --id p2 --timeout 30
expect_eq "wait: the second party passes" 0 $?
await "$b.p1" 10
expect_eq "wait: the first party passes" 0 "$(code_of "$b.p1")"
expect_eq "wait: nothing on stderr" "" "$(err_of "$b.p1")"
rb status --cacert "$ca" --name "$b" >/dev/null
expect_eq "status" 0 $?
rb reset --cacert "$ca" --name "$b" >/dev/null
expect_eq "reset" 0 $?
rb set --cacert "$ca" --param "$p" --value 5 >/dev/null
expect_eq "set" 0 $?
expect_eq "get" 5 "$(rb get --cacert "$ca" --param "$p")"
expect_eq "sync" 5 "$(rb sync --cacert "$ca" --param "$p" --worker w0)"
rb train --cacert "$ca" --param "$p" --worker w0 --by 3 >/dev/null
expect_eq "train" 8 "$(rb get --cacert "$ca" --param "$p")"
rb worker --cacert "$ca" --worker 0 --workers 1 --iters 2 --run "$(fresh tls-run)" >/dev/null
expect_eq "worker" 0 $?
out=$(rb demo --cacert "$ca" --url "$RBARRIER_URL" --workers 2 --iters 3)
expect_eq "demo --url rediss://: its workers connect over TLS too" 0 $?
expect_eq "demo lines" ok "$(demo_lines_check <(printf '%s\n' "$out") 2 3)"
expect_eq "\$RBARRIER_CACERT instead of --cacert" 8 \
    "$(RBARRIER_CACERT=$ca rb get --param "$p")"
expect_eq "the host name localhost is verified too" 8 \
    "$(rb get --cacert "$ca" --url "rediss://localhost:$port" --param "$p")"
mkdir -p "$RB_TEST_TMP/cadir" && cp "$ca" "$RB_TEST_TMP/cadir/" &&
    openssl rehash "$RB_TEST_TMP/cadir" 2>/dev/null
expect_eq "--cacertdir" 8 "$(rb get --cacertdir "$RB_TEST_TMP/cadir" --param "$p")"

dead=$(free_port)
expect_eq "rediss:// seeds: a first seed that does not answer, then the TLS server" 8 \
    "$(rb get --cacert "$ca" --url "rediss://127.0.0.1:$dead,127.0.0.1:$port/0" --param "$p")"

# tls_fails WHAT REGEX ARGS...: exit 4, one line matching REGEX, quickly
tls_fails() {
    local what=$1 re=$2 t0 err code ms; shift 2
    t0=$(now_ms)
    err=$(rb "$@" 2>&1 >/dev/null)
    code=$?
    ms=$(since "$t0")
    expect_eq "$what: exit 4" 4 "$code"
    expect_eq "$what: one line" 1 "$(printf '%s\n' "$err" | wc -l)"
    expect_match "$what: says why" "^rbarrier: $re" "$err"
    check "$what: fails at once, not after retrying ($ms ms)" test "$ms" -lt 2500
}

# 2. A server that wants client certificates.
TLS_AUTH_CLIENTS=yes start_redis_tls mtls || { not_ok "start an mTLS redis-server"; exit 1; }
murl=rediss://127.0.0.1:$REDIS_PORT
expect_eq "tls-auth-clients yes: --cert/--key pass" 0 \
    "$(rb get --url "$murl" --cacert "$ca" --cert "$RB_CERTS/client.crt" \
        --key "$RB_CERTS/client.key" --param x)"
tls_fails "tls-auth-clients yes without --cert" ".*TLS: .*certificate required \(the server wants a client certificate: --cert and --key\)$" \
    get --url "$murl" --cacert "$ca" --param x

# 3. Certificates that must not verify.
for bad in wrongca:"unable to get local issuer certificate" \
           expired:"certificate has expired" \
           wronghost:"IP address mismatch"; do
    cert=${bad%%:*} reason=${bad#*:}
    TLS_CERT=$cert start_redis_tls "$cert" || { not_ok "start a server with the $cert certificate"; continue; }
    burl=rediss://127.0.0.1:$REDIS_PORT
    tls_fails "$cert certificate" "TLS: certificate verify failed: $reason \(127\.0\.0\.1:$REDIS_PORT\)$" \
        wait --url "$burl" --cacert "$ca" --name x --n 1 --connect-timeout 5
    if [ "$cert" = wronghost ]; then
        tls_fails "wrong host name localhost" "TLS: certificate verify failed: hostname mismatch" \
            get --url "rediss://localhost:$REDIS_PORT" --cacert "$ca" --param x
        expect_eq "--sni names the host the certificate is for" 0 \
            "$(rb get --url "$burl" --cacert "$ca" --sni example.invalid --param x)"
    fi
    err=$(rb wait --url "$burl" --insecure --name "$(fresh insecure)" --n 1 2>&1)
    expect_eq "$cert: --insecure passes" 0 $?
    expect_match "$cert: --insecure warns on stderr" \
        "^rbarrier: warning: --insecure: the server's TLS certificate is not checked" "$err"
done
tls_fails "no --cacert: the system's trust store does not know the test CA" \
    "TLS: certificate verify failed: (unable to get local issuer certificate|self-signed certificate in certificate chain)" \
    get --url "$RBARRIER_URL" --param x

# 4. Mistakes.
err=$(rb get --url "redis://127.0.0.1:$port" --cacert "$ca" --param x 2>&1)
expect_eq "--cacert with redis:// is bad input" 2 $?
expect_match "... and says so" "^rbarrier: --cacert needs a rediss://" "$err"
t0=$(now_ms)
err=$(rb get --url "redis://127.0.0.1:$port" --param x 2>&1)
expect_eq "a plain client on the TLS port: exit 4" 4 $?
expect_eq "... in one line" 1 "$(printf '%s\n' "$err" | wc -l)"
expect_match "... that says to use rediss://" \
    "^rbarrier: .*127\.0\.0\.1:$port: the server speaks TLS: use rediss://$" "$err"
check "... at once, not after retrying ($(since "$t0") ms)" test "$(since "$t0")" -lt 1500
err=$(rb get --url "redis://127.0.0.1:$port" --param x --connect-timeout 30 2>&1)
expect_match "... with --connect-timeout too (retrying cannot help)" \
    "the server speaks TLS: use rediss://$" "$err"
start_redis plain || not_ok "start a plain redis-server"
plain_port=$REDIS_PORT
tls_fails "a TLS client on a plain port" "TLS: .*\(is that port a TLS port\?\)$" \
    get --url "rediss://127.0.0.1:$REDIS_PORT" --cacert "$ca" --param x --connect-timeout 1

# 5. rediss-sentinel://: a sentinel that speaks TLS, watching a TLS master
#    (tls-replication yes: the sentinel reaches the master by TLS too).
start_redis_tls sentmaster || not_ok "start a TLS master"
mport=$REDIS_PORT sport=$(free_port) sdir=$RB_TEST_TMP/sentinel-tls
mkdir -p "$sdir"
printf '%s\n' "port 0" "tls-port $sport" "bind 127.0.0.1" \
    "tls-cert-file $RB_CERTS/server.crt" "tls-key-file $RB_CERTS/server.key" \
    "tls-ca-cert-file $RB_CERTS/ca.crt" "tls-replication yes" \
    "tls-auth-clients no" "sentinel monitor tlsmain 127.0.0.1 $mport 1" \
    > "$sdir/sentinel.conf"
tls_ping() { redis-cli --tls --cacert "$ca" -p "$1" PING 2>/dev/null | grep -q PONG; }
if server_start "$sdir" tls_ping "$sport" -- "$sdir/sentinel.conf" --sentinel; then
    surl="rediss-sentinel://127.0.0.1:$sport#tlsmain"
    rb set --url "$surl" --cacert "$ca" --param "$p" --value 11 >/dev/null
    expect_eq "rediss-sentinel://: set through the sentinel's master" 0 $?
    expect_eq "rediss-sentinel://: the value is on the TLS master" 11 \
        "$(redis-cli -s "$REDIS_SOCK" GET "rb:p:{$p}")"
    rb wait --url "$surl" --cacert "$ca" --name "$(fresh tls-sent)" --n 1
    expect_eq "rediss-sentinel://: wait" 0 $?
else
    not_ok "start a TLS sentinel"
fi

# 6. No OpenSSL for a plain URL. Where libssl cannot be loaded (a mount
#    namespace with an empty file over it), redis:// must still work.
build=${RB_BUILD:-$RB_TESTS_DIR/../build}
for f in "$build/rbarrier" "$build/librbarrier.so"; do
    needed=$(readelf -d "$f" | grep NEEDED)
    check "$(basename "$f") has NEEDED entries" test -n "$needed"
    expect_eq "$(basename "$f") does not link libssl or libcrypto" "" \
        "$(printf '%s\n' "$needed" | grep -E 'lib(ssl|crypto)\.so')"
done
libssl=$(ldd "$(command -v openssl)" | awk '$1 ~ /^libssl\.so/ { print $3 }')
# without_libssl CMD...: run CMD where libssl is an empty file.
without_libssl() {
    # shellcheck disable=SC2016 # expanded by the inner shell
    unshare --mount sh -c 'mount --bind /dev/null "$0" && exec "$@"' "$libssl" "$@"
}
if [ -f "$libssl" ] && without_libssl true 2>/dev/null; then
    pp=$(fresh nossl)
    redis-cli -p "$plain_port" SET "rb:p:{$pp}" 3 >/dev/null
    out=$(without_libssl $RBARRIER get --url "redis://127.0.0.1:$plain_port" --param "$pp" 2>&1)
    expect_eq "without libssl: get over redis:// works" "0:3" "$?:$out"
    without_libssl $RBARRIER wait --url "redis://127.0.0.1:$plain_port" \
        --name "$(fresh nossl)" --n 1 2>/dev/null
    expect_eq "without libssl: wait over redis:// works" 0 $?
    err=$(without_libssl $RBARRIER get --url "$RBARRIER_URL" --cacert "$ca" --param "$p" 2>&1)
    expect_eq "without libssl: rediss:// is bad input (exit 2)" 2 $?
    expect_eq "... in one line" 1 "$(printf '%s\n' "$err" | wc -l)"
    expect_match "... naming the library it needs" \
        "^rbarrier: TLS: rediss:// needs OpenSSL \(libssl\.so\.[0-9.]+\), which cannot be loaded: .+" "$err"
    expect_eq "with libssl again: the same rediss:// call passes" 8 \
        "$(rb get --cacert "$ca" --param "$p")"
else
    skip "no libssl hidden: needs unshare --mount and a libssl ('$libssl')"
fi
