#!/bin/sh
# Debian's python3-torch (about 830 MB with its dependencies) for the tests
# and the bench that run real torch.distributed programs (make test-torch,
# make bench-torch). Not part of tools/install-deps.sh: the quick start
# must not pull it.
set -eu
if /usr/bin/python3 -c 'import torch.distributed' 2>/dev/null; then
    exit 0
fi
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
$sudo apt-get update
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y python3-torch
