"""The redis-py peer: the barrier a Python user would write with redis-py,
one arrival script (bench/arrive.lua, the floor's own) and one BLPOP per
waiting party per round, N processes as the rounds measurement runs them.

    python3 bench/pybarrier.py --url URL --script arrive.lua --n N
                               [--rounds R] [--warmup W] [--name NAME]

Prints `rounds_per_s_py.N RATE`: rounds from the end of round W to the end
of the last, over the time between the completing parties' returns.
"""
import argparse
import multiprocessing as mp
import os
import sys
import time

import redis

POP_S = 30


def party(url, sha, name, n, rounds, p, start, times, completer, failed):
    r = redis.Redis.from_url(url, socket_timeout=POP_S + 5)
    r.ping()
    start.wait()
    try:
        for k in range(rounds):
            count = "bench-py:{%s}:%d:count" % (name, k)
            release = "bench-py:{%s}:%d:release" % (name, k)
            if r.evalsha(sha, 2, count, release, n) == n:
                completer[k] = p
            elif r.blpop([release], POP_S) is None:
                raise RuntimeError("round %d: not released in %d s" % (k, POP_S))
            times[k * n + p] = time.monotonic()
    except Exception as e:  # the parent reports; a party only flags it
        print("pybarrier: party %d: %s" % (p, e), file=sys.stderr)
        failed.value = 1
        start.abort()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--script", required=True)
    ap.add_argument("--n", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=50)
    ap.add_argument("--name", default="bench-py-%d" % os.getpid())
    a = ap.parse_args()
    if a.n < 2 or a.rounds < a.warmup + 2:
        ap.error("need --n >= 2 and --rounds > --warmup + 1")
    with open(a.script) as f:
        sha = redis.Redis.from_url(a.url).script_load(f.read())

    ctx = mp.get_context("fork")
    start = ctx.Barrier(a.n + 1)
    times = ctx.Array("d", a.rounds * a.n, lock=False)
    completer = ctx.Array("i", [-1] * a.rounds, lock=False)
    failed = ctx.Value("i", 0, lock=False)
    procs = [ctx.Process(target=party,
                         args=(a.url, sha, a.name, a.n, a.rounds, p, start,
                               times, completer, failed))
             for p in range(a.n)]
    for pr in procs:
        pr.start()
    start.wait()
    for pr in procs:
        pr.join()
    if failed.value or any(pr.exitcode != 0 for pr in procs):
        sys.exit("pybarrier: a party failed")
    if min(completer) < 0:
        sys.exit("pybarrier: a round had no completing party")
    last, first = a.rounds - 1, a.warmup
    span = (times[last * a.n + completer[last]] -
            times[first * a.n + completer[first]])
    print("rounds_per_s_py.%d %.0f" % (a.n, (last - first) / span))


if __name__ == "__main__":
    main()
