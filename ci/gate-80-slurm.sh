#!/usr/bin/env bash
# Gate: a sharded run under a real single-node SLURM cluster on this
# machine (docs/runner.md, "Shards").  It installs Debian's slurm-wlm and
# munge when they are missing (root, as CI runs here), starts munged,
# slurmctld and slurmd on localhost with a config it writes into a
# temporary directory (nothing under /etc is used or changed), and:
#  1. runs protocols/quick.json on the cpu backend in one process (the
#     reference), exports and verifies it;
#  2. submits the same protocol as 2 shards with ci/slurm-shards.sh (main
#     array, merge-fit, rest array, merge-export-verify, chained with
#     afterok; %1: on 2 cores the shards take turns rather than measure
#     each other) and waits for the chain;
#  3. checks that the merged bundle verifies with its root, that its plan
#     is the one-process run's (the same jobs, the floor and ceiling once
#     per shard; rescue jobs follow each run's own failures, so they are
#     compared only as a count), that its decisions are the one-process
#     fit of its samples (model.json is `evident fit` of the merged store,
#     and the merge-fit job's fit that every rest shard's auto took), and
#     prints how many cases decide as the one-process run did (each run's
#     own timings decide: ci/gate-20-pipeline.sh says why two runs on a
#     shared cpu may differ there) and both walls side by side;
#  4. times evident merge of two shard stores holding 100,000 samples.
# The daemons it started are stopped by their pid files on exit.
set -euo pipefail
root=$(pwd)
out=$root/build/ci-slurm
need=()
command -v slurmctld >/dev/null || need+=(slurm-wlm)
command -v munged >/dev/null || need+=(munge)
command -v sqlite3 >/dev/null || need+=(sqlite3)
command -v bc >/dev/null || need+=(bc)
if [ ${#need[@]} -gt 0 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "slurm: ${need[*]} missing and not root: apt-get install ${need[*]}" >&2
        exit 1
    fi
    echo "slurm: installing ${need[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${need[@]}" >/dev/null
fi
rm -rf "$out"
mkdir -p "$out"
tmp=$(mktemp -d /tmp/evident-slurm.XXXXXX)
chmod 700 "$tmp"
stop() {
    for p in slurmd slurmctld munged; do
        [ -s "$tmp/$p.pid" ] && kill "$(cat "$tmp/$p.pid")" 2>/dev/null || true
    done
    sleep 1
    rm -rf "$tmp"
}
trap stop EXIT

# munge with a key of its own, on a socket in tmp
dd if=/dev/urandom of="$tmp/munge.key" bs=1024 count=1 2>/dev/null
chmod 600 "$tmp/munge.key"
munged -f --socket="$tmp/munge.sock" --key-file="$tmp/munge.key" --pid-file="$tmp/munged.pid" \
    --log-file="$tmp/munged.log" --seed-file="$tmp/munged.seed"

# slurm: one node (localhost) with this host's CPUs, ports free here
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
port2=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mem=$(awk '/MemTotal/ {print int($2 / 1024 / 2)}' /proc/meminfo)
mkdir -p "$tmp/state" "$tmp/spool"
: > "$tmp/plugstack.conf"
cat > "$tmp/slurm.conf" <<CONF
ClusterName=evidentci
SlurmctldHost=localhost
SlurmctldPort=$port
SlurmdPort=$port2
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge.sock
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/slurmctld.log
SlurmdLogFile=$tmp/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
PlugStackConfig=$tmp/plugstack.conf
SlurmdParameters=config_overrides
NodeName=localhost CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=ci Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$tmp/slurm.conf
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF" -N localhost
for _ in $(seq 60); do
    sinfo -h -o %T 2>/dev/null | grep -qx idle && break
    sleep 1
done
sinfo -h -o %T | grep -qx idle || { echo "slurm: the node never became idle"; tail -20 "$tmp"/slurm*.log; exit 1; }
echo "slurm: slurmctld and slurmd up on localhost ($(sinfo -h -o '%c CPUs, %m MB'))"

now() { date +%s.%N; }

# 1. one process
t0=$(now)
build/evident run --protocol protocols/quick.json --backend cpu --db "$out/one.db" > "$out/one.txt"
t1=$(now)
build/evident export --db "$out/one.db" --out "$out/one.zip" > "$out/one.root"
build/verify-bundle "$out/one.zip" --expect-root "$(cat "$out/one.root")" > /dev/null

# 2. two shards as a SLURM job chain
t2=$(now)
ci/slurm-shards.sh protocols/quick.json 2 "$out/shards" 1 > "$out/ids"
final=$(tail -1 "$out/ids")
state=
for _ in $(seq 900); do
    line=$(scontrol show job "$final" -o 2>/dev/null || true)
    state=$(grep -o 'JobState=[A-Z_]*' <<< "$line" | cut -d= -f2)
    case $state in COMPLETED | FAILED | CANCELLED | TIMEOUT | OUT_OF_MEMORY | NODE_FAIL) break ;; esac
    if grep -q 'Reason=DependencyNeverSatisfied' <<< "$line"; then
        state=DEPENDENCY_NEVER_SATISFIED
        break
    fi
    sleep 1
done
t3=$(now)
if [ "$state" != COMPLETED ]; then
    echo "slurm: the final job $final ended $state; the chain's outputs:"
    tail -n 5 "$out"/shards/*.out
    exit 1
fi

# 3. the merged bundle: verified, the one-process run's plan and decisions
build/verify-bundle "$out/shards/delivery.zip" --source-tree . --expect-root "$(cat "$out/shards/ROOT")" > /dev/null
python3 - "$out/one.zip" "$out/shards/delivery.zip" <<'PY'
import json, re, sys, zipfile
def load(p):
    z = zipfile.ZipFile(p)
    return json.loads(z.read("validation.json")), json.loads(z.read("model.json"))
(v1, m1), (v2, m2) = load(sys.argv[1]), load(sys.argv[2])
def plan(v):
    keys = [j["job_key"] for j in v["jobs"] if j["phase"] != "rescue"]
    return sorted(set(re.sub(r"/shard-[0-9]+$", "", k) for k in keys)), len(keys)
(p1, n1), (p2, n2) = plan(v1), plan(v2)
if p1 != p2:
    sys.exit("slurm: the merged plan differs from the one-process plan: %s" % sorted(set(p1) ^ set(p2)))
refs = sum(1 for j in v1["jobs"] if j["case_index"] is None and j["phase"] != "rescue")
if n2 != n1 + refs:
    sys.exit("slurm: %d planned jobs merged, want %d (the reference arms once per shard)" % (n2, n1 + refs))
if v2.get("shards", {}).get("count") != 2:
    sys.exit("slurm: the merged bundle does not list its 2 shards")
print("slurm: the merged plan is the one-process plan (%d jobs; floor and ceiling once per shard: %d)" % (n1, n2))
def decided(m):
    return {(d["op"], d["rows"], d["cols"], d["dtype"], d["default_rows"]): d["selected"]
            for d in (m.get("decisions") or [])}
d1, d2 = decided(m1), decided(m2)
both = sorted(set(d1) & set(d2))
same = sum(d1[k] == d2[k] for k in both)
print("slurm: decisions: %d of the %d cases both runs fitted decide alike (each run's from its own timings:"
      " not gated, as in ci/gate-20-pipeline.sh)" % (same, len(both)))
PY
# the decisions of the sharded run are the one-process fit of its samples:
# the bundle's model.json is byte for byte `evident fit` over the merged
# store, and (when there is a fit) the merge-fit job's, which every rest
# shard's auto took
if build/evident fit --db "$out/shards/merged.db" > "$out/merged-fit.json" 2> /dev/null; then
    python3 -c 'import sys, zipfile; sys.exit(zipfile.ZipFile(sys.argv[1]).read("model.json") != open(sys.argv[2], "rb").read())' \
        "$out/shards/delivery.zip" "$out/merged-fit.json" ||
        { echo "slurm: the merged bundle's model.json is not the fit of its own store"; exit 1; }
    cmp -s "$out/merged-fit.json" "$out/shards/main-fit.json" ||
        { echo "slurm: the rest shards' fit (merge-fit) is not the fit of the merged run"; exit 1; }
    echo "slurm: model.json = evident fit of the merged store = the merge-fit job's fit (what auto used)"
else
    echo "slurm: no fit of the merged store (this host's failed jobs left too few cases); auto ran default"
fi
w1=$(echo "$t1 - $t0" | bc)
w2=$(echo "$t3 - $t2" | bc)
printf 'slurm: quick.json wall: 1 process %.1f s | 2 SLURM shards (%%1, with merge-fit, rest, merge-export-verify) %.1f s\n' "$w1" "$w2"
for f in "$out"/shards/main-*.out "$out"/shards/rest-*.out; do
    grep -h '^run [0-9]*:' "$f" | sed "s|^|slurm:   $(basename "$f" .out): |"
done

# 4. the merge of stores holding 100,000 samples (timing only: samples are
# copied under new indexes, so these stores are not evidence)
for i in 0 1; do
    cp "$out/shards/shard-$i.db" "$out/big-$i.db"
    while have=$(sqlite3 "$out/big-$i.db" 'SELECT COUNT(*) FROM samples') && [ "$have" -lt 50000 ]; do
        sqlite3 "$out/big-$i.db" "INSERT INTO samples SELECT attempt_id, timing, sample_index + (SELECT MAX(sample_index) + 1 FROM samples), replays, ops_per_graph, elapsed_ms, sm_clock_mhz FROM samples LIMIT 50000 - $have"
    done
done
n=$(($(sqlite3 "$out/big-0.db" 'SELECT COUNT(*) FROM samples') + $(sqlite3 "$out/big-1.db" 'SELECT COUNT(*) FROM samples')))
t4=$(now)
build/evident merge "$out/big-0.db" "$out/big-1.db" --out "$out/big.db" > /dev/null
t5=$(now)
got=$(sqlite3 "$out/big.db" 'SELECT COUNT(*) FROM samples')
[ "$got" = "$n" ] || { echo "slurm: the merge holds $got samples of $n"; exit 1; }
printf 'slurm: evident merge of 2 stores holding %d samples: %.2f s\n' "$n" "$(echo "$t5 - $t4" | bc)"
echo "slurm: the sharded run verifies and matches the one-process run"
