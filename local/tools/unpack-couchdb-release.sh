#!/usr/bin/env bash
# Unpacks the Apache CouchDB 3.x release the kubelet stand-in runs for couchdb:3.* pods, once, into
# ~/.cache/settee/<its top folder>/ (couchdb-3.5.2/ for the release in ../shared/engines/). No
# package registry carries CouchDB, so the release sits beside the project (see its README); its
# sha256 is checked against the .sha256 file beside it before anything is unpacked.
#
# Usage: unpack-couchdb-release.sh    prints the release's root folder (holding bin/couchdb), or
#                                     nothing when no release is available (the pouchdb-server
#                                     stand-in then serves, and the caller says so)
# Env:   SETTEE_COUCHDB_RELEASE       a release tarball (.tar.gz) or an unpacked release folder
#                                     instead of ../shared/engines/couchdb-*.tar.gz; `none` for none
#        SETTEE_SHARED_ENGINES_DIR    where to look for it (default ../shared/engines beside the project)
#        SETTEE_CACHE_DIR             cache root (default ~/.cache/settee)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
ENGINES_DIR="${SETTEE_SHARED_ENGINES_DIR:-$ROOT/../shared/engines}"
CACHE_ROOT="${SETTEE_CACHE_DIR:-$HOME/.cache/settee}"
# What a finished unpack leaves in the folder: the tarball's sha256, written last.
STAMP=.settee-release-sha256

log() { printf '[couchdb] %s\n' "$*" >&2; }
fail() { printf '[couchdb] error: %s\n' "$*" >&2; exit 1; }

is_release() { [[ -x "$1/bin/couchdb" && -f "$1/etc/default.ini" ]]; }

source="${SETTEE_COUCHDB_RELEASE:-}"
if [[ "$source" == none ]]; then
  exit 0
fi
if [[ -z "$source" ]]; then
  shopt -s nullglob
  candidates=("$ENGINES_DIR"/couchdb-3.*.tar.gz)
  shopt -u nullglob
  if (( ${#candidates[@]} == 0 )); then
    log "no CouchDB release in $ENGINES_DIR and SETTEE_COUCHDB_RELEASE unset: the pouchdb-server stand-in serves instead"
    exit 0
  fi
  source="${candidates[-1]}"
fi

if [[ -d "$source" ]]; then
  is_release "$source" || fail "SETTEE_COUCHDB_RELEASE=$source is a folder without bin/couchdb and etc/default.ini"
  (cd "$source" && pwd)
  exit 0
fi
[[ -f "$source" ]] || fail "SETTEE_COUCHDB_RELEASE=$source is neither a release tarball nor a release folder"

actual=$(sha256sum "$source" | cut -d' ' -f1)
if [[ -f "$source.sha256" ]]; then
  expected=$(cut -d' ' -f1 "$source.sha256")
  [[ "$actual" == "$expected" ]] || fail "$source does not match $source.sha256 (sha256 $actual); nothing was unpacked"
elif [[ -z "${SETTEE_COUCHDB_RELEASE:-}" ]]; then
  fail "$source.sha256 is missing; nothing was unpacked"
fi

# head closes the listing early: tar's SIGPIPE is expected there.
top=$(set +o pipefail; tar -tzf "$source" | head -n 1 | cut -d/ -f1)
[[ "$top" =~ ^[A-Za-z0-9._-]+$ ]] || fail "$source does not hold one top folder"
target="$CACHE_ROOT/$top"
if [[ "$(cat "$target/$STAMP" 2>/dev/null)" == "$actual" ]] && is_release "$target"; then
  echo "$target"
  exit 0
fi

mkdir -p "$CACHE_ROOT"
work=$(mktemp -d "$CACHE_ROOT/.$top.unpacking.XXXXXX")
trap 'rm -rf "$work"' EXIT
size_mb=$(( $(stat -c %s "$source") / 1048576 ))
log "unpacking $(basename "$source") (${size_mb} MB, sha256 checked) into $target"
started=$(date +%s)
# A dot on stderr every ~2,500 records: progress on a terminal and in CI logs alike.
tar -xzf "$source" -C "$work" --checkpoint=2500 --checkpoint-action=dot 2>&2
printf '\n' >&2
is_release "$work/$top" || fail "$source unpacked without $top/bin/couchdb and $top/etc/default.ini"
echo "$actual" > "$work/$top/$STAMP"
rm -rf "$target"
mv "$work/$top" "$target"
log "unpacked in $(( $(date +%s) - started ))s"
echo "$target"
