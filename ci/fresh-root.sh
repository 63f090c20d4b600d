#!/usr/bin/env bash
# ci/fresh-root.sh [LOGDIR]: the README's two commands on a machine made
# from nothing.  A Debian 12 (bookworm) root is made with debootstrap
# (minbase, plus only build-essential, git, pkg-config and python3: what a
# new user's machine has), this repository's HEAD is cloned into it, and
# inside it, as root, exactly `make check` runs (its `make deps` installs
# the rest from Debian's mirror with apt-get), then `make evidence` (the
# cpu backend: no GPU here).  Exit 0 only when both pass; the failing
# step is named.  Each step's output goes to LOGDIR (default: a new
# directory under /var/tmp), its time is printed.
#
# Needs: root, Debian's package mirror (EV_MIRROR, default
# http://deb.debian.org/debian), debootstrap (installed with apt-get when
# missing), about 3 GiB under EV_FRESH_DIR (default /var/tmp).  /proc,
# /sys, /dev (with /dev/pts), /dev/shm and /tmp are mounted in the root
# while it runs and unmounted on every exit path; the root is deleted
# afterwards only when nothing is mounted under it any more (else it says
# so and keeps it).  It builds the committed HEAD: uncommitted changes are
# not in the clone (the line "HEAD ..." names what was built).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
mirror=${EV_MIRROR:-http://deb.debian.org/debian}
base=${EV_FRESH_DIR:-/var/tmp}
logdir=${1:-}

if [ "$(id -u)" != 0 ]; then
    echo "ci/fresh-root.sh: needs root (debootstrap, chroot, mounts); run it as root" >&2
    exit 2
fi
if ! command -v debootstrap >/dev/null 2>&1; then
    echo "ci/fresh-root.sh: installing debootstrap"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
fi
free=$(df -Pk "$base" | awk 'NR == 2 { print int($4 / 1048576) }')
if [ "$free" -lt 3 ]; then
    echo "ci/fresh-root.sh: $base has $free GiB free, 3 GiB needed: EV_FRESH_DIR=DIR names another" >&2
    exit 2
fi
work=$(mktemp -d "$base/evident-fresh.XXXXXX")
root=$work/root
[ -n "$logdir" ] || logdir=$work/logs
mkdir -p "$logdir"

mounted=()
# Unmounts what this script mounted (the reverse order), then deletes the
# root when nothing is mounted under it any more.
cleanup() {
    local rc=$? m
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
        m=${mounted[i]}
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || echo "ci/fresh-root.sh: cannot unmount $m" >&2
    done
    if grep -q " $root[/ ]" /proc/mounts || grep -q " $root\$" /proc/mounts; then
        echo "ci/fresh-root.sh: something is still mounted under $root: kept (unmount it, then rm -rf $work)" >&2
    else
        case $logdir in "$work"/*) mv "$logdir" "$base/evident-fresh-logs.$$" && logdir=$base/evident-fresh-logs.$$ ;; esac
        rm -rf --one-file-system "$work"
    fi
    echo "ci/fresh-root.sh: logs in $logdir"
    exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# mnt TYPE SRC DST [OPTS]: mounts and remembers it
mnt() {
    mkdir -p "$3"
    if [ "$1" = bind ]; then mount --bind "$2" "$3"; else mount -t "$1" ${4:+-o "$4"} "$2" "$3"; fi
    mounted+=("$3")
}

# step NAME CMD...: runs CMD, its output to LOGDIR/NAME.log; prints its
# time; on failure the log's tail and the step's name
step() {
    local name=$1 t0=$SECONDS rc=0
    shift
    echo "== fresh root: $name"
    "$@" >"$logdir/$name.log" 2>&1 || rc=$?
    echo "   $name: $((SECONDS - t0)) s (exit $rc)"
    if [ "$rc" != 0 ]; then
        tail -n 40 "$logdir/$name.log"
        echo "ci/fresh-root.sh: FAILED: $name (exit $rc; the whole log: $logdir/$name.log)" >&2
        exit 1
    fi
}

echo "HEAD $(git rev-parse HEAD)$(git diff --quiet HEAD 2>/dev/null || echo ' (the working tree differs: uncommitted changes are not built)')"
t_all=$SECONDS
step debootstrap debootstrap --variant=minbase --include=build-essential,git,pkg-config,python3 \
    bookworm "$root" "$mirror"
step clone git clone -q --no-local "$repo" "$root/root/evident"
cp /etc/resolv.conf "$root/etc/resolv.conf"
mnt proc proc "$root/proc"
mnt sysfs sysfs "$root/sys"
mnt bind /dev "$root/dev"
mnt devpts devpts "$root/dev/pts" gid=5,mode=620,ptmxmode=666,newinstance
mnt tmpfs tmpfs "$root/dev/shm" mode=1777
mnt tmpfs tmpfs "$root/tmp" mode=1777,size=4g

# in_root CMD: CMD in the root, in the clone, as a login shell would start
# it there (no variable of this host but CI=true, as CI sets it)
in_root() {
    chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 CI=true \
        PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
        /bin/bash -c "cd /root/evident && $1"
}
step make-check in_root "make check"
step make-evidence in_root "make evidence"
grep -E "^make check: |^run [0-9]+: |^verdict: " "$logdir/make-check.log" "$logdir/make-evidence.log" | sed 's/^[^:]*://'
echo "ci/fresh-root.sh: passed: make check and make evidence on a fresh Debian 12 root ($((SECONDS - t_all)) s)"
