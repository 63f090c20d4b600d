#!/usr/bin/env bash
# On the GPU host (docs/runner.md, "Shards"): `evident run --gpus all` with a small cuda
# protocol, then export and verify the merged store's bundle.  On a host
# of one GPU this proves the path (one shard, its merges) on real
# hardware; on several it runs one shard per device at once.
#   usage: tools/gpu/gpus-proof.sh [PROTOCOL]   (after make DEPS=.deps)
set -uo pipefail
out=${OUT:-build/gpu-out}
protocol=${1:-protocols/gpus-h200.json}
db=build/gpus-proof.db
mkdir -p "$out"
rm -f "$db" "$db".*
start=$(date +%s)
build/evident run --protocol "$protocol" --backend cuda --gpus all --db "$db" > "$out/gpus-run.txt" 2>&1
echo "gpus run rc=$? wall $(( $(date +%s) - start )) s"; tail -8 "$out/gpus-run.txt"
build/evident export --db "$db" --out "$out/gpus-delivery.zip" > "$out/gpus-ROOT" &&
    build/verify-bundle "$out/gpus-delivery.zip" --source-tree . --expect-root "$(cat "$out/gpus-ROOT")" > "$out/gpus-verify.txt" 2>&1
echo "gpus export+verify rc=$?"; tail -6 "$out/gpus-verify.txt"
cp "$db" "$out/gpus-proof.db" 2>/dev/null
ls "$db".* 2>/dev/null
