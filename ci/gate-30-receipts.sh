#!/usr/bin/env bash
# Gate: committed evidence.  For every receipts/<host>/:
#  1. re-exporting evidence.db (or evidence.db.xz, mk/receipt-store.sh)
#     with the current code gives delivery.zip
#     byte for byte (receipt equality) and its root equals ROOT;
#  2. the bundle verifies, with that root, against the measured files of the
#     commit it was measured at (a `git archive` of that commit's tree, whose
#     closure verify-bundle reads by that commit's own rule: its
#     mk/closure.list, or before the list its roots), passed as
#     --source-tree: the commit the bundle records, or,
#     for a bundle that records a dirty tree, the commit named in
#     receipts/<host>/MEASURED_AT, whose measured files must then equal the
#     bundle's sources byte for byte (the verifier checks exactly that);
#  3. when HEAD's measured files differ from that commit's, it says the
#     evidence is stale and which files changed, without failing: a fix in
#     the runner lands on its own, and a kernel's claims need a new run.
#  4. where receipts/<host>/delivery.zip.intoto.json is committed, it
#     verifies with receipts/<host>/evidence-key.pub and the root;
#  5. its model.json refitted from its own observations as a CSV table
#     (evident fit --schedules) gives the same coefficients and choices.
# Stale, tampered or unverifiable evidence (a commit missing from the
# history, a dirty bundle without MEASURED_AT) fails CI.
set -euo pipefail
# HEAD's measurement closure, from the program that owns it
# (src/common/closure.c; docs/runner.md, "Provenance")
roots=$(build/evident stamp --roots)
mapfile -t head_closure <<< "$roots"
n=0
stale=0
signed=0
for dir in $(ls -d receipts/*/evidence.db receipts/*/evidence.db.xz 2>/dev/null | xargs -r -n1 dirname | sort -u); do
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    # the store, committed as is or compressed (evidence.db.xz)
    db=$(sh mk/receipt-store.sh "$dir" "$tmp/store.db")
    root=$(build/evident export --db "$db" --out "$tmp/re.zip")
    if ! cmp -s "$tmp/re.zip" "$dir/delivery.zip"; then
        echo "receipts: $dir: re-exporting evidence.db does not give delivery.zip byte for byte: run 'make receipts' and commit"
        exit 1
    fi
    if [ "$root" != "$(cat "$dir/ROOT")" ]; then
        echo "receipts: $dir: root $root differs from ROOT $(cat "$dir/ROOT")"
        exit 1
    fi
    read -r recorded dirty < <(python3 - "$dir/delivery.zip" <<'EOF'
import json, sys, zipfile
p = json.loads(zipfile.ZipFile(sys.argv[1]).read("provenance.json"))
print(p["git_commit"], "dirty" if p["git_dirty"] else "clean")
EOF
    )
    measured=$recorded
    if [ -f "$dir/MEASURED_AT" ]; then
        measured=$(tr -d ' \n' < "$dir/MEASURED_AT")
        if [ "$dirty" = clean ] && [ "$measured" != "$recorded" ]; then
            echo "receipts: $dir: the bundle records a clean tree at $recorded but MEASURED_AT says $measured: remove MEASURED_AT"
            exit 1
        fi
    elif [ "$dirty" = dirty ]; then
        echo "receipts: $dir: the bundle records a dirty tree at $recorded: name the commit whose measured files it ran in $dir/MEASURED_AT, or measure again from a clean tree"
        exit 1
    fi
    if ! git cat-file -e "$measured^{commit}" 2>/dev/null; then
        echo "receipts: $dir: commit $measured (where the evidence was measured) is not in this clone's history: fetch the full history (not a shallow clone)"
        exit 1
    fi
    mkdir "$tmp/tree"
    git archive "$measured" -- . ':(exclude)receipts' | tar -x -C "$tmp/tree"
    echo "receipts: $dir: verifying against the measured files of commit $measured (bundle records $recorded, $dirty)"
    build/verify-bundle "$dir/delivery.zip" --source-tree "$tmp/tree" --expect-root "$(cat "$dir/ROOT")"
    # 4. signed evidence (docs/threat-model.md): the envelope made on the host that
    #    measured verifies with the public key committed beside it, with the
    #    root; one without the other is an error.
    env_file=$dir/delivery.zip.intoto.json pub=$dir/evidence-key.pub
    if [ -e "$env_file" ] || [ -e "$pub" ]; then
        if [ ! -e "$env_file" ] || [ ! -e "$pub" ]; then
            echo "receipts: $dir: a signature needs both $env_file and $pub: commit both (tools/gpu/evidence.sh brings them back) or neither"
            exit 1
        fi
        build/verify-bundle "$dir/delivery.zip" --key "$pub" --attestation "$env_file" --expect-root "$(cat "$dir/ROOT")" >/dev/null ||
            { echo "receipts: $dir: the signature ($env_file) does not verify with $pub (verify-bundle above)"; \
              build/verify-bundle "$dir/delivery.zip" --key "$pub" --attestation "$env_file" --expect-root "$(cat "$dir/ROOT")" | grep -v "^  ok" ; exit 1; }
        echo "receipts: $dir: signed: the envelope verifies with $pub"
        signed=$((signed + 1))
    fi
    # 5. the model refitted from the bundle's own observations as a table
    #    (evident fit --observations --schedules) gives its coefficients and
    #    choices: the two ways into the fit agree (tools/model-regret.py)
    python3 tools/model-regret.py "$dir/delivery.zip" | sed 's/^/receipts: /' ||
        { echo "receipts: $dir: its model refitted from its observations differs from model.json"; exit 1; }
    # stale: a file of HEAD's closure or of the bundle's changed since
    mapfile -t bundle_sources < <(python3 -c 'import sys, zipfile
for n in zipfile.ZipFile(sys.argv[1]).namelist():
    if n.startswith("sources/"): print(n[8:])' "$dir/delivery.zip")
    changed=$(git diff --name-only "$measured" HEAD -- "${head_closure[@]}" "${bundle_sources[@]}")
    if [ -n "$changed" ]; then
        stale=$((stale + 1))
        echo "receipts: $dir: evidence is STALE for HEAD: measured at $measured; HEAD changes $(echo "$changed" | wc -l) measured file(s):"
        echo "$changed" | sed 's/^/    /'
        echo "receipts: $dir: its claims hold for commit $measured only; a kernel change needs a new run on the GPU host"
    fi
    rm -rf "$tmp"
    trap - EXIT
    n=$((n + 1))
done
echo "receipts: $n host bundle(s) equal their re-export and verify against the commit they were measured at ($stale stale for HEAD, $signed signed)"
