#!/usr/bin/env bash
# Gate: a cpu bundle's report.html loads in headless Chromium (Debian's
# package, installed when missing) with no console message; screenshot taken.
set -euo pipefail
make test-browser
