#!/usr/bin/env bash
# tools/gpu/every-op-cost.sh OUTDIR [STEP] [BEFORE]: what the plants and
# checks (docs/defenses.md, "Every op earns its time") cost honest arms on
# the GPU host: protocols/seed16.json (the seed cases: ours, cub,
# torch-compile, the floor and the ceiling) run by the build before the
# plants (BEFORE, default 6065926) and by this tree, in turns, each build
# twice, then the ratio of the honest medians after / before per case and
# arm (tools/every-op-compare.py).  Run from the repository root with
# .deps carried; every step is well under 10 minutes, so run them one by
# one where a command's time is bounded:
#   tools/gpu/every-op-cost.sh OUT build      both builds (OUT/before is a git worktree of BEFORE,
#                                             or BEFORE's files where BEFORE names a tar file:
#                                             the device's copy may hold no history, so make it
#                                             here with `git archive -o gpu-work/before.tar
#                                             6065926` and carry gpu-work/before.tar)
#   tools/gpu/every-op-cost.sh OUT before-1   one run of seed16.json by BEFORE   (about 4 min)
#   tools/gpu/every-op-cost.sh OUT after-1    one run by this tree               (about 4 min)
#   tools/gpu/every-op-cost.sh OUT before-2   ...and again, in turns
#   tools/gpu/every-op-cost.sh OUT after-2
#   tools/gpu/every-op-cost.sh OUT compare    OUT/cost.txt: the ratios, per arm their geometric mean
# STEP all runs them in that order.  What to look for: every honest arm
# completes after as before (OUT/after-*.log's run line); the per-arm
# geometric means of after / before (the per-op cost of the plant and
# check nodes; the floor's ratio is theirs alone on an empty op); OUT/
# after-*.verify PASS.
set -uo pipefail
out=${1:?usage: tools/gpu/every-op-cost.sh OUTDIR [build|before-N|after-N|compare|all] [BEFORE]}
step=${2:-all}
before=${3:-6065926}
proto=protocols/seed16.json
mkdir -p "$out"
out=$(cd "$out" && pwd)

build() {
    if [ ! -d "$out/before" ] && [ -f "$before" ]; then
        mkdir -p "$out/before" && tar -xf "$before" -C "$out/before" || return 1
        [ -d .deps ] && ln -s "$(pwd)/.deps" "$out/before/.deps"
    elif [ ! -d "$out/before" ]; then
        git worktree add --detach "$out/before" "$before" > "$out/worktree.log" 2>&1 || {
            cat "$out/worktree.log"
            return 1
        }
        [ -d .deps ] && ln -s "$(pwd)/.deps" "$out/before/.deps"
    fi
    (cd "$out/before" && make DEPS=.deps -j16 all) > "$out/build-before.log" 2>&1 || {
        tail -20 "$out/build-before.log"
        return 1
    }
    make DEPS=.deps -j16 all > "$out/build-after.log" 2>&1 || {
        tail -20 "$out/build-after.log"
        return 1
    }
    echo "built: before $( (cd "$out/before" && git rev-parse --short HEAD 2>/dev/null) || echo "$before"), after $(git rev-parse --short HEAD)"
}

# run WHICH N: one run of the protocol by that build into OUT/WHICH-N.db,
# exported and verified.
run() {
    local which=$1 n=$2 dir=.
    [ "$which" = before ] && dir="$out/before"
    local db="$out/$which-$n.db"
    rm -rf "$db" "$db"-* "$db".lock "$db".torch-cache-*
    (cd "$dir" && build/evident run --protocol "$proto" --backend cuda --db "$db") > "$out/$which-$n.log" 2>&1
    echo "$which-$n: run rc=$? $(grep -E '^run ' "$out/$which-$n.log")"
    (cd "$dir" && build/evident export --db "$db" --out "$out/$which-$n.zip" > /dev/null 2>&1 &&
        build/verify-bundle "$out/$which-$n.zip" > "$out/$which-$n.verify" 2>&1)
    echo "$which-$n: verify $(tail -1 "$out/$which-$n.verify" 2>/dev/null)"
}

case "$step" in
build) build ;;
before-*) run before "${step#before-}" ;;
after-*) run after "${step#after-}" ;;
compare)
    python3 tools/every-op-compare.py "$out"/before-*.db "$out"/after-*.db | tee "$out/cost.txt" ;;
all)
    build && run before 1 && run after 1 && run before 2 && run after 2 &&
        python3 tools/every-op-compare.py "$out"/before-*.db "$out"/after-*.db | tee "$out/cost.txt" ;;
*)
    echo "tools/gpu/every-op-cost.sh: unknown step '$step' (build, before-N, after-N, compare, all)" >&2
    exit 2 ;;
esac
