#!/usr/bin/env bash
# Submits one evident run of PROTOCOL as N shards to SLURM, four jobs
# chained with afterok (docs/runner.md, "Shards"):
#   1. main       an array of N tasks: evident run --shard /N --phase main
#                 (the index is SLURM_ARRAY_TASK_ID), DIR/shard-<I>.db each
#   2. merge-fit  evident merge of the N stores into DIR/main.db, and its
#                 fit (DIR/main-fit.json: the fit every rest task takes)
#   3. rest       an array of N tasks: evident run --shard /N --phase rest
#                 --main DIR/main.db, into the same DIR/shard-<I>.db
#   4. final      evident merge into DIR/merged.db, evident export to
#                 DIR/delivery.zip (its root in DIR/ROOT), verify-bundle
# A failed task fails its array and no later job starts (afterok); run the
# script again with the same DIR after mending: every shard continues its
# own store (it appends, as --resume), and a merge is refused while its
# output exists, so remove DIR/main.db or DIR/merged.db to merge again.
#
# usage: ci/slurm-shards.sh PROTOCOL N DIR [PARALLEL [BACKEND]]
#   PARALLEL caps the tasks of an array that run at once (%PARALLEL:
#   1 on a 2-core host, where shards would measure each other), default N;
#   BACKEND cpu (default) or cuda.  sbatch options may be added with
#   EVIDENT_SBATCH (e.g. "--gres=gpu:1 --partition=gpu").  Prints the four
#   job ids, one a line; the last is the final job's.
set -euo pipefail
if [ $# -lt 3 ]; then
    echo "usage: $0 PROTOCOL N DIR [PARALLEL [BACKEND]]" >&2
    exit 2
fi
protocol=$1 n=$2 dir=$3 par=${4:-$2} backend=${5:-cpu}
case $n in '' | *[!0-9]* | 0) echo "$0: N must be a positive integer, not '$n'" >&2; exit 2 ;; esac
case $par in '' | *[!0-9]* | 0) echo "$0: PARALLEL must be a positive integer, not '$par'" >&2; exit 2 ;; esac
root=$(cd "$(dirname "$0")/.." && pwd)
ev=${EVIDENT:-$root/build/evident}
vb=${VERIFY_BUNDLE:-$root/build/verify-bundle}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
[ -e "$protocol" ] || { echo "$0: $protocol does not exist" >&2; exit 2; }
protocol=$(cd "$(dirname "$protocol")" && pwd)/$(basename "$protocol")
last=$((n - 1))
stores=""
for ((i = 0; i < n; i++)); do stores="$stores $dir/shard-$i.db"; done
# shellcheck disable=SC2086 # EVIDENT_SBATCH is a list of options
common=(--parsable --chdir="$root" ${EVIDENT_SBATCH:-})

main=$(sbatch "${common[@]}" --job-name=evident-main --array="0-$last%$par" \
    --output="$dir/main-%a.out" \
    --wrap="exec '$ev' run --protocol '$protocol' --backend $backend --shard /$n --phase main --db '$dir/shard-'\$SLURM_ARRAY_TASK_ID.db")
fit=$(sbatch "${common[@]}" --job-name=evident-merge-fit --dependency="afterok:$main" \
    --output="$dir/merge-fit.out" \
    --wrap="'$ev' merge $stores --out '$dir/main.db' && { '$ev' fit --db '$dir/main.db' --out '$dir/main-fit.json' || echo 'no fit: auto runs the default schedule'; }")
rest=$(sbatch "${common[@]}" --job-name=evident-rest --array="0-$last%$par" --dependency="afterok:$fit" \
    --output="$dir/rest-%a.out" \
    --wrap="exec '$ev' run --protocol '$protocol' --backend $backend --shard /$n --phase rest --main '$dir/main.db' --db '$dir/shard-'\$SLURM_ARRAY_TASK_ID.db")
final=$(sbatch "${common[@]}" --job-name=evident-final --dependency="afterok:$rest" \
    --output="$dir/final.out" \
    --wrap="'$ev' merge $stores --out '$dir/merged.db' && '$ev' export --db '$dir/merged.db' --out '$dir/delivery.zip' > '$dir/ROOT' && '$vb' '$dir/delivery.zip' --expect-root \$(cat '$dir/ROOT')")
printf '%s\n' "$main" "$fit" "$rest" "$final"
