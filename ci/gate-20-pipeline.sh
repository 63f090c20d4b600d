#!/usr/bin/env bash
# Gate: the whole pipeline on the cpu backend with protocols/quick.json,
# twice; each bundle verifies, and --compare of the two reports (strict
# differences reported, timings as ratios, not gated).
set -euo pipefail
out=build/ci-pipeline
rm -rf "$out"; mkdir -p "$out"
for i in 1 2; do
    build/evident run --protocol protocols/quick.json --backend cpu --db "$out/run$i.db"
    build/evident export --db "$out/run$i.db" --out "$out/run$i.zip" > "$out/run$i.root"
    build/verify-bundle "$out/run$i.zip" --source-tree . --expect-root "$(cat "$out/run$i.root")"
done
build/verify-bundle --compare "$out/run1.zip" "$out/run2.zip"
echo "pipeline: two quick cpu runs verified and compared"
