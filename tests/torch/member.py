#!/usr/bin/python3
# A torch.distributed member for tests/torch: joins the gloo group from
# torchrun's variables, then, as the environment asks:
#   FAIL_RANK=R  rank R exits 9 right after init (on attempt 0 only when
#                FAIL_FIRST_ONLY=1), writing the time it did to FAIL_AT;
#                the others go on with a long step (a sleep): nothing but
#                their runners can stop them (in a collective, gloo might
#                notice the dead peer itself and race the runner)
#   else         all-reduce rank + 1 and print what it saw
import os
import sys
import time

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
restart = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
fail = os.environ.get("FAIL_RANK")
if fail is not None and (os.environ.get("FAIL_FIRST_ONLY") != "1" or restart == 0):
    if rank == int(fail):
        with open(os.environ["FAIL_AT"], "w") as f:
            f.write("%d\n" % time.time_ns())
        os._exit(9)
    time.sleep(600)
    sys.exit(0)
t = torch.tensor([rank + 1.0])
dist.all_reduce(t)
print("rank %d local_rank %s group_rank %s world %d sum %d port %s restart %d"
      % (rank, os.environ["LOCAL_RANK"], os.environ["GROUP_RANK"], world,
         int(t.item()), os.environ["MASTER_PORT"], restart), flush=True)
dist.destroy_process_group()
