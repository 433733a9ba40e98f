# resplock in a container, started the way the official redis image is:
#   docker build -t resplock . && docker run -p 6379:6379 resplock
#   docker run resplock redis-server --save "" --appendonly no   (testcontainers' style)
#   docker run resplock --port 6380                              (options alone)
#   docker run -v $PWD/r.conf:/r.conf resplock /r.conf           (a config file)
# The final image is one static binary and an empty /data: no shell, no libc, no package
# manager (7.04 MB measured with scripts/image_local.sh, which builds this file's final stage
# with buildah from a static binary built on the host; the goal is 20 MB or less).
# The entrypoint rules of the official image (a leading `redis-server` word, listening on
# every interface when no config file is given) are resplock's own `--container` option, so
# no shell script is needed; for the same reason `docker run resplock sh -c ...` cannot work.

# Alpine's Rust targets musl natively; crt-static makes the binary fully static. The vendored
# Lua and mimalloc are C: musl-dev brings the headers and the C runtime.
FROM rust:1-alpine AS build
RUN apk add --no-cache musl-dev
WORKDIR /src
COPY Cargo.toml Cargo.lock build.rs ./
COPY src ./src
COPY vendor ./vendor
COPY benches ./benches
ENV RUSTFLAGS="-C target-feature=+crt-static" \
    CARGO_PROFILE_RELEASE_DEBUG=0 \
    CARGO_PROFILE_RELEASE_STRIP=symbols
# `redis-server` names resplock too, for harnesses that exec it by that name. The last line
# fails the build rather than ship a binary that needs a dynamic loader.
RUN cargo build --release --locked --bin resplock \
 && mkdir -p /out/usr/local/bin /out/data \
 && cp target/release/resplock /out/usr/local/bin/resplock \
 && ln -s resplock /out/usr/local/bin/redis-server \
 && ! ldd /out/usr/local/bin/resplock 2>/dev/null | grep -q '=>'

FROM scratch
COPY --from=build --chown=65532:65532 /out/ /
USER 65532:65532
WORKDIR /data
EXPOSE 6379
# PING over TCP from the binary itself (exit 0 on PONG, or on NOAUTH: the server is up).
# Started on another port? Override it: --health-cmd '["/usr/local/bin/resplock","--healthcheck","6380"]'.
HEALTHCHECK --interval=10s --timeout=5s --start-period=2s --retries=3 \
  CMD ["/usr/local/bin/resplock", "--healthcheck", "127.0.0.1:6379"]
ENTRYPOINT ["/usr/local/bin/resplock", "--container"]
CMD ["redis-server"]
