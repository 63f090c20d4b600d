/*
 * backend_python.h: a Python arm's backend (backend_python.c).  A
 * protocol's kernel may be a Python function (ext_kernel.h, "python"):
 * fn(input, output), on cuda over torch tensors (Triton, torch, CuPy:
 * anything callable that writes the output), on cpu over numpy arrays.
 * It runs in a python process of its own, the Python host
 * (kernels/python_host.py), and the worker measures it through this
 * backend exactly as it measures ours (worker.c: the same protocol,
 * records, plants and checks, validation stages and rules): every call of
 * backend.h is a request to the host over a pair of pipes, answered when
 * the host's work for it is finished.  The host holds the case's input as
 * a pristine base and V variants, `ops` output slots between guard bytes,
 * and the plants and checks of kernels/plants.h through the library of
 * its backend (build/libevident_ops.so on cuda, build/libevident_ops_cpu.so
 * on cpu), which the worker's plants file configures; on cuda it captures
 * the graph with torch.cuda.graph (a function that cannot be captured
 * runs in the timed loop instead, and its device record says so:
 * "capture"); on cpu a batch is `ops` calls as ours are.
 *
 * What the worker holds the host to, from outside it: its process's
 * resident memory (the kernel's memory_mb beyond its buffers: killed past
 * it, with the reason), its stdout (a file of its own: a function that
 * prints fails its job, naming what it printed; the record stream is the
 * worker's and never the host's), each request's own wall clock (the
 * late-work rule's second clock is the worker's, around the request), its
 * CPU time (counted as the job's own, foreign.h), the tags of its checks
 * (drawn from the worker's seed), and every output and input read back.
 * What cannot hold for host code is ev_python_not_held.
 */
#ifndef EV_BACKEND_PYTHON_H
#define EV_BACKEND_PYTHON_H

#include "backend.h"

/*
 * The Python arm's backend over a run's backend `base` (ev_backend_cpu_ops
 * or ev_backend_cuda_ops: its name, and on cpu its device facts, on cuda
 * its NVML watch).  Its open starts the host: cfg->python (the
 * interpreter), cfg->py_host (kernels/python_host.py) and cfg->py_ops_lib
 * (the plants library) must be set.  NULL for a backend it has no host
 * for.
 */
const ev_backend_ops *ev_backend_python(const ev_backend_ops *base);

/* The plants library of backend ("cpu": libevident_ops_cpu.so, "cuda":
 * libevident_ops.so) beside this program's own executable (the build
 * directory, or libexec/evident).  OUT: out[cap].  EV_EPROC when it is
 * not there. */
ev_status ev_python_ops_lib(const char *backend, char *out, size_t cap, ev_err *err);

/* A Python arm job's part of the backend configuration cfg (backend.h):
 * the interpreter python (NULL: python3), the arm's name, the host script
 * py_host, the plants library of backend (ev_python_ops_lib, written into
 * lib[cap], which cfg then points into) and the kernel k's memory
 * allowance (k NULL: EV_EXT_PY_MEMORY_MB).  EV_EINVAL
 * without a host script; ev_python_ops_lib's failures. */
ev_status ev_python_config(ev_backend_config *cfg, const char *backend, const char *arm,
                           const ev_ext_kernel *k, const char *python, const char *py_host, char *lib,
                           size_t cap, ev_err *err);

/* 1 when ops is a Python arm's backend. */
int ev_backend_is_python(const ev_backend_ops *ops);

/* The rules that cannot hold for a Python arm (host code in its own
 * process), each "label: sentence", NULL-terminated: the bundle's receipt
 * of every Python arm names them and the report shows their labels
 * (docs/defenses.md, "Python arms"). */
extern const char *const ev_python_not_held[];

#endif
