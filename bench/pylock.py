"""The redis-py peer of `rb_bench lock`: redis-py's own redis.lock.Lock
(r.lock(name, timeout=10), its default retry sleep), measured as the
library is.

    python3 bench/pylock.py --url URL --mode pairs|handoff
                            [--count C] [--procs P] [--name NAME]

pairs: one connection, C acquire/release pairs in a loop, prints
`lock_pairs_per_s_py RATE`. handoff: P processes, each its own
connection, each C pairs on one name, started together; prints
`lock_handoffs_per_s_py RATE`, all grants over the time until the last
process is done.
"""
import argparse
import multiprocessing as mp
import os
import sys
import threading
import time

import redis


def pairs(r, name, count):
    for _ in range(count):
        lk = r.lock(name, timeout=10)
        if not lk.acquire(blocking=True, blocking_timeout=60):
            raise RuntimeError("not acquired in 60 s")
        lk.release()


def contender(url, name, count, start, failed):
    try:
        r = redis.Redis.from_url(url)
        r.ping()
        start.wait()
        pairs(r, name, count)
    except Exception as e:  # the parent reports; a contender only flags it
        print("pylock: %s" % e, file=sys.stderr)
        failed.value = 1
        start.abort()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--mode", required=True, choices=["pairs", "handoff"])
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--procs", type=int, default=8)
    ap.add_argument("--name", default="bench-pylock-%d" % os.getpid())
    a = ap.parse_args()
    if a.count < 1 or a.procs < 1:
        ap.error("need --count >= 1 and --procs >= 1")
    if a.mode == "pairs":
        r = redis.Redis.from_url(a.url)
        pairs(r, a.name, a.count // 10 + 1)  # warm-up
        t0 = time.monotonic()
        pairs(r, a.name, a.count)
        print("lock_pairs_per_s_py %.1f" % (a.count / (time.monotonic() - t0)))
        return 0
    ctx = mp.get_context("fork")
    start = ctx.Barrier(a.procs + 1)
    failed = ctx.Value("i", 0, lock=False)
    procs = [ctx.Process(target=contender,
                         args=(a.url, a.name, a.count, start, failed))
             for _ in range(a.procs)]
    for p in procs:
        p.start()
    try:
        start.wait()
    except threading.BrokenBarrierError:
        pass
    t0 = time.monotonic()
    for p in procs:
        p.join()
    t1 = time.monotonic()
    if failed.value or any(p.exitcode != 0 for p in procs):
        print("pylock: a contender failed", file=sys.stderr)
        return 1
    print("lock_handoffs_per_s_py %.1f" % (a.procs * a.count / (t1 - t0)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
