/*
 * protocol.h: a declared measurement protocol (the JSON files in protocols/), parsed
 * strictly.  The protocol is the contract a run keeps and the verifier
 * checks: its SHA-256 is the run's protocol id, the plan (plan.h) is a pure
 * function of it, and every receipt is compared against its numbers.
 *
 * Parsing refuses, with the field named ("cases[3].rows: must be >= 0"):
 * bytes that are not strict JSON (src/common/json.h, any finite decimal),
 * unknown keys, wrong types, out-of-range values, unknown arms, fault arms
 * without "allow_fault_arms": true, a "model_schedules" that is not a list
 * of distinct known schedules holding default, each one of arms.  The file format is documented field by
 * field in docs/runner.md, with its defaults.
 */
#ifndef EV_PROTOCOL_H
#define EV_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "ext_kernel.h"
#include "member.h" /* EV_PROTO_MAX_BYTES: the cap on a protocol file */
#include "status.h"
#include "vocab.h"

#define EV_PROTO_NAME_MAX        32                /* arm and fault names, incl. NUL */
#define EV_PROTO_MAX_CASES       4096              /* cases in one protocol */
#define EV_PROTO_MAX_CASE_BYTES  ((size_t)1 << 36) /* one case's input span: 64 GiB */
#define EV_PROTO_MAX_ROUNDS      64                /* rounds per (case, arm) */
#define EV_PROTO_MAX_CASE_ROUNDS 16384             /* cases x rounds */

/* One case: op x rows x cols x stride x dtype x default rows x role. */
typedef struct ev_proto_case {
    char op[EV_OP_NAME_MAX];       /* an op (src/common/vocab.h) */
    char dtype[EV_DTYPE_NAME_MAX]; /* a dtype */
    int64_t rows;                  /* R >= 0 (0 is a no-op case) */
    int64_t cols;                  /* N >= 1 */
    int64_t stride;                /* elements between row starts, >= cols (default cols) */
    int64_t default_rows;          /* B >= 1: the default entry's rows per program */
    char role[EV_ROLE_NAME_MAX];   /* a role */
} ev_proto_case;

/* What an arm is (ev_arm_kind, the vocabulary's: src/common/vocab.h).
 * Native arms run a schedule of the reduction kernels; auto runs the
 * selector's choice (policy phase only); floor, ceiling and ceiling-l2
 * are the reference arms (once per run, no case); cub and torch-compile (a
 * python3 process, not a backend) are the peers; fault arms are native
 * default runs that fail on purpose; an external kernel (ext_kernel.h) is
 * measured like a peer. */

/* The failure a fault arm injects (docs/runner.md says where each fires). */
typedef enum ev_fault_kind {
    EV_FAULT_NONE = 0,
    EV_FAULT_EXIT,           /* exit(value) after the first validation */
    EV_FAULT_SIGNAL,         /* raise(value) after the first validation */
    EV_FAULT_HANG,           /* block forever during the warm-up */
    EV_FAULT_GARBAGE,        /* write a line that is not a record, carry on */
    EV_FAULT_STOP_AFTER,     /* exit 0 after `value` hot samples, no end record */
    EV_FAULT_WRONG_OUTPUT,   /* corrupt the output before validating it */
    EV_FAULT_OVERRUN,        /* each hot sample runs `value` x the replays it records */
    EV_FAULT_THROTTLE,       /* the last hot sample reports an SM clock of `value` MHz, the others
                               the device's (or 1000 where the backend reads none) */
    EV_FAULT_WRONG_SCHEDULE, /* policy phase: an auto job that launches a schedule
                               the selector did not choose (honest receipts) */
    EV_FAULT_CONTENDED,      /* the last hot sample reports `value` other compute processes
                                on the device (the device record's per-sample facts) */
    EV_FAULT_THROTTLED,      /* the last hot sample reports NVML throttle reason bits `value` */
    EV_FAULT_NO_DEVICE,      /* no device record after the samples */
    EV_FAULT_LATE,           /* the last hot sample's wall clock reads `value` ms over its events
                                (late device work, sample_rules.h) */
    EV_FAULT_ORPHAN,         /* after the first validation, leaves a process of its own (a child
                                that starts a session and a grandchild that sleeps) running after
                                the job ends: the supervisor's leftover sweep must name it */
    EV_FAULT_FAST,           /* a timer that runs `value` x slow: every replay and cold launch
                                (warm-up, calibration, samples, their wall clocks) reports 1/value
                                of its time, so its calibration and samples agree with each other
                                and only the physical plausibility rule can tell (sample_rules.h) */
    EV_FAULT_DRIFT           /* each hot sample's timer (and wall clock) reads `value` x its time,
                                the warm-up and calibration untouched: every hot sample drifts out
                                of the band, the worker re-calibrates (its steps choose the count
                                again) and the median breaks the band (sample_rules.h) */
} ev_fault_kind;

typedef struct ev_proto_fault {
    char name[EV_PROTO_NAME_MAX]; /* "fault-..." as listed in arms */
    ev_fault_kind kind;
    int64_t value;     /* exit code, signal number, k samples, the overrun or fast factor, MHz,
                          other processes (contended), reason bits (throttled) or ms (late) */
    int original_only; /* "when": "original": not in retry-1 jobs */
    int64_t *cases;    /* case indexes it runs on; NULL: all */
    size_t n_cases;
} ev_proto_fault;

/* Reference-arm and cache-flush sizes for one backend. */
typedef struct ev_proto_ref {
    int64_t ceiling_bytes;          /* cuda: fixed size (>= 1 GiB); cpu: 0 */
    int64_t ceiling_cache_multiple; /* cpu: ceiling = k x LLC (>= 8); cuda: 0 */
    int64_t ceiling_max_bytes;      /* cap on the computed size; 0: none */
    int64_t ceiling_ops_per_graph;  /* ops per graph/batch of the ceiling arm */
    int64_t flush_cache_multiple;   /* cold flush buffer = k x cache (>= 2) */
    int64_t flush_max_bytes;        /* cap on the flush buffer; 0: none */
    int64_t variant_budget_bytes;   /* the variants of an input larger than half the cache, at most
                                       (cuda 2 GiB, cpu 256 MiB; >= 1 MiB): ev_plant_variants */
} ev_proto_ref;

/* "model_from": the coefficients the policy phase's auto arm uses instead
 * of the run's own fit, taken from an earlier run's bundle (a subset's
 * quick loop, runner/subset.h), named by the SHA-256 of its file. */
typedef struct ev_proto_model {
    int set;
    char bundle_sha256[65];
    double a0, aP, aD;
} ev_proto_model;

typedef struct ev_protocol {
    char name[64]; /* "name" (optional, free text) */
    ev_proto_case *cases;
    size_t n_cases;
    char (*arms)[EV_PROTO_NAME_MAX]; /* main-phase arms per case, in file order */
    size_t n_arms;
    int reference_arms;        /* plan floor and ceiling (default 1), and ceiling-l2 (plan.h) */
    int64_t plan_schema;       /* the store schema the plan is made for (plan.h): the current
                                  one (EV_STORE_VERSION) when parsed; a reader of an older bundle
                                  or store sets its own */
    int auto_arm;              /* plan auto (and the policy fault arms) in the policy phase (default 1) */
    ev_proto_model model_from; /* auto's coefficients from an earlier run; .set 0: the run's fit */
    int64_t samples;           /* hot samples per job (7) */
    int64_t ops_per_graph;     /* ops per graph or batch (100) */
    double warmup_ms;          /* >= this much warm-up per job (500) */
    double target_sample_ms;   /* calibrated sample length (100) */
    int64_t cold_samples;      /* cache-flushed single launches (3) */
    int *cpu_set;              /* CPUs workers are pinned to; NULL: inherit */
    size_t n_cpus;
    int64_t host_threads;      /* cpu backend worker threads; 0: one per CPU of the set */
    int cpu_realtime;          /* "cpu_priority": "realtime" (1) or "normal" (0, the default): on
                                  the cpu backend the measured threads ask for SCHED_FIFO
                                  (docs/runner.md, "A busy host") */
    double job_timeout_s;      /* watchdog per job (600) */
    int64_t seed;              /* >= 0: plan order and input generator */
    int64_t retries;           /* 0 or 1: rescue retries per retryable failure */
    int64_t rounds;            /* >= 1: rounds per (case, arm), one job each (1) */
    double decision_threshold; /* the model's strict threshold (0.05) */
    unsigned model_schedules;  /* "model_schedules": the schedules the model fits and chooses from,
                                  a mask of EV_SCHED_BIT (model/model.h); EV_SCHEDS_DEFAULT when
                                  absent (default, rows1, rows2) */
    double sum_bound_factor;   /* multiplies the oracle's SUM bound (1) */
    int64_t sum_depth;         /* tolerances.sum_depth: the deepest chain of additions an arm's
                                  order may put a term through (oracle.h); 0: any order (the
                                  row's length) */
    double sample_band;        /* a hot sample must be within target x (1 +- band) (0.5) */
    double clock_band;         /* a hot sample's SM clock >= band x the attempt's highest (0.9; 0: off) */
    ev_proto_ref ref_cuda, ref_cpu;
    int allow_fault_arms;
    ev_proto_fault *faults;
    size_t n_faults;
    ev_ext_kernel *kernels; /* "kernels": external kernels, each one of arms */
    size_t n_kernels;
    char python[256]; /* "python": the interpreter of the run's python processes (Python arms, the
                         torch-compile peer); "": python3 on PATH (ev_protocol_python) */
} ev_protocol;

/*
 * The interpreter a run's python processes start with: over (`evident run
 * --python`) when given, else the protocol's "python", else "python3" (on
 * PATH).  A protocol's relative path that names a directory ("venv/bin/
 * python") is taken from the protocol's directory (protocol_path's).
 * OUT: out[cap].  Returns -1 when it does not fit.
 */
int ev_protocol_python(const ev_protocol *p, const char *over, const char *protocol_path, char *out,
                       size_t cap);

/*
 * The default profile (docs/runner.md, "Protocol files"): what a protocol
 * of cases and kernels alone runs with.  Every field a protocol leaves
 * out takes the default of set_defaults (DESIGN.md's: 7 samples of 100 ms
 * after 500 ms of warm-up, 3 cold samples, 1 round, 1 rescue retry, the
 * oracle's bounds as they are); these are the fields that were required
 * before: the seed, the arms (ours the model fits, the peers and every
 * declared kernel) and each case's default_rows.
 */
#define EV_PROTO_DEFAULT_SEED 1
#define EV_PROTO_DEFAULT_B    4
/* The default profile's arm i before the declared kernels (default,
 * rows1, rows2, cub, torch-compile, named by the vocabulary), or NULL
 * past the last. */
const char *ev_proto_default_arm(size_t i);

/*
 * The values a run used: every setting of p, the defaults it took
 * included (the seed, the arms, each case with its stride, default_rows
 * and role, the samples, warm-up and timings, rounds and retries, the
 * tolerances, both backends' reference sizes, the model's schedules), as
 * one JSON object whose keys are the protocol's own: with the kernels and
 * fault arms added (the protocol states them whole) it is a protocol,
 * which parses to these values again (a sum_depth of none is left out,
 * as a protocol says it).  The runner records it in each invocation's
 * environment record ("protocol_values"), so the bundle says what ran,
 * and verify-bundle holds it to its own reading of protocol.json (check
 * 5): a default that changed, or an edited record, FAILs naming the
 * field.  OUT: *out (cJSON_Delete).  EV_ENOMEM.
 */
ev_status ev_protocol_values(const ev_protocol *p, cJSON **out);

/* The declared kernel named name, or NULL. */
const ev_ext_kernel *ev_protocol_kernel(const ev_protocol *proto, const char *name);

/*
 * Parses protocol bytes p[0..n) strictly.  OUT: *out, filled (the caller
 * releases it with ev_protocol_free); on failure *out is left zeroed and
 * err names the field and the rule it broke.  EV_EFORMAT for every refusal.
 */
ev_status ev_protocol_parse(const char *p, size_t n, ev_protocol *out, ev_err *err);
/* Releases what ev_protocol_parse allocated; NULL-safe; leaves it zeroed. */
void ev_protocol_free(ev_protocol *proto);

/* The protocol id: SHA-256 of the bytes, 64 lowercase hex + NUL. */
ev_status ev_protocol_id(const void *p, size_t n, char hex[65]);

/*
 * Classifies an arm name.  Returns 0 and sets *kind (and *rows, the rows per
 * program of a native rowsK arm; 0 for default and for non-native arms), or
 * -1 for a name that is neither built in nor one of proto's fault arms.
 * proto may be NULL (then fault names are unknown).
 */
int ev_arm_classify(const ev_protocol *proto, const char *arm, ev_arm_kind *kind, int64_t *rows);
/* The fault arm called name, or NULL. */
const ev_proto_fault *ev_protocol_fault(const ev_protocol *proto, const char *name);
/* The reference sizes for backend "cpu" or "cuda" (NULL for others). */
const ev_proto_ref *ev_protocol_ref(const ev_protocol *proto, const char *backend);

#endif
