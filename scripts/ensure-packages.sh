#!/usr/bin/env bash
# Installs the Debian packages named on the command line that are not installed yet.
# Used by the Makefile so that `make run`, `make test` and `make bench` work on a fresh Debian 12
# (each names its own list there). Debian packages only: no pip, no other archive.
set -euo pipefail
missing=()
for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
    echo "need root to apt-get install ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# No pseudo-terminal for dpkg: a chroot or container may have no /dev/pts.
apt-get install -y -qq --no-install-recommends -o Dpkg::Use-Pty=0 "${missing[@]}"
