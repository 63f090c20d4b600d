/*
 * projections.h: proof-receipts.json and provenance.json, the two members
 * that only restate what the run recorded (docs/bundle-format.md).  One
 * writer for both sides: the exporter fills the inputs from the store, the
 * verifier from validation.json, the sources/ members and provenance.json's
 * own claims (git commit, dirty flag, the runner's recorded tree hash, the
 * exporter's name), and requires the member's bytes to equal what these
 * functions print.  So no field of either member can be edited alone.
 */
#ifndef EV_PROJECTIONS_H
#define EV_PROJECTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "status.h"

/* The default entry's source file, whose snapshot SHA-256 proof-receipts.json
 * names as default_entry_source. */
#define EV_BUNDLE_DEFAULT_ENTRY_SOURCE "kernels/reduce_default.cuh"

/* One snapshot file: its path (relative, the member name less "sources/"),
 * SHA-256 hex and size. */
typedef struct ev_proj_source {
    const char *path, *sha256;
    size_t size;
} ev_proj_source;

typedef struct ev_proof_in {
    const char *backend;
    const char *env_json;    /* the first invocation's environment record, or NULL */
    const char *const *envs; /* every invocation's environment record (NULL: none), in order */
    size_t n_envs;
    const ev_proj_source *src; /* every snapshot file, in path order (bytewise) */
    size_t n_src;
    const char *tree_hash; /* ev_tree_hash over them */
} ev_proof_in;

/* Prints proof-receipts.json: the build projection of the environment
 * record, kernels/build.mk's digest, the kernel sources, the default
 * entry's source digest, the tree hash and, when any invocation built
 * external kernels, "external_kernels": per such invocation (its index)
 * the build receipts as its environment record holds them (ext_build.h:
 * compiler, flags, dependency list, binary SHA-256), which verify-bundle
 * rebuilds from.  EV_ENOMEM. */
ev_status ev_proof_build(const ev_proof_in *in, ev_buf *out);

typedef struct ev_prov_in {
    int64_t run_id;
    const char *git_commit;
    int git_dirty;
    const char *tree_hash;          /* over the snapshot */
    const char *recorded_tree_hash; /* the runner's, before measuring */
    const char *protocol_id;
    const char *const *profile_ids; /* per invocation in order; NULL: none recorded */
    size_t n_invocations;
    const char *backend;
    int64_t seed, created_ns;
    const char *exporter; /* "evident <version>" */
} ev_prov_in;

/* Prints provenance.json (profile_id: the first invocation's, null when it
 * recorded none; profile_ids: the distinct ids in invocation order).
 * EV_ENOMEM. */
ev_status ev_provenance_build(const ev_prov_in *in, ev_buf *out);

/* validation.json's parsed copy of an environment record: OUT: *env (the
 * record parsed, numbers canonical; NULL when rec is NULL or cannot be
 * parsed) and why[cap] (the reason for a NULL: "no environment record" or
 * the parser's message).  EV_ENOMEM only; a record that does not parse is
 * EV_OK with *env NULL. */
struct cJSON;
ev_status ev_proj_environment(const char *rec, struct cJSON **env, char *why, size_t cap);

#endif
