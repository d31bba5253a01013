#!/usr/bin/env python3
# JAX's multi-host start from the variables `rbarrier run` gives (no new
# flags): jax.distributed.initialize wants the coordinator's address, the
# process count and this process's id, which are MASTER_ADDR:MASTER_PORT,
# WORLD_SIZE and RANK. Rank 0's process runs JAX's coordinator service on
# MASTER_PORT, a port run picked free on its host. On each host:
#
#   rbarrier run --name train --n 4 [--restarts 2] -- python3 examples/jax_distributed.py
#
# (JAX is not a Debian package; this example is not run by the tests.)
import os

import jax
import jax.numpy as jnp
from jax.experimental import multihost_utils

jax.distributed.initialize(
    coordinator_address="%s:%s" % (os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"]),
    num_processes=int(os.environ["WORLD_SIZE"]),
    process_id=int(os.environ["RANK"]),
)
# One value per process, summed over all of them.
total = multihost_utils.process_allgather(
    jnp.array([jax.process_index() + 1])).sum()
print("process %d of %d: sum %d" % (jax.process_index(), jax.process_count(), total))
