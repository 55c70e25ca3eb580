#!/usr/bin/env bash
# Installs QStash's Python SDK (`qstash` 3.x from PyPI, pinned with its dependencies in
# test/python/requirements.txt) into a virtual environment in ~/.cache/settee/python-sdk/, once: a
# stamp named after the requirements file's hash marks a finished install, so a changed pin
# reinstalls. Debian's python3 builds the environment (with python3-venv, installed here when missing).
#
# Usage: install-python-sdk.sh            prints the environment's folder (its bin/python runs the SDK)
#        install-python-sdk.sh --installed  the same without installing: fails when make deps has not
#                                           installed these pins (tests use it: they reach no network)
# Env:   SETTEE_CACHE_DIR                 cache root (default ~/.cache/settee)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
REQUIREMENTS="$ROOT/test/python/requirements.txt"
VENV="${SETTEE_CACHE_DIR:-$HOME/.cache/settee}/python-sdk"
PYTHON=/usr/bin/python3

log() { printf '[python-sdk] %s\n' "$*" >&2; }
fail() { printf '[python-sdk] error: %s\n' "$*" >&2; exit 1; }

STAMP="$VENV/.settee-requirements-$(sha256sum "$REQUIREMENTS" | cut -c1-16)"
if [[ ! -f "$STAMP" && "${1:-}" == "--installed" ]]; then
  fail "the pins of $REQUIREMENTS are not installed in $VENV: run make deps (or bash $0)"
fi
if [[ ! -f "$STAMP" ]]; then
  [[ -x "$PYTHON" ]] || fail "$PYTHON not found: apt-get install python3 python3-venv (or make deps)"
  log "installing the pins of $REQUIREMENTS into $VENV"
  rm -rf "$VENV"
  if ! "$PYTHON" -m venv "$VENV" >&2; then
    # Debian's python3 builds a virtual environment only with python3-venv (its pip wheels).
    log "installing Debian's python3-venv"
    if [[ "$(id -u)" == 0 ]]; then SUDO=""; else SUDO="sudo"; fi
    { $SUDO apt-get install -y -q python3-venv || { $SUDO apt-get update -q && $SUDO apt-get install -y -q python3-venv; }; } >&2 ||
      fail "could not install python3-venv; install it with apt-get"
    rm -rf "$VENV"
    "$PYTHON" -m venv "$VENV" >&2 || fail "$PYTHON -m venv failed"
  fi
  "$VENV/bin/pip" install --quiet --disable-pip-version-check --no-input --require-virtualenv \
    -r "$REQUIREMENTS" >&2 || fail "pip could not install $REQUIREMENTS"
  touch "$STAMP"
fi
echo "$VENV"
