#!/usr/bin/env bash
# Gate: committed evidence.  For every receipts/<host>/: re-exporting
# evidence.db with the current code gives delivery.zip byte for byte
# (receipt equality), its root equals ROOT, and the bundle verifies against
# this tree (--source-tree .) with that root.  Stale or tampered evidence
# fails CI.
set -euo pipefail
n=0
for db in receipts/*/evidence.db; do
    [ -e "$db" ] || continue
    dir=$(dirname "$db")
    tmp=$(mktemp -d)
    root=$(build/evident export --db "$db" --out "$tmp/re.zip")
    if ! cmp -s "$tmp/re.zip" "$dir/delivery.zip"; then
        echo "receipts: $dir: re-exporting evidence.db does not give delivery.zip byte for byte: run 'make receipts' and commit"
        exit 1
    fi
    if [ "$root" != "$(cat "$dir/ROOT")" ]; then
        echo "receipts: $dir: root $root differs from ROOT $(cat "$dir/ROOT")"
        exit 1
    fi
    build/verify-bundle "$dir/delivery.zip" --source-tree . --expect-root "$(cat "$dir/ROOT")"
    rm -rf "$tmp"
    n=$((n + 1))
done
echo "receipts: $n host bundle(s) equal their re-export and verify"
