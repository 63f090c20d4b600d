set -uo pipefail
out=${OUT:-build/gpu-out}
bash ci/gpu-ab.sh "v4=-DEV_CHUNK_LOADS=0 v5=-DEV_CHUNK_LOADS=1" "0,1,6,8,10,11,12,13,14,15,18,20,34,35,36,39,40,41,42"
build-v5/kernel-bench --quick > "$out/v5-quick.txt" 2>&1
echo "v5 --quick rc=$? ($(grep -c ' ok ' "$out/v5-quick.txt") ok, $(grep -E '^reduce_' "$out/v5-quick.txt" | grep -vc ' ok ') not ok)"
