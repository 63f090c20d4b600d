#!/usr/bin/env python3
"""peer_torch.py: the `torch-compile` peer, one python3 process per job.

Reads the case's input bytes from a file (the same bytes every arm reads:
R rows of `stride` elements, row-major, the last row ending at `cols`,
written by the worker from kernels/inputs.h), compiles a fresh function for
the case (torch._dynamo.reset() first: a function reused across dtypes
falls back to eager after the recompile limit), and follows the worker's
per-job protocol under the same plants and checks as every arm
(docs/defenses.md, "Every op earns its time"; kernels/plants.h), through
build/libevident_ops.so (--ops-lib, loaded with ctypes) and the plants file
the worker wrote (--plants): the input is held as a pristine base and V
variants, tensors of torch's own (a trusted instrument: what matters is
that it pays for the same plants and checks); launch once on variant 0,
keep the output; cold samples (a plant, a flush of 2 x L2, one timed call,
a check); capture `ops` calls in one CUDA graph, op i on variant i mod V,
a plant node before each epoch and a check node after the last op, the
check reading the ops' outputs through the addresses given after the
capture; warm up and calibrate; `samples` hot samples timed with CUDA
events, each followed by its op check (the check tag, read back); the
kept output of one op of the last replay (--out-kept); every plant
restored, launch again on variant 0.

Records go to --record-fd as one JSON object per line, in the worker's
record format (src/runner/record.h): hello, binding, cold, flush, sample
(cold) and opcheck, calibration, warmup, sample (hot) and opcheck, device,
end.  Validation is NOT done here: the output arrays are written to
--out-first, --out-kept and --out-final and the C side validates them with
the same FP64 oracle (kernels/oracle.h), holds every op check's tag to the
seed it drew, and writes the validation and kept-output records.  An op
check that fails ends the job after the device record (the first mismatch
on stderr).  Where torch does not import (or has no
CUDA device) the job writes hello, a skip record carrying the import error
text, and end.  Graph kernel nodes are not read back (torch exposes no node
list); no node records are written.

ADAPTER: emit() is the one place that knows the record format; adjust it
if the runner's format changes.

The ops, the dtypes and this arm's name are the vocabulary's, read from
src/common/vocab.h (read_vocabulary); what is this peer's own is its
binding of each op and dtype to torch (TORCH_OPS, TORCH_DTYPES, keyed by
the vocabulary's ids).  An op the vocabulary has and TORCH_OPS lacks is a
skip, with the reason.
"""
import argparse
import json
import os
import re
import sys
import time

T0 = time.perf_counter_ns()

# The binding of each op (by its vocabulary id) to the torch reduction over
# dim 1, in the storage dtype (torch accumulates 16-bit storage in fp32):
# this peer's part of adding an op (docs/HACKING.md).
TORCH_OPS = {
    "SUM": lambda t: t.sum(1),
    "MAX": lambda t: t.amax(1),
    "MIN": lambda t: t.amin(1),
    "MEAN": lambda t: t.mean(1),
}
# The torch dtype of each storage dtype (by its vocabulary id).
TORCH_DTYPES = {"FP32": "float32", "FP16": "float16", "BF16": "bfloat16"}


def vocabulary_path():
    """src/common/vocab.h beside this script's tree (kernels/..), or the
    installed closure's copy (libexec/evident/../../share/evident)."""
    here = os.path.dirname(os.path.abspath(__file__))
    for rel in (("..", "src", "common", "vocab.h"),
                ("..", "..", "share", "evident", "src", "common", "vocab.h")):
        p = os.path.normpath(os.path.join(here, *rel))
        if os.path.exists(p):
            return p
    return None


def read_vocabulary(path=None):
    """The rows of the X-macro lists of src/common/vocab.h: {"EV_OPS":
    [[id, name, combine, finish], ...], "EV_DTYPES": [[id, name, bytes],
    ...], "EV_ARM_KINDS": [...], ...}, each row's fields as text, string
    fields unquoted, in the file's order.  Raises on a file without the
    lists."""
    path = path or vocabulary_path()
    if not path:
        raise RuntimeError("the vocabulary (src/common/vocab.h) is not beside this script's tree "
                           "or its installation")
    with open(path) as f:
        text = f.read()
    lists = {}
    for m in re.finditer(r"#define (EV_[A-Z_]+)\(X, a\) \\\n((?:[^\n]*\\\n)*[^\n]*\n)", text):
        rows = []
        for row in re.finditer(r"X\(([^)]*)\)", m.group(2)):
            fields = [x.strip() for x in row.group(1).split(",")][:-1]  # the last is the pass-through a
            rows.append([x[1:-1] if x.startswith('"') else x for x in fields])
        lists[m.group(1)] = rows
    for need in ("EV_OPS", "EV_DTYPES", "EV_ARM_KINDS"):
        if not lists.get(need):
            raise RuntimeError("%s: no %s list" % (path, need))
    return lists


VOCAB = read_vocabulary()
OP_IDS = {r[1]: r[0] for r in VOCAB["EV_OPS"]}  # name -> id
DTYPE_IDS = {r[1]: r[0] for r in VOCAB["EV_DTYPES"]}
DTYPE_BYTES = {r[1]: int(r[2]) for r in VOCAB["EV_DTYPES"]}
ARM = next(r[1] for r in VOCAB["EV_ARM_KINDS"] if r[0] == "TORCH")


class Records:
    """The record stream: one JSON line per record, counted."""

    def __init__(self, fd):
        self.f = os.fdopen(fd, "w", buffering=1) if fd >= 0 else sys.stdout
        self.count = 0

    def emit(self, rtype, **fields):
        """ADAPTER: writes {"type": rtype, ...fields} as one line.
        Floats are written with repr(), which reads back to the same bits."""
        rec = {"type": rtype}
        rec.update(fields)
        self.f.write(json.dumps(rec, allow_nan=False) + "\n")
        self.count += 1

    def end(self):
        self.f.write(json.dumps({"type": "end", "records": self.count}) + "\n")
        self.f.flush()


def parse_args():
    p = argparse.ArgumentParser(description="torch-compile peer (one job)")
    p.add_argument("--input", help="input bytes file")
    p.add_argument("--op", choices=list(OP_IDS))
    p.add_argument("--dtype", choices=list(DTYPE_IDS))
    p.add_argument("--rows", type=int)
    p.add_argument("--cols", type=int)
    p.add_argument("--stride", type=int)
    p.add_argument("--job-key", default="")
    p.add_argument("--record-fd", type=int, default=-1)
    p.add_argument("--out-first")
    p.add_argument("--out-final")
    p.add_argument("--ops", type=int, default=100)
    p.add_argument("--samples", type=int, default=7)
    p.add_argument("--cold-samples", type=int, default=3)
    p.add_argument("--warmup-ms", type=float, default=500.0)
    p.add_argument("--target-ms", type=float, default=100.0)
    p.add_argument("--flush-multiple", type=int, default=2)
    p.add_argument("--spawn-ns", type=int, default=0,
                   help="CLOCK_REALTIME ns when the worker started this process (python-start timing)")
    p.add_argument("--backend", default="cuda", choices=["cuda", "cpu"],
                   help="the run's backend: the peer measures only on cuda")
    p.add_argument("--gate-fd", type=int, default=-1,
                   help="staged: import, then wait for one byte on this fd before touching the device")
    p.add_argument("--compile-ahead-ns", type=int, default=0,
                   help="this case's ahead-of-time compile (ns), recorded as the cold timing compile-ahead")
    p.add_argument("--compile-cases", default="",
                   help="compile ahead: the cases i:op:dtype:rows:cols:stride;... into the cache, then exit")
    p.add_argument("--plants", help="the plants file the worker wrote (seed, shape, the rows' figures)")
    p.add_argument("--ops-lib", help="build/libevident_ops.so: the plant and check nodes")
    p.add_argument("--out-kept", help="where the kept output's bytes go")
    a = p.parse_args()
    if not a.compile_cases:
        missing = [k for k in ("input", "op", "dtype", "rows", "cols", "stride", "out_first", "out_final",
                               "plants", "ops_lib", "out_kept")
                   if getattr(a, k) is None]
        if missing:
            p.error("a job needs --" + ", --".join(m.replace("_", "-") for m in missing))
    return a


def import_compiler():
    """Imports what torch.compile's first call would import (dynamo,
    inductor, triton): CPU-only work, done before the gate so that a staged
    peer pays it while another job measures.  A module this torch lacks is
    left to the first call."""
    import importlib  # noqa: PLC0415
    for name in ("torch._dynamo", "torch._inductor", "torch._inductor.compile_fx",
                 "torch._inductor.codegen.triton", "torch._inductor.runtime.triton_heuristics",
                 "torch._inductor.codecache", "triton", "triton.compiler", "triton.runtime"):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 (a version without it: the first call imports what it needs)
            pass


def wait_gate(fd):
    """Blocks until the worker's supervisor releases the job (one byte).
    Returns False when the gate was closed without it."""
    if fd < 0:
        return True
    while True:
        try:
            b = os.read(fd, 1)
            break
        except InterruptedError:
            continue
    os.close(fd)
    return len(b) == 1


def make_fn(torch, op):
    """A fresh compiled function for the case (dynamo reset first): the
    op's binding (TORCH_OPS)."""
    torch._dynamo.reset()
    body = TORCH_OPS[OP_IDS[op]]
    return torch.compile(lambda t: body(t), dynamic=False)


def torch_dtype(torch, dtype):
    """The torch dtype of a storage dtype name (TORCH_DTYPES)."""
    return getattr(torch, TORCH_DTYPES[DTYPE_IDS[dtype]])


def span_elems(a):
    """Elements of the input span: R rows of stride, the last ending at cols."""
    return (a.rows - 1) * a.stride + a.cols if a.rows > 0 else 0


def preimport_path():
    """The run cache's list of modules a compile imports (written by the
    compile-ahead processes, read by staged peers), or None."""
    d = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    return os.path.join(os.path.dirname(d), "preimport.txt") if d else None


def preimport():
    """Imports, before the gate, the modules the compile-ahead processes
    saw a compile import (torch, triton and sympy modules only): CPU work a
    staged peer does while another job measures instead of in its own
    first call.  A module that fails to import is left to the first call."""
    import importlib  # noqa: PLC0415
    path = preimport_path()
    if not path or not os.path.exists(path):
        return
    with open(path) as f:
        names = [n.strip() for n in f]
    for name in names:
        # never a module near the driver: nothing may touch the device before the gate
        if (name.split(".")[0] in ("torch", "triton", "sympy") and name not in sys.modules
                and not any(w in name for w in ("cuda", "driver", "nvidia", "nvml"))):
            try:
                importlib.import_module(name)
            except Exception:  # noqa: BLE001
                pass


def compile_only(a):
    """Compiles each case of --compile-cases ("i:op:dtype:rows:cols:stride"
    joined by ';') into the run's cache (TORCHINDUCTOR_CACHE_DIR and
    TRITON_CACHE_DIR, set by the supervisor), one after another in this
    process, from zeros of the case's shape and strides: the shape, not the
    values, is what inductor specializes on, and no input of a job leaves
    it.  Prints {"case": i, "compile_ns": N} per case as it is done, then
    writes the modules the compiles imported to the cache's preimport
    list."""
    import torch  # noqa: PLC0415
    import_compiler()
    dev = torch.device("cuda")
    for spec in a.compile_cases.split(";"):
        i, op, dtype, rows, cols, stride = spec.split(":")
        if OP_IDS.get(op) not in TORCH_OPS:
            continue  # no binding: its job is a skip, nothing to compile
        c = argparse.Namespace(rows=int(rows), cols=int(cols), stride=int(stride))
        flat = torch.zeros(max(1, span_elems(c)), dtype=torch_dtype(torch, dtype), device=dev)
        x = flat.as_strided((c.rows, c.cols), (c.stride, 1))
        t0 = time.perf_counter_ns()
        fn = make_fn(torch, op)
        fn(x)
        torch.cuda.synchronize()
        ns = time.perf_counter_ns() - t0
        sys.stdout.write(json.dumps({"case": int(i), "compile_ns": ns}) + "\n")
        sys.stdout.flush()
    path = preimport_path()
    if path:
        tmp = "%s.%d" % (path, os.getpid())
        with open(tmp, "w") as f:
            f.write("\n".join(sorted(n for n in sys.modules if n.split(".")[0] in ("torch", "triton", "sympy"))))
        os.replace(tmp, path)
    os._exit(0)


class Plants:
    """The plant and check nodes of build/libevident_ops.so (kernels/ops_lib.cu)
    for this job: the variants' layout, the pointers the nodes read, and the
    check state read back after each sample."""

    def __init__(self, lib_path, plants_path, cache_bytes):
        import ctypes  # noqa: PLC0415
        self.ct = ctypes
        lib = ctypes.CDLL(lib_path)
        u64, i64, vp = ctypes.c_uint64, ctypes.c_int64, ctypes.c_void_p
        lib.ev_ops_open.argtypes = [ctypes.c_char_p, i64, ctypes.POINTER(vp), ctypes.c_char_p, ctypes.c_size_t]
        lib.ev_ops_error.restype = ctypes.c_char_p
        lib.ev_ops_error.argtypes = [vp]
        for f in ("ev_ops_variants", "ev_ops_epochs", "ev_ops_kept_op", "ev_ops_rows"):
            getattr(lib, f).restype = i64
            getattr(lib, f).argtypes = [vp]
        lib.ev_ops_bind.argtypes = [vp, u64, ctypes.POINTER(u64)]
        lib.ev_ops_set_slots.argtypes = [vp, i64, ctypes.POINTER(u64), i64]
        lib.ev_ops_plant.argtypes = [vp, i64, ctypes.c_int, i64, ctypes.c_int, u64]
        lib.ev_ops_check.argtypes = [vp, i64, u64]
        lib.ev_ops_tag.argtypes = [vp, ctypes.POINTER(u64), ctypes.POINTER(u64), ctypes.POINTER(ctypes.c_int),
                                   ctypes.POINTER(i64), ctypes.POINTER(ctypes.c_double)]
        lib.ev_ops_read_kept.argtypes = [vp, vp, ctypes.c_size_t]
        self.lib = lib
        h = vp()
        err = ctypes.create_string_buffer(512)
        if lib.ev_ops_open(plants_path.encode(), cache_bytes, ctypes.byref(h), err, 512):
            raise RuntimeError("plants: " + err.value.decode())
        self.h = h
        self.variants = lib.ev_ops_variants(h)
        self.epochs = lib.ev_ops_epochs(h)
        self.rows = lib.ev_ops_rows(h)
        self.last_pe = 0

    def ok(self, rc):
        if rc:
            raise RuntimeError("plants: " + self.lib.ev_ops_error(self.h).decode())

    def bind(self, base_ptr, var_ptrs):
        self.ok(self.lib.ev_ops_bind(self.h, base_ptr, (self.ct.c_uint64 * len(var_ptrs))(*var_ptrs)))

    def set_slots(self, first, ptrs):
        self.ok(self.lib.ev_ops_set_slots(self.h, first, (self.ct.c_uint64 * len(ptrs))(*ptrs), len(ptrs)))

    def plant(self, e, prev_back, prev_e, plant, stream):
        self.ok(self.lib.ev_ops_plant(self.h, e, prev_back, prev_e, plant, stream))

    def check(self, n_ops, stream):
        self.ok(self.lib.ev_ops_check(self.h, n_ops, stream))

    def tag(self):
        """(tag hex, replays run, ok, first mismatch or None)."""
        ct = self.ct
        tag, r_next, ok = ct.c_uint64(), ct.c_uint64(), ct.c_int()
        first, values = (ct.c_int64 * 4)(), (ct.c_double * 3)()
        self.ok(self.lib.ev_ops_tag(self.h, ct.byref(tag), ct.byref(r_next), ct.byref(ok), first, values))
        miss = None if first[0] < 0 else (first[0], first[1], first[2], first[3], values[0], values[1], values[2])
        return "%016x" % tag.value, r_next.value - 1, bool(ok.value), miss

    def read_kept(self, n):
        buf = self.ct.create_string_buffer(max(1, n))
        self.ok(self.lib.ev_ops_read_kept(self.h, self.ct.cast(buf, self.ct.c_void_p), n))
        return buf.raw[:n]


def device_record(torch, samples, cold_samples, walls):
    """The device record's members (without its type): torch's and
    triton's versions, the walls of the hot samples, every NVML fact -1
    (the worker reads them).  torch may be None (the record's shape alone,
    for the tests where torch does not import)."""
    versions = {}
    if torch is not None:
        versions["torch"] = str(torch.__version__)
        tri = sys.modules.get("triton")
        if tri is not None and getattr(tri, "__version__", None):
            versions["triton"] = str(tri.__version__)
    return {"rotation": None, "other_processes": -1, "self_seen": False, "throttle_reasons": -1, "ecc": -1,
            "mig": -1, "persistence": -1, "persisting_l2_bytes": -1, "versions": versions,
            "hot_other_processes": [-1] * samples, "hot_throttle_reasons": [-1] * samples,
            "hot_wall_ms": list(walls), "cold_other_processes": [-1] * cold_samples,
            "cold_throttle_reasons": [-1] * cold_samples}


def affinity():
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return ""
    return ",".join(str(c) for c in cpus)


def main():
    entered_ns = time.time_ns()
    a = parse_args()
    if a.compile_cases:
        compile_only(a)
    rec = Records(a.record_fd)
    t_import = time.perf_counter_ns()
    try:
        if OP_IDS[a.op] not in TORCH_OPS:
            raise RuntimeError("this peer has no torch binding of %s (kernels/peer_torch.py, TORCH_OPS)" % a.op)
        import torch  # noqa: PLC0415 (import time is the cold timing)
        if a.backend != "cuda":
            raise RuntimeError("torch %s imported, but this run's backend is %s: the peer measures on "
                               "cuda only" % (torch.__version__, a.backend))
    except Exception as e:  # any import failure is this host's own error text
        if not wait_gate(a.gate_fd):
            os._exit(0)
        rec.emit("hello", version=1, pid=os.getpid(), job_key=a.job_key, arm=ARM, affinity=affinity())
        rec.emit("skip", reason="%s: %s: %s" % (ARM, type(e).__name__, e))
        rec.end()
        return 0
    import_ns = time.perf_counter_ns() - t_import
    t_import = time.perf_counter_ns()
    import_compiler()
    preimport()
    import_compiler_ns = time.perf_counter_ns() - t_import
    t_gate = time.perf_counter_ns()
    if not wait_gate(a.gate_fd):
        os._exit(0)
    gate_ns = time.perf_counter_ns() - t_gate
    if not torch.cuda.is_available():
        rec.emit("hello", version=1, pid=os.getpid(), job_key=a.job_key, arm=ARM, affinity=affinity())
        rec.emit("skip", reason="%s: RuntimeError: torch imported but torch.cuda.is_available() "
                 "is False" % ARM)
        rec.end()
        return 0

    dev = torch.device("cuda")
    t_cuda = time.perf_counter_ns()
    torch.cuda.init()
    torch.cuda.synchronize()
    cuda_ns = time.perf_counter_ns() - t_cuda
    prop = torch.cuda.get_device_properties(dev)
    rec.emit("hello", version=1, pid=os.getpid(), job_key=a.job_key, arm=ARM,
             affinity=affinity(),
             device={"backend": "cuda", "name": prop.name, "sms": prop.multi_processor_count,
                     "cache_bytes": getattr(prop, "L2_cache_size", -1),
                     "memory_bytes": prop.total_memory,
                     "compute_capability": "%d.%d" % (prop.major, prop.minor),
                     "torch_version": torch.__version__})

    tdt = torch_dtype(torch, a.dtype)
    es = DTYPE_BYTES[a.dtype]
    with open(a.input, "rb") as f:
        raw = f.read()
    need = ((a.rows - 1) * a.stride + a.cols) * es if a.rows > 0 else 0
    if len(raw) < need:
        print("peer_torch: input has %d bytes, the shape needs %d" % (len(raw), need), file=sys.stderr)
        return 1
    t_upload = time.perf_counter_ns()
    n_elems = span_elems(a)
    n_bytes = n_elems * es
    # the plants (kernels/plants.h): a pristine base and V variants, each a
    # tensor of its own (storage offset 0: torch.compile sees one input
    # shape, and compiles once)
    pl = Plants(a.ops_lib, a.plants, getattr(prop, "L2_cache_size", 0))
    V, E = pl.variants, pl.epochs
    base = torch.frombuffer(bytearray(raw[:n_bytes]), dtype=torch.uint8).to(dev) if n_bytes else \
        torch.zeros(16, dtype=torch.uint8, device=dev)
    variants = [base.clone() for _ in range(V)]

    def view(t):
        return t[:max(1, n_elems) * es].view(tdt).as_strided((a.rows, a.cols), (a.stride, 1))

    views = [view(t) for t in variants]
    pl.bind(base.data_ptr(), [t.data_ptr() for t in variants])
    torch.cuda.synchronize()
    upload_ns = time.perf_counter_ns() - t_upload
    rec.emit("binding", op=a.op, dtype=a.dtype, rows=a.rows, cols=a.cols, stride=a.stride,
             in_span=len(raw), out_span=a.rows * es, in_align=256, out_align=256, threads=prop.multi_processor_count)

    t_setup = time.perf_counter_ns()
    fn = make_fn(torch, a.op)
    setup_ns = time.perf_counter_ns() - t_setup

    t_compile = time.perf_counter_ns()
    out = fn(views[0])
    torch.cuda.synchronize()
    compile_ns = time.perf_counter_ns() - t_compile
    with open(a.out_first, "wb") as f:
        f.write(out.contiguous().cpu().view(torch.uint8).numpy().tobytes() if a.rows else b"")
    if a.spawn_ns > 0 and entered_ns > a.spawn_ns:
        rec.emit("cold", name="python-start", elapsed_ns=entered_ns - a.spawn_ns)
    rec.emit("cold", name="import", elapsed_ns=import_ns)
    rec.emit("cold", name="import-compiler", elapsed_ns=import_compiler_ns)
    if a.gate_fd >= 0:
        rec.emit("cold", name="gate-wait", elapsed_ns=gate_ns)
    rec.emit("cold", name="cuda-init", elapsed_ns=cuda_ns)
    rec.emit("cold", name="upload", elapsed_ns=upload_ns)
    rec.emit("cold", name="compile-setup", elapsed_ns=setup_ns)
    if a.compile_ahead_ns > 0:
        rec.emit("cold", name="compile-ahead", elapsed_ns=a.compile_ahead_ns)
    rec.emit("cold", name="compile-first-call", elapsed_ns=compile_ns)

    def op_check(timing, index, replays, ops):
        # the check tag after this sample (the worker holds it to its seed);
        # False when an op was wrong: the job ends after the device record
        tag, ran, ok, miss = pl.tag()
        rec.emit("opcheck", timing=timing, index=index, replay_end=ran, replays=replays, ops=ops, rows=pl.rows,
                 variants=V, tag=tag, passed=ok)
        if not ok and miss is not None:
            print("torch-compile: %s sample %d: op %d of replay %d is wrong on a row planted from a secret "
                  "seed: row %d holds %.9g, its expected output is %.9g within %.3g" %
                  (timing, index, miss[1], miss[0], miss[2], miss[4], miss[5], miss[6]), file=sys.stderr)
        return ok

    def stop_here(walls, n_cold):
        rec.emit("device", **device_record(torch, len(walls), n_cold, walls))
        rec.end()
        sys.stderr.flush()
        os._exit(0)

    # L2-cold single calls: a plant (epoch 0 of the next replay) before the
    # flush, a check after the call, both outside the events
    l2 = getattr(prop, "L2_cache_size", 64 << 20)
    flush = torch.empty(a.flush_multiple * l2, dtype=torch.uint8, device=dev)
    rec.emit("flush", flush_bytes=flush.numel(), cache_bytes=l2)
    e0 = torch.cuda.Event(enable_timing=True)
    e1 = torch.cuda.Event(enable_timing=True)
    for i in range(a.cold_samples):
        st = torch.cuda.current_stream().cuda_stream
        pl.plant(0, 1, pl.last_pe, 1, st)
        pl.last_pe = 0
        flush.fill_(i & 0xFF)
        e0.record()
        cold_out = fn(views[0])
        e1.record()
        pl.set_slots(0, [cold_out.data_ptr()])
        pl.check(1, st)
        e1.synchronize()
        rec.emit("sample", timing="cold", index=i, replays=1, ops_per_graph=1, elapsed_ms=e0.elapsed_time(e1))
        if not op_check("cold", i, 1, 1):
            stop_here([], i + 1)
        del cold_out
    pl.plant(0, 1, pl.last_pe, 0, torch.cuda.current_stream().cuda_stream)  # every plant restored
    torch.cuda.synchronize()

    # capture ops calls in one graph, op i on variant i mod V, a plant node
    # before each epoch and the check after the last op (warm the compiled
    # function on every variant outside first)
    t_capture = time.perf_counter_ns()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(2):
            for v in views:
                fn(v)
    torch.cuda.current_stream().wait_stream(s)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    gouts = [None] * a.ops
    with torch.cuda.graph(g):
        st = torch.cuda.current_stream().cuda_stream
        for e in range(E):
            pl.plant(e, 1 if e == 0 else 0, E - 1 if e == 0 else e - 1, 1, st)
            for i in range(e * V, min((e + 1) * V, a.ops)):
                gouts[i] = fn(views[i % V])
        pl.check(a.ops, st)
    pl.set_slots(0, [o.data_ptr() for o in gouts])
    pl.last_pe = E - 1

    rec.emit("cold", name="graph-capture", elapsed_ns=time.perf_counter_ns() - t_capture)

    def replay(k, walls=None):
        # walls: the host's wall clock around the replay, from before its
        # first event until the whole device is idle (every stream: work
        # the events did not hold), in ms, appended per hot sample (the
        # late-work rule, src/runner/sample_rules.h)
        t0 = time.perf_counter_ns()
        e0.record()
        for _ in range(k):
            g.replay()
        e1.record()
        e1.synchronize()
        if walls is not None:
            torch.cuda.synchronize()
            walls.append((time.perf_counter_ns() - t0) / 1e6)
        return e0.elapsed_time(e1)

    # warm-up with calibration inside it (as src/runner/worker.c does)
    target, elapsed, replays, per = a.target_ms, 0.0, 0, 0.0
    pre = a.warmup_ms - 1.25 * target
    k = 1
    while True:
        if per > 0:
            want = max(1, int((pre - elapsed) / per + 0.999999))
            k = min(want, 2 * k)
        ms = replay(k)
        elapsed += ms
        replays += k
        per = ms / k
        if elapsed >= pre:
            break
    r = max(1, int(0.25 * target / per)) if per > 0 else 1
    step = 0
    while True:
        ms = replay(r)
        elapsed += ms
        replays += r
        done = step > 0 and (abs(ms - target) <= 0.1 * target or (r == 1 and ms >= target) or step >= 5)
        rec.emit("calibration", step=step, replays=r, elapsed_ms=ms, chosen=done, target_ms=target)
        if done:
            break
        per = ms / r
        r = max(1, round(target / per)) if per > 0 else r * 2
        step += 1
    while elapsed < a.warmup_ms:
        kk = max(1, int((a.warmup_ms - elapsed) / per + 0.999999)) if per > 0 else 1
        ms = replay(kk)
        elapsed += ms
        replays += kk
    rec.emit("warmup", target_ms=a.warmup_ms, elapsed_ms=elapsed, replays=replays)
    walls = []
    for i in range(a.samples):
        ms = replay(r, walls)
        rec.emit("sample", timing="hot", index=i, replays=r, ops_per_graph=a.ops, elapsed_ms=ms)
        if not op_check("hot", i, r, a.ops):
            stop_here(walls, a.cold_samples)
    # the device record (docs/runner.md "Worker records"), after the samples:
    # the versions of torch and triton that compiled and ran the reduction
    # (the peers' versions) and the hot samples' walls; the worker adds the plants' seed
    # and shape, and the NVML facts, unknown (-1) here, which it read as each
    # sample arrived (src/runner/torch_peer.c)
    rec.emit("device", **device_record(torch, a.samples, a.cold_samples, walls))
    torch.cuda.synchronize()
    with open(a.out_kept, "wb") as f:
        f.write(pl.read_kept(a.rows * es) if a.rows else b"")
    pl.plant(0, 1, pl.last_pe, 0, torch.cuda.current_stream().cuda_stream)  # every plant restored
    out = fn(views[0])
    torch.cuda.synchronize()
    with open(a.out_final, "wb") as f:
        f.write(out.contiguous().cpu().view(torch.uint8).numpy().tobytes() if a.rows else b"")
    rec.end()
    # Every record and the output files are written and closed: skip the
    # interpreter's teardown of torch (1.2-1.7 s on the H200 host), which
    # the next job would wait for.
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
