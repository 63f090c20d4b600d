#!/bin/sh
# mk/closure.sh: the measurement closure, from the build's own dependency
# files (make writes $(BUILD)/closure.list with it, and mk/closure.list
# from that: src/runner/module.mk).
#
# The closure is what the measuring process is built from: every source
# and header of every object linked into the worker (the archive members
# its link map says were pulled, and the objects linked directly), as the
# compilers' dependency files (-MMD of cc, -MMD of nvcc) list them, plus
# the files the worker reads at run time that no compiler sees (DATA: the
# torch peer's script, the kernels' flags, the protocols, the store's
# schema).  Where nvcc is absent the CUDA objects are not built: their
# sources and headers are then the host preprocessor's view of the same
# files (cc -MM -MG, the project's headers only, as nvcc's -MMD lists
# them; ci/gate-25-closure.sh checks the two agree where nvcc is present).
# Paths are relative to the repository root; system headers, packages
# unpacked under a dot directory (DEPS=.deps) and generated files under
# BUILD are not sources of the tree and are left out.  One path a line,
# sorted bytewise, each once, on stdout.
#
# From make: BUILD, MAP (the worker's link map), DIRECT (objects linked
# directly), OBJS (every object an archive of the link may hold, to name
# its members), CUDA_SRC (the .cu files of the CUDA objects), CC, CPPFLAGS
# (for the .cu files without nvcc), DATA.
set -eu
: "${BUILD:?}" "${MAP:?}" "${OBJS:?}"
DIRECT=${DIRECT:-}
CUDA_SRC=${CUDA_SRC:-}
DATA=${DATA:-}

tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.members" "$tmp.objs" "$tmp.d"' EXIT

# the members the link pulled from the build's own archives: the
# "BUILD/lib.a(member.o)" lines that open the map's list of members
awk -v b="$BUILD/" 'index($0, b) == 1 && match($0, /^[^ (]*\.a\([^)]*\.o\)/) {
        s = substr($0, 1, RLENGTH); sub(/^[^(]*\(/, "", s); sub(/\)$/, "", s); print s }' "$MAP" |
    LC_ALL=C sort -u > "$tmp.members"
[ -s "$tmp.members" ] || { echo "mk/closure.sh: $MAP names no member of an archive under $BUILD/ (a linker whose map says it otherwise?)" >&2; exit 1; }
: > "$tmp.objs"
for m in $(cat "$tmp.members"); do
    hit=""
    for o in $OBJS; do
        case $o in */"$m")
            [ -z "$hit" ] || { echo "mk/closure.sh: two objects are archive member $m ($hit, $o): give one another name" >&2; exit 1; }
            hit=$o ;;
        esac
    done
    [ -n "$hit" ] || { echo "mk/closure.sh: the link pulled $m, which no object of the build is" >&2; exit 1; }
    echo "$hit" >> "$tmp.objs"
done
for o in $DIRECT; do echo "$o" >> "$tmp.objs"; done

# deps: the prerequisites of a dependency file's first rule
deps() {
    awk 'BEGIN { rule = 0 }
         { line = $0; cont = sub(/\\$/, "", line); if (!rule) buf = buf " " line; if (!cont) rule = 1 }
         END { sub(/^[^:]*:/, "", buf); n = split(buf, f, /[ \t]+/); for (i = 1; i <= n; i++) if (f[i] != "") print f[i] }' "$1"
}

for o in $(cat "$tmp.objs"); do
    d=${o%.o}.d
    [ -f "$d" ] || { echo "mk/closure.sh: $d is missing (built without -MMD?): rebuild" >&2; exit 1; }
    deps "$d" >> "$tmp"
done
# the CUDA objects' sources where nvcc did not build them (no dependency
# file of a pulled object names the source: a source may be several
# objects, one a dtype, kernels/build.mk)
for c in $CUDA_SRC; do
    grep -qxF "$c" "$tmp" && continue
    # shellcheck disable=SC2086
    ${CC:-cc} $CPPFLAGS -MM -MG -x c++ -D__CUDACC__ "$c" -MT x.o > "$tmp.d"
    deps "$tmp.d" >> "$tmp"
    rm -f "$tmp.d"
done
for f in $DATA; do echo "$f" >> "$tmp"; done

sed 's|^\./||' "$tmp" | awk -v b="$BUILD/" '
    /^\// { next }                       # system and absolute paths
    /^\./ { next }                       # .deps/ and other dot directories
    index($0, b) == 1 { next }           # generated under BUILD
    index($0, "/.") > 0 { next }
    { print }' | LC_ALL=C sort -u
