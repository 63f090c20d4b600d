#!/usr/bin/env python3
"""python_host.py: a Python arm's own process (src/runner/backend_python.h).

A protocol's kernel may be a Python function fn(x, out): x is the case's
input, a 2-D view of R rows and N columns (row stride `stride` elements),
out its output, R elements of the case's dtype; fn writes out[r] = the
reduction of row r and returns None.  On cuda both are torch tensors on the
device (Triton, torch, CuPy through __cuda_array_interface__: anything that
writes the output on torch's current stream); on cpu both are numpy arrays
(bf16, which numpy lacks, arrives as its uint16 bits; x is read-only).

The worker (src/runner/worker.c) measures the function exactly as it
measures ours, through backend_python.c: each of its backend calls is one
request here, a JSON line on --req-fd, answered by a JSON line on
--resp-fd ({"ok": true, ...} or {"ok": false, "error": "..."}), followed
by "bytes" raw bytes when the answer carries some.  The first line is the
hello, unasked.  This process holds the input as a pristine base and V
variants (tensors or arrays of its own), `ops` output slots between guard
bytes, and the plants and checks of kernels/plants.h through the library of
its backend (build/libevident_ops.so on cuda, build/libevident_ops_cpu.so on
cpu, the same C ABI), configured by the worker's plants file: op i reads
variant i mod V and writes slot i; before each epoch a plant node, after
the last op a check node.  On cuda the replay is captured with
torch.cuda.graph; a function that cannot be captured runs the same nodes
eagerly, timed the same way ("timed loop: why"); on cpu a replay is its
calls and nodes in order, timed with perf_counter_ns, as the cpu backend
times its batches.

Errors are answers: a function that raises answers with the traceback's
last line (the whole traceback goes to stderr, the job's stderr tail); a
module or function that does not exist answers naming what the module
has.  stdout (fd 1) is a file the worker reads after every answer: a
function that prints fails its job.
"""
import argparse
import ctypes
import importlib.util
import json
import os
import platform
import sys
import time
import traceback

# The plants library's wrapper (kernels/peer_torch.py, beside this script)
# and the vocabulary the worker is built from.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_torch import VOCAB, Plants  # noqa: E402

OP_IDS = {r[1]: r[0] for r in VOCAB["EV_OPS"]}
DTYPE_IDS = {r[1]: r[0] for r in VOCAB["EV_DTYPES"]}
DTYPE_BYTES = {r[1]: int(r[2]) for r in VOCAB["EV_DTYPES"]}
GUARD = 4096       # guard bytes around each output slot (backend.h, EV_SLOT_GUARD)
GUARD_BYTE = 0xA5  # their value (EV_GUARD_BYTE)
LATE_WAIT_S = 1.0  # cpu: how long a replay waits for threads its function left (EV_LATE_WAIT_MS)


class Refused(Exception):
    """A request this process refuses, its message the answer's error."""


def last_line(e):
    """The last line of exception e's traceback: 'Type: message'."""
    return "".join(traceback.format_exception_only(type(e), e)).strip().splitlines()[-1]


def versions():
    """The versions of what runs the function: the interpreter, and numpy,
    torch, triton and cupy where the process imported them."""
    v = {"python": platform.python_version()}
    for name in ("numpy", "torch", "triton", "cupy"):
        m = sys.modules.get(name)
        if m is not None and isinstance(getattr(m, "__version__", None), str):
            v[name] = m.__version__[:63]
    return v


class Cpu:
    """numpy arrays, perf_counter_ns, a flush read through the cache."""

    def __init__(self):
        try:
            import numpy  # noqa: PLC0415
        except Exception as e:  # noqa: BLE001
            raise Refused("a Python arm on cpu runs on numpy, which %s cannot import (%s): install it "
                          "(python3-numpy), or name an interpreter that has it (evident run --python PY, or "
                          "the protocol's \"python\")" % (sys.executable, last_line(e)))
        self.np = numpy
        self.flush = None

    def hello(self):
        return {}

    def dtype(self, name):
        return {"FP32": self.np.float32, "FP16": self.np.float16, "BF16": self.np.uint16}[DTYPE_IDS[name]]

    def buffer(self, n, fill=None, data=None):
        b = self.np.empty(max(n, 16), dtype=self.np.uint8)
        if fill is not None:
            b[:] = fill
        if data is not None and n:
            b[:n] = self.np.frombuffer(data, dtype=self.np.uint8, count=n)
        return b

    def copy(self, b):
        return b.copy()

    def ptr(self, b):
        return b.ctypes.data

    def view_in(self, b, rows, cols, stride, dt):
        es = self.np.dtype(dt).itemsize
        flat = b.view(dt)
        return self.np.lib.stride_tricks.as_strided(flat, shape=(rows, cols), strides=(stride * es, es),
                                                    writeable=False)

    def view_out(self, arena, off, n, dt):
        return arena[off:off + n].view(dt)

    def to_bytes(self, b, off, n):
        return b[off:off + n].tobytes()

    def first_diff(self, a, b, n):
        d = self.np.flatnonzero(a[:n] != b[:n])
        return int(d[0]) if d.size else -1

    def set_bytes(self, arena, off, n, byte):
        arena[off:off + n] = byte

    def stream(self):
        return 0

    def sync(self):
        pass

    def make_flush(self, n):
        self.flush = self.np.ones(max(n, 64), dtype=self.np.uint8)

    def do_flush(self, i):
        f = self.flush[::64]
        f += 1

    def timer(self):
        return CpuTimer()

    def threads(self):
        try:
            return set(os.listdir("/proc/self/task"))
        except OSError:
            return set()


class CpuTimer:
    def start(self):
        self.t0 = time.perf_counter_ns()

    def stop(self):
        self.t1 = time.perf_counter_ns()

    def ms(self):
        return (self.t1 - self.t0) / 1e6


class Cuda:
    """torch tensors on the device, CUDA events, a flush of the L2."""

    def __init__(self):
        try:
            import torch  # noqa: PLC0415
        except Exception as e:  # noqa: BLE001
            raise Refused("a Python arm on cuda runs on torch, which %s cannot import (%s): name an "
                          "interpreter that has it (evident run --python PY, or the protocol's \"python\")"
                          % (sys.executable, last_line(e)))
        if not torch.cuda.is_available():
            raise Refused("torch %s imported, but torch.cuda.is_available() is False" % torch.__version__)
        self.torch = torch
        self.dev = torch.device("cuda")
        torch.cuda.init()
        torch.cuda.synchronize()
        self.flush = None

    def hello(self):
        p = self.torch.cuda.get_device_properties(self.dev)
        d = {"name": p.name, "sms": p.multi_processor_count, "cache_bytes": getattr(p, "L2_cache_size", -1),
             "memory_bytes": p.total_memory, "compute_capability": "%d.%d" % (p.major, p.minor),
             "runtime_version": str(self.torch.version.cuda or "")}
        uuid = getattr(p, "uuid", None)
        if uuid is not None:
            d["uuid"] = "GPU-" + str(uuid)
        return {"device": d}

    def dtype(self, name):
        t = self.torch
        return {"FP32": t.float32, "FP16": t.float16, "BF16": t.bfloat16}[DTYPE_IDS[name]]

    def buffer(self, n, fill=None, data=None):
        t = self.torch
        if data is not None and n:
            return t.frombuffer(bytearray(data[:n]), dtype=t.uint8).to(self.dev)
        b = t.empty(max(n, 16), dtype=t.uint8, device=self.dev)
        if fill is not None:
            b.fill_(fill)
        return b

    def copy(self, b):
        return b.clone()

    def ptr(self, b):
        return b.data_ptr()

    def view_in(self, b, rows, cols, stride, dt):
        es = self.torch.empty(0, dtype=dt).element_size()
        n = ((rows - 1) * stride + cols) if rows > 0 else 1
        return b[:max(n, 1) * es].view(dt).as_strided((rows, cols), (stride, 1))

    def view_out(self, arena, off, n, dt):
        return arena[off:off + n].view(dt)

    def to_bytes(self, b, off, n):
        if not n:
            return b""
        h = b[off:off + n].to("cpu").contiguous()  # no numpy needed beside torch
        return ctypes.string_at(h.data_ptr(), n)

    def first_diff(self, a, b, n):
        d = (a[:n] != b[:n]).nonzero()
        return int(d[0].item()) if d.numel() else -1

    def set_bytes(self, arena, off, n, byte):
        arena[off:off + n].fill_(byte)

    def stream(self):
        return self.torch.cuda.current_stream().cuda_stream

    def sync(self):
        self.torch.cuda.synchronize()

    def make_flush(self, n):
        self.flush = self.torch.empty(max(n, 64), dtype=self.torch.uint8, device=self.dev)

    def do_flush(self, i):
        self.flush.fill_(i & 0xFF)

    def timer(self):
        return CudaTimer(self.torch)

    def threads(self):
        return set()


class CudaTimer:
    def __init__(self, torch):
        self.e0 = torch.cuda.Event(enable_timing=True)
        self.e1 = torch.cuda.Event(enable_timing=True)

    def start(self):
        self.e0.record()

    def stop(self):
        self.e1.record()
        self.e1.synchronize()

    def ms(self):
        return self.e0.elapsed_time(self.e1)


def load_function(path, name):
    """Imports the module at path (its directory, the protocol's files as
    the run copied them, first on sys.path) and returns its function name.
    Refused, naming what the module has, when it has none of that name."""
    here = os.path.dirname(path)
    if here not in sys.path:
        sys.path.insert(0, here)
    mod_name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(mod_name, path)
    if spec is None or spec.loader is None:
        raise Refused("%s cannot be imported as a module" % os.path.basename(path))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[mod_name] = mod
    try:
        spec.loader.exec_module(mod)
    except Exception as e:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)
        hint = ""
        if isinstance(e, ModuleNotFoundError) and e.name and not e.name.startswith(("numpy", "torch", "triton")):
            hint = (" (a module of the protocol's directory is importable only when the kernel's python "
                    "list names it: \"python\": [\"%s\", \"%s.py\", ...])" % (os.path.basename(path), e.name))
        raise Refused("importing %s raised %s%s" % (os.path.basename(path), last_line(e), hint))
    fn = getattr(mod, name, None)
    if not callable(fn):
        have = sorted(k for k, v in vars(mod).items() if callable(v) and not k.startswith("_")
                      and getattr(v, "__module__", None) == mod_name)
        raise Refused("%s defines no function '%s'%s: it defines %s" % (
            os.path.basename(path), name, " (it is a %s)" % type(fn).__name__ if fn is not None else "",
            ", ".join(have) if have else "no function of its own"))
    return fn


class Job:
    """One bound case: the buffers, the plants, the function, the graph."""

    def __init__(self, side, req, arm):
        self.side, self.arm = side, arm
        dt_name = req["dtype"]
        self.dt_name = dt_name
        self.dt = side.dtype(dt_name)
        self.es = DTYPE_BYTES[dt_name]
        self.rows, self.cols, self.stride = req["rows"], req["cols"], req["stride"]
        self.ops = req["ops"]
        self.fn_name = req["function"]
        self.fn = load_function(req["module"], req["function"])
        with open(req["input"], "rb") as f:
            raw = f.read()
        self.in_bytes = ((self.rows - 1) * self.stride + self.cols) * self.es if self.rows > 0 else 0
        if len(raw) < self.in_bytes:
            raise Refused("the input file has %d bytes, the case needs %d" % (len(raw), self.in_bytes))
        self.pl = Plants(arm_lib, req["plants"], req["cache_bytes"])
        self.V, self.E = self.pl.variants, self.pl.epochs
        if self.V != req["variants"]:
            raise Refused("the plants library made %d variants, the worker %d" % (self.V, req["variants"]))
        self.base = side.buffer(self.in_bytes, data=raw)
        self.var = [side.copy(self.base) for _ in range(self.V)]
        self.views = [side.view_in(v, self.rows, self.cols, self.stride, self.dt) for v in self.var]
        # the output slots: ops slots of out_len bytes, each after GUARD guard bytes, GUARD after the last
        self.out_len = self.rows * self.es
        self.pitch = (self.out_len + 255) // 256 * 256 + GUARD
        self.arena = side.buffer(GUARD + self.ops * self.pitch, fill=GUARD_BYTE)
        self.offs = [GUARD + i * self.pitch for i in range(self.ops)]
        self.slots = [side.view_out(self.arena, o, self.out_len, self.dt) for o in self.offs]
        self.pl.bind(side.ptr(self.base), [side.ptr(v) for v in self.var])
        self.pl.set_slots(0, [side.ptr(self.arena) + o for o in self.offs])
        side.make_flush(req["flush_bytes"])
        side.sync()
        self.last_pe = 0
        self.launched = 0
        self.graph = None
        self.capture = None
        self.bind_threads = side.threads()

    def call(self, i, where):
        """Op i: fn(variant i mod V, slot i); its return value held to None
        (or its output itself)."""
        out = self.slots[i]
        r = self.fn(self.views[i % self.V], out)
        if r is not None and r is not out:
            shape = tuple(getattr(r, "shape", ()))
            raise Refused(
                "%s(x, out) returned a %s%s in %s: a function writes its result into out (shape (%d,), "
                "%s) and returns None" % (self.fn_name, type(r).__name__,
                                          " of shape %s, dtype %s" % (shape, getattr(r, "dtype", "?"))
                                          if shape else "", where, self.rows, self.dt_name))

    def check_out(self, where):
        """The slots still are the views they were (shape, dtype, address)."""
        for i, s in enumerate(self.slots[:1]):
            if tuple(s.shape) != (self.rows,) or s.dtype != self.dt or \
                    self.side.ptr(s) != self.side.ptr(self.arena) + self.offs[i]:
                raise Refused("%s changed its output in %s: out is now shape %s, dtype %s; a function "
                              "writes into out in place (shape (%d,), %s)" % (
                                  self.fn_name, where, tuple(s.shape), s.dtype, self.rows, self.dt_name))

    def replay_body(self, st):
        """One replay: a plant node before each epoch, its ops, the check."""
        V, E, pl = self.V, self.E, self.pl
        for e in range(E):
            pl.plant(e, 1 if e == 0 else 0, E - 1 if e == 0 else e - 1, 1, st)
            for i in range(e * V, min((e + 1) * V, self.ops)):
                self.call(i, "a replay")
        pl.check(self.ops, st)

    def capture_graph(self, ops):
        """cuda: the replay captured in one CUDA graph (the function warmed
        on every variant and slot outside it first); a function that cannot
        be captured runs the timed loop, and says why.  cpu: a batch."""
        if ops != self.ops:
            raise Refused("capture of %d ops, %d slots bound" % (ops, self.ops))
        side = self.side
        if isinstance(side, Cpu):
            self.capture = "batch"
            return self.capture
        torch = side.torch
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for i in range(min(self.ops, 2 * self.V)):
                self.call(i, "its warm-up before the capture")
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        try:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                self.replay_body(torch.cuda.current_stream().cuda_stream)
            self.graph = g
            self.capture = "graph"
        except Refused:
            raise
        except Exception as e:  # noqa: BLE001
            traceback.print_exc(file=sys.stderr)
            try:
                torch.cuda.synchronize()
            except Exception as e2:  # noqa: BLE001
                raise Refused("its capture failed (%s) and left the device unusable (%s)"
                              % (last_line(e), last_line(e2)))
            self.graph = None
            self.capture = "timed loop: torch.cuda.graph could not capture it: %s" % last_line(e)[:200]
        return self.capture

    def replay(self, k):
        """k replays back to back, timed; on cpu, threads the function left
        running are waited for (up to a second) before the answer."""
        side, t = self.side, self.side.timer()
        if self.capture is None:
            raise Refused("replay before capture")
        st = side.stream()
        t.start()
        for _ in range(k):
            if self.graph is not None:
                self.graph.replay()
            else:
                self.replay_body(st)
        t.stop()
        self.launched += k
        self.last_pe = self.E - 1
        side.sync()
        if isinstance(side, Cpu):
            t_end = time.monotonic() + LATE_WAIT_S
            while side.threads() - self.bind_threads and time.monotonic() < t_end:
                time.sleep(0.00005)
        return t.ms()

    def cold(self):
        """A cold sample: epoch 0 planted, the cache flushed, one timed op,
        its check."""
        side, t = self.side, self.side.timer()
        st = side.stream()
        self.pl.plant(0, 1, self.last_pe, 1, st)
        self.last_pe = 0
        side.do_flush(self.launched)
        side.sync()
        t.start()
        self.call(0, "a cold sample")
        t.stop()
        self.pl.check(1, st)
        side.sync()
        self.launched += 1
        self.check_out("a cold sample")
        return t.ms()

    def guards(self):
        """The first byte outside the slots that is not a guard byte:
        (op, offset past out[R - 1] of its output), or None."""
        ab = self.side.to_bytes(self.arena, 0, GUARD + self.ops * self.pitch)
        bad = [i for i in range(GUARD) if ab[i] != GUARD_BYTE][:1]
        if bad:
            return (-1, GUARD - bad[0])
        for i, o in enumerate(self.offs):
            tail = ab[o + self.out_len:o + self.pitch]
            if tail.count(GUARD_BYTE) != len(tail):
                j = next(j for j, b in enumerate(tail) if b != GUARD_BYTE)
                return (i, j + 1)
        return None


def serve(side, req_f, resp_f, arm):
    """Answers requests until the worker closes its end."""
    job = None

    def answer(obj, payload=None):
        obj["ok"] = True
        if payload is not None:
            obj["bytes"] = len(payload)
        resp_f.write((json.dumps(obj, allow_nan=False) + "\n").encode())
        if payload:
            resp_f.write(payload)
        resp_f.flush()

    while True:
        line = req_f.readline()
        if not line:
            return
        req = None
        try:
            req = json.loads(line)
            op = req["op"]
            if op == "bind":
                job = Job(side, req, arm)
                answer({"versions": versions(), "in_align": 256, "out_align": 256})
                continue
            if job is None:
                raise Refused("%s before bind" % op)
            if op == "poison":
                for o in job.offs:
                    side.set_bytes(job.arena, o, job.out_len, req["byte"])
                side.sync()
                answer({})
            elif op == "launch":
                job.call(0, "its launch")
                side.sync()
                job.check_out("its launch")
                answer({})
            elif op == "read_output":
                g = job.guards()
                if g is not None:
                    raise Refused("%s wrote outside its output: %s" % (
                        arm, "%d bytes before the first output" % g[1] if g[0] < 0 else
                        "byte %d past out[%d] of op %d's output" % (g[1], job.rows - 1, g[0])))
                n = req["len"]
                answer({}, side.to_bytes(job.arena, job.offs[req["slot"]], n))
            elif op == "cold":
                answer({"ms": job.cold()})
            elif op == "capture":
                answer({"capture": job.capture_graph(req["ops"])})
            elif op == "replay":
                answer({"ms": job.replay(req["k"])})
            elif op == "read_input":
                w = req["which"]
                b = job.base if w < 0 else job.var[w]
                answer({}, side.to_bytes(b, 0, job.in_bytes))
            elif op == "tag":
                tag, ran, ok, miss = job.pl.tag()
                a = {"tag": tag, "r_next": ran + 1, "launched": job.launched}
                if miss is not None:
                    a["first"] = {"replay": miss[0], "op": miss[1], "row": miss[2], "kind": miss[3]}
                    for k, v in (("value", miss[4]), ("expect", miss[5]), ("bound", miss[6])):
                        if v == v and abs(v) != float("inf"):
                            a["first"][k] = v
                answer(a)
            elif op == "read_kept":
                answer({}, job.pl.read_kept(req["len"]))
            elif op == "unplant":
                job.pl.plant(0, 1, job.last_pe, 0, side.stream())
                side.sync()
                answer({})
            elif op == "intact":
                for j, v in enumerate(job.var):
                    at = side.first_diff(v, job.base, job.in_bytes)
                    if at >= 0:
                        answer({"variant": j, "at": at})
                        break
                else:
                    answer({"variant": -1, "at": 0})
            else:
                raise Refused("unknown request '%s'" % op)
        except Refused as e:
            resp_f.write((json.dumps({"ok": False, "error": str(e)}) + "\n").encode())
            resp_f.flush()
        except Exception as e:  # noqa: BLE001 (the function's own errors: its traceback to stderr)
            traceback.print_exc(file=sys.stderr)
            where = {"bind": "binding its case", "launch": "its launch", "cold": "a cold sample",
                     "capture": "its capture", "replay": "a timed replay"}.get(
                         req.get("op") if isinstance(req, dict) else None, "a request")
            resp_f.write((json.dumps({"ok": False, "error": "%s raised %s during %s (its traceback is above)"
                                      % (job.fn_name if job else "the module", last_line(e), where)})
                          + "\n").encode())
            resp_f.flush()


arm_lib = None  # the plants library's path (--ops-lib)


def main():
    global arm_lib
    p = argparse.ArgumentParser(description="a Python arm's process (one job)")
    p.add_argument("--req-fd", type=int, required=True)
    p.add_argument("--resp-fd", type=int, required=True)
    p.add_argument("--backend", choices=["cpu", "cuda"], required=True)
    p.add_argument("--ops-lib", required=True)
    p.add_argument("--arm", default="ext-python")
    a = p.parse_args()
    arm_lib = a.ops_lib
    req_f = os.fdopen(a.req_fd, "rb", buffering=0)
    resp_f = os.fdopen(a.resp_fd, "wb", buffering=0)
    try:
        side = Cpu() if a.backend == "cpu" else Cuda()
        h = side.hello()
    except Refused as e:
        resp_f.write((json.dumps({"ok": False, "error": str(e)}) + "\n").encode())
        return 0
    except Exception as e:  # noqa: BLE001
        traceback.print_exc(file=sys.stderr)
        resp_f.write((json.dumps({"ok": False, "error": "its start failed: %s" % last_line(e)}) + "\n").encode())
        return 0
    h["ok"] = True
    h["python"] = platform.python_version()
    resp_f.write((json.dumps(h) + "\n").encode())
    serve(side, req_f, resp_f, a.arm)
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
