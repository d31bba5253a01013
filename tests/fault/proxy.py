#!/usr/bin/env python3
"""A TCP forwarder for the fault tests: proxy.py LISTEN_PORT_FILE TARGET_PORT.

It listens on a free loopback port (written to LISTEN_PORT_FILE once it
listens) and forwards every connection to 127.0.0.1:TARGET_PORT. A test
cuts one client off from Redis, with its connection open and silent, by
sending the proxy SIGSTOP (and lets it through again with SIGCONT); other
clients reach Redis directly. SIGUSR1 holds back what clients send
(what Redis sends still flows: a push is read, the answer to it is not
sent) until SIGUSR2; each writes the state it set, "held" or "open", to
LISTEN_PORT_FILE.state, for the test to wait for. It stops by itself
after an hour.
"""
import os
import signal
import socket
import sys
import threading

# Set while clients' bytes may go up to Redis (SIGUSR1 clears it).
upstream_open = threading.Event()
upstream_open.set()
ORDERS = {signal.SIGUSR1, signal.SIGUSR2}


def order(port_file, held):
    """The handler of SIGUSR1 (held) and SIGUSR2: set, then say so."""
    if held:
        upstream_open.clear()
    else:
        upstream_open.set()
    tmp = port_file + ".state.tmp"
    with open(tmp, "w") as f:
        f.write("held\n" if held else "open\n")
    os.rename(tmp, port_file + ".state")


def pump(src, dst, held=None):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            if held is not None:
                held.wait()
            dst.sendall(data)
    except OSError:
        pass
    for s in (src, dst):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def main():
    port_file, target = sys.argv[1], int(sys.argv[2])
    signal.signal(signal.SIGUSR1, lambda *_: order(port_file, True))
    signal.signal(signal.SIGUSR2, lambda *_: order(port_file, False))
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listener.settimeout(3600)
    tmp = port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % listener.getsockname()[1])
    os.rename(tmp, port_file)
    while True:
        try:
            client, _ = listener.accept()
        except OSError:
            return
        upstream = socket.create_connection(("127.0.0.1", target))
        # The pumps are born with the orders blocked, so the kernel hands
        # them to this thread, which runs the handler at once: taken by a
        # pump, they would wait for this thread's next accept.
        old = signal.pthread_sigmask(signal.SIG_BLOCK, ORDERS)
        for a, b, held in ((client, upstream, upstream_open),
                           (upstream, client, None)):
            threading.Thread(target=pump, args=(a, b, held),
                             daemon=True).start()
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


if __name__ == "__main__":
    main()
