#!/usr/bin/env bash
# Gate: every check suite again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
make -j2 asan
