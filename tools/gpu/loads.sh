#!/usr/bin/env bash
# On the GPU host (docs/perf-notes.md, v3): kernel-bench of the load modes of
# kernels/reduce_default.cuh (EV_LOAD_MODE 0..4) side by side on the seed
# cases, each built in its own BUILD directory (tools/gpu/ab.sh does the work).
#   usage: tools/gpu/loads.sh [MODES] [KB_CASES]
set -uo pipefail
variants=""
for m in ${1:-0 1 2 3}; do
    variants="$variants m$m=-DEV_LOAD_MODE=$m"
done
exec bash "$(dirname "$0")/ab.sh" "$variants" "${2:-0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15}"
