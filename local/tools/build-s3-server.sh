#!/usr/bin/env bash
# Builds versitygw, the S3-compatible server Settee's backup tests and `make run` store backups in,
# from the Go module proxy, once, into ~/.cache/settee/versitygw-<version>/. No Docker needed.
#
# versitygw over MinIO: it is a plain Go module with semver releases on the proxy (MinIO publishes
# RELEASE.* tags the proxy serves only as pseudo-versions), one binary whose posix backend keeps
# each bucket as a folder, and it speaks the S3 API the AWS SDK uses (multipart uploads included).
#
# Usage: build-s3-server.sh             prints the path of the versitygw binary
# Env:   SETTEE_VERSITYGW               use that binary instead when it is executable
#        SETTEE_VERSITYGW_VERSION       pinned release (default below)
set -euo pipefail

VERSION="${SETTEE_VERSITYGW_VERSION:-1.8.0}"
CACHE_DIR="${SETTEE_CACHE_DIR:-$HOME/.cache/settee}/versitygw-${VERSION}"
BIN="$CACHE_DIR/versitygw"
# Bumped whenever the way the binary is built changes, so older caches are rebuilt.
BUILD_STAMP="$BIN.built-v1"

log() { printf '[s3-server] %s\n' "$*" >&2; }
fail() { printf '[s3-server] error: %s\n' "$*" >&2; exit 1; }

if [[ -n "${SETTEE_VERSITYGW:-}" ]]; then
  [[ -x "$SETTEE_VERSITYGW" ]] || fail "SETTEE_VERSITYGW=$SETTEE_VERSITYGW is not an executable file"
  echo "$SETTEE_VERSITYGW"
  exit 0
fi
if [[ -x "$BIN" && -f "$BUILD_STAMP" ]]; then
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null || fail "go not found: install Go 1.25+ or set SETTEE_VERSITYGW to a versitygw binary"
src="$CACHE_DIR/src"
mkdir -p "$src"
if [[ ! -f "$src/go.mod" ]]; then
  printf 'module settee.dev/s3-server\n\ngo 1.25.0\n\nrequire github.com/versity/versitygw v%s\n' "$VERSION" > "$src/go.mod"
  touch "$src/go.sum"
fi
log "building versitygw v$VERSION from the Go module proxy (first run only; a few minutes on 2 cores)"
started=$(date +%s)
( cd "$src" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$BIN.tmp" github.com/versity/versitygw/cmd/versitygw ) \
  || fail "building versitygw failed (see output above); set SETTEE_VERSITYGW to use a prebuilt binary instead"
mv "$BIN.tmp" "$BIN"
touch "$BUILD_STAMP"
log "built versitygw in $(( $(date +%s) - started ))s"
echo "$BIN"
