#!/usr/bin/python3
# bench/tcpstore_scale.py: issue #34's scale figures for a TCPStore
# barrier, beside rbarrier's (bench/scale.sh runs it): what one request
# of torch's store-based barrier costs the store's server as the number of
# parties, each a client connection, grows.
#
# A TCPStore barrier of N ranks (torch.distributed's _store_based_barrier)
# is one add(key, 1) per rank, then every rank polls add(key, 0) every
# 10 ms until the count is N; a barrier on store.wait asks wait([key])
# instead. The server (is_master=True) runs in a process of its own and
# reports its own CPU time (time.process_time_ns: all its threads, the
# store's daemon thread included), so the clients' speed does not count:
# the figure is the server's CPU µs per request, as rbarrier's is Redis'.
#
# Per N: N connections are open (the parties: holder processes keep N-16
# of them, each one checked with a request), and requests go one at a
# time over the other 16 in turn, as ranks would send them:
#   scale_tcpstore_add_us_nN      an arrival, add(key, 1)
#   scale_tcpstore_wait_us_nN     the barrier's poll, add(key, 0)
#   scale_tcpstore_keywait_us_nN  wait([key]) of a key that is set
#   scale_tcpstore_open_s_nN      seconds to open the N connections
# the median of 3 runs of --requests each (by default 1,000, fewer as N
# grows: at N=8,192 a request costs milliseconds). A size that cannot be reached
# (a connection refused or timed out, the server gone, the host's file
# limit) prints scale_tcpstore_failed_nN 1 and why; larger ones are not
# tried. Requests sent one at a time are the costliest case for a server
# that scans every connection per wake-up; ranks that ask together share
# a scan.
#
# tcpstore_scale.py [--sizes 16,1024,4096] [--requests R]
import argparse
import datetime
import os
import resource
import select
import statistics
import subprocess
import sys
import time

HOST = "127.0.0.1"
SENDERS = 16
PER_HOLDER = 1024
TIMEOUT = datetime.timedelta(seconds=60)


def raise_nofile():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def client(port):
    import torch.distributed as dist
    return dist.TCPStore(HOST, port, None, False, TIMEOUT, wait_for_workers=False)


def serve():
    import torch.distributed as dist
    store = dist.TCPStore(HOST, 0, None, True, TIMEOUT, wait_for_workers=False)
    print(store.port, flush=True)
    for _ in sys.stdin:
        print(time.process_time_ns(), flush=True)
    # Past the store's destructor: it can take long with thousands of
    # connections, and nothing is left to measure.
    os._exit(0)


def hold(port, count):
    stores = []
    try:
        for _ in range(count):
            stores.append(client(port))
        for s in stores:
            s.add("held", 1)
    except Exception as e:  # noqa: BLE001 (any failure is the figure)
        print("fail %d %s" % (len(stores), str(e).replace("\n", " ")[:200]), flush=True)
        os._exit(1)
    print("ok", flush=True)
    sys.stdin.read()
    os._exit(0)


def readline(proc, seconds):
    r, _, _ = select.select([proc.stdout], [], [], seconds)
    if not r:
        raise RuntimeError("no answer in %d s" % seconds)
    line = proc.stdout.readline()
    if not line:
        raise RuntimeError("the process ended (exit %s)" % proc.wait())
    return line.strip()


def spawn(*args):
    return subprocess.Popen([sys.executable, os.path.abspath(__file__)] + list(args),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


def stop(procs):
    for p in procs:
        try:
            p.stdin.close()
        except OSError:
            pass
    for p in procs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def measure(n, requests, out):
    server = spawn("--serve")
    procs = [server]
    senders = []
    try:
        port = int(readline(server, 60))

        def cpu_ns():
            server.stdin.write("t\n")
            server.stdin.flush()
            return int(readline(server, 60))

        t0 = time.monotonic()
        rest = n - min(n, SENDERS)
        holders = []
        while rest > 0:
            k = min(rest, PER_HOLDER)
            holders.append(spawn("--hold", str(port), str(k)))
            rest -= k
        procs += holders
        for h in holders:
            answer = readline(h, 600)
            if answer != "ok":
                raise RuntimeError("a holder's connections: " + answer)
        senders = [client(port) for _ in range(min(n, SENDERS))]
        opened = time.monotonic() - t0
        held = senders[0].add("held", 0)
        if held != n - len(senders):
            raise RuntimeError("%d of %d held connections answered" % (held, n - len(senders)))
        senders[0].set("done", "1")
        calls = {
            "add": lambda s, i: s.add("round", 1),
            "wait": lambda s, i: s.add("round", 0),
            "keywait": lambda s, i: s.wait(["done"]),
        }
        runs = {kind: [] for kind in calls}
        for _ in range(3):
            for kind, call in calls.items():
                c0 = cpu_ns()
                for i in range(requests):
                    call(senders[i % len(senders)], i)
                runs[kind].append((cpu_ns() - c0) / requests / 1000)
        for kind, us in runs.items():
            out("scale_tcpstore_%s_us_n%d %.2f" % (kind, n, statistics.median(us)))
        out("scale_tcpstore_open_s_n%d %.2f" % (n, opened))
        return True
    except Exception as e:  # noqa: BLE001 (where it stops is the figure)
        out("# tcpstore: N = %d failed: %s" % (n, str(e).replace("\n", " ")[:300]))
        out("scale_tcpstore_failed_n%d 1" % n)
        return False
    finally:
        del senders
        stop(procs)


def main():
    ap = argparse.ArgumentParser(description="TCPStore server CPU per barrier request, by N connections")
    ap.add_argument("--sizes", default="16,1024,4096")
    ap.add_argument("--requests", type=int, default=0)
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--hold", nargs=2, type=int, help=argparse.SUPPRESS)
    a = ap.parse_args()
    raise_nofile()
    if a.serve:
        serve()
    if a.hold:
        hold(*a.hold)

    def out(line):
        print(line, flush=True)

    import torch
    out("# tcpstore: torch %s, server CPU per request (time.process_time_ns)" % torch.__version__)
    for n in (int(x) for x in a.sizes.split(",")):
        print("bench: scale: TCPStore, N = %d connections" % n, file=sys.stderr)
        if not measure(n, a.requests or max(100, min(1000, 2000000 // n)), out):
            break


if __name__ == "__main__":
    main()
