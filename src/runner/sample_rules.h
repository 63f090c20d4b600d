/*
 * sample_rules.h: the one definition of the rules an attempt's samples must
 * keep under its protocol (warm-up, calibration, sample and cold counts,
 * replays and ops per sample, the two bands, the SM clock, the device's
 * hygiene, the flush, physical plausibility).  The supervisor
 * applies it when an attempt's records have arrived (a breach makes the
 * attempt failed-protocol, its reason the breach, its samples kept); the
 * verifier's check 5 applies it to every attempt of a bundle.  Pure: no
 * I/O, no allocation.  docs/verify.md, check 5, says why each rule is what
 * it is.
 */
#ifndef EV_SAMPLE_RULES_H
#define EV_SAMPLE_RULES_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "protocol.h"

/* The wide per-sample band: every hot sample within [T / EV_RULE_WIDE,
 * EV_RULE_WIDE x T] (docs/verify.md says why 4). */
#define EV_RULE_WIDE 4.0

/* The device record's "capture" of a kernel in a process of its own
 * that could not be captured in a CUDA graph (a Python arm on cuda): it
 * ran in the timed loop, and is not ranked against captured arms. */
#define EV_RULE_NOT_CAPTURED "timed loop: "

/* The prefix of a process row's protocol_error when a rule was broken. */
#define EV_RULE_PREFIX "protocol rule: "

/* One sample as the rules see it. */
typedef struct ev_rule_sample {
    double elapsed_ms;
    int64_t replays, ops_per_graph;
    int64_t sm_clock_mhz; /* -1: not read (the cpu backend, no NVML, the torch peer) */
    /* From the attempt's device record (-1: unknown, as on the cpu
     * backend, without NVML, for the torch peer, in a store older than
     * schema 3, or for a cold sample of a record before they were kept): */
    int64_t other_processes;  /* other compute processes on the device after the sample */
    int64_t throttle_reasons; /* NVML clocks event reason bits after the sample */
    double wall_ms;           /* host wall clock around the synchronised sample (hot_wall_ms);
                                 < 0: unknown (the torch peer, records before it was kept) */
} ev_rule_sample;

/*
 * Late device work (docs/defenses.md): work the timed events did not hold, such as
 * work on a side stream the timer misses.  The backend measures each hot
 * sample twice: between its events (elapsed_ms) and on the host's wall
 * clock from before its first event to when the whole device is idle
 * (cuda: cudaDeviceSynchronize, every stream of the context; cpu: no thread
 * left beyond those at bind, waited for up to a second).  Honest samples
 * read a wall a few tens of microseconds over their events (the launch
 * and the synchronisation); a sample whose wall exceeds EV_RULE_LATE_FACTOR
 * x its events plus EV_RULE_LATE_SLACK_MS held work the timer missed.  The
 * margin allows host jitter on a loaded machine (a 2-CPU host running the
 * ASan build of the tests once put a preemption of several ms between a
 * sample's end and its wall: 1 ms was too little); a kernel can hide at
 * most a third of its work under it, with the protocol's 50 ms samples.
 */
#define EV_RULE_LATE_FACTOR   1.5
#define EV_RULE_LATE_SLACK_MS 20.0

/*
 * NVML's clocks event (throttle) reason bits that mean the device slowed
 * itself for power or heat while it was measured: SwPowerCap (0x4),
 * HwSlowdown (0x8: power brake or thermal, the hardware's), SwThermalSlowdown
 * (0x20), HwThermalSlowdown (0x40), HwPowerBrakeSlowdown (0x80).  Not
 * counted: GpuIdle (0x1: the device idles between two samples, when NVML
 * is read), ApplicationsClocksSetting (0x2) and DisplayClockSetting
 * (0x100: clocks someone set, held by the clock_band rule if they move),
 * SyncBoost (0x10: a clock shared with another GPU of a sync-boost group).
 */
#define EV_RULE_THROTTLE_MASK 0xECLL

/* One calibration step as the rules see it. */
typedef struct ev_rule_step {
    int64_t replays;
    double target_ms;
    int chosen;
} ev_rule_step;

/*
 * Physical plausibility (docs/defenses.md, "Physical plausibility"): a
 * completed attempt of a case may not move its bytes faster than the device
 * streams them.  The bytes of one op are the case's input and output as the
 * report's bandwidth counts them (ev_rule_case_bytes: R x N elements read,
 * R written, in the storage dtype); the ceilings are the run's own (its
 * reference arms, measured before the jobs they bound: plan.h): `ceiling`
 * (a streaming read from device memory; on cpu ceiling_cache_multiple x
 * the LLC) and `ceiling-l2` (the same read over half the L2, replayed hot;
 * on cpu half a core's L2 per pool thread).  Which ceiling applies
 * (ev_rule_plausible_bound):
 *  - cuda, cold median: the memory ceiling (the flush evicted the input);
 *  - cuda, hot median whose working set (what one replay reads and writes:
 *    V input variants and the ops' output slots, ev_rule_working_bytes) is
 *    at most EV_RULE_L2_SPAN x the cache: the L2 ceiling.  Between 1 x and
 *    2 x the L2 a replay can still find up to a whole L2 of its bytes
 *    there: reading W bytes with L of them from L2 runs at up to
 *    W / (W - L) x the memory's bandwidth, 2 x at W = 2 L, which the
 *    memory bound and its margin would not admit;
 *  - cuda, hot median of a larger working set: the memory ceiling;
 *  - cpu, hot and cold: the largest ceiling the run measured (the cache
 *    levels of a host are many, its "memory" ceiling may itself be cached);
 *    with only the memory ceiling measured (a bundle before ceiling-l2), a
 *    hot median within 2 x the cache has no bound.
 * A median over EV_RULE_PLAUSIBLE_MARGIN x its bound breaks the rule; the
 * margin admits the noise between the ceiling's job and the arm's on a
 * shared host and a kernel that streams better than the ceiling's loop.
 * No ceiling that applies (not measured, it failed, a reference arm, a
 * case of no rows): no bound.
 */
#define EV_RULE_PLAUSIBLE_NAME   "physical plausibility"
#define EV_RULE_PLAUSIBLE_MARGIN 2.0
#define EV_RULE_L2_SPAN          2.0

/* The store schema that brought the plan with ceiling-l2 (plan.h) and the
 * rule that a cold sample's flush exceed the cache: a bundle of an older
 * schema is not held to the latter. */
#define EV_RULE_COLD_FLUSH_SINCE 6

/* The ceiling that bounds a median (ev_rule_ceiling_name: "none",
 * "memory", "l2", "largest"). */
typedef enum ev_rule_ceiling {
    EV_RULE_CEIL_NONE = 0,
    EV_RULE_CEIL_MEMORY,
    EV_RULE_CEIL_L2,
    EV_RULE_CEIL_LARGEST
} ev_rule_ceiling;

/* What the plausibility rule needs to know of an attempt and its run. */
typedef struct ev_rule_bound {
    double bytes;                /* one op (ev_rule_case_bytes); 0: no case, no bound */
    double working_bytes;        /* one hot replay (ev_rule_working_bytes); <= 0: unknown */
    int64_t cache_bytes;         /* the device's cache (the flush record's); <= 0: unknown */
    double memory_bpus, l2_bpus; /* the run's ceilings in bytes per us (ev_rule_ceiling_bpus);
                                    NaN or <= 0: not measured */
} ev_rule_bound;

/* The bytes one op of a case moves: rows x cols elements read and rows
 * written, dtype_size bytes each (0 for no rows). */
double ev_rule_case_bytes(int64_t rows, int64_t cols, size_t dtype_size);
/* The bytes one hot replay reads and writes: variants x in_span of input
 * and ops x out_span of output slots (0 when either span is unknown, < 0). */
double ev_rule_working_bytes(int64_t variants, int64_t in_span, int64_t out_span, int64_t ops);
/* The input variants a hot replay reads, from device record d (the
 * worker's, or a bundle attempt's "device"): plants.variants (schema 5),
 * input_sets (schema 4), else 1 (one input; d NULL or null too). */
int64_t ev_rule_device_variants(const cJSON *d);
/* A ceiling job's bytes per us: its in_span over its hot median (NaN
 * unless both are > 0). */
double ev_rule_ceiling_bpus(int64_t in_span, double median_us);
/* "none", "memory", "l2", "largest" ("?" out of range). */
const char *ev_rule_ceiling_name(ev_rule_ceiling c);
/* Which ceiling bounds a hot (hot 1) or cold (0) median of a case with
 * bound facts b on backend ("cpu" or "cuda"), as listed above.  OUT:
 * *bound_bpus, EV_RULE_PLAUSIBLE_MARGIN x that ceiling (0 for NONE). */
ev_rule_ceiling ev_rule_plausible_bound(const char *backend, int hot, const ev_rule_bound *b,
                                        double *bound_bpus);
/* The rule on one median (us per op; NaN or <= 0: none, held): returns 1
 * with why[cap] (EV_RULE_PLAUSIBLE_NAME, the median, its bytes and rate,
 * the bound) when it moves b->bytes faster than its bound, else 0.  The
 * runner (through ev_rules_check), the exporter (the jobs' "plausibility"
 * in validation.json) and the verifier call it. */
int ev_rule_plausible(const char *backend, int hot, const ev_rule_bound *b, double median_us, char *why,
                      size_t cap);

/*
 * The host an attempt ran on, as its device record's "host" member says
 * (absent in records written before it was kept, and in the torch
 * peer's): whether the measured threads ran at real-time priority, the
 * load average the worker saw, the CPUs online.  On the cpu backend the
 * worker asks for SCHED_FIFO (EV_RULE_FIFO_PRIORITY) before it opens the
 * backend, so its pool's threads run ahead of every ordinary process of a
 * busy host (docs/runner.md, "A busy host"), when the protocol declares
 * "cpu_priority": "realtime"; where the host refuses, where the protocol
 * does not declare it, or on cuda (the device is timed, not the host's
 * CPUs), they run at normal priority and `refused` says why, the host's
 * own words where it refused.  An attempt at real-time priority under a
 * protocol that does not declare it breaks a rule (ev_rules_check).
 */
#define EV_RULE_FIFO_PRIORITY 1
#define EV_RULE_REFUSED_MAX   160
/* The reason of a cpu attempt whose protocol did not ask for real-time
 * priority (the worker writes it; ev_rule_cause reads it). */
#define EV_RULE_NOT_DECLARED "not asked: the protocol's cpu_priority is normal"
typedef struct ev_rule_host {
    int known;                         /* 0: no host member (nothing below is set) */
    int fifo;                          /* 1: SCHED_FIFO at `priority`; 0: normal priority */
    int64_t priority;                  /* the real-time priority (fifo), else 0 */
    char refused[EV_RULE_REFUSED_MAX]; /* why not fifo ("" when fifo) */
    double load_start, load_end; /* 1-minute load average when the device opened, and after the samples */
    int64_t cpus;                /* CPUs online */
} ev_rule_host;

/*
 * Re-calibration (docs/runner.md, "A busy host"): after a hot sample that
 * drifted out of the protocol's band (below (1 - b) x T, or above
 * (1 + b) x T at more than one replay), the worker calibrates again and
 * takes the remaining samples at the new count; the drifted sample stays
 * and counts, as every sample does.  At most EV_RULE_RECAL_MAX per
 * attempt, never after the last sample.  The device record's
 * "recalibrations" says where each began: after which hot sample, at
 * which calibration step (steps are numbered on across them).
 */
#define EV_RULE_RECAL_MAX 2

/* What an attempt recorded, as far as the rules look. */
typedef struct ev_rule_attempt {
    const char *arm;
    int completed; /* 1: judge it as a completed attempt (every rule); 0: counts only */
    int has_warmup;
    double warmup_target_ms, warmup_elapsed_ms;
    const ev_rule_step *steps;
    size_t n_steps;
    const ev_rule_sample *hot, *cold;
    size_t n_hot, n_cold;
    int has_flush;
    int64_t flush_bytes, cache_bytes;
    int64_t schema;      /* the store schema it was recorded under (rules that came later are not
                            applied to it: EV_RULE_COLD_FLUSH_SINCE) */
    ev_rule_bound bound; /* the plausibility rule's facts (zeroed: no bound) */
    /* From the device record (ev_rule_device_attempt; zero: none): the
     * k-th re-calibration began at step recal_first[k], after hot sample
     * recal_after[k]; and the host. */
    size_t n_recal;
    int64_t recal_after[EV_RULE_RECAL_MAX], recal_first[EV_RULE_RECAL_MAX];
    ev_rule_host host;
} ev_rule_attempt;

/* 1 when a hot sample of elapsed ms at replays replays drifted out of
 * protocol p's band: the worker then re-calibrates, and the rules hold a
 * re-calibration to follow only such a sample. */
int ev_rule_drifted(const ev_protocol *p, double ms, int64_t replays);

/* Which member of a bundle shows a breach. */
typedef enum ev_rule_member { EV_RULE_VALIDATION_JSON, EV_RULE_SAMPLES_CSV } ev_rule_member;

/* Called once per breach, in a fixed order, with the member that shows it
 * and its text (the rule and the numbers; no job key). */
typedef void (*ev_rule_breach_fn)(void *ctx, ev_rule_member member, const char *text);

/*
 * Applies every rule of protocol p (backend "cpu" or "cuda") to attempt a
 * and calls breach (when not NULL) for each rule broken.  Returns the
 * number of breaches, or -1 when a->arm is not an arm of p (nothing is
 * called then).
 */
int ev_rules_check(const ev_protocol *p, const char *backend, const ev_rule_attempt *a,
                   ev_rule_breach_fn breach, void *ctx);

/*
 * The first breach of attempt a as a process row's protocol_error:
 * EV_RULE_PREFIX + its text, and " (N more)" when there are more.  Writes
 * out[cap] and returns the number of breaches (0: out is ""), or -1 as
 * ev_rules_check.
 */
int ev_rules_reason(const ev_protocol *p, const char *backend, const ev_rule_attempt *a, char *out,
                    size_t cap);

/* The name of the cold timing the supervisor records for a rescue's
 * backoff (docs/runner.md, "A busy host"): its own row, not a record the
 * worker sent. */
#define EV_RULE_BACKOFF "backoff"

/* The name of the cold timing the supervisor records for an attempt that
 * waited for another run to leave its measuring CPUs (cpu backend:
 * runner/cpulock.h; docs/runner.md, "Two runs on one host"). */
#define EV_RULE_CPULOCK "cpu-lock"

/* 1 when a cold timing named name is the supervisor's own (the rescue's
 * backoff, EV_RULE_BACKOFF; the wait for the CPUs, EV_RULE_CPULOCK), not
 * a record of the worker: record_count does not count it
 * (ev_record_count_problem, store/outcome.h). */
int ev_rule_cold_is_supervisors(const char *name);

/* 1 when every record of an attempt reached the store: its records are
 * ok, or its protocol_error is a rule breach (EV_RULE_PREFIX: found once
 * the end record was in, every record stored); and it was not
 * interrupted.  What ev_record_count_problem (store/outcome.h) holds to
 * the process's record_count. */
int ev_rule_all_stored(int records_ok, int interrupted, const char *protocol_error);

/*
 * Reads device record d (the worker's "device" record, docs/runner.md
 * "Worker records"; the same object as the bundle's attempt "device"
 * member) of an attempt with n_hot hot samples, checking every member:
 * rotation (null, or seed: 16 lowercase hex digits, before >= 1, rows:
 * row indexes >= 0), other_processes, throttle_reasons and
 * persisting_l2_bytes (integers >= -1), ecc, mig and persistence (-1, 0
 * or 1), input_sets (1 or 2; absent in records written before the two
 * input sets), hot_wall_ms (n_hot numbers >= 0 or -1, into hot[i].wall_ms;
 * absent before late work was kept: unknown), cold_other_processes and
 * cold_throttle_reasons (n_cold integers >= -1 each, into cold[i]; absent
 * before cold samples were judged: unknown), self_seen (a boolean), versions (an object of cub, torch, triton:
 * strings under 64 bytes), hot_other_processes and hot_throttle_reasons
 * (n_hot integers >= -1 each), foreign_source, hot_foreign_ms and
 * cold_foreign_ms (foreign CPU time per sample, runner/foreign.h: a
 * source name and one number or null per sample; absent before it was
 * kept; they fail no sample); host (absent before it was kept: an object
 * of scheduler "fifo" or "other", priority 0..99, refused a string under
 * EV_RULE_REFUSED_MAX bytes or null, load_start and load_end finite
 * numbers >= 0, cpus >= 1); recalibrations (absent: none; an array of at
 * most EV_RULE_RECAL_MAX objects of after >= 0 and first_step >= 1);
 * "type" ("device") is allowed, nothing else.
 * OUT: the per-sample facts into hot[0 .. n_hot) and cold[0 .. n_cold).
 * Returns 0, or -1 with why[cap] naming the member (hot and cold are left as it was).
 */
int ev_rule_device_read(const cJSON *d, ev_rule_sample *hot, size_t n_hot, ev_rule_sample *cold,
                        size_t n_cold, char *why, size_t cap);

/*
 * Copies device record d's host facts and re-calibrations into a->host
 * and a->n_recal, a->recal_after, a->recal_first (nothing when d has
 * none).  d must have passed ev_rule_device_read.
 */
void ev_rule_device_attempt(const cJSON *d, ev_rule_attempt *a);

/*
 * The likely cause of an attempt's breach of a sample rule and what to
 * do, in words, from its host facts h, into out[cap] ("" when h is not
 * known: the record predates them).  Host load is named when the load
 * average the worker saw (the higher of its two readings) was at least
 * the CPUs online: other work was waiting for a CPU.  The runner's
 * summary and the report both say it with this function.  Returns 1 when
 * host load is named, else 0.
 */
int ev_rule_cause(const ev_rule_host *h, char *out, size_t cap);

/* The member's file name ("validation.json", "samples.csv"). */
const char *ev_rule_member_name(ev_rule_member m);

/*
 * Impossible timings (docs/defenses.md): a completed job of a case with rows whose
 * hot median (us per op) is below the run's floor floor_us (the fastest
 * hot sample of its floor jobs, an empty kernel node: preemption only
 * lengthens a sample, so its median on a busy host can be many empty
 * launches) divided by EV_RULE_FLOOR_MARGIN: no op runs faster than an
 * empty one; the margin allows run-to-run noise.  floor_applies is
 * ev_rule_floor_applies of the run's backend.  floor_us NaN (the arm did
 * not complete) skips it.  (Its other half, a cold median faster than the
 * ceiling, is the plausibility rule above.)
 * Returns 0, or 1 with why[cap] saying what and by how much.
 */
#define EV_RULE_FLOOR_MARGIN 2.0
int ev_rule_impossible(double hot_us, int64_t rows, double floor_us, int floor_applies, char *why,
                       size_t cap);

/*
 * 1 when the floor bounds a run of backend from below: its floor is an
 * empty launch timed on the device (cuda: CUDA events around a graph of
 * empty nodes), which the host's load does not reach.  0 on the cpu
 * backend: every time there is the host's, an empty task's time grows
 * with every preemption (a stall can span all of a run's floor samples,
 * and a loaded host had honest jobs "faster than an empty launch"), and
 * an external kernel there is a direct call, not a task of the pool the
 * floor measures.  The verifier notes the rule not applied in these
 * words, EV_RULE_FLOOR_NOT_APPLIED.
 */
int ev_rule_floor_applies(const char *backend);
#define EV_RULE_FLOOR_NOT_APPLIED                                                                            \
    "impossible timings: not applied on the cpu backend (the floor is the host's time of an empty task, "    \
    "which preemption lengthens: it bounds nothing below)"

/*
 * The replays a worker has run when it reads a sample's check tag
 * (kernels/plants.h: every cold sample is one replay of one op, each hot
 * sample its replays, the warm-up's come between, and a re-calibration's
 * steps between the hot samples it came between): cold sample i: i + 1;
 * hot sample i: n_cold + warmup_replays + hot_replays[0..i] +
 * recal_replays (ev_rule_recal_replays).  The supervisor and
 * verify-bundle hold every op check's replay_end to it.
 */
int64_t ev_rule_replay_end(int hot, int64_t index, int64_t n_cold, int64_t warmup_replays,
                           const int64_t *hot_replays, int64_t recal_replays);

/* The replays of attempt a's re-calibration steps run before its hot
 * sample hot_index: the steps a->steps[recal_first[k] ..) of each
 * re-calibration k after a hot sample before hot_index, up to the next
 * re-calibration's first step (or the last step).  0 without any. */
int64_t ev_rule_recal_replays(const ev_rule_attempt *a, int64_t hot_index);

#endif
