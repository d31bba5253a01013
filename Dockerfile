# rbarrier in a container: `docker build -t rbarrier .`, then e.g.
#   docker run --rm -e RBARRIER_URL=redis://redis-host:6379/0 rbarrier \
#       wait --name ckpt --n 4 --timeout 60
# docker-compose.yml uses this image for its four demo workers.

# ---- build stage: compile build/rbarrier with the Debian 12 toolchain ----
FROM debian:bookworm-slim AS build
RUN apt-get update \
    && apt-get install -y --no-install-recommends \
        build-essential pkg-config libhiredis-dev libargtable2-dev libcmocka-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make

# ---- runtime stage: the binary, its two shared libraries, the examples ----
FROM debian:bookworm-slim
RUN apt-get update \
    && apt-get install -y --no-install-recommends libhiredis0.14 libargtable2-0 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /src/build/rbarrier /usr/local/bin/rbarrier
COPY examples/ /usr/local/share/rbarrier/examples/
# The examples find the binary as `rbarrier` in PATH.
ENV PATH=/usr/local/share/rbarrier/examples:$PATH
USER nobody
ENTRYPOINT ["rbarrier"]
CMD ["--help"]
