#!/usr/bin/env bash
# Gate: the fuzz targets replay their committed corpus, then each is fuzzed
# for FUZZ_SECONDS (60 by default).
set -euo pipefail
# libFuzzer needs clang and its runtime (Debian: clang, libclang-rt-14-dev).
if ! command -v clang >/dev/null 2>&1 || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq clang libclang-rt-14-dev >/dev/null
fi
make fuzz-build
make fuzz-replay
make fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
