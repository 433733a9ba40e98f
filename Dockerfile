# resplock in a container: `docker build -t resplock . && docker run -p 6379:6379 resplock`
FROM rust:1-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock ./
COPY src ./src
COPY vendor ./vendor
COPY benches ./benches
RUN cargo build --release --locked --bin resplock

FROM debian:bookworm-slim
COPY --from=build /src/target/release/resplock /usr/local/bin/resplock
EXPOSE 6379
# Listen on all interfaces inside the container; the host decides what to publish.
ENTRYPOINT ["resplock", "--bind", "0.0.0.0"]
CMD ["--port", "6379"]
