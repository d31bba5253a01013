# rbarrier in a container: `docker build -t rbarrier .` builds the CLI image
# (the last stage), e.g.
#   docker run --rm -e RBARRIER_URL=redis://redis-host:6379/0 rbarrier \
#       wait --name ckpt --n 4 --timeout 60
# docker-compose.yml builds its Redis from the `redis` stage and its four
# demo workers from the `runtime` stage, so the cluster needs no image but
# debian:bookworm-slim.

# ---- build stage: compile build/rbarrier with the Debian 12 toolchain ----
# (gcc and make rather than build-essential: no C++ compiler, no dpkg-dev)
FROM debian:bookworm-slim AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        gcc libc6-dev make pkg-config libhiredis-dev libargtable2-dev libssl-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make build/rbarrier

# ---- redis stage: Debian's redis-server, keeping nothing on disk ----
FROM debian:bookworm-slim AS redis
RUN apt-get update \
    && apt-get install -y --no-install-recommends redis-server \
    && rm -rf /var/lib/apt/lists/*
USER redis
WORKDIR /var/lib/redis
EXPOSE 6379
# No config file: listen on every interface of the container; protected mode
# would refuse the other containers, which reach it over the compose network.
CMD ["redis-server", "--protected-mode", "no", "--save", "", "--appendonly", "no"]

# ---- runtime stage (the default image): the binary, the shared libraries
# it links, libssl3 (loaded by the binary for rediss:// URLs only), the CA
# certificates a rediss:// URL to a hosted Redis is checked against, the
# examples ----
FROM debian:bookworm-slim AS runtime
RUN apt-get update \
    && apt-get install -y --no-install-recommends libhiredis0.14 libargtable2-0 libssl3 \
        ca-certificates \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/rbarrier /usr/local/bin/rbarrier
COPY examples/ /usr/local/share/rbarrier/examples/
# The examples find the binary as `rbarrier` in PATH.
ENV PATH=/usr/local/share/rbarrier/examples:$PATH
USER nobody
ENTRYPOINT ["rbarrier"]
CMD ["--help"]
