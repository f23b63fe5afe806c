#!/bin/bash
# Compiles every engine source the way an op-selected firmware does (MICRONN_OPS="X": only X's
# kernel on) for each op the file mentions, and once with no op at all, with the firmware's
# warnings as errors: a helper only one op of a file uses must be compiled out with that op
# (an unused static function breaks `make firmware MODELS=...`, which selects the model's ops).
# Usage: opselect.sh ENGINE_DIR BACKEND CC [TARGET_FLAGS...]
#   e.g. opselect.sh usermod/micronn/engine generic gcc
#        opselect.sh usermod/micronn/engine dsp arm-none-eabi-gcc -mcpu=cortex-m4 -mthumb
set -euo pipefail
engine=$1 backend=$2 cc=$3
shift 3
upper=$(echo "$backend" | tr a-z A-Z)
flags="$* -std=gnu99 -O2 -c -o /dev/null -Wall -Wextra -Werror -Wpointer-arith -Wdouble-promotion
       -Wno-unused-parameter -I$engine -I$engine/kernels/reference -DMICRONN_KERNELS_$upper=1 -DMICRONN_OPS_ALL=0"
jobs=()
for f in "$engine"/*.c "$engine"/kernels/*.c "$engine"/kernels/reference/*.c "$engine"/kernels/custom/*.c \
         "$engine"/kernels/"$backend"/*.c; do
    jobs+=("$f NONE")
    for op in $(grep -o 'MICRONN_OP_[A-Za-z0-9_]*' "$f" | sort -u | sed 's/^MICRONN_OP_//'); do
        jobs+=("$f $op")
    done
done
if ! printf '%s\n' "${jobs[@]}" | xargs -P "$(nproc)" -L 1 bash -c \
    'if ! out=$('"$cc"' '"$(echo $flags)"' -DMICRONN_OP_$1=1 "$0" 2>&1); then
         echo "opselect: $0 with only $1 enabled:"; echo "$out"; exit 1; fi'
then
    echo "opselect ($backend, $cc): some op selections do not compile (above)"
    exit 1
fi
echo "opselect ($backend, $cc): ${#jobs[@]} file x op compiles clean"
