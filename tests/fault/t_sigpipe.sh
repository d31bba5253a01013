# A write into a connection the server has shut: the kernel would raise SIGPIPE,
# which must not kill rbarrier silently (exit 141, no message). The library
# writes with MSG_NOSIGNAL, so the write fails with EPIPE and it handles it
# as a dropped connection: it reconnects and sends again.
# The "server" is a stand-in on a unix socket. On each connection it reads
# the first command, shuts its reading side (from then on every write of
# the client fails with EPIPE), and answers: NOSCRIPT to an EVALSHA, so the
# client's next write (the EVAL) goes into the shut socket; an error to
# anything else, so that the retried EVAL on a new connection ends the
# command with exit 1 and the stand-in's message.
. "$RB_TESTS_DIR/lib.sh"
. "$RB_TESTS_DIR/fault/lib_fault.sh"
fake=
trap 'kill_spawned; [ -n "$fake" ] && kill "$fake" 2>/dev/null' EXIT

sock=$RB_TEST_TMP/shut.sock
perl -MIO::Socket::UNIX -MSocket -e '
    my $l = IO::Socket::UNIX->new(Type => SOCK_STREAM, Local => $ARGV[0], Listen => 16)
        or die "listen: $!";
    my @held;
    while (my $c = $l->accept) {
        my $got = "";
        sysread($c, $got, 65536);
        # The connection handshake (CLIENT SETNAME) is answered as Redis
        # does; the first command after it meets the shut socket.
        while ($got =~ /^\*\d+\r\n\$6\r\nCLIENT\r\n/i && $got !~ /EVAL|SET\r|\$3\r\nSET/) {
            syswrite($c, "+OK\r\n");
            $got = "";
            sysread($c, $got, 65536) or last;
        }
        shutdown($c, 0);
        syswrite($c, $got =~ /EVALSHA/ ? "-NOSCRIPT No matching script.\r\n"
                                       : "-ERR stand-in server refuses\r\n");
        # A hello that rode along after the command is answered, as Redis
        # would.
        syswrite($c, "+OK\r\n") if $got =~ /\r\n\$6\r\nCLIENT\r\n/i;
        push @held, $c;
    }
' "$sock" &
fake=$!
wait_until 5 test -S "$sock" || not_ok "the stand-in server listens"

for cmd in "wait --name $(fresh pipe) --n 2 --timeout 5" "set --param $(fresh pipe) --value 1" \
           "train --param $(fresh pipe) --worker w"; do
    t0=$(now_ms)
    err=$(rb $cmd --url "unix://$sock" 2>&1)
    code=$? ms=$(since "$t0")
    expect_eq "${cmd%% *}: a write into a shut connection is survived (exit 1, not 141)" 1 "$code"
    check "${cmd%% *}: ... and retried on a new connection at once (<= 2 s; $ms ms)" test "$ms" -le 2000
    expect_match "${cmd%% *}: ... which then got the stand-in's answer, in one line" \
        "^rbarrier: .*ERR stand-in server refuses$" "$err"
    expect_eq "${cmd%% *}: ... one line" 1 "$(printf '%s\n' "$err" | wc -l)"
done

# Proof that the scenario does hit a shut socket (where strace can run),
# and that the library's write raises no SIGPIPE at all (MSG_NOSIGNAL).
if strace -o /dev/null true 2>/dev/null; then
    strace -f -qq -e trace=write,sendto -e signal=SIGPIPE -o "$RB_TEST_TMP/pipe.strace" \
        $RBARRIER set --param "$(fresh pipe)" --value 1 --url "unix://$sock" 2>/dev/null
    expect_eq "under strace: exit 1 too" 1 $?
    check "the EVAL's write did fail with EPIPE" \
        grep -q 'EPIPE' "$RB_TEST_TMP/pipe.strace"
    check "... and raised no SIGPIPE" test "$(grep -c -- '--- SIGPIPE' "$RB_TEST_TMP/pipe.strace")" = 0
else
    skip "strace cannot run here: not proving that the write met a shut socket"
fi
