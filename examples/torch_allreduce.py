#!/usr/bin/python3
# A program written for torchrun, unchanged: torch.distributed reads RANK,
# WORLD_SIZE, MASTER_ADDR and MASTER_PORT (env://). Each rank all-reduces
# rank + 1, so every rank prints WORLD_SIZE * (WORLD_SIZE + 1) / 2.
#
#   torchrun --nnodes 1 --nproc_per_node 3 examples/torch_allreduce.py
#   rbarrier run --name demo --n 3 -- /usr/bin/python3 examples/torch_allreduce.py  # x3
import os

import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
t = torch.tensor([rank + 1.0])
dist.all_reduce(t)
print(f"rank {rank} local_rank {os.environ['LOCAL_RANK']} "
      f"group_rank {os.environ['GROUP_RANK']} world {world} "
      f"sum {int(t.item())}", flush=True)
dist.destroy_process_group()
