/*
 * plan.h: the job plan, a pure function of the protocol.  The supervisor
 * inserts these jobs; the verifier regenerates them from protocol.json and
 * compares.  Nothing here reads the store, the clock or the host.
 *
 * Phases and order (docs/runner.md, "Plan"):
 *   main     every case x every protocol arm that applies to it (rows4 is
 *            left out where the case's B is 4; a fault arm only on its
 *            cases), shuffled by a seeded Fisher-Yates (splitmix64 of the
 *            protocol seed), plan_order 0.. in that order; when the protocol
 *            has reference arms, floor, ceiling and ceiling-l2 once (case -1)
 *            first, in that order, unshuffled (the physical plausibility
 *            rule, sample_rules.h, bounds every job by the run's ceilings,
 *            so they are measured before the jobs they bound).  A plan for
 *            a store of schema below EV_PLAN_REFS_FIRST_SINCE (a bundle's
 *            run.store_schema) is that schema's: floor and ceiling, no
 *            ceiling-l2, shuffled in with the cases' jobs.
 *   policy   arm "auto" for every case, in case order.
 *   recheck  arm "default" for every case, in case order.
 *   rescue   derived from outcomes (ev_plan_rescue): one retry-1 per main or
 *            policy job whose outcome is retryable, in main then policy
 *            plan order.
 *   rounds   with the protocol's rounds k > 1: main is round 1 (the fit's
 *            data); policy is rounds 2..k, each one block of every main
 *            arm's jobs, auto's and the policy fault arms', shuffled (the
 *            splitmix64 state carried on from main) after the round's
 *            reference arms (before schema 6: shuffled among them),
 *            so that auto is measured interleaved with what it is compared
 *            with; round r wholly before round r + 1; recheck is once.
 * Labels: "initial" (main, policy; one round), "round-<r>" (r = 1..k; main,
 * policy, k > 1), "recheck" (recheck), "retry-1" or "round-<r>-retry-1"
 * (rescue: the label of the job it retries, with "-retry-1").
 * job_key = "<phase>/<case_index or ->/<arm>/<label>", unique in a run.
 */
#ifndef EV_PLAN_H
#define EV_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "protocol.h"
#include "status.h"
#include "store/outcome.h"

/* The phases (ev_phase, ev_phase_name, ev_phase_parse) are the
 * vocabulary's (src/common/vocab.h). */

/* The store schema whose plans put the reference arms first and hold
 * ceiling-l2 (db/migrate-6.sql).  ev_protocol_parse sets a protocol's
 * plan_schema to the store's current version; a reader of a bundle or
 * store of an older schema sets that schema before it builds the plan. */
#define EV_PLAN_REFS_FIRST_SINCE 6

/* 1 when job_key is a key of phase p ("<phase>/..."). */
int ev_job_key_in_phase(const char *job_key, ev_phase p);

typedef struct ev_plan_job {
    char job_key[128];
    ev_phase phase;
    int64_t case_index; /* -1: reference arm (no case) */
    char arm[EV_PROTO_NAME_MAX];
    char label[40];
    int64_t round;      /* 1..k (rescue: the round it retries); 0: recheck */
    int64_t plan_order; /* 0.. within the phase */
    int64_t retry_of;   /* rescue: index into the plan array of
                                     the original job; -1 otherwise */
    int64_t shard;      /* the shard that runs it (ev_plan_shard_of); 0 unsharded */
    int replica;        /* 1: a reference arm's copy for its shard (key ends "/shard-<I>") */
} ev_plan_job;

typedef struct ev_plan {
    ev_plan_job *jobs; /* main (in plan order), then policy, then recheck */
    size_t n;
    size_t n_main, n_policy, n_recheck;
    int64_t shard_count; /* 1 unsharded; N: the plan of N shards (ev_plan_build_sharded) */
    size_t full_main;    /* main jobs of the whole plan (before ev_plan_keep_shard) */
} ev_plan;

/* Builds the main, policy and recheck jobs of proto.  OUT: *out (release
 * with ev_plan_free); zeroed on failure. */
ev_status ev_plan_build(const ev_protocol *proto, ev_plan *out, ev_err *err);
void ev_plan_free(ev_plan *plan); /* NULL-safe; leaves it zeroed */

/*
 * Shards (docs/runner.md, "Shards").  The partition is by case: the one
 * rule, used by `evident run --shard`, `evident merge` and verify-bundle,
 * is ev_plan_shard_of.  Every job of case c (main, policy, recheck, and a
 * rescue of one of them) runs in shard c mod N, so the arms of one case
 * are measured on one device and compared there.  A reference arm (floor,
 * ceiling: case -1) runs in every shard, each shard's own copy, so every
 * ratio is taken against the same device's floor and ceiling.
 */

/* The most shards a plan may have. */
#define EV_PLAN_MAX_SHARDS 4096

/* The shard of N (n_shards >= 1) that runs the jobs of case case_index, or
 * -1 for a reference arm (case -1): every shard runs its own copy. */
int64_t ev_plan_shard_of(int64_t case_index, int64_t n_shards);

/* The shard of a job of a plan of n_shards, from its key and case: a
 * case's job ev_plan_shard_of, a reference arm's copy the I of its key's
 * "/shard-<I>" suffix (-1 when it has none or I is not below n_shards). */
int64_t ev_plan_job_shard(const char *job_key, int64_t case_index, int64_t n_shards);

/*
 * The plan of proto split over n_shards (1..EV_PLAN_MAX_SHARDS).  With 1
 * it is ev_plan_build's plan exactly.  With N > 1 each reference-arm job
 * becomes N jobs at its place in the order, one per shard, job_key
 * "<key>/shard-<I>" (replica 1), and plan_order is renumbered 0.. within
 * each phase over the result; every job's shard is set.  OUT: *out.
 */
ev_status ev_plan_build_sharded(const ev_protocol *proto, int64_t n_shards, ev_plan *out, ev_err *err);

/* Keeps only the jobs of shard (0..plan->shard_count-1), in order, with
 * their plan_order (the whole plan's) and the phase counts updated:
 * the plan one shard runs. */
void ev_plan_keep_shard(ev_plan *plan, int64_t shard);

/* The round a job label names: 1 for "initial" and "retry-1", r for
 * "round-<r>" and "round-<r>-retry-1" (r >= 1 in plain decimal), 0 for
 * anything else ("recheck", an unknown label).  The one reading of labels:
 * the exporter, the figures and the verifier call it. */
int64_t ev_plan_label_round(const char *label);

/* 1 when arm runs on case ci of proto: rows4 not where B is 4, short only
 * where a row holds at most 32 chunks, split only on rows over 64 KiB
 * padded (both: ev_sched_rows_of above 0), a fault arm
 * only on its cases.  Phases are the caller's business. */
int ev_plan_arm_applies(const ev_protocol *proto, const char *arm, size_t ci);

/* Index of the job with job_key in plan, or -1. */
ptrdiff_t ev_plan_find(const ev_plan *plan, const char *job_key);

/*
 * The rescue jobs: outcomes[i] is the outcome of plan->jobs[i] (only the
 * main and policy entries are read).  When proto->retries is 0 there are
 * none.  OUT: *out, *n_out (malloc'd array the caller frees; NULL and 0
 * when empty), each with phase rescue, label "retry-1", retry_of = i, the
 * shard (and replica suffix) of the job it retries.  plan_order: 0.. in
 * that order for an unsharded plan; for a plan of N > 1 shards, the
 * original's place in the whole plan (its plan_order in main, full_main +
 * its plan_order in policy), which each shard knows without the others'
 * outcomes, so the shards' rescue jobs never collide in a merge.
 */
ev_status ev_plan_rescue(const ev_protocol *proto, const ev_plan *plan, const ev_outcome *outcomes,
                         ev_plan_job **out, size_t *n_out, ev_err *err);

/*
 * Run status (docs/runner.md, "Plan"), from the final outcomes of the
 * planned main and policy jobs (outcomes, parallel to plan->jobs) and of
 * the rescue jobs (rescue_outcomes, parallel to rescue).  A skipped job (a
 * peer that cannot run on this host, with its reason) counts as neither a
 * failure nor a completion: it does not fail the run.  Writes "completed"
 * or "failed" to *status and NULL, "completed-after-rescue" or
 * "failed-after-rescue" to *rescue_status (static strings).  Recheck
 * outcomes have no say.
 */
void ev_plan_run_status(const ev_plan *plan, const ev_outcome *outcomes, const ev_plan_job *rescue,
                        const ev_outcome *rescue_outcomes, size_t n_rescue, const char **status,
                        const char **rescue_status);

#endif
