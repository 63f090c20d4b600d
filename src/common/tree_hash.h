/*
 * tree_hash.h: the source-tree hash, one definition for the runner (which
 * records it with its snapshot, runner/snapshot.h), the exporter and the
 * verifier (which recomputes it from the bundle's sources/).
 */
#ifndef EV_TREE_HASH_H
#define EV_TREE_HASH_H

#include <stddef.h>

#include "status.h"

typedef struct ev_source_file {
    char *path; /* relative to the root, '/'-separated */
    char sha256[65];
    unsigned char *bytes;
    size_t len;
} ev_source_file;

/* Source-tree hash: SHA-256 over the concatenation, in path order, of
 * "<path>\0<sha256 hex>\n" for every member.  OUT: hex[65]. */
ev_status ev_tree_hash(const ev_source_file *files, size_t n, char hex[65]);

#endif
