#!/bin/sh
# Install what rbarrier needs to build, test and benchmark, from Debian 12's
# packages. Uses sudo when not run as root.
set -eu
packages="build-essential pkg-config libhiredis-dev libargtable2-dev
libcmocka-dev libssl-dev openssl redis-server redis-tools valgrind python3 python3-yaml python3-redis
mandoc groff-base lua5.1 clang libclang-rt-14-dev strace spin librsvg2-bin"
if [ "$(id -u)" -eq 0 ]; then as_root=""; else as_root="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$as_root apt-get update
# shellcheck disable=SC2086 # the package list is split on purpose
$as_root apt-get install -y --no-install-recommends $packages
