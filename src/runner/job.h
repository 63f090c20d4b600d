/*
 * job.h: what every job process shares, whether its kernel runs in the
 * worker (worker.c) or in the torch peer's python (torch_peer.c): its
 * arguments (ev_worker_args), the case's input and the oracle's rows of
 * it, validation and its record, the cold-time records and the process's
 * CPUs.  Both call it; it calls
 * neither (no circle between the worker and the peer).
 */
#ifndef EV_JOB_H
#define EV_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "binding.h"
#include "model/model.h"
#include "oracle.h"
#include "plants.h"
#include "protocol.h"
#include "record.h"
#include "sample_rules.h"
#include "status.h"

/* A job's arguments, whichever process runs its kernel (the worker, or
 * the torch peer through it). */
/* Where a fault hook is called. */
typedef enum ev_fault_stage {
    EV_STAGE_VALIDATED = 0, /* after the first validation record */
    EV_STAGE_WARMUP,        /* when the warm-up starts */
    EV_STAGE_SAMPLE         /* after hot sample n (n = 1..samples) */
} ev_fault_stage;

typedef struct ev_worker_args {
    const ev_protocol *proto;
    const ev_backend_ops *ops;
    int64_t case_index; /* -1 for floor and ceiling */
    const char *arm;
    const char *job_key;         /* echoed in hello */
    const ev_coef *coef;         /* auto: coefficients, or NULL (no fit: default) */
    const ev_proto_fault *fault; /* the active fault, or NULL */
    /* Called at each stage when fault is set; may end the process. */
    void (*fault_hook)(void *ctx, const ev_proto_fault *f, ev_fault_stage stage, int64_t n);
    void *fault_ctx;
    const char *python;      /* torch-compile: the interpreter ("python3") */
    const char *peer_script; /* torch-compile: kernels/peer_torch.py */
    const char *torch_cache; /* torch-compile: the run's compile cache directory, or NULL */
    /* Staging (docs/runner.md, "Staged processes"): the job does its
     * CPU-only preparation, then blocks reading one byte from gate_fd
     * before it touches the device; -1: no gate. */
    int gate_fd;
    int64_t spawn_ns;         /* CLOCK_REALTIME when the supervisor forked it; 0: unknown */
    int64_t entered_ns;       /* CLOCK_REALTIME when main() began */
    int64_t compile_ahead_ns; /* torch-compile: the case's ahead-of-time compile, 0: none */
    const char *kernel_lib;   /* external arm: the built kernel, or NULL */
    const char
        *kernel_error;   /* external arm: a file holding the compiler's message (the build failed), or NULL */
    const char *py_host; /* a Python arm: kernels/python_host.py (its interpreter: python) */
} ev_worker_args;

/* Writes a cold record (name, elapsed_ns) when elapsed_ns >= 0. */
ev_status ev_job_cold(ev_rec_out *out, const char *name, int64_t elapsed_ns, ev_err *err);

/* Writes the opkept record (the kept output, db/migrate-5.sql) for k, its
 * output_sha256 set from the bytes, which go beside it as output_hex.
 * OUT: hash, their SHA-256 hex. */
ev_status ev_job_opkept(ev_rec_out *out, ev_op_kept_row *k, const void *bytes, size_t len, char hash[65],
                        ev_err *err);

/*
 * The attempt's plants (docs/defenses.md, "Every op earns its time";
 * kernels/plants.h), for the worker and for the torch peer's worker: a
 * secret seed from getrandom (no kernel can know it; written in the
 * device record only after the samples), every row's plant figures from
 * the oracle's rows (before the gate), then, once the device says how
 * large its cache is, V and the configuration (ev_plant_config).  Every
 * cold and hot sample's check tag must be T(n) for the n replays run.
 */
typedef struct ev_job_plants {
    int on; /* a validated job: held to its tags, its device record names them */
    uint64_t seed;
    ev_plant_cfg cfg;
    ev_plant_row *rows; /* R rows' figures (malloc'd) */
    uint64_t want_n;    /* want_tag is T(want_n) */
    uint64_t want_tag;
} ev_job_plants;

/* Draws pl's seed and makes every row's figures for shape s (its oracle
 * rows expect) under protocol p.  EV_EIO (getrandom), EV_ENOMEM, or
 * ev_plant_rows' EV_EINVAL for a row that cannot be planted. */
ev_status ev_job_plants_prepare(ev_job_plants *pl, const ev_protocol *p, const ev_shape *s,
                                const ev_oracle_row *expect, ev_err *err);
/* T(n): the tag after n replays of every op right, advancing pl's chain. */
uint64_t ev_job_plants_want(ev_job_plants *pl, uint64_t n);
/* Adds the device record's "plants" member to d: {seed, variants, rows,
 * epochs, kept_op} when pl->on, else null. */
void ev_job_plants_json(cJSON *d, const ev_job_plants *pl);

/*
 * Writes the plants file a kernel's own python process reads (the torch
 * peer's and a Python arm's plants libraries, kernels/ops_lib.cu and
 * kernels/ops_lib_cpu.c): "EVPLANT1", pl's seed, shape s, the ops per
 * graph and the variant budget (the backend's
 * reference.variant_budget_bytes) as int64, then the R rows' figures.
 * The library makes V from them and its cache size as the worker does
 * (ev_plant_variants).  EV_EIO naming the path's last component.
 */
ev_status ev_job_plants_file(const char *path, const ev_job_plants *pl, const ev_shape *s, int64_t ops,
                             int64_t budget, ev_err *err);

/*
 * The kept output (bytes[len]: op kept_op's output in replay `replay`, the
 * last of the last hot sample) validated against the oracle of the input
 * that op read (the case's input with its variant's plants of that epoch
 * and replay, rows reduced again: ev_plant_oracle_rows, as verify-bundle
 * regenerates them), and written as the opkept record with its bytes.  A
 * wrong output also writes the job's final validation, failed, says what
 * on stderr (naming arm), and sets *stop.
 */
ev_status ev_job_kept(ev_rec_out *out, const ev_protocol *p, const char *arm, const ev_job_plants *pl,
                      const ev_shape *s, const void *input, const ev_oracle_row *expect,
                      const unsigned char *bytes, size_t len, uint64_t replay, int *stop, ev_err *err);

/* The floor's nominal case: its arm runs empty ops with the plant and
 * check nodes of a reduce_sum of one row of 64 fp32 (docs/defenses.md):
 * one plant node and one check node a replay, one planted row per op,
 * the fewest any arm with rows runs, so the floor stays below every arm's
 * time. */
ev_proto_case ev_job_floor_case(void);
/* That case's input (the protocol's seed, a case key of its own).  OUT:
 * *shape, *buf (malloc'd), *len. */
ev_status ev_job_floor_input(const ev_protocol *p, ev_shape *shape, void **buf, size_t *len, ev_err *err);

/* The input bytes of case case_index of p (kernels/inputs.h, case key =
 * case index): ((R-1) x stride + N) elements, nothing when R = 0.
 * OUT: *shape, *buf (malloc'd, at least 1 byte), *len. */
ev_status ev_job_input(const ev_protocol *p, int64_t case_index, ev_shape *shape, void **buf, size_t *len,
                       ev_err *err);

/* The oracle's rows of the input at in (ev_oracle_rows), for
 * ev_output_check's rows (validate.h): a job computes them before its gate.  OUT:
 * *rows (malloc'd). */
ev_status ev_job_expect(const ev_shape *s, const void *in, ev_oracle_row **rows, ev_err *err);

/* Writes a validation record of stage "first" or "final" for the output
 * bytes (with their hex when with_bytes).  OUT: hash, their SHA-256 hex. */
ev_status ev_job_validation(ev_rec_out *out, const char *stage, const ev_validation *v, const void *bytes,
                            size_t len, int with_bytes, char hash[65], ev_err *err);

/* Writes a check record (an output checked after a timed sample, db/
 * migrate-4.sql): input set `set`'s output after hot sample `after` (-1:
 * the last), its validation v and its bytes, unless it passed with the
 * hash same_as (an earlier check of the set that kept the same bytes;
 * NULL: none).  OUT: hash, their SHA-256 hex. */
ev_status ev_job_sample_check(ev_rec_out *out, int64_t set, int64_t after, const ev_validation *v,
                              const void *bytes, size_t len, const char *same_as, char hash[65], ev_err *err);

/* The CPUs this process may run on, as "0-3,8" (sched_getaffinity). */
void ev_job_affinity(char *buf, size_t cap);

/*
 * The host facts of a job (sample_rules.h, ev_rule_host), taken when it
 * opens its device.  On the cpu backend, where the host's CPUs are what
 * is measured, and when the protocol declares "cpu_priority": "realtime"
 * (realtime), it asks for SCHED_FIFO at EV_RULE_FIFO_PRIORITY for the
 * calling thread, which every thread it creates afterwards (the cpu
 * pool's) inherits: the measured threads then run ahead of every
 * ordinary process of a busy host.  It asks only where the kernel
 * throttles real-time threads (kernel.sched_rt_runtime_us is not -1), so
 * a kernel that spins cannot take a CPU from the host for good.  Where it
 * is refused, or not asked (the protocol's priority is normal; cuda: the
 * device is timed), h->refused says why, the host's own words where it
 * refused.  OUT: *h, with load_start the 1-minute load average now and
 * load_end the same (ev_job_host_end updates it).
 */
void ev_job_host_open(const char *backend, int realtime, ev_rule_host *h);

/* Reads the 1-minute load average again into h->load_end (after the
 * samples, for the device record). */
void ev_job_host_end(ev_rule_host *h);

/* Adds h as the "host" member of device record r (sample_rules.h). */
void ev_job_host_json(cJSON *r, const ev_rule_host *h);

#endif
