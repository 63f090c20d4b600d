/*
 * backend.h: the device interface the worker (src/runner/worker.c) drives,
 * one job per process.  A backend owns the device and the buffers; the
 * worker owns the protocol (warm-up, calibration, samples, validation) and
 * writes the records.  Two backends implement it: cpu
 * (src/runner/backend_cpu.c, always built) and cuda (the kernels module,
 * built when nvcc is present, defining ev_backend_cuda_ops and
 * EV_HAVE_CUDA for the worker).  torch-compile is not a backend: it is its
 * own python3 process speaking the worker's record format.
 *
 * Call order per job (every call synchronous: it returns when the device
 * work is finished):
 *   open -> info -> bind -> poison -> launch -> read_output(0) (validate)
 *   -> cold_launch x cold_samples (each: a plant, the flush, one timed op,
 *   a check) -> unplant -> capture(ops_per_graph) -> replay ... -> tag
 *   after every cold and hot sample -> read_kept -> unplant -> intact ->
 *   launch -> read_output(0) (validate again) -> close; read_input after
 *   each validated launch (the input must be unchanged); state after every
 *   hot sample and once after the last (the device record, docs/runner.md
 *   "Worker records").
 * A job bound with plants (every validated arm, and the floor on a
 * nominal case: docs/defenses.md, "Every op earns its time") holds the
 * case's input as a pristine base and V variants, and `ops` output slots,
 * at secret offsets (ev_plant_layout); op i of a graph reads variant
 * i mod V and writes slot i, and the graph is [plant e=0] ops 0..V-1
 * [plant e=1] ... [check] (kernels/plants.h).  launch and the cold op run
 * op 0 (variant 0, slot 0).
 * Every entry returns ev_status with err filled on failure; OUT parameters
 * are written only on success.  A backend never prints and never exits.
 */
#ifndef EV_BACKEND_H
#define EV_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "binding.h"
#include "model/model.h"
#include "plants.h"
#include "protocol.h"
#include "model/select.h"
#include "selector.h"
#include "status.h"

/* How the backend is opened (from the protocol and the host). */
typedef struct ev_backend_config {
    int64_t host_threads; /* cpu: worker threads (S); 0: one per CPU of the affinity */
    ev_proto_ref ref;     /* flush and ceiling sizes for this backend */
    int64_t device_index; /* cuda: device ordinal (0) */
    int own_cpus;         /* cpu: the protocol pins jobs to a cpu_set of 2 or more CPUs (the kernel
                             host's handshake may then spin: khost.h) */
    /* A Python arm's backend (backend_python.h) only: */
    const char *python;     /* the interpreter of its process */
    const char *py_arm;     /* the arm's name, for its messages */
    const char *py_host;    /* kernels/python_host.py */
    const char *py_ops_lib; /* the plants library of the run's backend */
    int64_t py_memory_mb;   /* its process's anonymous resident memory beyond what it held at bind */
} ev_backend_config;

/* What a backend whose kernel runs in a process of its own says of it
 * for the device record (a Python arm, backend_python.h): "" when none. */
typedef struct ev_backend_facts {
    char versions[512]; /* a JSON object: {"python": "3.11.2", "numpy": ...}, the versions of what
                           ran the kernel */
    char capture[256];  /* "graph" (captured as ours are), "batch" (cpu: calls as ours are) or
                           "timed loop: WHY" (cuda: it could not be captured) */
} ev_backend_facts;

/* What the device is.  Strings are NUL-terminated, "" when unknown.
 * Raw identifiers (uuid) are redacted by the supervisor, never stored. */
typedef struct ev_device_info {
    char backend[8];             /* "cpu" | "cuda" */
    char name[128];              /* device name or CPU model */
    int64_t sms;                 /* S: SMs (cuda) or worker threads (cpu) */
    int64_t cache_bytes;         /* L2 (cuda) or last-level cache (cpu) */
    int64_t flush_bytes;         /* buffer flushed before each cold launch */
    int64_t memory_bytes;        /* device (or host) memory */
    char compute_capability[16]; /* "9.0"; "" on cpu */
    char driver_version[32];
    char runtime_version[32];
    char uuid[64];            /* raw: the supervisor hashes it */
    int64_t clock_mhz;        /* max SM clock; -1 unknown */
    int64_t memory_clock_mhz; /* -1 unknown */
} ev_device_info;

/* One job as the worker binds it. */
typedef struct ev_backend_job {
    ev_arm_kind kind;               /* NATIVE, AUTO, FLOOR, CEILING, CUB (FAULT binds as NATIVE,
                                 or as AUTO with wrong_schedule set) */
    const char *arm;                /* the arm's name, for receipts */
    ev_proto_case c;                /* the case (ignored by FLOOR and CEILING) */
    int64_t rows_per_program;       /* NATIVE: b of the schedule (B for default) */
    const ev_coef *coef;            /* AUTO: the fitted coefficients; NULL: no fit, default */
    double threshold;               /* AUTO: decision threshold */
    unsigned scheds;                /* AUTO: the protocol's model_schedules (EV_SCHED_BIT mask) */
    int wrong_schedule;             /* AUTO: fault arm: launch a schedule the selector did not
                                 choose (ev_backend_schedule); receipts stay honest */
    int64_t ceiling_bytes;          /* CEILING: bytes streamed per op (CEILING_L2: the backend's own
                                       L2-resident size: half the GPU's L2; on cpu half a core's L2
                                       per pool thread) */
    const void *input;              /* the input bytes: R rows of `stride` elements (row-major, */
    size_t input_len;               /*   the last row may end at cols), from kernels/inputs.h */
    const ev_plant_cfg *plants;     /* the variants, slots, plants and checks (kernels/plants.h); NULL: one
                                      input and one output, no plant or check (the ceiling) */
    const ev_plant_row *plant_rows; /* with plants: R rows' plant figures (ev_plant_rows) */
    const char *ext_lib;            /* EXTERNAL: the built kernel (cpu: a shared object; cuda: a cubin) */
    const char *ext_entry;          /* EXTERNAL: its entry for the case's op and dtype */
    int64_t ext_memory_mb;          /* EXTERNAL, cpu: the kernel host's address space beyond the shared memory
                                       (the kernel's memory_mb; 0: no limit) */
    int64_t ext_grid;               /* EXTERNAL, cuda: the declared grid and block evaluated for */
    int64_t ext_block;              /*   the case (ext_kernel.h; >= 1; the backend checks its limits) */
} ev_backend_job;

/* What bind established (recorded as the job's binding). */
typedef struct ev_backend_binding {
    int64_t in_span, out_span;   /* bytes of the bound buffers */
    int64_t in_align, out_align; /* largest power of two dividing the address, <= 256 */
    int64_t threads;             /* S as used by the selector */
    size_t out_len;              /* bytes read_output returns (R x dtype size; 0 for refs) */
} ev_backend_binding;

/* A kernel node read back from the instantiated graph (cuda), or the entry
 * and task partition of a cpu batch (grid[0] = tasks, block[0] = rows per task). */
typedef struct ev_node_receipt {
    char function[128];
    int64_t grid[3], block[3];
} ev_node_receipt;

/* What the device's state was, as the backend can read it (docs/defenses.md, GPU
 * hygiene).  -1 where unknown: no NVML, the call absent from this NVML or
 * failed, or a backend that cannot say (the cpu backend knows none of it:
 * it shares the host with whatever runs there, and says so by -1).
 * Unknown is never a failure (sample_rules.h). */
typedef struct ev_device_state {
    int64_t other_processes;     /* compute processes on the device besides this one (NVML's list,
                                 less one: this process holds a context; -1 when the list is
                                 empty, as in a container whose NVML cannot see processes) */
    int self_seen;               /* 1: this pid is in NVML's list; 0: not (a pid namespace), or unknown */
    int64_t throttle_reasons;    /* NVML clocks event (throttle) reason bits, as NVML defines them */
    int64_t ecc;                 /* ECC mode now: 1 on, 0 off */
    int64_t mig;                 /* MIG mode now: 1 on, 0 off */
    int64_t persistence;         /* persistence mode: 1 on, 0 off */
    int64_t persisting_l2_bytes; /* cudaLimitPersistingL2CacheSize read back after it was set to 0 */
    char cub_version[16];        /* the linked CUB's CUB_VERSION as "major.minor.subminor"; "" */
} ev_device_state;

typedef struct ev_backend_ops {
    const char *name; /* "cpu" | "cuda" */
    /* IN: *impl, preopen's state (NULL: none); OUT: *impl, the backend's
     * state (NULL on failure: open has closed what it was given). */
    ev_status (*open)(const ev_backend_config *cfg, void **impl, ev_err *err);
    void (*close)(void *impl); /* NULL-safe */
    ev_status (*info)(void *impl, ev_device_info *out, ev_err *err);
    /* Allocates and fills buffers, runs the binding checks and, for AUTO,
     * the selector.  A refused binding (span, alignment, overlap, N = 0):
     * EV_EINVAL, nothing launched. */
    ev_status (*bind)(void *impl, const ev_backend_job *job, ev_backend_binding *out, ev_err *err);
    /* Fills every output slot with bytes of value byte (EV_POISON_OUT_BYTE,
     * 0xFF: NaN in every dtype, before the first launch; inputs.h). */
    ev_status (*poison)(void *impl, int byte, ev_err *err);
    /* One launch of op 0 (variant 0, slot 0; no plant), synchronised. */
    ev_status (*launch)(void *impl, ev_err *err);
    /* Copies len (<= out_len) bytes of output slot `slot` to dst, checking
     * every guard of an external kernel's slots. */
    ev_status (*read_output)(void *impl, int64_t slot, void *dst, size_t len, ev_err *err);
    /* A cold sample: plants replay r_next's epoch 0 (untimed), flushes
     * flush_bytes of cache, times one launch of op 0, then checks op 0
     * (untimed) and advances the tag chain.  OUT: *ms (device-timed:
     * events on cuda, CLOCK_MONOTONIC on cpu). */
    ev_status (*cold_launch)(void *impl, double *ms, ev_err *err);
    /* Captures ops launches into one graph (cuda) or batch (cpu), op i on
     * variant i mod V and slot i, with the plant nodes before each epoch
     * and the check node after the last op, and reads back the arm's
     * kernel nodes (ours are left out: they are counted, and the graph is
     * refused unless it holds exactly E plant nodes and one check).
     * OUT: *nodes (malloc'd; the caller frees), *n_nodes. */
    ev_status (*capture)(void *impl, int64_t ops, ev_node_receipt **nodes, size_t *n_nodes, ev_err *err);
    /* Replays the captured graph k times back to back.  OUT: *ms, elapsed
     * as the timer returned it; *wall_ms (when not NULL), the host's wall
     * clock from before the first event to when the whole device is idle
     * (cuda: cudaDeviceSynchronize after the last event; cpu: no thread of
     * the process left beyond those at bind, waited for up to
     * EV_LATE_WAIT_MS): the late-work rule's second clock (sample_rules.h). */
    ev_status (*replay)(void *impl, int64_t k, double *ms, double *wall_ms, ev_err *err);
    /* Current SM clock.  OUT: *mhz; EV_EUNSUPPORTED when unavailable
     * (no NVML, or the cpu backend): the sample records null. */
    ev_status (*sm_clock)(void *impl, int64_t *mhz, ev_err *err);
    /* Copies len bytes of the bound input back to dst: the pristine base
     * (which = -1) or variant which: the worker checks, after every
     * validated launch, that no kernel wrote its input. */
    ev_status (*read_input)(void *impl, int64_t which, void *dst, size_t len, ev_err *err);
    /* The check state now (kernels/plants.h: the tag after r_next - 1
     * replays, the attempt's first mismatch).  OUT: *st; *launched, the
     * replays and cold checks this backend ran (the host's own count). */
    ev_status (*tag)(void *impl, ev_plant_state *st, uint64_t *launched, ev_err *err);
    /* Copies len (<= out_len) bytes of the kept output (slot kept_op as the
     * last check found it, before it poisoned) to dst. */
    ev_status (*read_kept)(void *impl, void *dst, size_t len, ev_err *err);
    /* Restores the elements the last plant node planted, so that every
     * variant holds the base's bytes again (synchronised, untimed). */
    ev_status (*unplant)(void *impl, ev_err *err);
    /* Compares every variant with the pristine base on the device.  OUT:
     * *variant, the first that differs (-1: none), *at its first differing
     * byte. */
    ev_status (*intact)(void *impl, int64_t *variant, size_t *at, ev_err *err);
    /* Reads the device's state (outside any timing).  OUT: *out, every
     * field it cannot read -1 (or "").  An absent NVML or NVML call is not
     * an error; a failed CUDA call is (EV_ECUDA). */
    ev_status (*state)(void *impl, ev_device_state *out, ev_err *err);
    /* A watch on device device_index for a job whose kernel runs in another
     * process (the torch peer): NVML only, no context of this process's
     * own on the device.  OUT: *w (watch_close it; NULL where nothing can
     * be watched).  NULL functions: the backend has no such watch (cpu),
     * and every fact is unknown. */
    ev_status (*watch_open)(int64_t device_index, void **w, ev_err *err);
    /* The device's state as state() reads it from NVML, with pid standing
     * for "this process" (the peer: other_processes is NVML's list less
     * one, self_seen says whether pid is in it); persisting_l2_bytes and
     * cub_version are unknown.  w may be NULL (all unknown). */
    void (*watch_state)(void *w, int64_t pid, ev_device_state *out);
    void (*watch_close)(void *w); /* NULL-safe */
    /* The CPU time in ns the backend's helper processes have used so far
     * (cpu: the kernel host of an external job, khost.h), -1 when it has
     * none or cannot say; NULL: none (cuda).  The worker counts it as the
     * job's own, not foreign, CPU time (foreign.h). */
    int64_t (*helper_cpu_ns)(void *impl);
    /* The kernel's own process's facts (ev_backend_facts), for the device
     * record; NULL: none (ours run in the worker). */
    void (*facts)(void *impl, ev_backend_facts *out);
    /* 1: capture cannot read the arm's kernel nodes back and returns none
     * (a Python arm on cuda: torch's graph names no node); the worker holds
     * such a graph to none. */
    int nodes_unread;
    /* The part of open that creates no context, allocates no device
     * memory and launches nothing (cuda: the driver's init, the device's
     * PCI bus id, NVML), which a staged process runs before its gate
     * (docs/runner.md, "Staged processes"), so that its turn on the device
     * does not wait for it; open completes *impl.  OUT: *impl (close it
     * where open is never called).  NULL: open does it all (cpu, and a
     * Python arm). */
    ev_status (*preopen)(const ev_backend_config *cfg, void **impl, ev_err *err);
} ev_backend_ops;

/*
 * The launch of a reduction job (NATIVE or AUTO) for checked shape s on
 * selector backend be with S = SMs or worker threads.
 * NATIVE plans the arm's schedule (job->arm: default, rowsK; a fault arm
 * binds as default); AUTO asks the selector (ev_selector_select with job->coef, NULL: the
 * default).  With job->wrong_schedule the selector's choice is replaced by
 * the first of rows2, rows1, default, rows4 whose rows per program differ
 * from it (the fault arm the verifier's receipt check must catch).  Both
 * backends call this, so cpu and cuda plans agree with ev_selector_plan.
 * OUT: *out.  EV_EINVAL for a schedule with no kernel.
 */
ev_status ev_backend_schedule(const ev_backend_job *job, const ev_shape *s, ev_sel_backend be, int64_t S,
                              ev_launch_plan *out, ev_err *err);

/* The guard around output slots (both backends): EV_SLOT_GUARD bytes of
 * EV_GUARD_BYTE before each slot and after the last, plus the secret gaps
 * of ev_plant_layout, all of it checked at every read_output. */
#define EV_SLOT_GUARD 4096
#define EV_GUARD_BYTE 0xA5

/* The slots in address order.  OUT: order[n] (slot indexes by off[]). */
void ev_backend_slot_order(const size_t *off, int64_t n, int64_t *order);

/*
 * Every byte of a slots' allocation (arena[len]) outside its n slots
 * (off[i], out_len bytes each; order from ev_backend_slot_order) still
 * holds EV_GUARD_BYTE.  EV_EVERIFY naming how many bytes past out[rows -
 * 1] of which op's output the first written byte is (or before the
 * first slot), with the kernel's name who.
 */
ev_status ev_backend_guards(const unsigned char *arena, size_t len, const size_t *off, const int64_t *order,
                            int64_t n, size_t out_len, const char *who, ev_err *err);

/* How long the cpu backend's replay waits for threads a kernel left
 * running (late work) before it stops waiting: the wall then reads at
 * least this, over any sample's events. */
#define EV_LATE_WAIT_MS 1000

/* Sets every field of *s to unknown (-1, ""). */
void ev_device_state_unknown(ev_device_state *s);

/* The cpu backend (src/runner/backend_cpu.c). */
extern const ev_backend_ops ev_backend_cpu_ops;
#ifdef EV_HAVE_CUDA
/* The cuda backend (kernels module). */
extern const ev_backend_ops ev_backend_cuda_ops;
#endif

/* build/evident-worker (src/runner/worker_main.c) picks the backend by
 * name from these; "cuda" exists only where EV_HAVE_CUDA is defined. */

#endif
