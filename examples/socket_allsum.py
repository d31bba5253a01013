#!/usr/bin/env python3
# A plain socket program (no MPI, no torch) started by `rbarrier run` on
# every host; it reads only the variables run gives it:
#
#   rbarrier run --name sum --n 3 -- python3 examples/socket_allsum.py   # x3
#
# Rank 0 listens on MASTER_PORT; once it listens it says so with
# `rbarrier set`, and the others wait for that with `rbarrier get
# --until-set` (no sleep, no connect-retry loop), connect to
# MASTER_ADDR:MASTER_PORT and send rank + 1; rank 0 sends the sum back.
# Every rank prints "rank R sum S", S = WORLD_SIZE * (WORLD_SIZE + 1) / 2.
import os
import socket
import subprocess

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
rbarrier = os.environ.get("RBARRIER_BIN", "rbarrier")
# One name per run and attempt: a value left by an earlier run must not
# tell this one that its head is up.
head = "%s-head-%s-%s" % (os.environ["RBARRIER_JOB"], os.environ["RBARRIER_GEN"],
                          os.environ["RBARRIER_RESTART"])

if rank == 0:
    server = socket.create_server(("", port), backlog=world)
    subprocess.run([rbarrier, "set", "--param", head, "--value", "1"], check=True)
    peers = [server.accept()[0] for _ in range(world - 1)]
    total = 1 + sum(int(p.makefile().readline()) for p in peers)
    for p in peers:
        p.sendall(b"%d\n" % total)
else:
    subprocess.run([rbarrier, "get", "--param", head, "--until-set", "--timeout", "60"],
                   check=True, stdout=subprocess.DEVNULL)
    with socket.create_connection((addr, port), timeout=60) as s:
        s.sendall(b"%d\n" % (rank + 1))
        total = int(s.makefile().readline())
print("rank %d sum %d" % (rank, total), flush=True)
