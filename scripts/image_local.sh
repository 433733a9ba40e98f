#!/usr/bin/env bash
# Builds the container image without a Docker engine and without fetching a base image: the
# static binary is built here with the Dockerfile's flags (glibc static-pie instead of the
# Dockerfile's musl, which needs the rust:alpine image), then the Dockerfile's own final stage
# (FROM scratch, USER, WORKDIR, EXPOSE, HEALTHCHECK, ENTRYPOINT, CMD; only its COPY source
# changed) is built by buildah (Debian: apt-get install buildah). Prints the image size and
# leaves an OCI layout in target/image/oci. Usage: scripts/image_local.sh
set -euo pipefail
cd "$(dirname "$0")/.."
command -v buildah >/dev/null || { echo "needs buildah (apt-get install buildah)"; exit 1; }
TRIPLE=$(rustc -vV | sed -n 's/^host: //p')
RUSTFLAGS="-C target-feature=+crt-static" CARGO_PROFILE_RELEASE_DEBUG=0 \
  CARGO_PROFILE_RELEASE_STRIP=symbols CARGO_TARGET_DIR=target/static \
  cargo build --release --locked --bin resplock --target "$TRIPLE"
BIN="target/static/$TRIPLE/release/resplock"
if ldd "$BIN" 2>/dev/null | grep -q '=>'; then echo "$BIN needs a dynamic loader"; exit 1; fi
CTX=target/image/ctx
rm -rf target/image && mkdir -p "$CTX/out/usr/local/bin" "$CTX/out/data"
cp "$BIN" "$CTX/out/usr/local/bin/resplock"
ln -s resplock "$CTX/out/usr/local/bin/redis-server"
sed -n '/^FROM scratch/,$p' Dockerfile \
  | sed 's|COPY --from=build --chown=65532:65532 /out/ /|COPY --chown=65532:65532 out/ /|' > "$CTX/Containerfile"
buildah --storage-driver vfs bud --format docker -t localhost/resplock:local -f "$CTX/Containerfile" "$CTX"
buildah --storage-driver vfs push localhost/resplock:local oci:target/image/oci:resplock
buildah --storage-driver vfs images localhost/resplock:local
echo "OCI layout (compressed): $(du -sb target/image/oci | cut -f1) bytes in target/image/oci"
