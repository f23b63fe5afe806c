#!/bin/bash
# Compiles every engine source the way an op-selected firmware does (MICRONN_OPS="X": only X's
# kernel on) for each op the file mentions, and once with no op at all, with the firmware's
# warnings as errors: a helper only one op of a file uses must be compiled out with that op
# (an unused static function breaks `make firmware MODELS=...`, which selects the model's ops).
# Sources with per-type-family paths (they mention MICRONN_TYPE_, REF_FAMILY_FN or mn_check_family)
# are also compiled for each op with one type family only (MICRONN_TYPES="int8" and so on, as
# `make firmware MODELS=...` selects the models' families) and with none. Sources that mention
# MICRONN_PATCHES are also compiled for each op with patch-based execution on (PATCHES=1), those
# that mention MICRONN_DELEGATE with delegation on (DELEGATE=1).
# A selection whose preprocessed source (without line markers) equals one already compiled for the
# same file compiles to the same object and is not compiled again (a third of them).
# Usage: [ONLY=substring-of-path] opselect.sh ENGINE_DIR BACKEND CC [TARGET_FLAGS...]
#   e.g. opselect.sh usermod/micronn/engine generic gcc
#        opselect.sh usermod/micronn/engine dsp arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb
set -euo pipefail
engine=$1 backend=$2 cc=$3
shift 3
upper=$(echo "$backend" | tr a-z A-Z)
flags="$* -std=gnu99 -O2 -Wall -Wextra -Werror -Wpointer-arith -Wdouble-promotion
       -Wno-unused-parameter -I$engine -I$engine/kernels/reference -DMICRONN_KERNELS_$upper=1 -DMICRONN_OPS_ALL=0"
jobs=()
families="INT8 INT16 FLOAT32 HYBRID NONE"
# The engine's sources: the patterns of engine.mk (one place), then the backend's kernels.
# (read, not a word-split command substitution: the patterns must not be globbed in this directory)
read -ra pats <<< "$(sed -n 's/^MICRONN_ENGINE_PATTERNS := //p' "$engine/engine.mk")"
srcs=()
for p in "${pats[@]}" "kernels/$backend/*.c"; do
    srcs+=("$engine"/$p)
done
for f in "${srcs[@]}"; do
    if [ -n "${ONLY:-}" ] && [[ "$f" != *"$ONLY"* ]]; then continue; fi
    typed=""
    if grep -q 'MICRONN_TYPE_\|REF_FAMILY_FN\|mn_check_family' "$f"; then
        typed=$families
    fi
    for op in NONE $(grep -o 'MICRONN_OP_[A-Za-z0-9_]*' "$f" | sort -u | sed 's/^MICRONN_OP_//'); do
        jobs+=("$f $op ALL")
        for t in $typed; do
            jobs+=("$f $op $t")
        done
        if grep -q 'MICRONN_PATCHES' "$f"; then
            jobs+=("$f $op PATCHES")
        fi
        if grep -q 'MICRONN_DELEGATE' "$f"; then
            jobs+=("$f $op DELEGATE")
        fi
    done
done
seen=$(mktemp -d)
trap 'rm -rf "$seen"' EXIT
if ! printf '%s\n' "${jobs[@]}" | SEEN=$seen xargs -P "$(nproc)" -L 1 bash -c \
    'types=""; if [ "$2" = PATCHES ]; then types="-DMICRONN_PATCHES=1";
     elif [ "$2" = DELEGATE ]; then types="-DMICRONN_DELEGATE=1";
     elif [ "$2" != ALL ]; then types="-DMICRONN_TYPES_ALL=0 -DMICRONN_TYPE_$2=1"; fi
     cmd="'"$cc"' '"$(echo $flags)"' -DMICRONN_OP_$1=1 $types"
     set -o pipefail
     if key=$($cmd -E -P "$0" 2>/dev/null | md5sum) &&
        ! mkdir "$SEEN/$(basename "$0")-${key%% *}" 2>/dev/null; then exit 0; fi
     if ! out=$($cmd -c -o /dev/null "$0" 2>&1); then
         echo "opselect: $0 with only $1 enabled, types $2:"; echo "$out"; exit 1; fi
     touch "$SEEN/compiled-$(basename "$0")-$1-$2"'
then
    echo "opselect ($backend, $cc): some op selections do not compile (above)"
    exit 1
fi
echo "opselect ($backend, $cc): ${#jobs[@]} file x op x type family selections compile clean" \
    "($(ls "$seen" | grep -c '^compiled-') distinct sources compiled)"
