/*
 * export.h: `evident export`: the run's evidence read from the store
 * (through the named queries of src/store/store.h only) and packed into
 * delivery.zip exactly as docs/bundle-format.md specifies.
 *
 * Every member is built in memory, hashed, listed in receipts.json, and
 * written by the deterministic zip writer (zipwrite.h).  The root digest is
 * the SHA-256 of receipts.json.
 */
#ifndef EV_EXPORT_H
#define EV_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "status.h"
#include "member.h"
#include "store/store.h"

typedef struct ev_bundle ev_bundle; /* opaque: the members of one export */

/*
 * Builds every member of the bundle of run run_id (0: the newest run) of
 * store s.  OUT: *out (free with ev_bundle_free).  EV_ENOTFOUND when the
 * run does not exist; EV_ECORRUPT when the store contradicts itself (a
 * snapshot row whose bytes do not match its sha256); EV_ERANGE when a
 * sample's replays x ops_per_graph exceeds 2^53; store errors as the store
 * gives them.  err says which record.
 */
ev_status ev_export_build(ev_store *s, int64_t run_id, ev_bundle **out, ev_err *err);
void ev_bundle_free(ev_bundle *b); /* NULL-safe */

/* The members, sorted by name (receipts.json included). */
const ev_member *ev_bundle_members(const ev_bundle *b, size_t *n);
/* The root digest: 64 lowercase hex digits (SHA-256 of receipts.json). */
const char *ev_bundle_root(const ev_bundle *b);
/* The run exported. */
int64_t ev_bundle_run_id(const ev_bundle *b);

/* Writes the bundle to path as a deterministic zip (temp file + rename). */
ev_status ev_bundle_write(const ev_bundle *b, const char *path, ev_err *err);

/*
 * The whole export: opens db_path read-only, builds run run_id (0: newest)
 * and writes out_path.  OUT: root_hex (65 bytes incl. NUL), only on success.
 */
ev_status ev_export_file(const char *db_path, int64_t run_id, const char *out_path, char root_hex[65],
                         ev_err *err);

/* The source-tree hash of docs/bundle-format.md, computed by the runner's
 * own ev_tree_hash (src/runner/snapshot.h): SHA-256 hex of the
 * concatenation of "<path>\0<sha256 hex>\n" for (paths[i],
 * sha256_hex[i]), which the caller gives sorted bytewise by path.
 * OUT: hex[65].  EV_EINVAL when a digest is not 64 characters. */
ev_status ev_bundle_tree_hash(const char *const *paths, const char *const *sha256_hex, size_t n,
                              char hex[65]);

#endif
