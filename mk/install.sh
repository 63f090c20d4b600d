#!/bin/sh
# mk/install.sh install|uninstall: make install and make uninstall.
#
# Installs under ROOT = DESTDIR + PREFIX everything `evident run` needs, so
# that the installed programs run with the build tree gone:
#   bin/evident, bin/verify-bundle
#   libexec/evident/evident-worker, libexec/evident/evident-kernel-host
#     (beside the worker: an external kernel's own process on cpu),
#     libexec/evident/peer_torch.py, libexec/evident/python_host.py (a
#     Python arm's own process) and libexec/evident/libevident_ops_cpu.so
#     (its plants and checks on cpu), and libexec/evident/libevident_ops.so
#     where the build has it (nvcc: the torch peer's and a Python arm's
#     plants and checks on cuda, beside the worker that finds it)
#   share/evident/: the measurement closure a run snapshots (the files of
#     mk/closure.list and the list: docs/runner.md, "Provenance"), its
#     .evident-stamp (the commit and dirty flag of this
#     checkout, for the installed files' tree hash), and the protocols;
#     share/evident/views.sql (db/views.sql, the store's views)
#   lib/libevident.a, include/evident/ (the library's headers, in their
#     source directories), lib/pkgconfig/evident.pc
# The installed evident finds them from its own location (src/cli/
# cli_paths.c), never through PREFIX, so a DESTDIR staging works when
# moved.  Every file and every directory install creates is listed in
# share/evident/install-manifest; uninstall removes exactly those (a
# directory only when it is empty again), the manifest included.  Installing
# over an earlier installation uninstalls that one first.
#
# From make: BUILD, PREFIX, DESTDIR, VERSION, CC.
set -eu
action=${1:?usage: mk/install.sh install|uninstall}
: "${BUILD:?}" "${PREFIX:?}" "${VERSION:?}"
DESTDIR=${DESTDIR:-}
case $PREFIX in /*) ;; *) echo "make $action: PREFIX must be an absolute path, not '$PREFIX'" >&2; exit 2 ;; esac
root=$DESTDIR$PREFIX
manifest_rel=share/evident/install-manifest
manifest=$root/$manifest_rel

uninstall() {
    if [ ! -f "$manifest" ]; then
        echo "make uninstall: nothing to do: no $manifest (evident is not installed under $root)"
        return 0
    fi
    files=$(awk '$1 == "f" { print $2 }' "$manifest")
    dirs=$(awk '$1 == "d" { print $2 }' "$manifest" | LC_ALL=C sort -r) # deepest first; "." last
    nf=0
    nd=0
    kept=""
    for rel in $files; do
        rm -f "$root/$rel"
        nf=$((nf + 1))
    done
    for rel in $dirs; do
        d=$root/$rel
        [ "$rel" != . ] || d=$root
        if rmdir "$d" 2>/dev/null; then
            nd=$((nd + 1))
        elif [ -d "$d" ]; then
            kept="$kept $d"
        fi
    done
    echo "make uninstall: removed $nf files and $nd directories from $root"
    [ -z "$kept" ] || echo "make uninstall: kept$kept: they hold files make install did not put there"
}

if [ "$action" = uninstall ]; then
    uninstall
    exit 0
fi
[ "$action" = install ] || { echo "mk/install.sh: unknown action '$action'" >&2; exit 2; }

for f in "$BUILD/evident" "$BUILD/verify-bundle" "$BUILD/evident-worker" "$BUILD/evident-kernel-host" \
    "$BUILD/libevident.a"; do
    [ -f "$f" ] || { echo "make install: $f is missing (run make first)" >&2; exit 2; }
done
[ -f "$manifest" ] && uninstall

list=$(mktemp)
trap 'rm -f "$list"' EXIT
if [ ! -d "$root" ]; then
    mkdir -p "$root"
    echo "d ." >> "$list"
fi

# mkdirs REL: creates ROOT/REL and each missing parent, listing the new ones
mkdirs() {
    d=$1
    todo=""
    while [ "$d" != . ] && [ ! -d "$root/$d" ]; do
        todo="$d $todo"
        d=$(dirname "$d")
    done
    for d in $todo; do
        mkdir "$root/$d"
        echo "d $d" >> "$list"
    done
}

# put SRC REL MODE: installs SRC as ROOT/REL
put() {
    mkdirs "$(dirname "$2")"
    install -m "$3" "$1" "$root/$2"
    echo "f $2" >> "$list"
}

put "$BUILD/evident" bin/evident 0755
put "$BUILD/verify-bundle" bin/verify-bundle 0755
put "$BUILD/evident-worker" libexec/evident/evident-worker 0755
put "$BUILD/evident-kernel-host" libexec/evident/evident-kernel-host 0755
put kernels/peer_torch.py libexec/evident/peer_torch.py 0644
put kernels/python_host.py libexec/evident/python_host.py 0644
put "$BUILD/libevident_ops_cpu.so" libexec/evident/libevident_ops_cpu.so 0755
if [ -f "$BUILD/libevident_ops.so" ]; then
    put "$BUILD/libevident_ops.so" libexec/evident/libevident_ops.so 0755
fi
put "$BUILD/libevident.a" lib/libevident.a 0644

# the measurement closure, exactly as a run in this checkout snapshots it
# (regular files; symlinks are skipped there too): its tree hash is then
# this checkout's, and the stamp below names it; its files come from the
# program that owns the rule (src/common/closure.c: mk/closure.list)
roots=$("$BUILD/evident" stamp --roots)
for f in $(find $roots -type f | LC_ALL=C sort); do
    case $f in *[!A-Za-z0-9._/+-]*) echo "make install: odd file name '$f' in the closure" >&2; exit 1 ;; esac
    put "$f" "share/evident/$f" 0644
done

# the store's views for the sqlite3 CLI (docs/store.md): not part of the
# closure, beside it
put db/views.sql share/evident/views.sql 0644

# the library's headers (not the modules' *_int.h), in their directories
for f in $(find src -name '*.h' ! -name '*_int.h' ! -path 'src/cli/*' ! -path '*/fixture/*' | LC_ALL=C sort); do
    put "$f" "include/evident/${f#src/}" 0644
done
for f in $(find kernels -maxdepth 1 -name '*.h' | LC_ALL=C sort); do
    put "$f" "include/evident/$f" 0644
done

pc=$(mktemp)
cat > "$pc" <<PC
prefix=$PREFIX
exec_prefix=\${prefix}
libdir=\${exec_prefix}/lib
includedir=\${prefix}/include

Name: evident
Description: GPU benchmark evidence: store, exporter, verifier (static library)
Version: $VERSION
Requires: sqlite3 libzip libcjson libcrypto zlib
Libs: -L\${libdir} -levident -lm -lpthread
Cflags: -I\${includedir}/evident -I\${includedir}/evident/common -I\${includedir}/evident/kernels
PC
put "$pc" lib/pkgconfig/evident.pc 0644
rm -f "$pc"

# the stamp: this checkout's commit and dirty flag for the closure above
stamp=share/evident/.evident-stamp
if "$BUILD/evident" stamp --out "$root/$stamp" >/dev/null 2>&1; then
    echo "f $stamp" >> "$list"
elif [ -f .evident-stamp ]; then
    put .evident-stamp "$stamp" 0644
else
    echo "make install: no git checkout and no .evident-stamp here: installed runs record the commit as unknown"
fi

# the manifest: every directory created ("d") and file installed ("f")
echo "f $manifest_rel" >> "$list"
install -m 0644 "$list" "$manifest"
echo "make install: $(grep -c '^f ' "$list") files into $root (listed in $manifest)"
