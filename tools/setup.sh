#!/usr/bin/env bash
# Everything a fresh machine needs to build and test micronn. Idempotent: each step
# checks whether its result is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
MICROPY_DIR=${MICROPY_DIR:-$ROOT/build/micropython}
VENV=$ROOT/.venv

APT_PACKAGES="gcc-arm-none-eabi libnewlib-arm-none-eabi qemu-system-arm qemu-system-misc
gcc-riscv64-unknown-elf picolibc-riscv64-unknown-elf make gcc gcc-multilib xz-utils clang cmake"

step() { printf '\n== setup: %s\n' "$*"; }

install_apt_packages() {
    local missing=()
    for p in $APT_PACKAGES; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        echo "apt packages: all present"
        return
    fi
    local sudo=""
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    step "installing ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

fetch_micropython() {
    if [ -f "$MICROPY_DIR/py/mpconfig.h" ]; then
        echo "micropython: using $MICROPY_DIR"
        return
    fi
    step "fetching MicroPython 1.25.0 source"
    if ! "$ROOT/tools/fetch_micropython.sh" "$MICROPY_DIR"; then
        # Machines with GitHub access but no Debian source archive.
        git clone --depth 1 -b v1.25.0 https://github.com/micropython/micropython "$MICROPY_DIR"
    fi
}

build_mpy_cross() {
    if [ -x "$MICROPY_DIR/mpy-cross/build/mpy-cross" ]; then
        echo "mpy-cross: built"
        return
    fi
    step "building mpy-cross"
    make -s -C "$MICROPY_DIR/mpy-cross" -j"$(nproc)" >/dev/null
}

make_venv() {
    local stamp=$VENV/.micronn-requirements
    if [ -f "$stamp" ] && cmp -s "$stamp" host_tools/requirements.txt; then
        echo "venv: up to date"
        return
    fi
    step "creating Python venv in .venv"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --upgrade pip
    "$VENV/bin/pip" install -q -r host_tools/requirements.txt
    "$VENV/bin/pip" install -q -e host_tools
    cp host_tools/requirements.txt "$stamp"
}

install_apt_packages
fetch_micropython
build_mpy_cross
make_venv
echo "setup: done"
