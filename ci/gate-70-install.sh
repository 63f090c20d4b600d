#!/usr/bin/env bash
# Gate: make install gives programs that run with the build tree gone.
#  1. make install into a temporary PREFIX; the build tree is moved away
#     and, from a directory outside the checkout, the installed evident run
#     (protocols/quick.json from PREFIX/share/evident, cpu backend), export
#     and verify-bundle (--source-tree PREFIX/share/evident, --expect-root
#     the export's root) pass; a program built with pkg-config against the
#     installed headers and library runs;
#  2. make uninstall (the build tree still away) leaves nothing under PREFIX;
#  3. a DESTDIR staging (PREFIX=/usr/local) writes only under DESTDIR, its
#     evident.pc names /usr/local, the staged programs run from where they
#     lie, and make uninstall with the same DESTDIR leaves nothing.
set -euo pipefail
build=${BUILD:-build}
repo=$(pwd)
tmp=$(mktemp -d)
away=
restore() {
    if [ -n "$away" ] && [ -d "$away" ]; then mv "$away" "$repo/$build"; fi
    rm -rf "$tmp"
}
trap restore EXIT

prefix=$tmp/prefix
make --no-print-directory install PREFIX="$prefix"
away=$tmp/build-away
mv "$repo/$build" "$away"
echo "install: $build moved away; running the installed programs from $tmp/work"

mkdir "$tmp/work"
(
    cd "$tmp/work"
    share=$prefix/share/evident
    "$prefix/bin/evident" run --protocol "$share/protocols/quick.json" --backend cpu --db run.db \
        > run.txt 2> run.log || { cat run.log run.txt; exit 1; }
    head -n 1 run.txt
    root=$("$prefix/bin/evident" export --db run.db --out delivery.zip)
    "$prefix/bin/verify-bundle" delivery.zip --source-tree "$share" --expect-root "$root" > verify.txt
    tail -n 1 verify.txt
    echo "install: the installed run, export and verify-bundle pass (root $root)"

    cat > pc.c <<'EOF'
#include <stdio.h>
#include "sha256.h"
#include "status.h"
int main(void)
{
    uint8_t d[EV_SHA256_LEN];
    if (ev_sha256_buf("abc", 3, d))
        return 1;
    printf("sha256(abc) %02x%02x%02x%02x..., %s\n", d[0], d[1], d[2], d[3], ev_strerror(EV_EIO));
    return d[0] == 0xba && d[1] == 0x78 ? 0 : 1;
}
EOF
    export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
    # shellcheck disable=SC2046
    cc -std=c11 pc.c $(pkg-config --cflags evident) $(pkg-config --libs evident) -o pc
    ./pc
    echo "install: a program built with pkg-config --cflags --libs evident runs"
)

make --no-print-directory uninstall PREFIX="$prefix"
if [ -e "$prefix" ]; then
    echo "install: make uninstall left files under $prefix:"; find "$prefix" | head -n 20; exit 1
fi
echo "install: make uninstall removed everything make install put under the PREFIX"

mv "$away" "$repo/$build"
away=
stage=$tmp/stage
before=$(ls -A /usr/local/share 2>/dev/null | grep -c '^evident$' || true)
make --no-print-directory install DESTDIR="$stage" PREFIX=/usr/local
grep -qx 'prefix=/usr/local' "$stage/usr/local/lib/pkgconfig/evident.pc" ||
    { echo "install: the staged evident.pc does not name prefix=/usr/local"; exit 1; }
after=$(ls -A /usr/local/share 2>/dev/null | grep -c '^evident$' || true)
[ "$before" = "$after" ] || { echo "install: DESTDIR staging wrote into /usr/local"; exit 1; }
mv "$stage/usr/local" "$tmp/moved"
"$tmp/moved/bin/evident" run --protocol "$tmp/moved/share/evident/protocols/quick.json" --backend cpu \
    --db "$tmp/staged.db" > /dev/null 2> "$tmp/staged.log" || { cat "$tmp/staged.log"; exit 1; }
"$tmp/moved/bin/evident" export --db "$tmp/staged.db" --out "$tmp/staged.zip" > "$tmp/staged.root"
"$tmp/moved/bin/verify-bundle" "$tmp/staged.zip" --expect-root "$(cat "$tmp/staged.root")" > /dev/null
echo "install: a DESTDIR staging moved elsewhere runs from where it lies"
mv "$tmp/moved" "$stage/usr/local"
make --no-print-directory uninstall DESTDIR="$stage" PREFIX=/usr/local
left=$(find "$stage" -mindepth 1 ! -type d | head -n 5)
[ -z "$left" ] || { echo "install: make uninstall left in the staging: $left"; exit 1; }
echo "install: gate passed"
