#!/usr/bin/env bash
# Builds the Kubernetes binaries Settee's tests and local platform run (kube-apiserver,
# kube-controller-manager, kube-scheduler, kubectl, and helm) from the Go module proxy, once, into
# ~/.cache/settee/<version>/. No Docker needed.
#
# k8s.io/kubernetes points its k8s.io/* staging modules at ./staging/... in its own go.mod, which
# a consumer cannot follow; the wrapper go.mod below maps each to the published v0.<minor>.<patch>
# release that was cut from the same tag. Where the proxy does not serve that release of a module
# (seen here: kube-scheduler, kube-controller-manager, csi-translation-lib, endpointslice and
# cri-client at v0.31.14), the newest patch of the same minor that it serves is taken instead.
#
# Usage: build-kube-tools.sh            prints the folder holding the binaries (KUBEBUILDER_ASSETS layout)
# Env:   KUBEBUILDER_ASSETS             use that folder instead when it already holds the binaries
#        SETTEE_KUBE_VERSION            pinned Kubernetes release (default below)
set -euo pipefail

KUBE_VERSION="${SETTEE_KUBE_VERSION:-1.31.14}"
HELM_VERSION="${SETTEE_HELM_VERSION:-3.16.4}"
STAGING_VERSION="0.${KUBE_VERSION#1.}"
CACHE_DIR="${SETTEE_CACHE_DIR:-$HOME/.cache/settee}/${KUBE_VERSION}"

log() { printf '[kube-tools] %s\n' "$*" >&2; }
fail() { printf '[kube-tools] error: %s\n' "$*" >&2; exit 1; }

if [[ -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  for bin in kube-apiserver kube-controller-manager kube-scheduler etcd kubectl; do
    [[ -x "$KUBEBUILDER_ASSETS/$bin" ]] || fail "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS has no executable '$bin'"
  done
  echo "$KUBEBUILDER_ASSETS"
  exit 0
fi

mkdir -p "$CACHE_DIR"
# `go build -mod=mod` resolves only the packages the binaries import; `go mod tidy` would also chase
# test-only dependencies, some of whose versions the proxy does not serve. The k8s.io staging
# modules are not all in the public checksum database, so they are verified against go.sum only.
export GONOSUMDB="${GONOSUMDB:+$GONOSUMDB,}k8s.io"

link_etcd() {
  # Debian's etcd-server (3.4) serves the v3 API kube-apiserver needs; link it beside the others
  # so the cache folder has the KUBEBUILDER_ASSETS layout.
  local etcd_bin
  etcd_bin="$(command -v etcd || true)"
  [[ -n "$etcd_bin" ]] || fail "etcd not found: install Debian's etcd-server (apt-get install etcd-server) or set KUBEBUILDER_ASSETS to a folder holding kube-apiserver, kube-controller-manager, kube-scheduler, etcd and kubectl"
  ln -sf "$etcd_bin" "$CACHE_DIR/etcd"
}

# Release builds stamp their version with -X; without it kube-apiserver reports v0.0.0 and helm
# assumes an ancient cluster, which breaks charts' kubeVersion constraints.
KUBE_MINOR="${KUBE_VERSION#1.}"; KUBE_MINOR="${KUBE_MINOR%%.*}"
KUBE_LDFLAGS="-X k8s.io/component-base/version.gitVersion=v${KUBE_VERSION} -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=${KUBE_MINOR} -X k8s.io/client-go/pkg/version.gitVersion=v${KUBE_VERSION} -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=${KUBE_MINOR}"
HELM_LDFLAGS="-X helm.sh/helm/v3/internal/version.version=v${HELM_VERSION} -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/chartutil.k8sVersionMinor=${KUBE_MINOR} -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMajor=1 -X helm.sh/helm/v3/pkg/lint/rules.k8sVersionMinor=${KUBE_MINOR}"
# Bumped whenever the way the binaries are built changes, so older caches are rebuilt.
BUILD_STAMP="stamped-v1"

require_go() {
  command -v go >/dev/null || fail "go not found: install Go 1.22+ or set KUBEBUILDER_ASSETS to a folder holding the Kubernetes binaries"
}

build_go() { # <name> <module dir> <package> <ldflags>
  local name="$1" dir="$2" pkg="$3" ldflags="$4"
  [[ -x "$CACHE_DIR/$name" && -f "$CACHE_DIR/$name.$BUILD_STAMP" ]] && return 0
  require_go
  log "building $name from $pkg (first run only; several minutes on 2 cores)"
  ( cd "$dir" && GOFLAGS=-mod=mod CGO_ENABLED=0 go build -trimpath -ldflags="-s -w $ldflags" -o "$CACHE_DIR/$name.tmp" "$pkg" ) \
    || fail "building $name failed (see output above); set KUBEBUILDER_ASSETS to use prebuilt binaries instead"
  mv "$CACHE_DIR/$name.tmp" "$CACHE_DIR/$name"
  touch "$CACHE_DIR/$name.$BUILD_STAMP"
  log "built $name"
}

# The proxy's base URL (the first entry of GOPROXY).
proxy_url() { go env GOPROXY | cut -d, -f1; }

# Whether the proxy serves module $1 at version $2 (its go.mod and its source).
proxy_serves() {
  local base; base="$(proxy_url)/$1/@v/$2"
  curl -fsS -o /dev/null "$base.mod" 2>/dev/null && curl -fsS -o /dev/null -r 0-0 "$base.zip" 2>/dev/null
}

# The staging release for module $1: v$STAGING_VERSION, or the newest earlier patch of its minor
# that the proxy serves.
staging_release() {
  local module="$1" patch="${STAGING_VERSION##*.}" minor="${STAGING_VERSION%.*}"
  proxy_serves "$module" "v$STAGING_VERSION" && { echo "v$STAGING_VERSION"; return; }
  while (( patch > 0 )); do
    patch=$((patch - 1))
    if proxy_serves "$module" "v$minor.$patch"; then
      log "the proxy does not serve $module v$STAGING_VERSION; using v$minor.$patch (same minor)"
      echo "v$minor.$patch"
      return
    fi
  done
  fail "the Go module proxy serves no v$minor.x release of $module"
}

# Bumped when the wrapper go.mod's generation changes, so an older one is written again.
MODULE_STAMP="// settee wrapper v2"

kube_module() {
  local dir="$CACHE_DIR/src/kubernetes"
  if [[ ! -f "$dir/go.sum" ]] || ! grep -qsF "$MODULE_STAMP" "$dir/go.mod"; then
    mkdir -p "$dir"
    log "writing the Go module wrapper for k8s.io/kubernetes v${KUBE_VERSION}"
    {
      echo "$MODULE_STAMP"
      echo "module settee.dev/kube-tools"
      echo
      echo "go 1.22"
      echo
      echo "require k8s.io/kubernetes v${KUBE_VERSION}"
      echo
      echo "replace ("
      local staging
      staging=$(curl -fsS "$(proxy_url)/k8s.io/kubernetes/@v/v${KUBE_VERSION}.mod" 2>/dev/null \
        | sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p' || true)
      [[ -n "$staging" ]] || staging=$(go mod download -json "k8s.io/kubernetes@v${KUBE_VERSION}" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p' | xargs sed -n 's#^\s*\(k8s.io/[a-z0-9-]*\) => ./staging/.*#\1#p')
      for m in $staging; do echo "	$m => $m $(staging_release "$m")"; done
      echo ")"
    } > "$dir/go.mod.tmp"
    mv "$dir/go.mod.tmp" "$dir/go.mod"
    touch "$dir/go.sum"
  fi
  echo "$dir"
}

helm_module() {
  local dir="$CACHE_DIR/src/helm"
  if [[ ! -f "$dir/go.sum" ]]; then
    mkdir -p "$dir"
    printf 'module settee.dev/helm-tool\n\ngo 1.22\n\nrequire helm.sh/helm/v3 v%s\n' "$HELM_VERSION" > "$dir/go.mod"
    touch "$dir/go.sum"
  fi
  echo "$dir"
}

link_etcd
KUBE_BINARIES="kube-apiserver kube-controller-manager kube-scheduler kubectl"
for bin in $KUBE_BINARIES; do
  [[ -f "$CACHE_DIR/$bin.$BUILD_STAMP" ]] && continue
  require_go
  kdir=$(kube_module)
  build_go "$bin" "$kdir" "k8s.io/kubernetes/cmd/$bin" "$KUBE_LDFLAGS"
done
if [[ "${SETTEE_SKIP_HELM:-}" != 1 && ! -f "$CACHE_DIR/helm.$BUILD_STAMP" ]]; then
  hdir=$(helm_module)
  build_go helm "$hdir" helm.sh/helm/v3/cmd/helm "$HELM_LDFLAGS"
fi
echo "$CACHE_DIR"
