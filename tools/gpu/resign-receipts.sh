#!/usr/bin/env bash
# tools/gpu/resign-receipts.sh OUTDIR KEY: signs receipts/h200/delivery.zip
# again on the host that holds its private key, so its envelope covers every
# raw record of every attempt (subject rule 2: docs/bundle-format.md, "Raw and
# derived members").  The committed envelope is of rule 1: it verifies, with
# a note that the attempts' warm-up, calibration, flush, binding, graph-node,
# validation, sample-check, cold-timing and device records are not covered.
# Run from the repository root after `make DEPS=.deps`; KEY is the private key
# whose public half is receipts/h200/evidence-key.pub (mode 600).  Writes
# OUTDIR/delivery.zip.intoto.json and OUTDIR/verify.txt; copy the envelope to
# receipts/h200/ and commit it when verify.txt ends in PASS without the
# "subject rule 1" note.  Nothing is measured; a few seconds.
set -euo pipefail
out=${1:?usage: tools/gpu/resign-receipts.sh OUTDIR KEY}
key=${2:?usage: tools/gpu/resign-receipts.sh OUTDIR KEY}
mkdir -p "$out"
build/evident sign receipts/h200/delivery.zip --key "$key" --out "$out/delivery.zip.intoto.json"
build/verify-bundle receipts/h200/delivery.zip --key receipts/h200/evidence-key.pub \
    --attestation "$out/delivery.zip.intoto.json" --expect-root "$(cat receipts/h200/ROOT)" > "$out/verify.txt"
if grep -q "subject rule 1" "$out/verify.txt"; then
    echo "resign: the new envelope is still of rule 1: this build is older than the rule" >&2
    exit 1
fi
tail -1 "$out/verify.txt"
