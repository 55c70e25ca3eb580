#!/usr/bin/env bash
# Copies the CRDs from crds/ into charts/settee/crds/, which Helm installs before the chart's
# templates. crds/ is rendered from TypeScript (render-crds.ts, which writes the chart's copy too);
# what this script adds is finding and removing a copy whose CRD is gone. The copies are byte for
# byte; test/integration/chart/crds.test.ts fails when they differ.
#
# Usage: sync-chart-crds.sh           copy crds/*.yaml into the chart, removing copies of deleted CRDs
#        sync-chart-crds.sh --check   change nothing; exit 1 naming each file that differs
# Env:   SETTEE_CRD_SOURCE_DIR, SETTEE_CHART_CRD_DIR   other folders (tests)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SOURCE="${SETTEE_CRD_SOURCE_DIR:-$ROOT/crds}"
TARGET="${SETTEE_CHART_CRD_DIR:-$ROOT/charts/settee/crds}"

mode="sync"
case "${1:-}" in
  "") ;;
  --check) mode="check" ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac

shopt -s nullglob
sources=("$SOURCE"/*.yaml)
[[ ${#sources[@]} -gt 0 ]] || { echo "sync-chart-crds: no CRDs in $SOURCE" >&2; exit 1; }

stale=()
for copy in "$TARGET"/*.yaml; do
  [[ -f "$SOURCE/$(basename "$copy")" ]] || stale+=("$copy")
done

if [[ "$mode" == check ]]; then
  differ=0
  for source in "${sources[@]}"; do
    copy="$TARGET/$(basename "$source")"
    if ! cmp -s "$source" "$copy"; then
      echo "sync-chart-crds: ${copy#"$ROOT"/} differs from ${source#"$ROOT"/}" >&2
      differ=1
    fi
  done
  for copy in "${stale[@]}"; do
    echo "sync-chart-crds: ${copy#"$ROOT"/} has no source in crds/" >&2
    differ=1
  done
  [[ $differ == 0 ]] || { echo "sync-chart-crds: run local/tools/sync-chart-crds.sh" >&2; exit 1; }
  exit 0
fi

mkdir -p "$TARGET"
for source in "${sources[@]}"; do
  cp "$source" "$TARGET/$(basename "$source")"
done
for copy in "${stale[@]}"; do
  rm "$copy"
done
echo "sync-chart-crds: ${#sources[@]} CRD file(s) copied into ${TARGET#"$ROOT"/}" >&2
