#!/usr/bin/env bash
# Gate: the fuzz targets replay their committed corpus, then each is fuzzed
# for FUZZ_SECONDS (60 by default).
set -euo pipefail
make fuzz-build
make fuzz-replay
make fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
