#!/usr/bin/python3
# One member for bench/torch.sh, the same under `rbarrier run` and under
# torchrun: joins the gloo group (env://), stamps OUT/init.RANK (ns), then
#   FAIL_RANK unset  all-reduces once and ends
#   FAIL_RANK=R      rank R stamps OUT/fail and exits 1; the others sleep
#                    (a long step: only their launcher can stop them)
import os
import sys
import time

import torch
import torch.distributed as dist

out = os.environ["OUT"]
dist.init_process_group("gloo")
rank = dist.get_rank()


def stamp(name):
    with open(os.path.join(out, name + ".tmp"), "w") as f:
        f.write("%d\n" % time.time_ns())
    os.rename(os.path.join(out, name + ".tmp"), os.path.join(out, name))


stamp("init.%d" % rank)
fail = os.environ.get("FAIL_RANK")
if fail is None:
    dist.all_reduce(torch.tensor([1.0]))
    dist.destroy_process_group()
    sys.exit(0)
if rank == int(fail):
    stamp("fail")
    os._exit(1)
time.sleep(600)
