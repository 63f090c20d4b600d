#!/usr/bin/env bash
# On the GPU host: where a small case's time goes (docs/perf-notes.md).  Kernel
# durations under ncu (each launch alone, no graph) of our schedules and of
# torch.compile's kernel on the same shapes, and the SASS of rows1.
#   usage: tools/gpu/probe-small.sh
set -uo pipefail
out=${OUT:-build/gpu-out}
mkdir -p "$out"
make DEPS=.deps -j16 all > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
CUOBJ=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "ncu: $NCU"
$CUOBJ -sass -fun reduce_sum_fp16_rows1 build/cuda/reduce_rows1_fp16.o > "$out/sass-rows1.txt" 2>&1
echo "rows1 fp16 sum SASS lines: $(grep -c '/\*[0-9a-f]*\*/' "$out/sass-rows1.txt")"
grep -E "LDG|SHFL|BAR|BRA|EXIT|STG|I2F|F2F|HADD2|IMAD.WIDE|ISETP" "$out/sass-rows1.txt" | awk '{print $2}' | sort | uniq -c | sort -rn | head -20
$NCU --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active \
    -k regex:'reduce_(sum|max)_(fp16|fp32)_(rows1|default)|ev_floor' --csv build/kernel-bench --quick > "$out/ncu-ours.csv" 2> "$out/ncu-ours.err"
python3 - "$out/ncu-ours.csv" <<'PY'
import csv, sys, collections
rows = list(csv.reader(l for l in open(sys.argv[1]) if l.startswith('"')))
h = rows[0]; d = collections.defaultdict(list)
for r in rows[1:]:
    x = dict(zip(h, r))
    d[(x["Kernel Name"], x["Grid Size"], x["Block Size"], x["Metric Name"])].append(x["Metric Value"])
for k, v in sorted(d.items())[:80]:
    print(k, v[:6])
PY
cat > /tmp/tc.py <<'PY'
import torch
torch._dynamo.config.cache_size_limit = 64
for op, r, c, dt in [("sum", 17, 1024, torch.float16), ("sum", 65, 512, torch.float32), ("max", 65, 512, torch.float32), ("sum", 2048, 64, torch.float16), ("sum", 3, 8191, torch.bfloat16)]:
    x = torch.randn(r, c, device="cuda").to(dt)
    f = torch.compile(lambda t: t.float().sum(-1).to(t.dtype) if op == "sum" else t.amax(-1))
    for _ in range(3):
        f(x)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push(f"{op}_{r}x{c}")
    f(x)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
PY
$NCU --clock-control none --metrics gpu__time_duration.sum,launch__registers_per_thread --csv python3 /tmp/tc.py > "$out/ncu-torch.csv" 2> "$out/ncu-torch.err"
grep -E "triton|reduce" "$out/ncu-torch.csv" | awk -F'","' '{print $5, $7, $8, $(NF-2), $NF}' | tail -30
tail -3 "$out/ncu-torch.err"
