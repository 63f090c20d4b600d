#!/usr/bin/env bash
# Gate: your kernel, from your own directory, with the installed programs
# (README, "Measure your kernel"; docs/external-kernels.md).
#  1. make install into a temporary PREFIX; examples/cpu-c (a C kernel and
#     a protocol of cases and kernels only: the default profile) copied to
#     a directory outside the checkout and run there by the installed
#     evident, the protocol by a relative path; the run exits 0, its
#     kernel's files are the bundle's sources/external/ext-rows/ members;
#  2. in a third directory with no tree at all, verify-bundle passes from
#     the bundle alone (check 10 rebuilds the kernel from its members), and
#     with --kernel-tree the user's directory; a file edited there
#     afterwards FAILs --kernel-tree naming it;
#  3. the same kernel off by one (its sum leaves out the last column) fails
#     validation, and the run's summary names the stage, the first bad
#     row, the value, the expected value, the error and the bound;
#  4. a protocol whose kernel source escapes its directory ('..') is
#     refused in one line naming it, and no store is made.
set -euo pipefail
repo=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
make --no-print-directory install PREFIX="$prefix" > "$tmp/install.log" 2>&1 ||
    { cat "$tmp/install.log"; exit 1; }
evident=$prefix/bin/evident
verify=$prefix/bin/verify-bundle

mine=$tmp/mine
cp -r "$repo/examples/cpu-c" "$mine"
(
    cd "$mine"
    "$evident" run --protocol protocol.json --db run.db > run.txt 2> run.log || { cat run.log run.txt; exit 1; }
    "$evident" export --db run.db --out run.zip > root.txt
)
grep -E '^run 1:' "$mine/run.txt"
python3 - "$mine/run.zip" <<'EOF'
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
want = "sources/external/ext-rows/rows.c"
if want not in names:
    sys.exit("your-kernel: %s is not in the bundle: %s" % (want, [n for n in names if "external" in n]))
EOF
echo "your-kernel: the installed evident ran examples/cpu-c from $mine; the bundle holds sources/external/ext-rows/rows.c"

third=$tmp/third
mkdir "$third"
(
    cd "$third"
    "$verify" "$mine/run.zip" --expect-root "$(cat "$mine/root.txt")" > alone.txt ||
        { cat alone.txt; exit 1; }
    grep -q "kernel ext-rows: rebuilt from the bundle's" alone.txt ||
        { echo "your-kernel: check 10 did not rebuild the kernel:"; grep -E 'rebuild' alone.txt; exit 1; }
    "$verify" "$mine/run.zip" --kernel-tree "$mine" > kt.txt || { cat kt.txt; exit 1; }
    grep -q "1 kernel files equal the kernel tree's, and protocol.json its protocol file" kt.txt ||
        { echo "your-kernel: --kernel-tree did not compare the files:"; grep -E '^7 ' -A2 kt.txt; exit 1; }
)
echo "your-kernel: verify-bundle in a directory with no tree passes from the bundle alone and with --kernel-tree"
printf '\n' >> "$mine/rows.c"
if "$verify" "$mine/run.zip" --kernel-tree "$mine" > "$tmp/edited.txt" 2> "$tmp/edited.err"; then
    echo "your-kernel: --kernel-tree passed a directory whose rows.c was edited"; exit 1
fi
grep -q "FAIL sources: sources/external/ext-rows/rows.c: differs from the kernel tree's rows.c" "$tmp/edited.err" ||
    { cat "$tmp/edited.err"; exit 1; }
echo "your-kernel: an edited rows.c FAILs --kernel-tree, naming it"

off=$tmp/off-by-one
cp -r "$repo/examples/cpu-c" "$off"
sed -i 's|c < cols; c++) /\* every column \*/|c < cols - 1; c++) /* off by one */|' "$off/rows.c"
! cmp -s "$off/rows.c" "$repo/examples/cpu-c/rows.c" ||
    { echo "your-kernel: the off-by-one edit did not apply to rows.c"; exit 1; }
(
    cd "$off"
    "$evident" run --protocol protocol.json --db run.db --arms ext-rows > run.txt 2> run.log ||
        { cat run.log run.txt; exit 1; }
)
line=$(grep -E 'ext-rows/.*: first stage: 65 of 65 rows wrong; the first, row 0, is [^ ]+ where [^ ]+ is expected \(error [^ ]+, bound [^ ]+\)' "$off/run.txt" | head -n 1)
[ -n "$line" ] || { echo "your-kernel: the off-by-one kernel's reason does not name its first bad row:"; cat "$off/run.txt"; exit 1; }
echo "your-kernel: the off-by-one kernel fails, and the summary says where:"
echo "$line"

esc=$tmp/escape
mkdir "$esc"
cp "$repo/examples/cpu-c/rows.c" "$tmp/rows.c"
sed 's|"cpu": "rows.c"|"cpu": "../rows.c"|' "$repo/examples/cpu-c/protocol.json" > "$esc/protocol.json"
if "$evident" run --protocol "$esc/protocol.json" --db "$esc/run.db" > "$esc/run.txt" 2> "$esc/run.err"; then
    echo "your-kernel: a source outside the protocol's directory was run"; exit 1
fi
[ "$(wc -l < "$esc/run.err")" = 1 ] && grep -q "'../rows.c' must be a relative path inside the protocol's directory" "$esc/run.err" ||
    { echo "your-kernel: the escape's refusal is not one line naming it:"; cat "$esc/run.err"; exit 1; }
[ ! -e "$esc/run.db" ] || { echo "your-kernel: the refused run left a store"; exit 1; }
echo "your-kernel: a source escaping its protocol's directory is refused in one line: $(cat "$esc/run.err")"
make --no-print-directory uninstall PREFIX="$prefix" > /dev/null
echo "your-kernel: gate passed"
