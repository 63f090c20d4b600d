/*
 * sample_rules.h: the one definition of the rules an attempt's samples must
 * keep under its protocol (warm-up, calibration, sample and cold counts,
 * replays and ops per sample, the two bands, the SM clock, the device's
 * hygiene, the flush).  The supervisor
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
 * Late device work (issue 16): work the timed events did not hold, such as
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

/* 1 when a cold timing named name is the supervisor's own (the rescue's
 * backoff, EV_RULE_BACKOFF), not a record of the worker: record_count does
 * not count it (ev_record_count_problem, store/outcome.h). */
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
 * (n_hot integers >= -1 each); host (absent before it was kept: an object
 * of policy "fifo" or "other", priority 0..99, refused a string under
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
 * Impossible timings (issue 16): a completed job of a case with rows whose
 *  - hot median (us per op) is below the run's floor arm's (an empty kernel
 *    node, or the cpu pool's empty tasks) divided by EV_RULE_FLOOR_MARGIN:
 *    no op runs faster than an empty one; the margin allows run-to-run
 *    noise.  floor_applies is 0 where the arm does not launch through what
 *    the floor measures (an external kernel on the cpu backend is a direct
 *    call);
 *  - cold median (us) reads its in_span input bytes faster than
 *    EV_RULE_BW_MARGIN x the run's ceiling (a streaming read, bytes per us):
 *    after the flush the input must come from memory; the margin allows a
 *    kernel that reads better than the ceiling's loop.
 * floor_us or ceiling_bpus NaN (the arm did not complete) skips that half.
 * Returns 0, or 1 with why[cap] saying what and by how much.
 */
#define EV_RULE_FLOOR_MARGIN 2.0
#define EV_RULE_BW_MARGIN    2.0
int ev_rule_impossible(double hot_us, double cold_us, int64_t in_span, int64_t rows, double floor_us,
                       int floor_applies, double ceiling_bpus, char *why, size_t cap);

#endif
