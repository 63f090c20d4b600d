/*
 * backend_cuda.cu: the cuda backend of the worker (src/runner/backend.h).
 *
 * One job per process: bind copies the case's input bytes to the device,
 * runs the binding check on the device pointers and, for auto, the
 * selector; capture records `ops` launches in one CUDA graph (stream
 * capture), instantiates it and reads each kernel node back from the graph
 * that was instantiated (function name, grid, block); replay launches the
 * instantiated graph k times between two events.  A job bound with plants
 * (backend.h, kernels/plants.h) holds the base and V variants of its
 * input in one allocation and its `ops` output slots between guards in
 * another, at secret offsets; op i reads variant i mod V and writes slot
 * i, and the graph is [plant e=0] ops 0..V-1 [plant e=1] ... [check]
 * (kernels/plants_dev.cu; the cub peer's temporary storage serves every op).
 * Cold launches follow a plant and a cudaMemsetAsync of a flush buffer of
 * flush_bytes (2 x L2 by default); a check follows them, outside their
 * events.
 * An external kernel (ext_kernel.h) is a cubin of device code only: this
 * backend loads it (cudaLibraryLoadFromFile), finds the declared entry and
 * launches it with the ABI's arguments and the declared geometry, its
 * output slots between guard regions that read_output checks; none of the
 * kernel's code runs on the host.
 * The SM clock and the device's state (other compute processes, clock
 * throttle reasons, ECC, MIG and persistence mode) come from NVML, loaded
 * with dlopen where it exists; each NVML function is looked up by name and
 * a missing one reads as unknown.  The persisting-L2 limit is set to 0 and
 * the persisting lines are reset once, at open (docs/defenses.md: a persisting
 * window survives the flush); the limit is read back with the device's
 * state after every hot sample.  Not a reset before every sample: on the
 * H200 that reset made every op of the sample after it 0.175 us slower
 * (docs/experiments/h200-l2-reset.txt), and with the limit at 0 there is
 * nothing for it to reset: a kernel is device code and cannot set a
 * window or the limit.
 * Every CUDA call is checked, and the last error after every launch.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern "C" { /* the project's C headers (status.h, model.h carry no guards) */
#include "status.h"
#include "model/model.h"
#include "backend.h"
#include "binding.h"
#include "peer_cub.h"
#include "plants_cuda.h"
#include "reduce_cpu.h"
#include "reduce_cuda.h"
#include "selector.h"
}

/* ---- NVML through dlopen ------------------------------------------------- */

typedef int (*nvml_init_fn)(void);
typedef int (*nvml_shutdown_fn)(void);
typedef int (*nvml_by_pci_fn)(const char *, void **);
typedef int (*nvml_clock_fn)(void *, int, unsigned *);
/* The prototypes below are NVML's (nvml.h), declared by hand: NVML is
 * optional, found at run time, and its header is not installed here.  An
 * nvmlEnableState_t is an int (0 disabled, 1 enabled); every function
 * returns nvmlReturn_t, 0 for NVML_SUCCESS. */
typedef struct ev_nvml_proc { /* nvmlProcessInfo_t (v2 and v3 functions) */
    unsigned pid;
    unsigned long long used_memory;
    unsigned gpu_instance, compute_instance;
} ev_nvml_proc;
typedef int (*nvml_procs_fn)(void *, unsigned *, ev_nvml_proc *);
typedef int (*nvml_reasons_fn)(void *, unsigned long long *);
typedef int (*nvml_pair_fn)(void *, int *, int *); /* ECC: current, pending; MIG likewise */
typedef int (*nvml_one_fn)(void *, int *);         /* persistence mode */

/* NVML_ERROR_INSUFFICIENT_SIZE: the process list has more entries than asked. */
#define NVML_INSUFFICIENT_SIZE 7
/* Entries asked of the process list (more are counted, not read). */
#define NVML_PROCS 64

typedef struct ev_nvml {
    void *lib;
    void *dev;
    nvml_clock_fn clock, max_clock;
    nvml_shutdown_fn shutdown;
    nvml_procs_fn procs;     /* nvmlDeviceGetComputeRunningProcesses{_v3,_v2,} */
    nvml_reasons_fn reasons; /* nvmlDeviceGetCurrentClocksEventReasons, or ...ThrottleReasons */
    nvml_pair_fn ecc, mig;   /* nvmlDeviceGetEccMode, nvmlDeviceGetMigMode */
    nvml_one_fn persistence; /* nvmlDeviceGetPersistenceMode */
} ev_nvml;

/* The first of names[n] that lib exports, or NULL. */
static void *ev_dlsym_first(void *lib, const char *const *names, int n)
{
    for (int i = 0; i < n; i++) {
        void *f = dlsym(lib, names[i]);
        if (f != NULL)
            return f;
    }
    return NULL;
}

/* Loads NVML and finds the device with PCI bus id pci; leaves n->dev NULL
 * (clock unavailable) on any failure. */
static void ev_nvml_open(ev_nvml *n, const char *pci)
{
    nvml_init_fn init;
    nvml_by_pci_fn by_pci;
    memset(n, 0, sizeof *n);
    n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (n->lib == NULL)
        return;
    init = (nvml_init_fn)dlsym(n->lib, "nvmlInit_v2");
    by_pci = (nvml_by_pci_fn)dlsym(n->lib, "nvmlDeviceGetHandleByPciBusId_v2");
    n->clock = (nvml_clock_fn)dlsym(n->lib, "nvmlDeviceGetClockInfo");
    n->max_clock = (nvml_clock_fn)dlsym(n->lib, "nvmlDeviceGetMaxClockInfo");
    n->shutdown = (nvml_shutdown_fn)dlsym(n->lib, "nvmlShutdown");
    {
        static const char *const procs[] = {"nvmlDeviceGetComputeRunningProcesses_v3",
                                            "nvmlDeviceGetComputeRunningProcesses_v2",
                                            "nvmlDeviceGetComputeRunningProcesses"};
        static const char *const reasons[] = {"nvmlDeviceGetCurrentClocksEventReasons",
                                              "nvmlDeviceGetCurrentClocksThrottleReasons"};
        n->procs = (nvml_procs_fn)ev_dlsym_first(n->lib, procs, 3);
        n->reasons = (nvml_reasons_fn)ev_dlsym_first(n->lib, reasons, 2);
        n->ecc = (nvml_pair_fn)dlsym(n->lib, "nvmlDeviceGetEccMode");
        n->mig = (nvml_pair_fn)dlsym(n->lib, "nvmlDeviceGetMigMode");
        n->persistence = (nvml_one_fn)dlsym(n->lib, "nvmlDeviceGetPersistenceMode");
    }
    if (init == NULL || by_pci == NULL || n->clock == NULL || init() != 0)
        return;
    if (by_pci(pci, &n->dev) != 0)
        n->dev = NULL;
}

/* Shuts NVML down and unloads it; safe on a failed open. */
static void ev_nvml_close(ev_nvml *n)
{
    if (n->dev != NULL && n->shutdown != NULL)
        n->shutdown();
    if (n->lib != NULL)
        dlclose(n->lib);
    memset(n, 0, sizeof *n);
}

/* ---- state --------------------------------------------------------------- */

typedef struct cuda_impl {
    ev_backend_config cfg;
    int dev;
    cudaDeviceProp prop;
    cudaStream_t stream;
    cudaEvent_t e0, e1;
    ev_nvml nvml;
    void *driver; /* libcuda, loaded by cuda_preopen and held until close */
    int opened;   /* 1: cuda_open created the context (0: cuda_preopen's part alone) */
    int64_t flush_bytes;
    void *flush;
    int flush_value;
    int l2_persisting; /* 1: the persisting-L2 limit was set to 0 and its lines reset at open */
    /* the job */
    ev_arm_kind kind;
    ev_shape shape;
    ev_launch_plan plan;
    /* plants (kernels/plants.h): the base and V variants in one allocation,
     * the ops slots between guards in another, at secret offsets */
    int planted;
    ev_plant_cfg pc;
    ev_plant_row *d_rows;
    ev_plant_state *d_st;
    unsigned char *d_in_arena, *d_out_arena;
    size_t in_arena_len, out_arena_len, in_len, out_len, item;
    size_t *slot_off;    /* host: each slot's offset in d_out_arena */
    int64_t *slot_order; /* host: the slots in address order */
    void *d_base;
    void **h_var, **d_var;   /* V variants: host and device arrays of device pointers */
    void **h_slot, **d_slot; /* ops slots, likewise */
    void *d_kept;
    unsigned long long *d_first; /* the intact kernel's answer */
    ev_binding *bind;            /* op i: variant i mod V -> slot i */
    int64_t last_pe;             /* the epoch the last plant node planted */
    uint64_t launched;           /* replays and cold checks run */
    ev_cub_peer *cub;
    void *ceil;
    size_t ceil_len;
    uint32_t *sink;
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    /* EXTERNAL: the loaded cubin, its entry, the geometry */
    cudaLibrary_t ext_lib;
    cudaKernel_t ext_kern;
    char ext_entry[64];
    dim3 ext_grid, ext_block;
} cuda_impl;

#define CU(call, what)                                                                                       \
    do {                                                                                                     \
        cudaError_t e_ = (call);                                                                             \
        if (e_ != cudaSuccess) {                                                                             \
            rc = ev_err_set(err, EV_ECUDA, "%s: %s", (what), cudaGetErrorString(e_));                        \
            goto out;                                                                                        \
        }                                                                                                    \
    } while (0)

/* k x cache, capped by max (0: no cap). */
static int64_t ev_sized(int64_t k, int64_t cache, int64_t max)
{
    int64_t v = k * cache;
    return max && v > max ? max : v;
}

static void cuda_close(void *impl);

static int ev_cu_pci(int64_t index, char *pci, int cap, void **keep);
static void ev_nvml_others(const ev_nvml *n, unsigned me, int64_t *others, int *self);

/* See backend.h: the driver's init, the device's PCI bus id and NVML,
 * none of which creates a context (the watch's way: ev_cu_pci).  Where
 * NVML can say, it must not list this process among the device's compute
 * processes afterwards: a staged process may hold no context before its
 * gate (docs/runner.md, "Staged processes"). */
static ev_status cuda_preopen(const ev_backend_config *cfg, void **impl, ev_err *err)
{
    cuda_impl *c = (cuda_impl *)calloc(1, sizeof *c);
    char pci[32];
    int64_t others = -1;
    int self = 0;

    *impl = NULL;
    if (c == NULL)
        return ev_err_set(err, EV_ENOMEM, "cuda backend: out of memory");
    c->cfg = *cfg;
    c->dev = (int)cfg->device_index;
    if (ev_cu_pci(cfg->device_index, pci, (int)sizeof pci, &c->driver) == 0)
        ev_nvml_open(&c->nvml, pci);
    ev_nvml_others(&c->nvml, (unsigned)getpid(), &others, &self);
    if (self) {
        cuda_close(c);
        return ev_err_set(
            err, EV_ECUDA,
            "cuda backend: NVML lists this process (pid %ld) among the device's compute processes "
            "after the driver's init alone, before its gate: a staged process may hold no context "
            "(docs/runner.md, \"Staged processes\"); this driver creates one at cuInit",
            (long)getpid());
    }
    *impl = c;
    return EV_OK;
}

/* See backend.h: completes cuda_preopen's *impl (or does it all). */
static ev_status cuda_open(const ev_backend_config *cfg, void **impl, ev_err *err)
{
    ev_status rc = EV_OK;
    cuda_impl *c = (cuda_impl *)*impl;

    *impl = NULL; /* c is this function's until it succeeds */
    if (c == NULL && (rc = cuda_preopen(cfg, (void **)&c, err)))
        return rc;
    c->opened = 1;
    CU(cudaSetDevice(c->dev), "cudaSetDevice");
    CU(cudaGetDeviceProperties(&c->prop, c->dev), "cudaGetDeviceProperties");
    CU(cudaFree(0), "context creation");
    CU(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), "cudaStreamCreate");
    CU(cudaEventCreate(&c->e0), "cudaEventCreate");
    CU(cudaEventCreate(&c->e1), "cudaEventCreate");
    c->flush_bytes = ev_sized(cfg->ref.flush_cache_multiple, c->prop.l2CacheSize, cfg->ref.flush_max_bytes);
    /* No persisting-L2 window (docs/defenses.md): where the device has one
     * (persistingL2CacheMaxSize > 0) its limit is 0 and its lines are reset
     * here, before any kernel of the job; where it has none, nothing is set
     * and the state reads -1. */
    if (c->prop.persistingL2CacheMaxSize > 0) {
        CU(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0),
           "cudaDeviceSetLimit(PersistingL2CacheSize, 0)");
        CU(cudaCtxResetPersistingL2Cache(), "cudaCtxResetPersistingL2Cache");
        c->l2_persisting = 1;
    }
out:
    if (rc) {
        cuda_close(c);
        return rc;
    }
    *impl = c;
    return rc;
}

static void cuda_close(void *impl)
{
    cuda_impl *c = (cuda_impl *)impl;
    if (c == NULL)
        return;
    if (!c->opened) { /* cuda_preopen's part alone: no runtime call (cudaFree(NULL) would make a context) */
        ev_nvml_close(&c->nvml);
        if (c->driver)
            dlclose(c->driver);
        free(c);
        return;
    }
    if (c->exec)
        (void)cudaGraphExecDestroy(c->exec);
    if (c->graph)
        (void)cudaGraphDestroy(c->graph);
    ev_cub_peer_free(c->cub);
    (void)cudaFree(c->d_in_arena);
    (void)cudaFree(c->d_out_arena);
    (void)cudaFree(c->d_rows);
    (void)cudaFree(c->d_st);
    (void)cudaFree(c->d_var);
    (void)cudaFree(c->d_slot);
    (void)cudaFree(c->d_kept);
    (void)cudaFree(c->d_first);
    free(c->slot_off);
    free(c->slot_order);
    free(c->h_var);
    free(c->h_slot);
    free(c->bind);
    if (c->ext_lib)
        (void)cudaLibraryUnload(c->ext_lib);
    (void)cudaFree(c->ceil);
    (void)cudaFree(c->sink);
    (void)cudaFree(c->flush);
    if (c->e0)
        (void)cudaEventDestroy(c->e0);
    if (c->e1)
        (void)cudaEventDestroy(c->e1);
    if (c->stream)
        (void)cudaStreamDestroy(c->stream);
    ev_nvml_close(&c->nvml);
    if (c->driver)
        dlclose(c->driver);
    free(c);
}

static ev_status cuda_info(void *impl, ev_device_info *out, ev_err *err)
{
    ev_status rc = EV_OK;
    cuda_impl *c = (cuda_impl *)impl;
    ev_device_info d;
    int drv = 0, rt = 0, clk = 0, mclk = 0;
    const unsigned char *u = (const unsigned char *)c->prop.uuid.bytes;

    memset(&d, 0, sizeof d);
    CU(cudaDriverGetVersion(&drv), "cudaDriverGetVersion");
    CU(cudaRuntimeGetVersion(&rt), "cudaRuntimeGetVersion");
    snprintf(d.backend, sizeof d.backend, "cuda");
    snprintf(d.name, sizeof d.name, "%.127s", c->prop.name);
    d.sms = c->prop.multiProcessorCount;
    d.cache_bytes = c->prop.l2CacheSize;
    d.flush_bytes = c->flush_bytes;
    d.memory_bytes = (int64_t)c->prop.totalGlobalMem;
    snprintf(d.compute_capability, sizeof d.compute_capability, "%d.%d", c->prop.major, c->prop.minor);
    snprintf(d.driver_version, sizeof d.driver_version, "%d.%d", drv / 1000, (drv % 1000) / 10);
    snprintf(d.runtime_version, sizeof d.runtime_version, "%d.%d", rt / 1000, (rt % 1000) / 10);
    snprintf(d.uuid, sizeof d.uuid,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1], u[2],
             u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    d.clock_mhz = -1;
    d.memory_clock_mhz = -1;
    if (c->nvml.dev != NULL && c->nvml.max_clock != NULL) {
        unsigned m = 0;
        if (c->nvml.max_clock(c->nvml.dev, 1 /* NVML_CLOCK_SM */, &m) == 0)
            d.clock_mhz = m;
        if (c->nvml.max_clock(c->nvml.dev, 2 /* NVML_CLOCK_MEM */, &m) == 0)
            d.memory_clock_mhz = m;
    }
    if (d.clock_mhz < 0 && cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, c->dev) == cudaSuccess &&
        clk > 0)
        d.clock_mhz = clk / 1000;
    if (d.memory_clock_mhz < 0 &&
        cudaDeviceGetAttribute(&mclk, cudaDevAttrMemoryClockRate, c->dev) == cudaSuccess && mclk > 0)
        d.memory_clock_mhz = mclk / 1000;
    *out = d;
out:
    return rc;
}

/* Parses job->c's op and dtype into s.  EV_EINVAL for unknown names. */
static ev_status ev_job_shape(const ev_backend_job *job, ev_shape *s, ev_err *err)
{
    if (ev_op_parse(job->c.op, &s->op) || ev_dtype_parse(job->c.dtype, &s->dtype))
        return ev_err_set(err, EV_EINVAL, "binding refused: op %s dtype %s", job->c.op, job->c.dtype);
    s->rows = job->c.rows;
    s->cols = job->c.cols;
    s->stride = job->c.stride;
    return EV_OK;
}

/* EXTERNAL: checks the declared geometry against this device's limits,
 * loads the cubin and finds the entry. */
static ev_status ext_load(cuda_impl *c, const ev_backend_job *job, ev_err *err)
{
    cudaError_t e;

    if (job->ext_lib == NULL) /* (a build that failed ended the job before bind: worker.c) */
        return ev_err_set(err, EV_EUNSUPPORTED, "%s declares no cuda source", job->arm);
    if (c->shape.rows > 0 && (job->ext_block < 1 || job->ext_block > c->prop.maxThreadsPerBlock ||
                              job->ext_grid < 1 || job->ext_grid > c->prop.maxGridSize[0]))
        return ev_err_set(err, EV_EINVAL,
                          "external kernel %s: grid %lld x block %lld is outside this device's limits (grid "
                          "1..%d, block 1..%d)",
                          job->arm, (long long)job->ext_grid, (long long)job->ext_block,
                          c->prop.maxGridSize[0], c->prop.maxThreadsPerBlock);
    e = cudaLibraryLoadFromFile(&c->ext_lib, job->ext_lib, NULL, NULL, 0, NULL, NULL, 0);
    if (e != cudaSuccess) {
        c->ext_lib = NULL;
        (void)cudaGetLastError();
        return ev_err_set(err, EV_EINVAL, "external kernel %s: cannot load its cubin: %s", job->arm,
                          cudaGetErrorString(e));
    }
    e = cudaLibraryGetKernel(&c->ext_kern, c->ext_lib, job->ext_entry);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return ev_err_set(err, EV_EINVAL, "external kernel %s: its source defines no entry '%s' (%s)",
                          job->arm, job->ext_entry, cudaGetErrorString(e));
    }
    snprintf(c->ext_entry, sizeof c->ext_entry, "%s", job->ext_entry);
    c->ext_grid = dim3((unsigned)job->ext_grid, 1, 1);
    c->ext_block = dim3((unsigned)job->ext_block, 1, 1);
    return EV_OK;
}

/* EXTERNAL: enqueues one launch of the entry as op i (nothing for R = 0). */
static ev_status ext_launch(cuda_impl *c, int64_t i, ev_err *err)
{
    const void *in = c->bind[i].in;
    void *out = c->bind[i].out;
    int64_t rows = c->shape.rows, cols = c->shape.cols, stride = c->shape.stride;
    void *args[] = {&in, &out, &rows, &cols, &stride};
    cudaError_t e;
    if (rows == 0)
        return EV_OK;
    e = cudaLaunchKernel((const void *)c->ext_kern, c->ext_grid, c->ext_block, args, 0, c->stream);
    if (e == cudaSuccess)
        e = cudaGetLastError();
    if (e != cudaSuccess)
        return ev_err_set(err, EV_ECUDA, "external kernel %s: launch: %s", c->ext_entry,
                          cudaGetErrorString(e));
    return EV_OK;
}

/* Rounds n up to a multiple of 256 (at least 256). */
static size_t ev_up256(size_t n)
{
    return n ? (n + 255) & ~(size_t)255 : 256;
}

/*
 * The plants' buffers (backend.h): the base and V variants of the input
 * in one allocation, the ops slots between guards in another, each at its
 * secret offset (ev_plant_layout), the pointer arrays the plant and check
 * nodes read, the rows' figures, the check state, the kept output, and
 * one binding per op (variant i mod V, slot i).
 */
static ev_status bind_plants(cuda_impl *c, const ev_backend_job *job, ev_err *err)
{
    ev_status rc = EV_OK;
    const ev_plant_cfg *pc = job->plants;
    size_t V = (size_t)pc->variants, ops = (size_t)pc->ops, R = c->shape.rows > 0 ? (size_t)c->shape.rows : 0;
    size_t *in_off = (size_t *)calloc(V + 1, sizeof *in_off);
    ev_plant_state st;

    c->planted = 1;
    c->pc = *pc;
    c->in_len = job->input_len;
    c->item = ev_up256(ev_input_alloc_bytes(job->input_len));
    c->slot_off = (size_t *)calloc(ops, sizeof *c->slot_off);
    c->slot_order = (int64_t *)calloc(ops, sizeof *c->slot_order);
    c->h_var = (void **)calloc(V, sizeof *c->h_var);
    c->h_slot = (void **)calloc(ops, sizeof *c->h_slot);
    c->bind = (ev_binding *)calloc(ops, sizeof *c->bind);
    if (!in_off || !c->slot_off || !c->slot_order || !c->h_var || !c->h_slot || !c->bind) {
        rc = ev_err_set(err, EV_ENOMEM, "binding: out of memory");
        goto out;
    }
    if ((rc = ev_plant_layout(pc->seed, 0, V + 1, c->item, 0, in_off, &c->in_arena_len, err)) ||
        (rc = ev_plant_layout(pc->seed, 1, ops, ev_up256(c->out_len), EV_SLOT_GUARD, c->slot_off,
                              &c->out_arena_len, err)))
        goto out;
    ev_backend_slot_order(c->slot_off, (int64_t)ops, c->slot_order);
    CU(cudaMalloc((void **)&c->d_in_arena, c->in_arena_len), "input variants");
    CU(cudaMemset(c->d_in_arena, 0, c->in_arena_len), "input variants");
    CU(cudaMalloc((void **)&c->d_out_arena, c->out_arena_len), "output slots");
    CU(cudaMemset(c->d_out_arena, EV_GUARD_BYTE, c->out_arena_len), "output guards");
    c->d_base = c->d_in_arena + in_off[V];
    if (job->input_len)
        CU(cudaMemcpy(c->d_base, job->input, job->input_len, cudaMemcpyHostToDevice), "input copy");
    for (size_t j = 0; j < V; j++) {
        c->h_var[j] = c->d_in_arena + in_off[j];
        if (job->input_len)
            CU(cudaMemcpy(c->h_var[j], c->d_base, job->input_len, cudaMemcpyDeviceToDevice),
               "input variants");
    }
    for (size_t i = 0; i < ops; i++)
        c->h_slot[i] = c->d_out_arena + c->slot_off[i];
    CU(cudaMalloc((void **)&c->d_var, V * sizeof(void *)), "variant pointers");
    CU(cudaMemcpy(c->d_var, c->h_var, V * sizeof(void *), cudaMemcpyHostToDevice), "variant pointers");
    CU(cudaMalloc((void **)&c->d_slot, ops * sizeof(void *)), "slot pointers");
    CU(cudaMemcpy(c->d_slot, c->h_slot, ops * sizeof(void *), cudaMemcpyHostToDevice), "slot pointers");
    CU(cudaMalloc(&c->d_kept, c->out_len ? c->out_len : 16), "kept output");
    CU(cudaMalloc((void **)&c->d_rows, (R ? R : 1) * sizeof *c->d_rows), "plant rows");
    if (R)
        CU(cudaMemcpy(c->d_rows, job->plant_rows, R * sizeof *c->d_rows, cudaMemcpyHostToDevice),
           "plant rows");
    memset(&st, 0, sizeof st);
    st.r_next = 1;
    st.tag = ev_plant_tag0(pc->seed);
    CU(cudaMalloc((void **)&c->d_st, sizeof st), "check state");
    CU(cudaMemcpy(c->d_st, &st, sizeof st, cudaMemcpyHostToDevice), "check state");
    CU(cudaMalloc((void **)&c->d_first, sizeof *c->d_first), "input check");
    for (size_t i = 0; i < ops; i++)
        if ((rc = ev_binding_make(&c->bind[i], &c->shape, c->h_var[i % V], job->input_len, c->h_slot[i],
                                  c->out_len, err)))
            goto out;
out:
    free(in_off);
    return rc;
}

static ev_status cuda_bind(void *impl, const ev_backend_job *job, ev_backend_binding *out, ev_err *err)
{
    ev_status rc = EV_OK;
    cuda_impl *c = (cuda_impl *)impl;
    ev_backend_binding r;

    memset(&r, 0, sizeof r);
    c->kind = job->kind;
    r.threads = c->prop.multiProcessorCount;
    if (job->kind == EV_ARM_EXTERNAL && !job->ext_entry)
        return ev_err_set(err, EV_EUNSUPPORTED, "%s declares no entry for %s/%s", job->arm, job->c.op,
                          job->c.dtype);
    if (job->kind == EV_ARM_TORCH)
        return ev_err_set(err, EV_EUNSUPPORTED, "%s is not a backend arm", job->arm);
    if (job->kind == EV_ARM_FLOOR) {
        *out = r;
        return EV_OK;
    }
    if (job->kind == EV_ARM_CEILING || job->kind == EV_ARM_CEILING_L2) {
        /* ceiling-l2: the same stream over half the L2, replayed hot */
        c->ceil_len = job->kind == EV_ARM_CEILING_L2 ? ((size_t)c->prop.l2CacheSize / 2) & ~(size_t)15
                                                     : (size_t)job->ceiling_bytes & ~(size_t)15;
        if (c->ceil_len == 0)
            return ev_err_set(err, EV_EINVAL, "ceiling: %lld bytes", (long long)job->ceiling_bytes);
        CU(cudaMalloc(&c->ceil, c->ceil_len), "ceiling buffer");
        CU(cudaMemset(c->ceil, 0x5a, c->ceil_len), "ceiling fill");
        CU(cudaMalloc((void **)&c->sink, sizeof(uint32_t) * 4 * (size_t)c->prop.multiProcessorCount), "sink");
        r.in_span = (int64_t)c->ceil_len;
        r.in_align = ev_binding_align(c->ceil);
        *out = r;
        return EV_OK;
    }
    if ((rc = ev_job_shape(job, &c->shape, err)))
        goto out;
    c->out_len = c->shape.rows > 0 ? (size_t)c->shape.rows * ev_dtype_size(c->shape.dtype) : 0;
    if (!job->plants || job->plants->ops < 1 || job->plants->variants < 1 ||
        job->plants->rows != c->shape.rows)
        return ev_err_set(err, EV_EINVAL, "binding refused: a job of %s binds with plants", job->arm);
    if (job->kind == EV_ARM_EXTERNAL && (rc = ext_load(c, job, err)))
        goto out;
    if ((rc = bind_plants(c, job, err)))
        goto out;
    if (job->kind == EV_ARM_FLOOR) {
        *out = r;
        return EV_OK;
    }
    if (job->kind == EV_ARM_CUB && (rc = ev_cub_peer_new(&c->bind[0], &c->cub, err)))
        goto out;
    if (job->kind != EV_ARM_CUB && job->kind != EV_ARM_EXTERNAL) {
        /* native, auto and the wrong-schedule fault arm: the selector's plan
         * (one for every op: it depends on the shape alone) */
        rc = ev_backend_schedule(job, &c->shape, EV_SEL_CUDA, c->prop.multiProcessorCount, &c->plan, err);
        if (rc)
            goto out;
    }
    r.in_span = (int64_t)c->bind[0].in_span;
    r.out_span = (int64_t)c->bind[0].out_span;
    r.in_align = c->bind[0].in_align;
    r.out_align = c->bind[0].out_align;
    r.out_len = c->out_len;
    *out = r;
out:
    return rc;
}

static ev_status cuda_poison(void *impl, int byte, ev_err *err)
{
    ev_status rc = EV_OK;
    cuda_impl *c = (cuda_impl *)impl;
    for (int64_t i = 0; c->planted && i < c->pc.ops && c->out_len; i++)
        CU(cudaMemsetAsync(c->h_slot[i], byte, c->out_len, c->stream), "poison");
    CU(cudaStreamSynchronize(c->stream), "poison sync");
out:
    return rc;
}

/* Enqueues op i of the bound arm (variant i mod V, slot i) on the stream
 * (no sync). */
static ev_status ev_enqueue(cuda_impl *c, int64_t i, ev_err *err)
{
    switch (c->kind) {
    case EV_ARM_FLOOR:
        return ev_cuda_floor_launch(c->stream, err);
    case EV_ARM_CEILING:
    case EV_ARM_CEILING_L2:
        return ev_cuda_ceiling_launch(c->ceil, c->ceil_len, c->prop.multiProcessorCount, c->sink, c->stream,
                                      err);
    case EV_ARM_CUB:
        return ev_cub_peer_launch_on(c->cub, &c->bind[i], c->stream, err);
    case EV_ARM_EXTERNAL:
        return ext_launch(c, i, err);
    default:
        return ev_cuda_reduce_launch(&c->plan, &c->bind[i], c->stream, err);
    }
}

/* The plant node of epoch e of the replay about to run (graph: before
 * its ops), restoring the epoch before it (replay r - 1's last for e = 0). */
static ev_status ev_plant_epoch(cuda_impl *c, int64_t e, ev_err *err)
{
    return ev_cuda_plant_launch(&c->pc, c->d_rows, e, e == 0, e ? e - 1 : c->pc.epochs - 1, 1, c->d_base,
                                c->d_var, c->d_st, c->stream, err);
}

static ev_status cuda_launch(void *impl, ev_err *err)
{
    ev_status rc = EV_OK;
    cuda_impl *c = (cuda_impl *)impl;
    if ((rc = ev_enqueue(c, 0, err)))
        goto out;
    CU(cudaStreamSynchronize(c->stream), "launch sync");
out:
    return rc;
}

static ev_status cuda_read_output(void *impl, int64_t slot, void *dst, size_t len, ev_err *err)
{
    ev_status rc = EV_OK;
    cuda_impl *c = (cuda_impl *)impl;
    unsigned char *arena = NULL;
    if (!c->planted || slot < 0 || slot >= c->pc.ops)
        return ev_err_set(err, EV_EINVAL, "read_output: slot %lld of %lld", (long long)slot,
                          (long long)(c->planted ? c->pc.ops : 0));
    if (len > c->out_len)
        return ev_err_set(err, EV_EINVAL, "read_output: %zu bytes asked, %zu bound", len, c->out_len);
    if (!(arena = (unsigned char *)malloc(c->out_arena_len)))
        return ev_err_set(err, EV_ENOMEM, "read_output: out of memory");
    CU(cudaMemcpy(arena, c->d_out_arena, c->out_arena_len, cudaMemcpyDeviceToHost), "read output");
    if ((rc = ev_backend_guards(arena, c->out_arena_len, c->slot_off, c->slot_order, c->pc.ops, c->out_len,
                                c->kind == EV_ARM_EXTERNAL ? c->ext_entry : "(ours)", err)))
        goto out;
    if (len)
        memcpy(dst, arena + c->slot_off[slot], len);
out:
    free(arena);
    return rc;
}

static ev_status cuda_cold_launch(void *impl, double *ms, ev_err *err)
{
    ev_status rc = EV_OK;
    cuda_impl *c = (cuda_impl *)impl;
    float f = 0.0f;
    if (c->flush == NULL && c->flush_bytes > 0)
        CU(cudaMalloc(&c->flush, (size_t)c->flush_bytes), "flush buffer");
    if (c->planted) { /* what the last plant node planted, restored; epoch 0 of this replay planted */
        if ((rc = ev_cuda_plant_launch(&c->pc, c->d_rows, 0, 1, c->last_pe, 1, c->d_base, c->d_var, c->d_st,
                                       c->stream, err)))
            goto out;
        c->last_pe = 0;
    }
    if (c->flush_bytes > 0)
        CU(cudaMemsetAsync(c->flush, (c->flush_value++) & 0xff, (size_t)c->flush_bytes, c->stream), "flush");
    CU(cudaEventRecord(c->e0, c->stream), "cudaEventRecord");
    if ((rc = ev_enqueue(c, 0, err)))
        goto out;
    CU(cudaEventRecord(c->e1, c->stream), "cudaEventRecord");
    if (c->planted && (rc = ev_cuda_check_launch(&c->pc, c->d_rows, 1, c->d_base, c->d_slot, c->d_kept,
                                                 c->d_st, c->stream, err)))
        goto out;
    CU(cudaStreamSynchronize(c->stream), "cold sync");
    CU(cudaEventElapsedTime(&f, c->e0, c->e1), "cudaEventElapsedTime");
    *ms = (double)f;
    if (c->planted)
        c->launched++;
out:
    return rc;
}

typedef CUresult (*cu_func_get_name_fn)(const char **, CUfunction);

/* Writes the name of kernel function func into out[cap]: ours from the
 * table, others (cub) through the driver's cuFuncGetName; "unknown" when
 * neither knows it. */
static void ev_func_name(const void *func, char *out, size_t cap)
{
    const char *name = ev_cuda_kernel_name(func);
    static cu_func_get_name_fn get_name;
    static int looked;
    if (name == NULL) {
        cudaFunction_t f = NULL;
        if (!looked) {
            cudaDriverEntryPointQueryResult q;
            void *p = NULL;
            looked = 1;
            if (cudaGetDriverEntryPointByVersion("cuFuncGetName", &p, 12030, cudaEnableDefault, &q) ==
                    cudaSuccess &&
                q == cudaDriverEntryPointSuccess)
                get_name = (cu_func_get_name_fn)p;
        }
        if (get_name != NULL && cudaGetFuncBySymbol(&f, func) == cudaSuccess && f != NULL &&
            get_name(&name, (CUfunction)f) != CUDA_SUCCESS)
            name = NULL;
        (void)cudaGetLastError();
    }
    snprintf(out, cap, "%s", name != NULL ? name : "unknown");
}

typedef CUresult (*cu_node_params_fn)(CUgraphNode, CUDA_KERNEL_NODE_PARAMS_v2 *);
typedef CUresult (*cu_kernel_function_fn)(CUfunction *, CUkernel);

/* The driver entry point name (of CUDA 12.0's version), or NULL. */
static void *ev_driver_fn(const char *name)
{
    cudaDriverEntryPointQueryResult q;
    void *f = NULL;
    if (cudaGetDriverEntryPointByVersion(name, &f, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
        f = NULL;
    (void)cudaGetLastError();
    return f;
}

/* EXTERNAL: reads kernel node n back through the driver
 * (cuGraphKernelNodeGetParams): its function is the loaded entry when its
 * CUkernel is the handle cudaLibraryGetKernel gave for the entry's name,
 * else "unknown" (which the verifier refuses). */
static ev_status ext_node(cuda_impl *c, cudaGraphNode_t n, ev_node_receipt *r, ev_err *err)
{
    static cu_node_params_fn get;
    static cu_kernel_function_fn as_function;
    static int looked;
    CUDA_KERNEL_NODE_PARAMS_v2 p;
    CUfunction mine = NULL;
    CUresult e;
    if (!looked) {
        looked = 1;
        get = (cu_node_params_fn)ev_driver_fn("cuGraphKernelNodeGetParams");
        as_function = (cu_kernel_function_fn)ev_driver_fn("cuKernelGetFunction");
    }
    if (get == NULL)
        return ev_err_set(err, EV_ECUDA, "graph receipts: the driver has no cuGraphKernelNodeGetParams");
    memset(&p, 0, sizeof p);
    if ((e = get((CUgraphNode)n, &p)) != CUDA_SUCCESS)
        return ev_err_set(err, EV_ECUDA, "cuGraphKernelNodeGetParams: error %d", (int)e);
    if (as_function != NULL && as_function(&mine, (CUkernel)c->ext_kern) != CUDA_SUCCESS)
        mine = NULL;
    snprintf(r->function, sizeof r->function, "%s",
             (p.kern != NULL && p.kern == (CUkernel)c->ext_kern) || (p.func != NULL && p.func == mine)
                 ? c->ext_entry
                 : "unknown");
    r->grid[0] = p.gridDimX;
    r->grid[1] = p.gridDimY;
    r->grid[2] = p.gridDimZ;
    r->block[0] = p.blockDimX;
    r->block[1] = p.blockDimY;
    r->block[2] = p.blockDimZ;
    return EV_OK;
}

static ev_status cuda_capture(void *impl, int64_t ops, ev_node_receipt **nodes, size_t *n_nodes, ev_err *err)
{
    ev_status rc = EV_OK;
    cuda_impl *c = (cuda_impl *)impl;
    cudaGraph_t g = NULL;
    cudaGraphNode_t *gn = NULL;
    size_t n = 0, k = 0;
    int64_t plant_nodes = 0, check_nodes = 0, V = c->pc.variants;
    ev_node_receipt *r = NULL;
    int capturing = 0;

    if (ops < 1)
        return ev_err_set(err, EV_EINVAL, "capture: %lld ops", (long long)ops);
    if (c->planted && ops != c->pc.ops)
        return ev_err_set(err, EV_EINVAL, "capture: %lld ops, %lld slots bound", (long long)ops,
                          (long long)c->pc.ops);
    CU(cudaStreamBeginCapture(c->stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
    capturing = 1;
    if (!c->planted) {
        for (int64_t i = 0; i < ops; i++)
            if ((rc = ev_enqueue(c, i, err)))
                goto out;
    } else {
        for (int64_t e = 0; e < c->pc.epochs; e++) {
            if ((rc = ev_plant_epoch(c, e, err)))
                goto out;
            for (int64_t i = e * V; i < (e + 1) * V && i < ops; i++)
                if ((rc = ev_enqueue(c, i, err)))
                    goto out;
        }
        if ((rc = ev_cuda_check_launch(&c->pc, c->d_rows, ops, c->d_base, c->d_slot, c->d_kept, c->d_st,
                                       c->stream, err)))
            goto out;
    }
    capturing = 0;
    CU(cudaStreamEndCapture(c->stream, &g), "cudaStreamEndCapture");
    if (c->exec)
        CU(cudaGraphExecDestroy(c->exec), "cudaGraphExecDestroy");
    c->exec = NULL;
    if (c->graph)
        CU(cudaGraphDestroy(c->graph), "cudaGraphDestroy");
    c->graph = g;
    g = NULL;
    CU(cudaGraphInstantiate(&c->exec, c->graph, 0), "cudaGraphInstantiate");
    /* the nodes of the graph exactly as instantiated: the arm's are the
     * receipts, ours (plant and check) are counted */
    CU(cudaGraphGetNodes(c->graph, NULL, &n), "cudaGraphGetNodes");
    gn = (cudaGraphNode_t *)calloc(n ? n : 1, sizeof *gn);
    r = (ev_node_receipt *)calloc(n ? n : 1, sizeof *r);
    if (gn == NULL || r == NULL) {
        rc = ev_err_set(err, EV_ENOMEM, "capture: out of memory");
        goto out;
    }
    CU(cudaGraphGetNodes(c->graph, gn, &n), "cudaGraphGetNodes");
    for (size_t i = 0; i < n; i++) {
        cudaGraphNodeType t;
        cudaKernelNodeParams kp;
        cudaError_t pe;
        int ours;
        CU(cudaGraphNodeGetType(gn[i], &t), "cudaGraphNodeGetType");
        if (t != cudaGraphNodeTypeKernel)
            continue;
        pe = cudaGraphKernelNodeGetParams(gn[i], &kp);
        ours = pe == cudaSuccess ? ev_cuda_plants_which(kp.func) : 0;
        if (pe != cudaSuccess)
            (void)cudaGetLastError();
        if (ours) {
            plant_nodes += ours == 1;
            check_nodes += ours == 2;
            continue;
        }
        if (c->ext_kern != NULL) {
            /* a library kernel: the runtime's node parameters cannot
             * express it, the driver's name it by its CUkernel */
            if ((rc = ext_node(c, gn[i], &r[k], err)))
                goto out;
            k++;
            continue;
        }
        CU(pe, "cudaGraphKernelNodeGetParams");
        ev_func_name(kp.func, r[k].function, sizeof r[k].function);
        r[k].grid[0] = kp.gridDim.x;
        r[k].grid[1] = kp.gridDim.y;
        r[k].grid[2] = kp.gridDim.z;
        r[k].block[0] = kp.blockDim.x;
        r[k].block[1] = kp.blockDim.y;
        r[k].block[2] = kp.blockDim.z;
        k++;
    }
    if (c->planted && (plant_nodes != c->pc.epochs || check_nodes != 1)) {
        rc = ev_err_set(err, EV_EPROC,
                        "graph: %lld plant nodes and %lld check nodes, where %lld and 1 were captured",
                        (long long)plant_nodes, (long long)check_nodes, (long long)c->pc.epochs);
        goto out;
    }
    CU(cudaGraphUpload(c->exec, c->stream), "cudaGraphUpload");
    CU(cudaStreamSynchronize(c->stream), "capture sync");
    *nodes = r;
    *n_nodes = k;
    r = NULL;
out:
    if (capturing) {
        cudaGraph_t junk = NULL;
        (void)cudaStreamEndCapture(c->stream, &junk);
        if (junk)
            (void)cudaGraphDestroy(junk);
        (void)cudaGetLastError();
    }
    if (g)
        (void)cudaGraphDestroy(g);
    free(gn);
    free(r);
    return rc;
}

static ev_status cuda_replay(void *impl, int64_t k, double *ms, double *wall_ms, ev_err *err)
{
    ev_status rc = EV_OK;
    cuda_impl *c = (cuda_impl *)impl;
    float f = 0.0f;
    struct timespec t0, t1;
    if (c->exec == NULL)
        return ev_err_set(err, EV_EINVAL, "replay before capture");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CU(cudaEventRecord(c->e0, c->stream), "cudaEventRecord");
    for (int64_t i = 0; i < k; i++)
        CU(cudaGraphLaunch(c->exec, c->stream), "cudaGraphLaunch");
    CU(cudaEventRecord(c->e1, c->stream), "cudaEventRecord");
    CU(cudaEventSynchronize(c->e1), "replay sync");
    /* late work: whatever of this context still runs after the last event
     * (another stream, a child grid) is waited for on the wall clock */
    CU(cudaDeviceSynchronize(), "replay device sync");
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CU(cudaEventElapsedTime(&f, c->e0, c->e1), "cudaEventElapsedTime");
    *ms = (double)f;
    if (wall_ms)
        *wall_ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    if (c->planted) {
        c->launched += (uint64_t)k;
        c->last_pe = c->pc.epochs - 1;
    }
out:
    return rc;
}

static ev_status cuda_sm_clock(void *impl, int64_t *mhz, ev_err *err)
{
    cuda_impl *c = (cuda_impl *)impl;
    unsigned m = 0;
    if (c->nvml.dev == NULL)
        return ev_err_set(err, EV_EUNSUPPORTED, "NVML unavailable: SM clock not read");
    if (c->nvml.clock(c->nvml.dev, 1 /* NVML_CLOCK_SM */, &m) != 0)
        return ev_err_set(err, EV_EUNSUPPORTED, "nvmlDeviceGetClockInfo failed");
    *mhz = m;
    return EV_OK;
}

static ev_status cuda_read_input(void *impl, int64_t which, void *dst, size_t len, ev_err *err)
{
    ev_status rc = EV_OK;
    cuda_impl *c = (cuda_impl *)impl;
    if (!c->planted || which < -1 || which >= c->pc.variants)
        return ev_err_set(err, EV_EINVAL, "read_input: input %lld of %lld", (long long)which,
                          (long long)(c->planted ? c->pc.variants : 0));
    if (len > c->in_len)
        return ev_err_set(err, EV_EINVAL, "read_input: %zu bytes asked, %zu bound", len, c->in_len);
    if (len)
        CU(cudaMemcpy(dst, which < 0 ? c->d_base : c->h_var[which], len, cudaMemcpyDeviceToHost),
           "read input");
out:
    return rc;
}

static ev_status cuda_tag(void *impl, ev_plant_state *st, uint64_t *launched, ev_err *err)
{
    ev_status rc = EV_OK;
    cuda_impl *c = (cuda_impl *)impl;
    if (!c->planted)
        return ev_err_set(err, EV_EINVAL, "tag: no plants bound");
    CU(cudaMemcpy(st, c->d_st, sizeof *st, cudaMemcpyDeviceToHost), "read the check state");
    *launched = c->launched;
out:
    return rc;
}

static ev_status cuda_read_kept(void *impl, void *dst, size_t len, ev_err *err)
{
    ev_status rc = EV_OK;
    cuda_impl *c = (cuda_impl *)impl;
    if (!c->planted || len > c->out_len)
        return ev_err_set(err, EV_EINVAL, "read_kept: %zu bytes asked, %zu bound", len, c->out_len);
    if (len)
        CU(cudaMemcpy(dst, c->d_kept, len, cudaMemcpyDeviceToHost), "read the kept output");
out:
    return rc;
}

static ev_status cuda_unplant(void *impl, ev_err *err)
{
    ev_status rc = EV_OK;
    cuda_impl *c = (cuda_impl *)impl;
    if (!c->planted)
        return EV_OK;
    if ((rc = ev_cuda_plant_launch(&c->pc, c->d_rows, 0, 1, c->last_pe, 0, c->d_base, c->d_var, c->d_st,
                                   c->stream, err)))
        goto out;
    CU(cudaStreamSynchronize(c->stream), "unplant sync");
out:
    return rc;
}

static ev_status cuda_intact(void *impl, int64_t *variant, size_t *at, ev_err *err)
{
    ev_status rc = EV_OK;
    cuda_impl *c = (cuda_impl *)impl;
    unsigned long long first = ~0ull;
    size_t n = ev_input_alloc_bytes(c->in_len);
    if (!c->planted || !c->in_len) {
        *variant = -1;
        *at = 0;
        return EV_OK;
    }
    CU(cudaMemcpy(c->d_first, &first, sizeof first, cudaMemcpyHostToDevice), "input check");
    if ((rc = ev_cuda_intact_launch(c->d_base, c->d_var, c->pc.variants, n, c->d_first, c->stream, err)))
        goto out;
    CU(cudaStreamSynchronize(c->stream), "input check sync");
    CU(cudaMemcpy(&first, c->d_first, sizeof first, cudaMemcpyDeviceToHost), "input check");
    if (first == ~0ull) {
        *variant = -1;
        *at = 0;
    } else {
        unsigned char a[16], v[16];
        size_t chunk = (size_t)(first & ((1ull << 40) - 1)), i = 0;
        *variant = (int64_t)(first >> 40);
        CU(cudaMemcpy(a, (unsigned char *)c->d_base + chunk * 16, 16, cudaMemcpyDeviceToHost), "input check");
        CU(cudaMemcpy(v, (unsigned char *)c->h_var[*variant] + chunk * 16, 16, cudaMemcpyDeviceToHost),
           "input check");
        while (i < 15 && a[i] == v[i])
            i++;
        *at = chunk * 16 + i;
    }
out:
    return rc;
}

/* Counts the compute processes NVML lists on the device.  OUT: *others
 * (the count less one: process `me` holds a context on it, whatever pid
 * NVML reports for it; -1 when the list is empty or cannot be read) and
 * *self (1 when me is in the list: no pid namespace between). */
static void ev_nvml_others(const ev_nvml *n, unsigned me, int64_t *others, int *self)
{
    ev_nvml_proc list[NVML_PROCS + 1]; /* one spare entry in case this NVML's is longer */
    unsigned count = NVML_PROCS;
    int r;

    *others = -1;
    *self = 0;
    if (n->dev == NULL || n->procs == NULL)
        return;
    memset(list, 0, sizeof list);
    r = n->procs(n->dev, &count, list);
    if (r != 0 && r != NVML_INSUFFICIENT_SIZE)
        return;
    if (r == 0)
        for (unsigned i = 0; i < count && i < NVML_PROCS; i++)
            if (list[i].pid == me)
                *self = 1;
    if (count > 0)
        *others = (int64_t)count - 1;
}

/* NVML's facts of the device into *st (left as they are where NVML
 * cannot say), with process `me` as the one holding the job's context:
 * one reading for the worker's own jobs (state) and for a job whose
 * kernel runs in another process (watch_state). */
static void ev_nvml_facts(const ev_nvml *n, unsigned me, ev_device_state *st)
{
    unsigned long long reasons = 0;
    int cur = 0, pending = 0;

    ev_nvml_others(n, me, &st->other_processes, &st->self_seen);
    if (n->dev == NULL)
        return;
    if (n->reasons != NULL && n->reasons(n->dev, &reasons) == 0)
        st->throttle_reasons = (int64_t)(reasons & 0x7fffffffffffffffULL);
    if (n->ecc != NULL && n->ecc(n->dev, &cur, &pending) == 0)
        st->ecc = cur != 0;
    if (n->mig != NULL && n->mig(n->dev, &cur, &pending) == 0)
        st->mig = cur != 0;
    if (n->persistence != NULL && n->persistence(n->dev, &cur) == 0)
        st->persistence = cur != 0;
}

/* See backend.h: NVML's view of the device, the persisting-L2 limit read
 * back, and the linked CUB's version. */
static ev_status cuda_state(void *impl, ev_device_state *out, ev_err *err)
{
    cuda_impl *c = (cuda_impl *)impl;
    ev_device_state st;
    size_t limit = 0;

    (void)err;
    ev_device_state_unknown(&st);
    ev_nvml_facts(&c->nvml, (unsigned)getpid(), &st);
    if (c->l2_persisting) {
        cudaError_t e = cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize);
        if (e == cudaSuccess)
            st.persisting_l2_bytes = (int64_t)limit;
        else
            (void)cudaGetLastError(); /* unknown, not a failure: the limit was set at open */
    }
    snprintf(st.cub_version, sizeof st.cub_version, "%s", ev_cub_peer_version());
    *out = st;
    return EV_OK;
}

/* The PCI bus id of CUDA device index through the driver API, dlopen'd:
 * cuInit and cuDeviceGetPCIBusId create no context, so a watching process
 * is not one of NVML's compute processes.  keep: NULL, the driver is
 * unloaded again; else *keep holds it (dlclose it; NULL where it could
 * not be loaded), so that the runtime finds it initialised.  Returns 0,
 * or -1 (pci left empty). */
typedef int (*cu_init_fn)(unsigned);
typedef int (*cu_device_get_fn)(int *, int);
typedef int (*cu_pci_fn)(char *, int, int);
static int ev_cu_pci(int64_t index, char *pci, int cap, void **keep)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    int dev = 0, rc = -1;
    pci[0] = '\0';
    if (keep)
        *keep = lib;
    if (lib == NULL)
        return -1;
    cu_init_fn init = (cu_init_fn)dlsym(lib, "cuInit");
    cu_device_get_fn get = (cu_device_get_fn)dlsym(lib, "cuDeviceGet");
    cu_pci_fn bus = (cu_pci_fn)dlsym(lib, "cuDeviceGetPCIBusId");
    if (init != NULL && get != NULL && bus != NULL && init(0) == 0 && get(&dev, (int)index) == 0 &&
        bus(pci, cap, dev) == 0)
        rc = 0;
    else
        pci[0] = '\0';
    if (!keep)
        dlclose(lib);
    return rc;
}

/* See backend.h: NVML on the device of index, found by its PCI bus id. */
static ev_status cuda_watch_open(int64_t index, void **w, ev_err *err)
{
    ev_nvml *n = (ev_nvml *)calloc(1, sizeof *n);
    char pci[32];
    *w = NULL;
    if (n == NULL)
        return ev_err_set(err, EV_ENOMEM, "cuda watch: out of memory");
    if (ev_cu_pci(index, pci, (int)sizeof pci, NULL) == 0)
        ev_nvml_open(n, pci);
    *w = n;
    return EV_OK;
}

static void cuda_watch_state(void *w, int64_t pid, ev_device_state *out)
{
    ev_device_state_unknown(out);
    if (w != NULL)
        ev_nvml_facts((const ev_nvml *)w, (unsigned)pid, out);
}

static void cuda_watch_close(void *w)
{
    if (w == NULL)
        return;
    ev_nvml_close((ev_nvml *)w);
    free(w);
}

extern "C" const ev_backend_ops ev_backend_cuda_ops = {
    "cuda",
    cuda_open,
    cuda_close,
    cuda_info,
    cuda_bind,
    cuda_poison,
    cuda_launch,
    cuda_read_output,
    cuda_cold_launch,
    cuda_capture,
    cuda_replay,
    cuda_sm_clock,
    cuda_read_input,
    cuda_tag,
    cuda_read_kept,
    cuda_unplant,
    cuda_intact,
    cuda_state,
    cuda_watch_open,
    cuda_watch_state,
    cuda_watch_close,
    NULL, /* helper_cpu_ns: no helper process, the kernel is device code evident launches */
    NULL, /* facts: none of a process of its own */
    0,    /* every node read back */
    cuda_preopen,
};
