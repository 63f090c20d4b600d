#!/usr/bin/env bash
# tools/gpu/session.sh SECONDS [STEP...]: the GPU procedures of docs/NEXT.md in order,
# as much of them as fits in SECONDS, resumable: run it again on the same
# machine (its gpu-work/ kept between calls) and it goes on where it
# stopped, so that every call of a session is the same command.  Run from
# the repository root with .deps and .evident-stamp carried (make
# vendor-debs, make stamp); give the call 40 s more than SECONDS.
#
# Steps (STEP... names some of them; default all but aapair, offbyone and ab), in this order; each is done once its marker
# gpu-work/session/STEP.done exists, and starts only when its minimum fits
# in the time left:
#   flagship   tools/gpu/evidence.sh (protocols/hopper.json: build,
#              kernel-bench --quick, the run, resumed until it finishes;
#              then export, verify --source-tree ., sign)   min 150 s
#   aa         tools/gpu/aa-seed.sh: the A/A pair's second run (the
#              flagship's 16 seed cases, same settings), resumed until it
#              finishes; then export, verify, compare        min 150 s
#   aapair     an A/A pair without a flagship: tools/gpu/aa-seed.sh twice,
#              runs aa1 then aa2 of the 16 seed cases on this board, auto
#              from AA_MODEL's model (default receipts/h100/delivery.zip,
#              committed), then aa1 against aa2 (about 1050-1250 s on an H100
#              against 1550 for flagship and aa)              min 150 s
#   offbyone   tools/gpu/python-arms.sh install, then offbyone   min 200 s
#   ab         a kernel A/B (tools/gpu/ab.sh: AB_VARIANTS on AB_CASES,
#              default launch rules 1, 2 and 3 (v11, v12: docs/perf-notes.md),
#              with 17x1024 fp16 as the control), then the builds'
#              kernel-bench again in turns (AB_CASES): a second pair of
#              runs in the same call                           min 240 s
#   hostcheck  tools/gpu/host-check.sh (make DEPS=.deps check and a short
#              cuda make evidence; 527 s on an H100, 594 s on an H200,
#              2026-12-07; the evidence goes to a second call where the
#              first has less than 90 s left)  min 540 s, 90 s for the rest
# The flagship's run and the A/A run are stopped cleanly (SIGINT) before
# the time is up; the others are bounded by their own scripts.
#
# What comes back (a device returns at most 8 files): OUT/summary.txt (what
# each step did, this call and before), and OUT/STEP.tgz for each step that
# ran in this call: its folder gpu-work/session/STEP (logs, ROOT, the
# store xz-compressed, the bundle where small), stores (*.db) left out.
set -uo pipefail
secs=${1:?usage: tools/gpu/session.sh SECONDS [flagship|aa|aapair|offbyone|ab|hostcheck ...]}
shift
steps=" ${*:-flagship aa hostcheck} " # offbyone, aapair and ab on demand (run 2026-12-07, docs/experiments/your-kernel-h100)
for s in $steps; do
    case $s in
    flagship | aa | aapair | offbyone | ab | hostcheck) ;;
    *) echo "tools/gpu/session.sh: unknown step '$s' (flagship, aa, aapair, offbyone, ab, hostcheck)" >&2; exit 2 ;;
    esac
done
t_end=$((SECONDS + secs))
out=${OUT:-build/gpu-out}
state=gpu-work/session
mkdir -p "$out" "$state"
# The copy's .git is the device's own (not the commit's) and stays where
# it is: the run takes the commit from .evident-stamp, written for exactly
# these measured files (src/runner/snapshot.c, ev_git_info_tree).  Three
# sessions that moved it away (2026-12-06 twice, 2026-12-07) lost their
# next call with "the call failed on the device machine"; the flagship
# that left it (2026-12-06, 1010 jobs over several calls) did not: the
# likely cause is that the device re-sends the tree through that .git.
[ -d .git-stale ] && [ ! -e .git ] && mv .git-stale .git
{
    echo "== call at $(date -u +%FT%TZ), $secs s, stamp $(cat .evident-stamp 2>/dev/null)"
    nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader 2>&1 | sed 's/GPU-[0-9a-f-]*/GPU-(uuid)/'
} >>"$state/summary.txt"

left() { echo $((t_end - SECONDS)); }

# pack STEP: its folder into OUT/STEP.tgz (stores left out) and the summary
pack() {
    tar -czf "$out/$1.tgz" --exclude='*.db' --exclude='*.db-*' -C "$state" "$1" 2>/dev/null
    cp "$state/summary.txt" "$out/summary.txt"
}

# run STEP MIN CMD...: CMD in $state/STEP (OUT set there), when MIN s fit
run_step() {
    local name=$1 min=$2 t0=$SECONDS rc
    shift 2
    [ -e "$state/$name.done" ] && return 0
    case $steps in *" $name "*) ;; *) return 1 ;; esac
    if [ "$(left)" -lt "$min" ]; then
        echo "$name: not started ($(left) s left, it needs $min)" | tee -a "$state/summary.txt"
        return 1
    fi
    mkdir -p "$state/$name"
    OUT=$state/$name "$@" >>"$state/$name/out.log" 2>&1
    rc=$?
    echo "$name: exit $rc in $((SECONDS - t0)) s" | tee -a "$state/summary.txt"
    pack "$name"
    return "$rc"
}

# run_need DB [JOBS]: the seconds a run still needs at 0.9 s a job (H100:
# 0.83), from its store's jobs without a finished attempt; without a
# store, JOBS (default the flagship's 1015) and 110 s for a fresh build.
run_need() {
    local none=$(( ${2:-1015} * 9 / 10 + 110 ))
    [ -e "$1" ] || { echo "$none"; return; }
    python3 - "$1" "$none" <<'PY'
import sqlite3, sys
try:
    c = sqlite3.connect(sys.argv[1])
    jobs = c.execute("select count(*) from jobs").fetchone()[0]
    done = c.execute("select count(distinct a.job_id) from attempts a join processes p using (attempt_id) "
                     "where p.interrupted = 0").fetchone()[0]
    print(int((jobs - done) * 0.9) + 20)
except sqlite3.Error:  # a store without a run: as none
    print(sys.argv[2])
PY
}

# The flagship: when this call can finish its run, 110 s are kept for the
# export, verify and signature; else the run gets all but the packing's.
flagship() {
    local keep=30
    [ "$(run_need gpu-work/evidence.db)" -lt $(($(left) - 140)) ] && keep=110
    bash tools/gpu/evidence.sh $(($(left) - keep)) || return
    [ -s "$state/flagship/delivery.zip.intoto.json" ] && touch "$state/flagship.done"
}
# A step's comparison is done when verify-bundle --compare gave its
# agreement line (compare itself exits 3 on inconclusive pairs: no gate).
agreed() { grep -q "pairs agree within" "$1" 2>/dev/null; }
aa() {
    [ -e gpu-work/delivery.zip ] || { echo "aa: no flagship bundle yet"; return 1; }
    local keep=30
    # the comparisons against the flagship read its whole bundle three
    # times (each a verification: 32.8 s for the H100 flagship on one
    # core here before 0df18ee, 13.6 s since)
    [ "$(run_need gpu-work/aa.db 545)" -lt $(($(left) - 160)) ] && keep=130
    bash tools/gpu/aa-seed.sh $(($(left) - keep)) gpu-work/delivery.zip aa gpu-work/delivery.zip || return
    agreed "$state/aa/agreement.txt" && touch "$state/aa.done"
}
# aapair: aa1 to its end (export and verify kept 70 s where it can finish),
# then aa2 and the comparison
aapair() {
    local model=${AA_MODEL:-receipts/h100/delivery.zip} n against="" keep
    for n in aa1 aa2; do
        keep=30
        [ "$(run_need gpu-work/$n.db 545)" -lt $(($(left) - 100)) ] && keep=70
        [ "$n" = aa2 ] && against=gpu-work/aa1.zip
        # a run's start (environment, torch's compile ahead: 18 s of the
        # flagship's at dc37ae8) and its first jobs before a stop is worth it
        [ -e "$state/aapair/$n.ROOT" ] || [ "$(left)" -gt $((keep + 150)) ] || return 1
        bash tools/gpu/aa-seed.sh $(($(left) - keep)) "$model" $n $against || return
    done
    agreed "$state/aapair/agreement.txt" && touch "$state/aapair.done"
}
offbyone() {
    bash tools/gpu/python-arms.sh "$state/offbyone" install && bash tools/gpu/python-arms.sh "$state/offbyone" offbyone &&
        touch "$state/offbyone.done"
    local rc=$?
    rm -rf "$state/offbyone/prefix" # the installed programs: rebuilt in a second, megabytes to bring back
    return "$rc"
}
ab() {
    local v=${AB_VARIANTS:-r1=-DEV_LAUNCH_RULE=1 r2=-DEV_LAUNCH_RULE=2 r3=} c=${AB_CASES:-0,1,8,9,14,15,34,54} n
    OUT=$state/ab bash tools/gpu/ab.sh "$v" "$c" || return
    for n in $v; do
        n=${n%%=*}
        KB_CASES=$c build-$n/kernel-bench >"$state/ab/bench2-$n.txt" 2>&1 || return
    done
    touch "$state/ab.done"
}
# hostcheck: host-check.sh's steps to the suites in one call (about 550 s
# on the H200 host at 00572d6: build 73 s, the suites 471 s), the cuda
# make evidence (42 s) in the same call where it fits, else the next; done
# when every step ran, passed or not (its summary says which)
hostcheck() {
    local d=$state/hostcheck
    [ -e "$d/check.rc" ] ||
        HOST_CHECK_SECONDS=$(($(left) - 20)) bash tools/gpu/host-check.sh "$d" "host build check-first check"
    [ "$(left)" -ge 90 ] || return 1
    HOST_CHECK_SECONDS=$(($(left) - 20)) bash tools/gpu/host-check.sh "$d"
    [ -e "$d/evidence.rc" ] && touch "$state/hostcheck.done"
}

run_step flagship 150 flagship &&
    run_step aa 150 aa
run_step aapair 150 aapair
run_step offbyone 200 offbyone
run_step ab 240 ab
run_step hostcheck "$([ -e "$state/hostcheck/check.rc" ] && echo 90 || echo 540)" hostcheck
echo "== end: $(left) s left; done: $(cd "$state" && ls *.done 2>/dev/null | tr '\n' ' ')" | tee -a "$state/summary.txt"
cp "$state/summary.txt" "$out/summary.txt"
