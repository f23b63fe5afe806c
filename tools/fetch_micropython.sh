#!/usr/bin/env bash
# Fetch MicroPython's source from Debian's source package, verify it, unpack it.
# The apt source URI is read from this machine's own apt configuration, so no
# archive host name is written anywhere in the project.
set -euo pipefail

VERSION=1.25.0
DEB_VERSION=1.25.0+ds-1
TARBALL=micropython_1.25.0+ds.orig.tar.xz
SHA256=7b25be99a502f070b2de81dafc08da7051d992325d6e67daa9045a918fffdbea
SUITE=trixie

dest=${1:?usage: fetch_micropython.sh DEST_DIR}
mkdir -p "$(dirname "$dest")"
dest=$(cd "$(dirname "$dest")" && pwd)/$(basename "$dest")
work=$(dirname "$dest")/.mpy-download
mkdir -p "$work/sourceparts"

if [ -f "$dest/py/mpconfig.h" ]; then
    echo "micropython: $dest already present"
    exit 0
fi

if [ ! -f "$work/$TARBALL" ] || ! echo "$SHA256  $work/$TARBALL" | sha256sum -c --quiet - 2>/dev/null; then
    uri=""
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)
    fi
    if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
        uri=$(awk '$1=="deb" && $0 !~ /security/ {for (i=2;i<=NF;i++) if ($i ~ /:\/\//) {print $i; exit}}' /etc/apt/sources.list)
    fi
    if [ -z "$uri" ]; then
        echo "micropython: no Debian apt source found in /etc/apt; set MICROPY_DIR to a v$VERSION checkout" >&2
        exit 1
    fi
    mkdir -p "$work/lists/partial" "$work/archives/partial"
    echo "deb-src $uri $SUITE main" > "$work/sources.list"
    aptopts=(-o Dir::Etc::sourcelist="$work/sources.list" -o Dir::Etc::sourceparts="$work/sourceparts"
             -o Dir::State::Lists="$work/lists" -o Dir::Cache::archives="$work/archives"
             -o APT::Sandbox::User=root)
    apt-get "${aptopts[@]}" update >/dev/null
    (cd "$work" && apt-get "${aptopts[@]}" source --download-only "micropython=$DEB_VERSION" >/dev/null)
    echo "$SHA256  $work/$TARBALL" | sha256sum -c --quiet -
fi

rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
tar -xf "$work/$TARBALL" -C "$dest.tmp" --strip-components=1
mv "$dest.tmp" "$dest"
echo "micropython: $VERSION unpacked in $dest"
