#!/usr/bin/env bash
# Gate: layout (clang-format) and the banned-function list of STYLE.md.
set -euo pipefail
make lint
