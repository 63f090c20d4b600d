#!/usr/bin/env bash
# tools/under-load.sh [--busy N] [--make] [--log FILE] -- CMD...: runs CMD
# on a deliberately busy host and exits with CMD's status.  The load:
#   --busy N  N shell busy loops (`sh -c 'while :; do :; done'`), default 2;
#   --make    also `make -j2 clean all` of a scratch copy of this tree, in a
#             loop (a copy under $TMPDIR, so this tree's build/ is untouched).
# Every 5 s the 1-minute load average (/proc/loadavg) is appended to
# --log FILE (default: none), and the lowest, mean and highest seen while
# CMD ran are printed on stderr at the end ("load: min 3.9 mean 4.6 max
# 5.8").  Every process it started is stopped on every exit path.
# The repeated runs in docs/experiments/fresh-machine.md use it.
set -u
busy=2 make_loop=0 log=
while [ $# -gt 0 ]; do
    case $1 in
    --busy) busy=$2; shift 2 ;;
    --make) make_loop=1; shift ;;
    --log) log=$2; shift 2 ;;
    --) shift; break ;;
    *) break ;;
    esac
done
[ $# -gt 0 ] || { echo "usage: tools/under-load.sh [--busy N] [--make] [--log FILE] -- CMD..." >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
pids=()
scratch=
cleanup() {
    for p in "${pids[@]}"; do kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
    [ -n "$scratch" ] && rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
set -m # each background job in its own process group: kill -- -PID ends its children too
for _ in $(seq 1 "$busy"); do
    sh -c 'while :; do :; done' &
    pids+=($!)
done
if [ "$make_loop" = 1 ]; then
    scratch=$(mktemp -d "${TMPDIR:-/tmp}/ev-load.XXXXXX")
    git -C "$root" ls-files -z | (cd "$root" && xargs -0 cp --parents -t "$scratch") 2>/dev/null
    (cd "$scratch" && while :; do make -s -j2 clean >/dev/null 2>&1; make -s -j2 all >/dev/null 2>&1; done) &
    pids+=($!)
fi
set +m
readings=$(mktemp "${TMPDIR:-/tmp}/ev-loadavg.XXXXXX")
(
    while :; do
        read -r l _ </proc/loadavg
        echo "$(date -u +%H:%M:%S) $l"
        sleep 5
    done
) >"$readings" 2>/dev/null &
sampler=$!
"$@"
rc=$?
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null
awk '{n++; s+=$2; if(n==1||$2<lo)lo=$2; if($2>hi)hi=$2} END{if(n) printf "load: min %.2f mean %.2f max %.2f (%d readings)\n", lo, s/n, hi, n}' \
    "$readings" >&2
[ -n "$log" ] && cat "$readings" >>"$log"
rm -f "$readings"
exit $rc
