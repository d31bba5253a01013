#!/usr/bin/env python3
"""A TCP forwarder for the fault tests: proxy.py LISTEN_PORT_FILE TARGET_PORT.

It listens on a free loopback port (written to LISTEN_PORT_FILE once it
listens) and forwards every connection to 127.0.0.1:TARGET_PORT. A test
cuts one client off from Redis, with its connection open and silent, by
sending the proxy SIGSTOP (and lets it through again with SIGCONT); other
clients reach Redis directly. SIGUSR1 holds back what clients send
(what Redis sends still flows: a push is read, the answer to it is not
sent) until SIGUSR2. It stops by itself after an hour.
"""
import os
import signal
import socket
import sys
import threading

# Set while clients' bytes may go up to Redis (SIGUSR1 clears it).
upstream_open = threading.Event()
upstream_open.set()


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
    signal.signal(signal.SIGUSR1, lambda *_: upstream_open.clear())
    signal.signal(signal.SIGUSR2, lambda *_: upstream_open.set())
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
        for a, b, held in ((client, upstream, upstream_open),
                           (upstream, client, None)):
            threading.Thread(target=pump, args=(a, b, held),
                             daemon=True).start()


if __name__ == "__main__":
    main()
