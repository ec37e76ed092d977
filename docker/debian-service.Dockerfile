# The compose stack's helpers from Debian's own packages, like FormGate's image: Redis
# (redis-server 7.0, the package the tests run) and the load balancer (haproxy 2.6).
#   PACKAGES: what to install, e.g. "redis-server" or "haproxy curl"
FROM debian:bookworm-slim
ARG PACKAGES
RUN test -n "$PACKAGES" \
    && apt-get update \
    && apt-get install -y --no-install-recommends $PACKAGES \
    && rm -rf /var/lib/apt/lists/*
