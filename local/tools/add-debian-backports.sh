#!/usr/bin/env bash
# Adds Debian bookworm's backports to apt's sources, in a file of its own
# (/etc/apt/sources.list.d/settee-bookworm-backports.sources; the existing sources are left as they
# are), for the packages make installs from there: valkey-server 8 (bookworm itself has none). Apt
# installs from backports only what is named and found nowhere else, so nothing already installed
# moves. On another release (trixie has valkey-server in main), or when some source already names
# bookworm-backports, it does nothing. Run as root (or with sudo); apt-get update follows in make.
set -euo pipefail

SOURCES_DIR=/etc/apt/sources.list.d
FILE="$SOURCES_DIR/settee-bookworm-backports.sources"

codename="$(. /etc/os-release && echo "${VERSION_CODENAME:-}")"
[[ "$codename" == bookworm ]] || exit 0
if grep -rqs 'bookworm-backports' /etc/apt/sources.list "$SOURCES_DIR"; then exit 0; fi
echo "==> adding Debian's bookworm-backports source ($FILE)" >&2
if [[ "$(id -u)" == 0 ]]; then SUDO=""; else SUDO="sudo"; fi
$SUDO tee "$FILE" >/dev/null <<'SOURCES'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
