# resplock in a container, started the way the official redis image is:
#   docker build -t resplock . && docker run -p 6379:6379 resplock
#   docker run resplock redis-server --save "" --appendonly no   (testcontainers' style)
# The vendored Lua needs a C compiler: rust:1-bookworm has gcc.
FROM rust:1-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY benches ./benches
RUN cargo build --release --locked --bin resplock

FROM debian:bookworm-slim
COPY --from=build /src/target/release/resplock /usr/local/bin/resplock
# `redis-server` names resplock too, for scripts that call it by that name inside the image.
RUN ln -s resplock /usr/local/bin/redis-server && mkdir /data
COPY docker/docker-entrypoint.sh /usr/local/bin/docker-entrypoint.sh
WORKDIR /data
EXPOSE 6379
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["redis-server"]
