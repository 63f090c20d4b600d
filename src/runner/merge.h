/*
 * merge.h: `evident merge SHARD.db... --out MERGED.db` without its command
 * line (docs/runner.md, "Shards").  The shards' stores, each one run of
 * one shard of the same protocol, measured from the same sources on the
 * same backend, become one store holding one run: the key-disjoint union
 * of their rows (ev_store_copy_run), every planned job of the phase
 * exactly once, as a result or a recorded failure.  Which job belongs to
 * which shard is ev_plan_shard_of, the rule the run and verify-bundle use.
 * Nothing is written unless every check passes, and an existing output is
 * never replaced.
 */
#ifndef EV_MERGE_H
#define EV_MERGE_H

#include <stddef.h>
#include <stdint.h>

#include "status.h"

typedef struct ev_merge_result {
    int64_t shard_count;
    int rest;        /* 1: the shards ran the rest phase (the merge is the whole run) */
    size_t jobs;     /* jobs in the merged run */
    size_t attempts; /* attempts copied */
    char status[32]; /* the merged run's status ("" for a main-phase merge) */
    char rescue[32]; /* its rescue status, "" when none */
    double wall_s;   /* the merge itself */
} ev_merge_result;

/*
 * Merges the n stores at paths into a new store at out.  OUT: *res.
 * Refused, with err naming the stores concerned, and nothing written
 * (EV_EUSAGE): out exists; a store that is not one run of one shard; two
 * stores of different protocols, backends, commits, sources or shard
 * counts; two stores of one shard; a shard missing; a job in a store that
 * is another shard's; a job in two stores (both named); a planned job of
 * the phase missing or not ended (named, with its shard); shards of the
 * rest phase whose fits differ.  Store failures pass through.
 */
ev_status ev_merge(const char *const *paths, size_t n, const char *out, ev_merge_result *res, ev_err *err);

#endif
