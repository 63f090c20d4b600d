#!/usr/bin/env python3
"""On the GPU host (docs/perf-notes.md): what torch.compile generates for a few cases
of the flagship protocol (protocols/hopper.json), as the torch-compile peer compiles them
(kernels/peer_torch.py: t.sum(1) / t.amax(1), dynamic=False): the Triton
source and launch configuration inductor wrote (its output code, found in
the inductor cache), and the kernel's time per op in a 100-op CUDA graph,
so that our kernels can be compared with what they race.  Not a CI gate.
  usage: tools/gpu/torch-kernels.py OUTDIR [op:dtype:rows:cols:stride ...]"""
import glob
import os
import sys
import time

out = sys.argv[1]
cases = sys.argv[2:] or ["reduce_sum:fp16:17:1024:1024", "reduce_sum:bf16:256:128:128",
                         "reduce_sum:fp16:1024:512:512", "reduce_sum:bf16:3:8191:8191",
                         "reduce_sum:fp32:37:257:257", "reduce_max:fp16:1000:100:100",
                         "reduce_sum:fp16:100:1000:1003"]
os.makedirs(out, exist_ok=True)
os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(out, "inductor")
os.environ["TRITON_CACHE_DIR"] = os.path.join(out, "triton")
import torch  # noqa: E402

dev = torch.device("cuda")
tdt = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
for spec in cases:
    op, dt, r, c, st = spec.split(":")
    r, c, st = int(r), int(c), int(st)
    flat = torch.randn((r - 1) * st + c, device=dev).to(tdt[dt])
    x = flat.as_strided((r, c), (st, 1))
    torch._dynamo.reset()
    before = set(glob.glob(os.path.join(out, "inductor", "**", "*.py"), recursive=True))
    tbefore = set(glob.glob(os.path.join(out, "triton", "**", "*.json"), recursive=True))
    fn = torch.compile((lambda t: t.sum(1)) if op == "reduce_sum" else (lambda t: t.amax(1)), dynamic=False)
    fn(x)
    torch.cuda.synchronize()
    new = sorted(set(glob.glob(os.path.join(out, "inductor", "**", "*.py"), recursive=True)) - before)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn(x)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(100):
            fn(x)
    for _ in range(50):
        g.replay()
    torch.cuda.synchronize()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = []
    for _ in range(7):
        e0.record()
        for _ in range(20):
            g.replay()
        e1.record()
        e1.synchronize()
        best.append(e0.elapsed_time(e1) * 1000 / 2000)
    best.sort()
    print("== %s: %.4f us/op (median of 7 x 20 replays of 100 ops)" % (spec, best[3]))
    for f in new:
        src = open(f).read()
        if "@triton.jit" in src:
            print("-- %s" % os.path.relpath(f, out))
            print(src)
    for f in sorted(set(glob.glob(os.path.join(out, "triton", "**", "*.json"), recursive=True)) - tbefore):
        if "__grp__" not in f:
            print("-- triton metadata %s: %s" % (os.path.relpath(f, out), open(f).read()[:1500]))
    sys.stdout.flush()
