#!/bin/sh
# tools/install-deps.sh - install the Debian packages slicesim needs, only those missing.
# Called by `make deps` (and so by `make run`) and `make deps-test` (`make test`, which sets
# SLICESIM_TEST_DEPS=1). Needs root or sudo when something is missing; prints what it installs
# and apt's progress. Set SLICESIM_NO_INSTALL=1 to only check.
set -eu
PKGS="gcc make pkg-config libgsl-dev libcjson-dev libyaml-dev libcriterion-dev gnuplot-nox jq"
# clang (libFuzzer) and valgrind are for `make fuzz` / the valgrind check in CI.
[ "${SLICESIM_DEV_DEPS:-0}" = 1 ] && PKGS="$PKGS clang valgrind"
# `make test` (and CI) also needs the tools its tests drive: promtool (prometheus) reads
# metrics.om, headless chromium loads report.html, Open MPI builds and runs the MPI sweep.
if [ "${SLICESIM_DEV_DEPS:-0}" = 1 ] || [ "${SLICESIM_TEST_DEPS:-0}" = 1 ]; then
    PKGS="$PKGS prometheus chromium openmpi-bin libopenmpi-dev"
fi

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

if [ "${SLICESIM_NO_INSTALL:-0}" = 1 ]; then
    echo "install-deps: missing Debian packages:$missing" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
        echo "install-deps: missing packages:$missing; run as root or install them with apt-get" >&2
        exit 1
    fi
fi
# apt's own output is shown (download size, then each package as it unpacks): on a fresh Debian
# this takes minutes, and a silent pause that long looks like a hang. Nothing is printed when
# nothing is missing.
echo "install-deps: installing:$missing"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
# shellcheck disable=SC2086
$SUDO apt-get install -y --no-install-recommends $missing
echo "install-deps: done"
